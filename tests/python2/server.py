"""An MCP server of the tests' own on the Python SDK's 2.x line (MCPServer, serving
2026-07-28 and the earlier revisions), over Streamable HTTP on 127.0.0.1 at the port in
$PORT, path /mcp, or over stdio with `--stdio`:
    note, record  as tests/mcp/own_tools.py says
"""

import os
import sys
from pathlib import Path

import uvicorn
from mcp.server.mcpserver import MCPServer

# The tools are tests/mcp's Python server's own.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mcp"))
from own_tools import register  # noqa: E402

server = MCPServer("own-python2", log_level="WARNING")
register(server)


if __name__ == "__main__":
    if sys.argv[1:] == ["--stdio"]:
        server.run("stdio")
    else:
        app = server.streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
