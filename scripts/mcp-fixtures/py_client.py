"""A second, independent MCP client for the tests: the Python SDK (`mcp` on PyPI) over
Streamable HTTP. Lists the tools, calls some, and prints what it saw as one JSON line.

    python py_client.py http://127.0.0.1:PORT/mcp
"""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError


def content(result):
    return [c.model_dump(mode="json", exclude_none=True) for c in result.content]


async def main(url):
    async with streamable_http_client(url) as (read, write, get_session_id):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            ok = await session.call_tool("add", {"a": 2, "b": 3})
            text = await session.call_tool("forecast", {"place": "Lyon", "days": 2})
            bad = await session.call_tool("add", {"a": "two", "b": 3})
            failed = await session.call_tool("divide", {"a": 1, "b": 0})
            unknown = None
            try:
                await session.call_tool("no_such_tool", {})
            except McpError as e:
                unknown = {"code": e.error.code, "message": e.error.message}
            print(json.dumps({
                "server": init.serverInfo.model_dump(mode="json", exclude_none=True),
                "protocolVersion": init.protocolVersion,
                "sessionId": get_session_id(),
                "tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools],
                "ok": {"isError": ok.isError, "content": content(ok), "structuredContent": ok.structuredContent},
                "text": {"isError": text.isError, "content": content(text)},
                "bad": {"isError": bad.isError, "content": content(bad)},
                "failed": {"isError": failed.isError, "content": content(failed)},
                "unknown": unknown,
            }))


asyncio.run(main(sys.argv[1]))
