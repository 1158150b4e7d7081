"""An MCP server of the tests' own on the Python SDK (FastMCP), over Streamable HTTP on
127.0.0.1 at the port in $PORT, path /mcp:
    note    owns a `reason` parameter, which must reach it untouched (R5)
    record  answers with the arguments it received, as JSON text
"""

import json
import os

from mcp.server.fastmcp import FastMCP

server = FastMCP("own-python", host="127.0.0.1", port=int(os.environ["PORT"]), log_level="WARNING")


@server.tool()
def note(reason: str) -> str:
    """Notes why."""
    return json.dumps({"reason": reason}, separators=(",", ":"))


@server.tool()
def record(text: str) -> str:
    """Says what it got."""
    return json.dumps({"text": text}, separators=(",", ":"))


server.run(transport="streamable-http")
