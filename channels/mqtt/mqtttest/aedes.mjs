// Drives aedes (a broker) and mqtt.js (a client), installed by
// scripts/fetch-aedes.sh into the directory CLAWEDGE_AEDES_DIR names, for the
// MQTT channel's tests: a second broker and client, written in JavaScript by
// people who are not us (aedes.go runs this file).
//
//   node aedes.mjs broker PORT                 serve on 127.0.0.1:PORT; prints "listening"; ends on stdin EOF
//   node aedes.mjs pub PORT                    read "topic<TAB>payload<TAB>qos" lines from stdin, publish each
//                                              and answer "ok" (QoS 1, 2: once the broker has acknowledged) or
//                                              "error: ..." on stdout; one process for all (node starts slowly)
//   node aedes.mjs sub PORT ID FILTER...       subscribe with QoS 1; prints "topic<TAB>retained<TAB>payload"
//                                              per message; reconnects and subscribes again by itself
import net from 'node:net'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

const require = createRequire(process.env.CLAWEDGE_AEDES_DIR + '/package.json')
const [mode, port, ...rest] = process.argv.slice(2)
const url = `mqtt://127.0.0.1:${port}`

if (mode === 'broker') {
  const { Aedes } = await import(pathToFileURL(require.resolve('aedes')).href)
  const broker = await Aedes.createBroker()
  const server = net.createServer(broker.handle)
  server.listen(Number(port), '127.0.0.1', () => console.log('listening'))
  process.stdin.on('end', () => process.exit(0)) // at once, as a broker that dies: the clients see their connections drop
  process.stdin.resume()
} else if (mode === 'pub') {
  const client = require('mqtt').connect(url, { protocolVersion: 4, reconnectPeriod: 100, connectTimeout: 10000 })
  const lines = (await import('node:readline')).createInterface({ input: process.stdin })
  lines.on('line', (line) => {
    const [topic, payload, qos] = line.split('\t')
    client.publish(topic, payload, { qos: Number(qos) }, (err) => {
      process.stdout.write(err ? `error: ${err.message}\n` : 'ok\n')
    })
  })
  lines.on('close', () => client.end(false, () => process.exit(0)))
} else if (mode === 'sub') {
  const [clientId, ...filters] = rest
  const client = require('mqtt').connect(url, { protocolVersion: 4, clientId, reconnectPeriod: 100 })
  client.on('connect', () => client.subscribe(filters, { qos: 1 }))
  client.on('message', (topic, payload, packet) => {
    process.stdout.write(`${topic}\t${packet.retain ? 1 : 0}\t${payload}\n`)
  })
  process.stdin.on('end', () => process.exit(0))
  process.stdin.resume()
} else {
  console.error(`unknown mode ${mode}`)
  process.exit(2)
}
