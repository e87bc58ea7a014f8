// An MCP stdio gateway in a few dozen lines: it sits between a client and a server (spawned
// from the command line), forwards every message as the bytes it came in (ids, spacing and
// escapes untouched: nothing is parsed into objects and written back), answers invalid
// messages itself with the byte-exact JSON-RPC error (`respond`), and refuses `tools/call`
// requests for the tools given with --deny, answering with the request's own id.
//
//   node dist-examples/gateway.js [--deny TOOL]... [--log FILE] -- SERVER [ARGS...]
//
// --log writes one JSON line per message (direction, kind, raw id, method, tool, verdict),
// which examples/check-log.mjs reads to check that every request was answered with its own
// id, byte for byte.
import { spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import type { Writable } from "node:stream";

import { type ScanItem, Scanner, respond } from "rpcscan";

const args = process.argv.slice(2);
const deny = new Set<string>();
let log: WriteStream | undefined;
while (args.length > 0 && args[0] !== "--") {
  const flag = args.shift();
  const value = args.shift();
  if (value === undefined) throw new Error(`${flag} needs a value`);
  if (flag === "--deny") deny.add(value);
  else if (flag === "--log") log = createWriteStream(value);
  else throw new Error(`unknown option ${flag}`);
}
const [command, ...commandArgs] = args.slice(1);
if (command === undefined) {
  process.stderr.write("usage: gateway [--deny TOOL]... [--log FILE] -- SERVER [ARGS...]\n");
  process.exit(2);
}

const server = spawn(command, commandArgs, { stdio: ["pipe", "pipe", "inherit"] });
const NL = Buffer.from("\n");

function send(to: Writable, bytes: Uint8Array): void {
  to.write(bytes);
  to.write(NL);
}

function note(dir: "c2s" | "s2c", item: ScanItem, verdict: string): void {
  if (log === undefined) return;
  const m = item.type === "frame" ? item.message : null;
  log.write(
    JSON.stringify({
      dir,
      kind: m?.kind ?? "bad-frame",
      id: m?.id?.raw ?? (item.type === "bad-frame" ? (item.id?.raw ?? null) : null),
      method: m?.method ?? null,
      tool: m?.toolName ?? null,
      verdict,
    }) + "\n",
  );
}

/** The error answer to a request whose tool the policy refuses, with the request's own id. */
function refusal(idRaw: string, tool: string): Buffer {
  const message = JSON.stringify(`tool ${tool} is not allowed by the gateway`);
  return Buffer.from(`{"jsonrpc":"2.0","id":${idRaw},"error":{"code":-32602,"message":${message}}}`);
}

// Client → server: the policy.
const fromClient = new Scanner({ framing: "ndjson" });
function clientItems(items: ScanItem[]): void {
  for (const item of items) {
    if (item.type === "bad-frame") {
      // Too large to forward: answered at once, with the id found as the line streamed past.
      const id = item.id?.raw ?? "null";
      process.stdout.write(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32700,"message":"Parse error"}}\n`);
      note("c2s", item, "answered");
      continue;
    }
    const m = item.message;
    if (m.kind === "invalid") {
      send(process.stdout, respond(item.bytes)!);
      note("c2s", item, "answered");
    } else if (m.kind === "request" && m.toolName !== null && deny.has(m.toolName)) {
      send(process.stdout, refusal(m.id!.raw, m.toolName));
      note("c2s", item, "refused");
    } else {
      send(server.stdin, item.bytes);
      note("c2s", item, "forwarded");
    }
  }
}
process.stdin.on("data", (chunk: Buffer) => clientItems(fromClient.push(chunk)));
process.stdin.on("end", () => {
  clientItems(fromClient.end());
  server.stdin.end();
});

// Server → client: every frame as it came; bad frames are dropped (and logged).
const fromServer = new Scanner({ framing: "ndjson" });
function serverItems(items: ScanItem[]): void {
  for (const item of items) {
    if (item.type === "frame") send(process.stdout, item.bytes);
    note("s2c", item, item.type === "frame" ? "forwarded" : "dropped");
  }
}
server.stdout.on("data", (chunk: Buffer) => serverItems(fromServer.push(chunk)));
server.stdout.on("end", () => serverItems(fromServer.end()));

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => server.kill(signal));
}
server.on("exit", (code, signal) => {
  const done = () => process.exit(code ?? (signal ? 1 : 0));
  if (log) log.end(done);
  else done();
});
