#!/usr/bin/env bash
# Installs the second MQTT broker and client the MQTT tests run against, from
# npm at pinned versions, into third_party/aedes (git-ignored):
#
#   aedes     a broker written in JavaScript (not Mosquitto's C): it delivers
#             QoS 2 above a subscription's granted QoS, which broke our own client
#   mqtt      mqtt.js, the client that publishes and subscribes in those tests
#
# channels/mqtt/mqtttest/aedes.mjs drives both. Re-running is fast: a stamp
# naming the versions skips the install.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

aedes=1.2.0
mqttjs=5.16.0
dest=third_party/aedes
stamp=$dest/.installed-$aedes-$mqttjs

if [ -f "$stamp" ]; then
  exit 0
fi
command -v npm >/dev/null || need_apt npm
mkdir -p "$dest"
step "npm install aedes@$aedes mqtt@$mqttjs"
# --ignore-scripts: nothing from the registry runs at install time.
(cd "$dest" && [ -f package.json ] || echo '{"private": true}' >package.json)
npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dest" "aedes@$aedes" "mqtt@$mqttjs" >/dev/null
touch "$stamp"
