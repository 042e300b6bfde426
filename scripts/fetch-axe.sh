#!/usr/bin/env bash
# Installs axe-core, the accessibility checker the dashboard's tests inject
# into Debian's chromium (channels/web/a11y_test.go), from npm at a pinned
# version into third_party/axe (git-ignored; MPL-2.0, used by the tests only,
# never shipped). Re-running is fast: a stamp naming the version skips the
# install.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

axe=4.14.1
npm_pinned third_party/axe "axe-core@$axe"
