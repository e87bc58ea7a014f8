"""Runs the same MCP session against URL (argv[1]) with the official Python SDK client over
Streamable HTTP and prints a normalized transcript (interop/http.sh compares the direct run
with the one through `rpcscan gateway`). The session ends with an explicit DELETE carrying the
session id, which must be accepted (200/204), after which a request with that id must be
refused; exits 1 when a check fails."""
import asyncio
import json
import sys

import anyio

from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import MCP_SESSION_ID, create_mcp_http_client, streamable_http_client
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER


async def sampling(context, params):
    return types.CreateMessageResult(
        model="test", role="assistant", content=types.TextContent(type="text", text="sampled")
    )


async def elicitation(context, params):
    return types.ElicitResult(action="decline")


def texts(result):
    return [c.text for c in result.content if getattr(c, "text", None) is not None]


async def task(session):
    """A task-augmented tools/call, followed to its end with tasks/get and tasks/result.

    The pinned SDK has no client API for tasks, and `ClientSession.send_request` validates
    every tools/call result as a CallToolResult, which the CreateTaskResult answering a
    task-augmented call is not. So the creating call goes out through the session's
    dispatcher, the layer under send_request (same transport and session, with the header
    send_request adds), and its result is validated here; tasks/get and
    tasks/result go through send_request."""
    params = types.CallToolRequestParams(
        name="simulate-research-query", arguments={"topic": "pipes"}, task=types.TaskMetadata(ttl=60000)
    ).model_dump(by_alias=True, mode="json", exclude_none=True)
    # What send_request adds on a session that negotiated a handshake-era version.
    headers = {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version}
    raw = await session._dispatcher.send_raw_request("tools/call", params, {"headers": headers})
    task_id = types.CreateTaskResult.model_validate(raw, by_name=False).task.task_id
    for _ in range(200):
        got = await session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)), types.GetTaskResult
        )
        if got.status not in ("working", "input_required"):
            result = await session.send_request(
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
                types.CallToolResult,
            )
            return {"status": got.status, "isError": bool(result.is_error)}
        await anyio.sleep(0.1)
    return "still working"


async def main(url):
    out = []
    # The headers the SDK sent last (session id, negotiated protocol version), seen by the
    # HTTP client it is given, so the session can be ended by hand below.
    sent = {}

    async def remember(request):
        for name in (MCP_SESSION_ID, MCP_PROTOCOL_VERSION_HEADER):
            if name in request.headers:
                sent[name] = request.headers[name]

    async with create_mcp_http_client() as http:
        http.event_hooks["request"].append(remember)
        async with streamable_http_client(url, http_client=http, terminate_on_close=False) as (read, write):
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
                out.append(["task", await task(session)])
                many = await asyncio.gather(*(session.call_tool("get-sum", {"a": i, "b": i}) for i in range(1, 9)))
                out.append(["concurrent", [texts(r)[0] for r in many]])
                # Cancellation: the client gives up (notifications/cancelled); the session goes on.
                cancelled = "cancelled"
                with anyio.move_on_after(0.3):
                    await session.call_tool("trigger-long-running-operation", {"duration": 3, "steps": 30})
                    cancelled = "completed despite the cancellation"
                out.append(["cancel", cancelled])
                out.append(["after_cancel", texts(await session.call_tool("get-sum", {"a": 1, "b": 1}))])
        # Session end, by hand: a ping carrying the session id is answered; then DELETE with
        # the id must be accepted (200/204), and the same ping must be refused. The MCP spec
        # asks for 404 there; server-everything's HTTP app answers 400 ("No valid session ID
        # provided") to an id it does not know, before its SDK transport sees the request.
        if MCP_SESSION_ID not in sent:
            sys.exit("the server gave no session id")
        headers = {**sent, "accept": "application/json, text/event-stream"}
        ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
        before = await http.post(url, json=ping, headers=headers)
        deleted = await http.delete(url, headers=sent)
        after = await http.post(url, json=ping, headers=headers)
        out.append(["ping_before_delete", before.status_code])
        out.append(["delete", deleted.status_code])
        out.append(["ping_after_delete", after.status_code])
    print(json.dumps(out, indent=1))
    if before.status_code != 200 or '"result":{}' not in before.text.replace(" ", ""):
        sys.exit(f"session end: a ping in the session was answered {before.status_code} {before.text!r}")
    if deleted.status_code not in (200, 204):
        sys.exit(f"session end: DELETE answered {deleted.status_code} {deleted.text!r}")
    refused = after.status_code == 404 or (after.status_code == 400 and "No valid session ID" in after.text)
    if not refused:
        sys.exit(f"session end: a ping after DELETE was answered {after.status_code} {after.text!r}")


asyncio.run(main(sys.argv[1]))
