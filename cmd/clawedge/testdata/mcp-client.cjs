// An MCP host built on the TypeScript SDK (@modelcontextprotocol/sdk), an
// implementation independent of clawedge's: it lists the tools of a clawedge MCP
// server and calls one, then prints what it saw as JSON on stdout.
//
//   node mcp-client.cjs stdio TOOL ARGS_JSON -- PROGRAM ARGS...   (starts the server)
//   node mcp-client.cjs http  TOOL ARGS_JSON URL TOKEN
//
// Run with NODE_PATH pointing at the node_modules scripts/fetch-mcp.sh installs.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

async function main() {
  const [mode, tool, args, ...rest] = process.argv.slice(2);
  let transport;
  if (mode === "stdio") {
    const cmd = rest.slice(rest.indexOf("--") + 1);
    transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), env: process.env, stderr: "inherit" });
  } else {
    const [url, token] = rest;
    transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: token ? { Authorization: "Bearer " + token } : {} },
    });
  }
  const client = new Client({ name: "node-host", version: "1.0.0" });
  await client.connect(transport);
  const listed = await client.listTools();
  const out = {
    tools: listed.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema })),
  };
  // The SDK checks a result against the tool's outputSchema from the listing:
  // a tool with one whose structuredContent is missing or does not match is
  // an error here.
  out.result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write("mcp-client: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
