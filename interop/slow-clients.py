"""Slow clients for interop/http.sh: `python3 slow-clients.py PORT HEADERS BODIES SECONDS`
opens HEADERS connections that send a request's header block a byte a second and BODIES
that send a whole head then the body a byte a second, all at once on loopback; prints
`connected` when all are open, then after at most SECONDS a JSON summary: for each kind,
how many got which status (or "closed" with no answer, "open" still waiting)."""
import asyncio
import json
import resource
import sys

port, n_header, n_body, seconds = (int(a) for a in sys.argv[1:5])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

HEADER = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "
BODY = (
    b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"accept: application/json, text/event-stream\r\ncontent-length: 100000\r\n\r\n{"
)


async def slow(kind, opened):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(HEADER if kind == "header" else BODY)
    opened.release()

    async def drip():
        try:
            while True:
                await asyncio.sleep(1)
                writer.write(b"x")
                await writer.drain()
        except (ConnectionError, OSError):
            pass

    dripping = asyncio.create_task(drip())
    try:
        answer = await asyncio.wait_for(reader.read(4096), seconds)
        outcome = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else "closed"
    except asyncio.TimeoutError:
        outcome = "open"
    except (ConnectionError, OSError):
        outcome = "closed"
    dripping.cancel()
    writer.close()
    return kind, outcome


async def main():
    opened = asyncio.Semaphore(0)
    tasks = []
    for i in range(n_header + n_body):
        tasks.append(asyncio.create_task(slow("header" if i < n_header else "body", opened)))
        if i % 100 == 99:  # in batches: the listen backlog is finite
            await asyncio.sleep(0.05)
    for _ in tasks:
        await opened.acquire()
    print("connected", flush=True)
    summary = {"header": {}, "body": {}}
    for kind, outcome in await asyncio.gather(*tasks):
        summary[kind][outcome] = summary[kind].get(outcome, 0) + 1
    print(json.dumps(summary, sort_keys=True), flush=True)


asyncio.run(main())
