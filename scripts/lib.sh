# Shared helpers for the scripts: sourced, not run.

step() { printf '\n== %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

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

# need_apt installs the Debian packages whose commands are missing.
need_apt() {
  local missing=()
  for pkg in "$@"; do
    command -v "$pkg" >/dev/null || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  step "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
