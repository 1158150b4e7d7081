"""The tools of the tests' own Python servers, on either SDK line (1.x's FastMCP,
2.x's MCPServer, which declare tools alike):
    note    owns a `reason` parameter, which must reach it untouched (R5)
    record  answers with the arguments it received, as JSON text
"""

import json


def register(server) -> None:
    """Declares the tools on `server`."""

    @server.tool()
    def note(reason: str) -> str:
        """Notes why."""
        return json.dumps({"reason": reason}, separators=(",", ":"))

    @server.tool()
    def record(text: str) -> str:
        """Says what it got."""
        return json.dumps({"text": text}, separators=(",", ":"))
