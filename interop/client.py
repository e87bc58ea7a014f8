"""The official MCP Python SDK client, run against a stdio server given on the command line
(`python client.py CMD ARGS...`), directly or through `rpcscan proxy`. Prints one JSON
object: how each step ended, reduced to what does not change between runs."""

import json
import sys

import anyio

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def sampling(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled {len(params.messages)}"),
        model="interop-fake",
        stop_reason="endTurn",
    )


async def elicitation(context, params):
    return types.ElicitResult(action="accept", content={"name": "ada"})


async def list_roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/interop", name="interop")])


def texts(result):
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


async def main():
    command, *args = sys.argv[1:]
    steps = {}

    async def step(name, run):
        try:
            steps[name] = {"ok": await run()}
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            code = getattr(getattr(e, "error", None), "code", None)
            steps[name] = {"error": code if code is not None else type(e).__name__}

    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params, errlog=open("/dev/null", "w")) as (read, write):
        async with ClientSession(
            read,
            write,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=list_roots,
        ) as session:
            init = await session.initialize()
            steps["server"] = init.server_info.name
            # The same steps on either server: interop/server.py, or server-everything.
            everything = init.server_info.name == "mcp-servers/everything"
            if everything:
                names = {"add": "get-sum", "slow": "trigger-long-running-operation",
                         "ask": "trigger-sampling-request", "elicit": "trigger-elicitation-request",
                         "roots": "get-roots-list"}
                resource, prompt = "demo://resource/dynamic/text/1", ("simple-prompt", None)
            else:
                names = {n: n for n in ("add", "slow", "ask", "elicit", "roots")}
                resource, prompt = "greeting://ada", ("review", {"code": "x = 1"})

            def slow_args(n):
                return {"duration": n / 10, "steps": n} if everything else {"steps": n}

            async def tools():
                return sorted(t.name for t in (await session.list_tools()).tools)

            async def progress():
                updates = []

                async def on_progress(progress, total, message):
                    updates.append(progress)

                result = await session.call_tool(names["slow"], slow_args(4), progress_callback=on_progress)
                return {"text": texts(result), "progress": len(updates) > 0}

            async def resources():
                read = await session.read_resource(resource)
                return [str(c.uri) for c in read.contents]

            async def prompts():
                listed = sorted(p.name for p in (await session.list_prompts()).prompts)
                got = await session.get_prompt(*prompt)
                return {"names": listed, "messages": len(got.messages)}

            async def cancelled():
                with anyio.move_on_after(0.3):
                    await session.call_tool(names["slow"], slow_args(30))
                    return "completed despite the cancellation"
                return "cancelled"

            async def in_flight():
                results = [None] * 12

                async def one(i):
                    results[i] = texts(await session.call_tool(names["add"], {"a": i, "b": 1000}))

                async with anyio.create_task_group() as tg:
                    for i in range(12):
                        tg.start_soon(one, i)
                return results

            async def call(name, arguments):
                result = await session.call_tool(names.get(name, name), arguments)
                # server-everything's texts hold timing and random bits; server.py's do not.
                return bool(result.is_error) if everything and name != "add" else texts(result)

            await step("tools", tools)
            await step("echo", lambda: call("echo", {"message": "héllo \u2028 \"x\""}))
            await step("add", lambda: call("add", {"a": 2, "b": 40}))
            await step("progress", progress)
            await step("sampling", lambda: call("ask", {"prompt": "hi", "maxTokens": 10} if everything else {"prompt": "hi"}))
            await step("elicitation", lambda: call("elicit", {}))
            await step("roots", lambda: call("roots", {}))
            await step("resources", resources)
            await step("prompts", prompts)
            await step("cancelled", cancelled)
            await step("in_flight", in_flight)
            await step("after_cancel", lambda: call("add", {"a": 1, "b": 1}))
    print(json.dumps(steps, indent=1, ensure_ascii=False))


anyio.run(main)
