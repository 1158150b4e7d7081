"""The Python SDK's client: lists the tools and makes the calls of a scenario, then
prints {"tools", "results"} as JSON.

    python client.py SCENARIO.json -- server command args...
    python client.py SCENARIO.json --url URL          (Streamable HTTP)
    python client.py SCENARIO.json --sse URL          (the legacy HTTP+SSE transport)
"""

import asyncio
import json
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


@asynccontextmanager
async def connect(how: str, target: list[str]):
    if how == "--url":
        async with streamablehttp_client(target[0]) as (read, write, _session_id):
            yield read, write
    elif how == "--sse":
        async with sse_client(target[0]) as (read, write):
            yield read, write
    else:
        server = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(server) as (read, write):
            yield read, write


async def main(scenario_file: str, how: str, target: list[str]) -> None:
    with open(scenario_file, encoding="utf-8") as file:
        scenario = json.load(file)
    async with connect(how, target) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            results = []
            for call in scenario["calls"]:
                result = await session.call_tool(call["name"], call["arguments"])
                results.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]
    print(json.dumps({"tools": tools, "results": results}))


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] not in ("--", "--url", "--sse"):
        sys.exit("usage: python client.py SCENARIO.json (-- command args... | --url URL | --sse URL)")
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
