#!/usr/bin/env bash
# Runs every test of clawedge, installing what they need first. This is the
# README's test command and what CI runs (.ci/run).
#
#   ./scripts/test.sh            everything (about 27 minutes on 2 cores; it
#                                prints the elapsed time every 50 s and at the end)
#   FUZZTIME=300000x ./scripts/test.sh   everything, and the fuzzers' random
#                                        search (scripts/fuzz.sh) for that many
#                                        executions of each target
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
heartbeat
need_go
need_apt gcc git npm # gcc: the race detector and the llama.cpp binding need cgo; npm: fetch-llama.sh
. scripts/release-lib.sh
# The SD image and its QEMU boot test: command:package pairs, installed when missing.
need_tools mkfs.vfat:dosfstools mcopy:mtools mksquashfs:squashfs-tools unsquashfs:squashfs-tools \
  mkfs.ext4:e2fsprogs sfdisk:fdisk qemu-system-aarch64:qemu-system-arm fdtput:device-tree-compiler lintian:lintian \
  qemu-aarch64-static:qemu-user-static aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu aarch64-linux-gnu-g++:g++-aarch64-linux-gnu
# The MQTT / Home Assistant tests run a real broker and Mosquitto's own clients.
need_tools mosquitto:mosquitto mosquitto_sub:mosquitto-clients
# The metrics endpoint's page is checked with promtool check metrics.
need_tools promtool:prometheus
# The web dashboard's browser test drives Debian's chromium (chromedp, from the test only).
need_tools chromium:chromium

step "modules"
go mod download
go mod verify >/dev/null
if ! go mod tidy -diff >/dev/null 2>&1; then
  go mod tidy -diff || true
  die "go.mod/go.sum are not tidy: run go mod tidy"
fi

step "llama.cpp libraries for the local-model runner (pinned npm packages, cached)"
./scripts/fetch-llama.sh

step "Debian's llama-server in a forky root, for the remote-model tests (built once, cached; 1-4 min the first time)"
./scripts/fetch-llama-server.sh

step "MCP implementations the MCP tests run against (pinned npm packages)"
./scripts/fetch-mcp.sh

step "aedes and mqtt.js, the second MQTT broker and client the MQTT tests run against (pinned npm packages)"
./scripts/fetch-aedes.sh

step "axe-core, the accessibility checker the dashboard's tests run in chromium (pinned npm package, cached)"
./scripts/fetch-axe.sh

step "@a2a-js/sdk, the A2A client the boards' interop test runs against (pinned npm package)"
./scripts/fetch-a2a-js.sh

step "format and vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
[ -z "$unformatted" ] || die "not gofmt'ed: $unformatted"
CGO_ENABLED=0 go vet ./...

step "static builds for every board (CGO_ENABLED=0)"
for target in linux/amd64 linux/arm64 linux/arm/6 linux/arm/7; do
  IFS=/ read -r os arch arm <<<"$target"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOARM=$arm go build -o /dev/null ./cmd/clawedge
  echo "  built $target"
done

step "unit, integration and end-to-end tests (race detector on)"
# The corpus walks, run in the next step without the race detector.
corpus_tests='TestBFCLSchemasCompileExactly|TestBFCLSchemaOutputsValid|TestConstraintOutputsValidate|TestCorpusOutputsValidAgainstSchemas|TestNestedConstraintOutputsValidate|TestSchemaClassesOfRealTools'
# The runner-backed tests (local model client, generate, chat) must run, not skip.
# ... and so must the MQTT tests against Mosquitto and aedes, the promtool check and the MCP
# tests against the TypeScript SDK and the reference server.
CLAWEDGE_REQUIRE_RUNNER=1 CLAWEDGE_REQUIRE_MQTT=1 CLAWEDGE_REQUIRE_AEDES=1 CLAWEDGE_REQUIRE_PROMTOOL=1 CLAWEDGE_REQUIRE_CHROMIUM=1 CLAWEDGE_REQUIRE_MCP=1 CLAWEDGE_REQUIRE_A2AJS=1 CLAWEDGE_REQUIRE_LANDLOCK=1 CLAWEDGE_REQUIRE_ENDURANCE=1 CLAWEDGE_AUTO_KILLS=50 go test -race -count=1 -timeout 20m -skip "^(TestLlamaServer.*|$corpus_tests)\$" ./...

