# Helpers for release.sh, deb.sh and image.sh: sourced, not run.

# release_version is the version stamped into binaries and packages:
# $VERSION if set, else `git describe` (a tag like v0.3.1, else the commit).
release_version() {
  if [ -n "${VERSION:-}" ]; then echo "$VERSION"; return; fi
  git describe --tags --always --dirty 2>/dev/null || echo dev
}

# deb_version turns a release version into a Debian one, which must start
# with a digit and, for a native package, contain no hyphen:
# v0.3.1 -> 0.3.1, v0.3.1-4-gabc -> 0.3.1.4.gabc, 7a08acc-dirty -> 0~git7a08acc+dirty.
deb_version() {
  local v=${1#v}
  [[ $v =~ ^[0-9]+\.[0-9] ]] || v="0~git$v" # no release tag: a commit id
  v=${v/-dirty/+dirty}
  echo "${v//-/.}"
}

# source_epoch is the time stamped into archives: the last commit's, so that
# two builds of one commit give the same bytes.
source_epoch() {
  echo "${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
}

# The core's build targets: name GOARCH GOARM. armv6 runs on every Pi
# (Zero, 1) and is what Raspberry Pi OS armhf targets; armv7 is faster on
# Pi 2 and later with a 32-bit OS.
CORE_TARGETS="amd64:amd64: arm64:arm64: armv6:arm:6 armv7:arm:7"

# build_core NAME OUTFILE builds the static, stripped, version-stamped core.
build_core() {
  local name=$1 out=$2 t arch arm
  for t in $CORE_TARGETS; do
    IFS=: read -r tn arch arm <<<"$t"
    [ "$tn" = "$name" ] || continue
    CGO_ENABLED=0 GOOS=linux GOARCH=$arch GOARM=$arm \
      go build -trimpath -gcflags "$core_gcflags" -ldflags "-s -w -X main.version=$(release_version) -X main.sourceEpoch=$(source_epoch)" -o "$out" ./cmd/clawedge
    return
  done
  die "unknown target $name (want one of: amd64 arm64 armv6 armv7)"
}

# build_runner NAME DIR is where the local-model runner slots in: when the
# repo has cmd/clawedge-llm and scripts/build-llm.sh, it is called as
#   scripts/build-llm.sh NAME DIR
# and must put clawedge-llm in DIR/bin and its shared libraries (libllama,
# libggml*) in DIR/lib. Only amd64 and arm64 have a runner (no 32-bit ARM
# llama.cpp build exists). Without it this does nothing: a core-only release.
build_runner() {
  local name=$1 dir=$2
  case $name in amd64 | arm64) ;; *) return 0 ;; esac
  [ -d cmd/clawedge-llm ] && [ -x scripts/build-llm.sh ] || return 0
  scripts/build-llm.sh "$name" "$dir"
}

# runner_depends FILE... prints the Debian dependencies of the runner's ELF
# files (clawedge-llm and its libraries), ", "-separated: libc6 at the newest
# GLIBC symbol version they use, and the package of each other system library
# they link. An unknown library stops the build rather than ship a package
# that cannot load.
runner_depends() {
  local glibc lib deps=()
  glibc=$(readelf -V "$@" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n1)
  [ -n "$glibc" ] || die "no GLIBC symbol version in $*"
  deps+=("libc6 (>= $glibc)")
  for lib in $(readelf -d "$@" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
    case $lib in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;; # libc6
    libllama* | libggml*) ;;                                                          # shipped beside it
    libstdc++.so.6) deps+=("libstdc++6") ;;
    libgcc_s.so.1) deps+=("libgcc-s1") ;;
    libgomp.so.1) deps+=("libgomp1") ;;
    *) die "the runner links $lib: add its Debian package to runner_depends (scripts/release-lib.sh)" ;;
    esac
  done
  local IFS=,
  echo "${deps[*]}" | sed 's/,/, /g'
}

