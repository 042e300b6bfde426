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
npm_pinned third_party/aedes "aedes@$aedes" "mqtt@$mqttjs"
