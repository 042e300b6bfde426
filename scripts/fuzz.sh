#!/usr/bin/env bash
# Searches every parser of outside input with Go's fuzzer: each target for
# FUZZTIME executions (default 300000x). A crasher is written to the
# target's testdata/fuzz/ folder, which every run of the test command then
# replays (its race step runs each fuzz target over its seeds and that
# corpus), so a finding, once fixed, is checked for good.
#
#   ./scripts/fuzz.sh                  (about 25 minutes on 2 cores)
#   FUZZTIME=25000x ./scripts/fuzz.sh  (a short pass, about 3 minutes)
#
# The search is random, so it is not part of the test command: a run that
# finds a new input fails, and the same code must give the same result every
# time it is tested. It runs before each stop (docs/BENCHMARKS.md, "Fuzzing").
#
# Fuzzing is bounded by a count of executions, not a duration: with a duration, Go
# 1.26's fuzz coordinator can fail a target with "context deadline exceeded" and
# no crasher when the deadline races a busy worker (golang/go#75804, fixed in 1.27).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_go
fuzztime="${FUZZTIME:-300000x}"
step "fuzzing each parser of outside input for $fuzztime executions"
go test ./grammar -run '^$' -fuzz '^FuzzParse$' -fuzztime "$fuzztime"
go test ./config -run '^$' -fuzz '^FuzzParse$' -fuzztime "$fuzztime"
go test ./automations -run '^$' -fuzz '^FuzzCronTemplate$' -fuzztime "$fuzztime"
go test ./channels -run '^$' -fuzz '^FuzzDispatch$' -fuzztime "$fuzztime"
go test ./tools -run '^$' -fuzz '^FuzzReadSpecs$' -fuzztime "$fuzztime"
go test ./mcpclient -run '^$' -fuzz '^FuzzServerOutput$' -fuzztime "$fuzztime"
go test ./tools -run '^$' -fuzz '^FuzzConstraintFromSpecs$' -fuzztime "$fuzztime"
go test ./channels/web -run '^$' -fuzz '^FuzzRequestInput$' -fuzztime "$fuzztime"
go test ./channels/web -run '^$' -fuzz '^FuzzFormToken$' -fuzztime "$fuzztime"
go test ./grammar -run '^$' -fuzz '^FuzzParseOutput$' -fuzztime "$fuzztime"
go test ./grammar -run '^$' -fuzz '^FuzzMask$' -fuzztime "$fuzztime"
go test ./llm -run '^$' -fuzz '^FuzzWireName$' -fuzztime "$fuzztime"
go test ./internal/sse -run '^$' -fuzz '^FuzzSSE$' -fuzztime "$fuzztime"
go test ./llm/openai -run '^$' -fuzz '^FuzzDecode$' -fuzztime "$fuzztime"
go test ./llm/anthropic -run '^$' -fuzz '^FuzzDecode$' -fuzztime "$fuzztime"
go test ./localmodel/wire -run '^$' -fuzz '^FuzzRead$' -fuzztime "$fuzztime"
go test ./localmodel/gguf -run '^$' -fuzz '^FuzzRead$' -fuzztime "$fuzztime"
go test ./boards -run '^$' -fuzz '^FuzzServer$' -fuzztime "$fuzztime"
go test ./boards -run '^$' -fuzz '^FuzzFound$' -fuzztime "$fuzztime"
go test ./tools -run '^$' -fuzz '^FuzzParamsFromSchema$' -fuzztime "$fuzztime"
go test ./setup -run '^$' -fuzz '^FuzzSetupAnswers$' -fuzztime "$fuzztime"
go test ./skills -run '^$' -fuzz '^FuzzParseSkillMD$' -fuzztime "$fuzztime"
go test ./skills -run '^$' -fuzz '^FuzzParseTools$' -fuzztime "$fuzztime"
go test ./channels/mqtt -run '^$' -fuzz '^FuzzSetMessage$' -fuzztime "$fuzztime"
go test ./channels/mqtt -run '^$' -fuzz '^FuzzPacketBounds$' -fuzztime "$fuzztime"
go test ./update -run '^$' -fuzz '^FuzzBundle$' -fuzztime "$fuzztime"
go test ./update -run '^$' -fuzz '^FuzzManifest$' -fuzztime "$fuzztime"
go test ./cmd/clawedge-init -run '^$' -fuzz '^FuzzParseFamilyID$' -fuzztime "$fuzztime"
go test ./memory -run '^$' -fuzz '^FuzzParse$' -fuzztime "$fuzztime"
go test ./memory -run '^$' -fuzz '^FuzzWritePersona$' -fuzztime "$fuzztime"
go test ./channels/web -run '^$' -fuzz '^FuzzGoalAndMemoryPages$' -fuzztime "$fuzztime"
go test ./goals -run '^$' -fuzz '^FuzzParsePlan$' -fuzztime "$fuzztime"
go test ./tools -run '^$' -fuzz '^FuzzParseReadCheck$' -fuzztime "$fuzztime"
for target in FuzzSplit FuzzMarkdownV2 FuzzUpdate; do
  go test ./channels/telegram -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime"
done
