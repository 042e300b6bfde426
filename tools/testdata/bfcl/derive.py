#!/usr/bin/env python3
"""Derive tools/testdata/bfcl-v3-tools.json.gz from the Berkeley Function Calling
Leaderboard's v3 data (github.com/ShishirPatil/gorilla, Apache-2.0).

usage: derive.py SRC_DIR OUT.json.gz
SRC_DIR holds BFCL_v3_*.json (JSON Lines, each with a "function" list) and the
multi_turn_func_doc/*.json files (one function per line). Each function is
converted as BFCL converts it for OpenAI-style models (bfcl_eval/model_handler/
utils.py: func_doc_language_specific_pre_processing for java and javascript,
then convert_to_tool with GORILLA_TO_OPENAPI; "." in names becomes "_"), then
written as an MCP tools/list definition {"name", "description", "inputSchema"}.
Tools are deduplicated by their whole JSON; a name that recurs with another
schema gets a suffix "__v2", "__v3"... so that the file is one valid tools file.
"""
import copy, glob, gzip, json, os, re, sys

M = {"integer": "integer", "number": "number", "float": "number", "string": "string",
     "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
     "dict": "object", "object": "object", "tuple": "array", "any": "string",
     "byte": "integer", "short": "integer", "long": "integer", "double": "number",
     "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
     "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
     "String": "string", "Bigint": "integer"}

def cast(props):
    for key, value in props.items():
        if "type" not in value:
            value["type"] = "string"
        else:
            t = value["type"]
            if t == "float":
                value["format"] = "float"
                value["description"] = value.get("description", "") + " This is a float type value."
            value["type"] = M.get(t, "string") if isinstance(t, str) else "string"
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = cast(value["properties"])
            elif "items" in value:
                it = value["items"]
                it["type"] = M[it["type"]]
                if it["type"] == "array" and "items" in it:
                    it["items"]["type"] = M[it["items"]["type"]]
                elif it["type"] == "object" and "properties" in it:
                    it["properties"] = cast(it["properties"])
    return props

def lang(fn, cat):
    props = fn["parameters"]["properties"]
    for value in props.values():
        if cat == "java" and value["type"] in ("ArrayList", "Array"):
            value.pop("items", None)
        if cat == "javascript" and value["type"] == "array":
            value.pop("items", None)
        value["type"] = "string"

def convert(fn, cat):
    fn = copy.deepcopy(fn)
    if cat in ("java", "javascript"):
        lang(fn, cat)
    name = re.sub(r"\.", "_", fn["name"])
    params = fn["parameters"]
    params["type"] = "object"
    params["properties"] = cast(params["properties"])
    return {"name": name, "description": fn.get("description", ""), "inputSchema": params}

def main(src, out):
    seen, tools, names = set(), [], {}
    files = sorted(glob.glob(os.path.join(src, "BFCL_v3_*.json"))) + sorted(glob.glob(os.path.join(src, "multi_turn_func_doc", "*.json")))
    for path in files:
        base = os.path.basename(path)
        cat = base[len("BFCL_v3_"):-len(".json")] if base.startswith("BFCL_v3_") else "multi_turn"
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                rec = json.loads(line)
                fns = rec["function"] if "function" in rec else ([rec] if "parameters" in rec else [])
                for fn in fns:
                    t = convert(fn, cat)
                    key = json.dumps(t, sort_keys=True)
                    if key in seen:
                        continue
                    seen.add(key)
                    n = names.get(t["name"], 0) + 1
                    names[t["name"]] = n
                    if n > 1:
                        t["name"] = "%s__v%d" % (t["name"], n)
                    tools.append(t)
    data = json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode()
    with open(out, "wb") as f, gzip.GzipFile(filename="", fileobj=f, mode="wb", mtime=0) as g:
        g.write(data)
    print(len(tools), "distinct tools;", sum(1 for v in names.values() if v > 1), "names with several schemas;", len(data), "bytes")

main(sys.argv[1], sys.argv[2])
