// A normal session's latency (interop/http.sh): the official TypeScript SDK client runs one
// session per URL (argv[3...]) and calls `echo` N times (argv[2], after 5 to warm up) in
// each, alternating between the sessions call by call so that both see the same load on
// the machine; prints, per URL, the median and 90th percentile of the calls' round trips
// in milliseconds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const n = Number(process.argv[2]);
const sessions = [];
for (const url of process.argv.slice(3)) {
  const client = new Client({ name: "latency", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  sessions.push({ url, client, transport, times: [] });
}
for (let i = 0; i < n + 5; i++) {
  for (const session of sessions) {
    const started = process.hrtime.bigint();
    await session.client.callTool({ name: "echo", arguments: { message: String(i) } });
    if (i >= 5) session.times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}
const out = {};
for (const { url, client, transport, times } of sessions) {
  await transport.terminateSession();
  await client.close();
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  out[url] = { median: at(0.5), p90: at(0.9), n: times.length };
}
console.log(JSON.stringify(out));
