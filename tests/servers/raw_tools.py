"""A stdio server written by hand, not with toolkit: it lists the tools given as JSON in its first argument as they
are (any schema, any name, or what MCP does not allow), names itself by its second argument, and answers every call
with an empty result. `python raw_tools.py TOOLS_JSON [NAME]`."""

from __future__ import annotations

import json
import sys

TOOLS = json.loads(sys.argv[1])
NAME = sys.argv[2] if len(sys.argv) > 2 else "raw"

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        info = {"name": NAME, "version": "1"}
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": info,
        }
    elif message["method"] == "tools/list":
        result = {"tools": TOOLS}
    else:
        result = {"content": []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
