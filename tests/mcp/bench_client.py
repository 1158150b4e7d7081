"""Times the Python SDK's client making one call over each of several Streamable HTTP
URLs in turn, round after round, so that every URL sees the same machine:

    python bench_client.py ROUNDS TOOL ARGUMENTS_JSON URL...

It prints a JSON array, for each URL, of each round trip's milliseconds after 100 rounds
of warm-up.
"""

import asyncio
import json
import sys
import time
from contextlib import AsyncExitStack

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(rounds: int, tool: str, arguments: dict, urls: list[str]) -> None:
    async with AsyncExitStack() as stack:
        sessions = []
        for url in urls:
            read, write, _ = await stack.enter_async_context(streamablehttp_client(url))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.list_tools()
            sessions.append(session)
        times = [[] for _ in urls]
        for round_ in range(rounds + 100):
            for at, session in enumerate(sessions):
                start = time.perf_counter()
                result = await session.call_tool(tool, arguments)
                took = (time.perf_counter() - start) * 1000
                if result.isError:
                    raise SystemExit(f"the call failed: {result}")
                if round_ >= 100:
                    times[at].append(took)
    print(json.dumps(times))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:]))
