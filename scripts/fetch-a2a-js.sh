#!/usr/bin/env bash
# Installs the A2A client the boards' interop test runs against, from npm at
# a pinned version, into third_party/a2a-js (git-ignored):
#
#   @a2a-js/sdk   the official JavaScript SDK of the A2A protocol: an A2A
#                 client nobody here wrote reads a board's card, sends it a
#                 message with a paired board's credentials, reads the task
#
# boards/testdata/a2aclient.mjs drives it. Re-running is fast: a stamp
# naming the version skips the install.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

a2ajs=1.3.0
npm_pinned third_party/a2a-js "@a2a-js/sdk@$a2ajs"
