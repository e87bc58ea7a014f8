"""A small MCP server on the official Python SDK (MCPServer, the former FastMCP), for
interop/client.py: tools with progress, sampling, elicitation and roots, a resource, a prompt."""

import anyio
from pydantic import BaseModel

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("rpcscan-interop-python")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def echo(message: str) -> str:
    """Echo a message."""
    return message


@mcp.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress for `steps` tenths of a second."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps)
        await anyio.sleep(0.1)
    return f"done after {steps} steps"


@mcp.tool()
async def ask(prompt: str, ctx: Context) -> str:
    """Ask the client's model (sampling)."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=10,
    )
    return result.content.text if isinstance(result.content, types.TextContent) else "?"


class Answer(BaseModel):
    name: str


@mcp.tool()
async def elicit(ctx: Context) -> str:
    """Ask the user (elicitation)."""
    result = await ctx.elicit("Your name?", Answer)
    return f"{result.action}:{result.data.name if result.action == 'accept' else ''}"


@mcp.tool()
async def roots(ctx: Context) -> list[str]:
    """The client's roots."""
    return [str(r.uri) for r in (await ctx.session.list_roots()).roots]


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@mcp.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Please review: {code}"


if __name__ == "__main__":
    mcp.run()
