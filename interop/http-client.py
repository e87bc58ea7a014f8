"""Runs the same MCP session against URL (argv[1]) with the official Python SDK client over
Streamable HTTP and prints a normalized transcript (the session ends with DELETE when the
transport closes)."""
import asyncio
import json
import sys

import anyio

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def sampling(context, params):
    return types.CreateMessageResult(
        model="test", role="assistant", content=types.TextContent(type="text", text="sampled")
    )


async def elicitation(context, params):
    return types.ElicitResult(action="decline")


def texts(result):
    return [c.text for c in result.content if getattr(c, "text", None) is not None]


async def main(url):
    out = []
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(
            read, write, sampling_callback=sampling, elicitation_callback=elicitation
        ) as session:
            await session.initialize()
            tools = await session.list_tools()
            out.append(["tools", sorted(t.name for t in tools.tools)])
            out.append(["echo", texts(await session.call_tool("echo", {"message": "h\u00e9llo"}))])
            progress = []

            async def on_progress(p, total, message):
                progress.append(p)

            long = await session.call_tool(
                "trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=on_progress
            )
            out.append(["long", len(long.content)])
            out.append(["progress", len(progress)])
            out.append(["sampling", len((await session.call_tool("trigger-sampling-request", {"prompt": "hi"})).content)])
            out.append(["elicitation", len((await session.call_tool("trigger-elicitation-request", {})).content)])
            resources = await session.list_resources()
            out.append(["resources", len(resources.resources)])
            read_result = await session.read_resource(resources.resources[0].uri)
            out.append(["read", len(read_result.contents)])
            prompts = await session.list_prompts()
            out.append(["prompts", sorted(p.name for p in prompts.prompts)])
            many = await asyncio.gather(*(session.call_tool("get-sum", {"a": i, "b": i}) for i in range(1, 9)))
            out.append(["concurrent", [texts(r)[0] for r in many]])
            # Cancellation: the client gives up (notifications/cancelled); the session goes on.
            cancelled = "cancelled"
            with anyio.move_on_after(0.3):
                await session.call_tool("trigger-long-running-operation", {"duration": 3, "steps": 30})
                cancelled = "completed despite the cancellation"
            out.append(["cancel", cancelled])
            out.append(["after_cancel", texts(await session.call_tool("get-sum", {"a": 1, "b": 1}))])
    print(json.dumps(out, indent=1))


asyncio.run(main(sys.argv[1]))
