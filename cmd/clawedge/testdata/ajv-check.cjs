// Validates tool-call arguments against their tools' JSON Schemas with Ajv, a
// validator independent of clawedge's and of google/jsonschema-go (it is the one
// the TypeScript MCP SDK uses). Reads {"schemas": {TOOL: SCHEMA}, "calls":
// [{"name": TOOL, "arguments": {...}}]} on stdin and prints
// {"checked": N, "invalid": [{"index", "name", "errors"}]} on stdout.
//
// Run with NODE_PATH pointing at the node_modules scripts/fetch-mcp.sh installs.
const Ajv = require("ajv");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const { schemas, calls } = JSON.parse(input);
  // strict: false: the schemas carry annotations (description, default) Ajv's
  // strict mode would question; validation is unchanged.
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = {};
  for (const [name, schema] of Object.entries(schemas)) validators[name] = ajv.compile(schema);
  const invalid = [];
  calls.forEach((call, index) => {
    const validate = validators[call.name];
    if (!validate) invalid.push({ index, name: call.name, errors: ["no schema for this tool"] });
    else if (!validate(call.arguments)) invalid.push({ index, name: call.name, errors: validate.errors });
  });
  process.stdout.write(JSON.stringify({ checked: calls.length, invalid }));
});
