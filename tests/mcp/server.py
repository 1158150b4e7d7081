"""An MCP server of the tests' own on the Python SDK (FastMCP), over Streamable HTTP on
127.0.0.1 at the port in $PORT, path /mcp:
    note, record  as own_tools.py says
With $REASONS_TEST_LOG set, the body of every POST it gets is appended to that file, one
line each, for a test to compare sessions by.
"""

import os

import uvicorn
from mcp.server.fastmcp import FastMCP

from own_tools import register

server = FastMCP("own-python", host="127.0.0.1", port=int(os.environ["PORT"]), log_level="WARNING")
register(server)


def logged(app, log):
    """`app`, appending the body of each POST to `log` before it is served."""

    async def wrapper(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        with open(log, "ab") as file:
            file.write(body.replace(b"\n", b" ") + b"\n")
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return wrapper


app = server.streamable_http_app()
if os.environ.get("REASONS_TEST_LOG"):
    app = logged(app, os.environ["REASONS_TEST_LOG"])
uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
