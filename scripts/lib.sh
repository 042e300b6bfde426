# Shared helpers for the scripts: sourced, not run.

# step names what runs next and when it starts, so a CI log shows where the time goes.
step() { if [ -n "${HEARTBEAT_START:-}" ]; then printf '\n== %s [at %s]\n' "$*" "$(elapsed)"; else printf '\n== %s\n' "$*"; fi; }

# heartbeat prints the time since it started every 50 s until the script exits,
# so that a long step (the race tests, the QEMU boot) never leaves a CI log
# silent for a minute. The sleep does not hold the output open after the exit.
heartbeat() {
  HEARTBEAT_START=$(date +%s)
  (
    while sleep 50 >/dev/null 2>&1; do
      printf '  ... %s\n' "$(elapsed)"
    done
  ) &
  HEARTBEAT_PID=$!
  trap 'kill "$HEARTBEAT_PID" 2>/dev/null || true' EXIT
}

# elapsed is the time since heartbeat started, as "12 min 05 s".
elapsed() {
  local s=$(($(date +%s) - HEARTBEAT_START))
  printf '%d min %02d s' $((s / 60)) $((s % 60))
}
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# core_gcflags are the compiler flags of the core (bin/clawedge, the debs,
# the image): nothing is inlined, the runtime and the libraries included.
# That keeps the stripped linux/arm64 core inside its 16 MB with the boards'
# A2A SDK and DNS-SD (miekg/dns) linked; inlining costs 1.4 MB. A command's
# time is its fsync, and a parse stays around a microsecond
# (docs/BENCHMARKS.md, "Size").
core_gcflags='all=-l'

# need_go makes sure a Go toolchain new enough for go.mod is on PATH.
need_go() {
  export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
  command -v go >/dev/null || die "Go 1.26 or newer is needed: https://go.dev/doc/install (Debian's golang-go is too old)"
  local want have
  want=$(sed -n 's/^go \([0-9.]*\).*/\1/p' go.mod)
  have=$(go env GOVERSION | sed 's/^go//')
  [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1)" = "$want" ] ||
    die "Go $want or newer is needed, found $have"
}

# need_tools CMD:PACKAGE... installs the Debian packages whose command is
# missing (also looked for in /usr/sbin and /sbin), without their
# recommendations.
need_tools() { install_missing --no-install-recommends "$@"; }

# need_apt PACKAGE... installs the Debian packages, named like their command,
# whose command is missing, with their recommendations (gcc needs libc6-dev).
need_apt() {
  local t args=()
  for t in "$@"; do args+=("$t:$t"); done
  install_missing "${args[@]}"
}

# install_missing [--no-install-recommends] CMD:PACKAGE... is need_tools and
# need_apt.
install_missing() {
  local opts=() missing=() t
  if [ "$1" = --no-install-recommends ]; then
    opts=("$1")
    shift
  fi
  for t in "$@"; do
    command -v "${t%%:*}" >/dev/null || PATH="$PATH:/usr/sbin:/sbin" command -v "${t%%:*}" >/dev/null ||
      missing+=("${t#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  step "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null
}

# fetch_debs SUMS DIR: downloads each Debian package listed in SUMS ("sha256
# pool/path" lines, # comments) from deb.debian.org into out/cache/debs,
# refuses any whose sha256 is not the pinned one, and unpacks them all in DIR.
fetch_debs() {
  local sums=$1 dir=$2 mirror=http://deb.debian.org/debian cache=out/cache/debs want path file have
  mkdir -p "$cache" "$dir"
  grep -v '^#' "$sums" | while read -r want path; do
    file=$cache/${path##*/}
    if [ ! -f "$file" ]; then
      curl -fsS -o "$file.part" "$mirror/$path" || die "cannot download $mirror/$path"
      mv "$file.part" "$file"
    fi
    have=$(sha256sum "$file" | cut -d' ' -f1)
    if [ "$have" != "$want" ]; then
      rm -f "$file"
      die "sha256 mismatch for ${path##*/}: got $have, pinned $want (removed it)"
    fi
    dpkg-deb -x "$file" "$dir"
  done
}

# npm_pinned DEST PKG@VERSION... installs npm packages at pinned versions into
# DEST (git-ignored), once: a stamp naming them skips a second install.
# --ignore-scripts: nothing from the registry runs at install time.
npm_pinned() {
  local dest=$1
  shift
  local stamp="$dest/.installed-$(printf '%s\n' "$@" | sha256sum | cut -c1-16)"
  [ -f "$stamp" ] && return 0
  command -v npm >/dev/null || need_apt npm
  mkdir -p "$dest"
  step "npm install $*"
  [ -f "$dest/package.json" ] || echo '{"private": true}' >"$dest/package.json"
  npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dest" "$@" >/dev/null
  touch "$stamp"
}