step "the tool-schema corpora (BFCL, MCP servers): every schema compiled, every output valid (race detector off: about 20 s; under it, 2-4 min)"
# Pure computation on one goroutine each: the race detector only slows it.
go test -count=1 -run "^($corpus_tests)\$" ./tools/

step "remote model: the agent and goal plans against the real llama-server (gbnf, json_schema, none; tool_choice required) (~1-2 min)"
# Its own step, on idle cores: llama-server runs with -t 1 and the turns are timed.
CLAWEDGE_REQUIRE_LLAMA_SERVER=1 go test -count=1 -timeout 10m -run '^TestLlamaServer' -v ./cmd/clawedge | grep -E '^(=== RUN|---|    |ok|FAIL|PASS)'

step "local model: the cgo binding and the runner"
CGO_ENABLED=1 go vet -tags llamacpp ./localmodel/... ./cmd/clawedge-llm/...
# Only the packages the tag changes (the binding, the runner, synth's tagged
# test, agent's token counts): the rest of localmodel ran, the same code, above.
go test -race -count=1 -tags llamacpp ./localmodel/llama/ ./localmodel/synth/ ./cmd/clawedge-llm/... ./agent/

step "constrained decoding: ${CLAWEDGE_CONSTRAINED_RUNS:-1000} seeded generations per form on the micro random model, two runners at a time, all parse and validate; as many for the nested MCP tools of the corpus, checked by jsonschema-go and Ajv; as many goal plans, all valid (~2-3 min)"
CLAWEDGE_REQUIRE_RUNNER=1 CLAWEDGE_REQUIRE_MCP=1 CLAWEDGE_CONSTRAINED_RUNS="${CLAWEDGE_CONSTRAINED_RUNS:-1000}" \
  go test -count=1 -timeout 80m -run '^(TestConstrainedProperty|TestMCPNestedToolsGenerated|TestGoalPlansConstrained)$' -v ./cmd/clawedge

step "local-model runner on arm64 under qemu-aarch64-static (~10 s)"
./scripts/test-llm-arm64.sh

# The fuzz targets' seeds and kept corpora ran in the race step above; the
# random search is scripts/fuzz.sh (run before each stop), here only when
# asked for with FUZZTIME: a search that finds a new input fails, and the
# same code must give the same result every time it is tested.
if [ -n "${FUZZTIME:-}" ]; then
  ./scripts/fuzz.sh
fi

step "benchmarks compile and run once"
# Only the packages that have benchmarks: building the others' tests again
# without the race detector would check nothing new.
# (cmd/clawedge-llm's are under the llamacpp tag: scripts/bench/ runs them.)
bench_pkgs=$(grep -l '^func Benchmark' $(git ls-files '*_test.go') | xargs -n1 dirname | sort -u | grep -v '^cmd/clawedge-llm' | sed 's|^|./|')
# The metrics flood holds 1,000 connections here, not its 12,000 (a minute
# spent waiting on the daemon's connection cap): this step checks that each
# benchmark runs; docs/BENCHMARKS.md has the figures and how to get them.
CLAWEDGE_FLOOD_CONNS=1000 go test -run '^$' -bench . -benchtime 1x $bench_pkgs >/dev/null

step "SD card image: build, boot in QEMU raspi3b, GPIO over the UART, power cut, audit kept (~1-2 min)"
./scripts/image-test.sh

step "Debian packages: make deb for arm64, armhf and amd64, each lintian clean"
# After the image test, whose core binaries it reuses; the runners come from
# the build cache. The file listings are left out of the log.
make deb | grep -v '^[-dl]r[-w]'

echo "all tests passed in $(elapsed)"
