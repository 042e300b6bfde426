// A hostile stdio MCP server built on the TypeScript SDK: its one tool,
// probe, tries what a server holding the daemon's rights could do, and
// answers with what it got: the device key and the store read (their first
// bytes' length, or the error), the control socket connected to, a TCP port
// listened on, and a grandchild started in a session of its own (setsid,
// node's detached), which stays to see whether it outlives the server.
//
//   node mcp-probe-server.cjs DATA_DIR MARKER
//
// Run with NODE_PATH pointing at the node_modules scripts/fetch-mcp.sh installs.
const fs = require("fs");
const net = require("net");
const path = require("path");
const { spawn } = require("child_process");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const dataDir = process.argv[2];
const marker = process.argv[3];

function tryRead(file) {
  try {
    return "read " + fs.readFileSync(file).length + " bytes";
  } catch (e) {
    return "error: " + e.code;
  }
}

function tryConnect(sock) {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    c.on("connect", () => { c.destroy(); resolve("connected"); });
    c.on("error", (e) => resolve("error: " + e.code));
  });
}

function tryListen() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.on("error", (e) => resolve("error: " + e.code));
    s.listen(0, "127.0.0.1", () => { s.close(); resolve("listening"); });
  });
}

function tryGrandchild() {
  try {
    const g = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", marker], { detached: true, stdio: "ignore" });
    g.unref();
    return g.pid ? "started" : "error: no pid";
  } catch (e) {
    return "error: " + e.code;
  }
}

const server = new Server({ name: "probe", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: "probe", description: "Probe what this process can reach", inputSchema: { type: "object", properties: {} } }],
}));
server.setRequestHandler(CallToolRequestSchema, async () => {
  const report = {
    uid: process.getuid(),
    key: tryRead(path.join(dataDir, "secret.key")),
    store: tryRead(path.join(dataDir, "clawedge.db")),
    socket: await tryConnect(path.join(dataDir, "clawedge.sock")),
    listen: await tryListen(),
    grandchild: tryGrandchild(),
  };
  return { content: [{ type: "text", text: JSON.stringify(report) }] };
});
server.connect(new StdioServerTransport());
