// Checks an `rpcscan proxy --log` file (node check-log.mjs LOG): every record is JSON with
// the documented fields, at least one request was cancelled, and no cancelled request was
// answered afterwards (neither by the server through the proxy nor by the proxy itself:
// every answer the client gets is an s2c record, the proxy's own with "origin":"proxy").
import { readFileSync } from "node:fs";

const records = readFileSync(process.argv[2], "utf8").trim().split("\n").map((l) => JSON.parse(l));
const problems = [];
const cancelled = new Set();
for (const r of records) {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(r.ts)) problems.push(`bad ts ${r.ts}`);
  if (!["c2s", "s2c", "proxy"].includes(r.dir)) problems.push(`bad dir ${r.dir}`);
  if (r.dir === "proxy" && r.event === "cancelled") cancelled.add(JSON.stringify(r.id));
  if (r.origin !== undefined && r.origin !== "proxy") problems.push(`bad origin ${r.origin}`);
  // An invalid client line is a c2s record holding it as a string.
  if (typeof r.msg === "string" && r.dir !== "c2s") problems.push(`a string msg: ${JSON.stringify(r)}`);
  const msg = typeof r.msg === "object" && r.msg !== null ? r.msg : undefined;
  const isResponse = msg && msg.method === undefined && ("result" in msg || "error" in msg);
  const answers = isResponse && r.dir === "s2c";
  if (answers && cancelled.has(JSON.stringify(msg.id))) problems.push(`cancelled ${msg.id} answered`);
  if (r.event === "server_gone") problems.push(`a request was answered -32603: ${JSON.stringify(r)}`);
}
if (cancelled.size === 0) problems.push("no cancellation in the log");
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`log ok: ${records.length} records, ${cancelled.size} cancelled request(s), none answered`);
