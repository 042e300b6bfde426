// The official JavaScript A2A client (@a2a-js/sdk, pinned in
// scripts/fetch-a2a-js.sh) against a clawedge board: it reads the card,
// sends a command with a paired board's credentials (its client
// certificate, the board's certificate pinned by its SHA-256) and reads
// the task back. boards/interop_test.go runs it and checks what it prints.
//
//   CLAWEDGE_A2AJS_DIR=third_party/a2a-js node a2aclient.mjs URL CERT.pem KEY.pem PIN COMMAND
import https from "node:https";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The SDK as scripts/fetch-a2a-js.sh installed it (CLAWEDGE_A2AJS_DIR).
const sdk = pathToFileURL(path.join(process.env.CLAWEDGE_A2AJS_DIR, "node_modules/@a2a-js/sdk/dist/client/index.js"));
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } = await import(sdk.href);

const [url, certFile, keyFile, pin, command] = process.argv.slice(2);
const cert = fs.readFileSync(certFile), key = fs.readFileSync(keyFile);

// pinnedFetch is fetch over node:https: our certificate offered, the
// board's accepted only if its SHA-256 is the pinned one (no CA).
function pinnedFetch(input, init = {}) {
  const u = new URL(typeof input === "object" && "url" in input ? input.url : String(input));
  const headers = Object.fromEntries(new Headers(init.headers || {}).entries());
  return new Promise((resolve, reject) => {
    const req = https.request({
      hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method || "GET",
      headers, cert, key, rejectUnauthorized: false, agent: false,
    }, (res) => {
      const got = res.socket.getPeerCertificate().fingerprint256.replaceAll(":", "").toLowerCase();
      if (got !== pin) {
        reject(new Error("the board's certificate is not the pinned one"));
        res.destroy();
        return;
      }
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(", ") : v);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: h }));
      });
    });
    req.on("error", reject);
    if (init.body) req.write(init.body);
    req.end();
  });
}

const resolver = new DefaultAgentCardResolver({ fetchImpl: pinnedFetch });
const card = await resolver.resolve(url);
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl: pinnedFetch })],
  cardResolver: resolver,
}));
const client = await factory.createFromUrl(url);
const sent = await client.sendMessage({
  message: { messageId: "js-" + Date.now(), role: 1, parts: [{ content: { $case: "text", value: command } }] },
});
const task = sent.$case === "task" ? sent.value : sent.task ?? sent;
const read = await client.getTask({ id: task.id });
console.log(JSON.stringify({ card: { name: card.name, skills: card.skills.map((s) => s.id), security: Object.keys(card.securitySchemes || {}) }, sent, read }));
