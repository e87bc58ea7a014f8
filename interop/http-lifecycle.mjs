// SIGHUP and SIGTERM to `rpcscan gateway` in the middle of an official TypeScript SDK
// client's session (interop/http.sh): argv = URL, the gateway's pid, its --config file.
// 1. A reload that denies `echo`: the session goes on, `echo` is refused from then on, and
//    a kept-alive connection opened before the reload is reused after it (not dropped).
// 2. SIGTERM while a long tool call streams its progress: the call ends with its result,
//    new connections are refused meanwhile. Prints a JSON transcript; exits 1 on a failure.
import { writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, pid, config] = [new URL(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const client = new Client({ name: "lifecycle", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(url);
client.onerror = () => {}; // the standalone SSE stream is cut at the drain's end
await client.connect(transport);
out.echoBefore = (await client.callTool({ name: "echo", arguments: { message: "one" } })).content[0].text;

// A ping over one kept-alive socket, before and after the reload.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const ping = (id) => new Promise((resolve, reject) => {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
  const req = http.request(url, {
    method: "POST", agent,
    headers: {
      "content-type": "application/json", accept: "application/json, text/event-stream",
      "mcp-session-id": transport.sessionId, "mcp-protocol-version": transport.protocolVersion,
      "mcp-method": "ping",
    },
  }, (res) => {
    let text = "";
    res.on("data", (d) => (text += d)).on("end", () => resolve({ status: res.statusCode, reused: req.reusedSocket, text }));
  });
  req.on("error", reject);
  req.end(body);
});
out.pingBefore = (await ping(901)).status;

writeFileSync(config, 'deny-tool = ["echo"]\n');
process.kill(pid, "SIGHUP");
let denied = null;
for (let i = 0; i < 100 && denied === null; i++) {
  try {
    await client.callTool({ name: "echo", arguments: { message: "two" } });
    await sleep(50);
  } catch (e) {
    denied = e.code;
  }
}
out.echoAfterReload = denied;
const after = await ping(902);
out.pingAfterReload = { status: after.status, sameConnection: after.reused };
out.sumAfterReload = (await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } })).content[0].text;
agent.destroy();

// SIGTERM mid-call: the call streams progress for 3 s and must end with its result.
let progress = 0;
const long = client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 3, steps: 3 } },
  undefined, { onprogress: () => progress++, timeout: 20000 });
await sleep(700);
process.kill(pid, "SIGTERM");
await sleep(300);
out.newConnectionAfterSigterm = await new Promise((resolve) => {
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on("connect", () => { socket.destroy(); resolve("accepted"); });
  socket.on("error", (e) => resolve(e.code));
});
const result = await long;
out.longAfterSigterm = { content: result.content.length, progress };
console.log(JSON.stringify(out));
const ok = out.echoBefore && out.pingBefore === 200 && out.echoAfterReload === -32602
  && out.pingAfterReload.status === 200 && out.pingAfterReload.sameConnection === true
  && out.newConnectionAfterSigterm === "ECONNREFUSED" && result.content.length > 0 && progress === 3;
process.exit(ok ? 0 : 1);
