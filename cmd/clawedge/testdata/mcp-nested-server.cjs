// A stdio MCP server built on the TypeScript SDK (@modelcontextprotocol/sdk),
// independent of clawedge's code, with one tool whose schema is nested (an
// object, an array of objects with an enum, a number and an array of strings,
// a nullable string, additionalProperties: false) and one tool the policy
// denies. Each call is appended as a JSON line to the file named by its first
// argument before it is answered; the answer echoes the arguments as JSON.
//
//   node mcp-nested-server.cjs CALLS_LOG
//
// Run with NODE_PATH pointing at the node_modules scripts/fetch-mcp.sh installs.
const fs = require("fs");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const log = process.argv[2];
const tools = [
  {
    name: "store_readings",
    description: "Store sensor readings of a site",
    inputSchema: {
      type: "object",
      properties: {
        site: {
          type: "object",
          properties: { name: { type: "string" }, floor: { type: "integer", minimum: 0, maximum: 9 } },
          required: ["name"],
          additionalProperties: false,
        },
        readings: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            properties: {
              sensor: { type: "string", enum: ["temp", "hum"] },
              value: { type: "number" },
              tags: { type: "array", items: { type: "string" } },
            },
            required: ["sensor", "value"],
            additionalProperties: false,
          },
        },
        note: { type: ["string", "null"] },
      },
      required: ["site", "readings"],
      additionalProperties: false,
    },
  },
  {
    name: "wipe",
    description: "Delete every stored reading",
    inputSchema: { type: "object", properties: {} },
  },
];

const server = new Server({ name: "nested", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const { name, arguments: args } = req.params;
  fs.appendFileSync(log, JSON.stringify({ name, arguments: args }) + "\n");
  if (!tools.some((t) => t.name === name)) {
    return { content: [{ type: "text", text: "no tool " + name }], isError: true };
  }
  return { content: [{ type: "text", text: "stored " + JSON.stringify(args) }] };
});
server.connect(new StdioServerTransport());
