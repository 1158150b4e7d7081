"""The Python SDK's 2.x client (the 2026-07-28 line, which probes `server/discover` first
and falls back to `initialize`): lists the tools and makes the calls of a scenario, then
prints {"tools", "results"} as JSON, as tests/mcp/client.py does for the 1.x line.

    python client.py SCENARIO.json -- server command args...
    python client.py SCENARIO.json --url URL          (Streamable HTTP)
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main(scenario_file: str, how: str, target: list[str]) -> None:
    with open(scenario_file, encoding="utf-8") as file:
        scenario = json.load(file)
    server = target[0] if how == "--url" else StdioServerParameters(command=target[0], args=target[1:])
    async with Client(server) as client:
        listed = await client.list_tools()
        results = []
        for call in scenario["calls"]:
            result = await client.call_tool(call["name"], call["arguments"])
            results.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        version = client.protocol_version
    tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]
    print(json.dumps({"tools": tools, "results": results, "version": version}))


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] not in ("--", "--url"):
        sys.exit("usage: python client.py SCENARIO.json (-- command args... | --url URL)")
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
