// Node benchmark: rpcscan's classify and parse (the N-API add-on and the WebAssembly build)
// against JSON.parse plus the JSON-RPC envelope checks, per message shape. The shapes are the
// Rust benchmarks' (benchmarks/src/shapes.rs: tiny, small, code, cjk, image), written by the
// bench/corpus crate from that very code.
//
//   node bench/bench.mjs [--rounds N] [--mb MB] [--shapes tiny,small,...] [--json FILE] [--check]
//
// Each message is a Buffer (a view of the corpus, as a stream decoder would hand it over).
// Contenders, per message:
//   JSON.parse+checks  buf.toString() (UTF-8), JSON.parse, then the envelope rules of
//                      docs/spec.md §1-§3 on the tree (jsonrpc, method/params/id types,
//                      result xor error, the error object), giving the kind, id, method and
//                      tool name. It does less than rpcscan: it cannot see duplicate keys,
//                      and rounds ids above 2^53.
//   classify           rpcscan's kind.
//   parse              rpcscan's Message, reading kind, id.value, method and toolName.
// Contenders run interleaved, one pass over the corpus each per round; the figure is the
// median of the rounds (ns per message, and MB/s); --json also writes the table (with the
// load averages before and after) to FILE. --check runs one small round and only
// checks that every contender gives the same kinds (js/ci.sh runs it).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, homedir, loadavg } from "node:os";
import { fileURLToPath } from "node:url";

import * as napi from "../dist/index.js";
import * as wasm from "../dist/wasm.js";
import { readMessage, sink } from "./read.mjs";

const JS = fileURLToPath(new URL("..", import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i < 0 ? dflt : argv[i + 1];
};
const check = argv.includes("--check");
const rounds = Number(opt("--rounds", check ? 1 : 7));
const mb = Number(opt("--mb", check ? 0.3 : 4));
const shapes = opt("--shapes", "tiny,small,code,cjk,image").split(",");
const jsonOut = opt("--json", null);
const loadBefore = loadavg();

await wasm.init(readFileSync(new URL("../dist/rpcscan.wasm", import.meta.url)));

/** About `mb` MB of NDJSON of `shape`, cached under the cargo target dir. */
function corpus(shape) {
  // js/ci.sh's target dir, where the corpus crate is built too.
  const target = process.env.RPCSCAN_JS_TARGET ?? process.env.CARGO_TARGET_DIR ?? `${homedir()}/.cache/rpcscan/target-js`;
  const dir = `${target}/js-bench-corpus`;
  const file = `${dir}/${shape}-${mb}.ndjson`;
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const out = execFileSync(
      "cargo",
      ["run", "-q", "--release", "-p", "rpcscan-js-bench-corpus", "--", shape, String(Math.round(mb * 1e6)), "1"],
      { cwd: JS, maxBuffer: 1 << 30, env: { ...process.env, CARGO_TARGET_DIR: target } },
    );
    writeFileSync(file, out);
  }
  const data = readFileSync(file);
  const lines = [];
  let start = 0;
  for (let i = data.indexOf(10); i >= 0; start = i + 1, i = data.indexOf(10, start)) {
    if (i > start) lines.push(data.subarray(start, i));
  }
  return { lines, bytes: data.length };
}

const isInteger = (v) => typeof v === "number" && Number.isInteger(v);
const isId = (v) => typeof v === "string" || isInteger(v);
const INVALID = { kind: "invalid", id: null, method: null, toolName: null };

/** JSON.parse, then the envelope rules on the tree. */
function jsonParse(buf) {
  let v;
  try {
    v = JSON.parse(buf.toString());
  } catch {
    return INVALID;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v) || v.jsonrpc !== "2.0") return INVALID;
  const hasId = "id" in v;
  if ("method" in v) {
    const method = v.method;
    if (typeof method !== "string" || "result" in v || "error" in v) return INVALID;
    const params = v.params;
    if ("params" in v && (params === null || typeof params !== "object")) return INVALID;
    if (!hasId) return { kind: "notification", id: null, method, toolName: null };
    if (!isId(v.id)) return INVALID;
    const name = method === "tools/call" && params && !Array.isArray(params) ? params.name : undefined;
    return { kind: "request", id: v.id, method, toolName: typeof name === "string" ? name : null };
  }
  const hasResult = "result" in v;
  const hasError = "error" in v;
  if (hasResult === hasError) return INVALID;
  if (hasResult) return isId(v.id) ? { kind: "result", id: v.id, method: null, toolName: null } : INVALID;
  const e = v.error;
  if (e === null || typeof e !== "object" || Array.isArray(e) || !isInteger(e.code) || typeof e.message !== "string") {
    return INVALID;
  }
  if (hasId && v.id !== null && !isId(v.id)) return INVALID;
  return { kind: "error", id: v.id ?? null, method: null, toolName: null };
}

/** The contenders: each returns the kind (and reads what a router reads). */
const contenders = [
  ["JSON.parse+checks", (b) => jsonParse(b).kind],
  ["napi classify", (b) => napi.classify(b)],
  ["napi parse", (b) => readMessage(napi.parse(b))],
  ["wasm classify", (b) => wasm.classify(b)],
  ["wasm parse", (b) => readMessage(wasm.parse(b))],
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

console.log(`# node ${process.version}, ${cpus()[0]?.model ?? "?"} x${cpus().length}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`# kernels: N-API ${napi.kernelLevel()}, WebAssembly ${wasm.kernelLevel()}`);
console.log(`# ${rounds} rounds interleaved, ~${mb} MB per shape, median per contender`);
const table = [];
for (const shape of shapes) {
  const { lines, bytes } = corpus(shape);
  // Before anything is timed: rpcscan's four contenders give the same kinds, and
  // JSON.parse+checks the same too, except where rpcscan is stricter than a tree can be
  // (the corpora hold such messages: duplicate keys, `1.0` as an id...).
  const rpcscan = lines.map((b) => napi.parse(b));
  let stricter = 0;
  for (const [name, f] of contenders) {
    const got = lines.map(f);
    for (let i = 0; i < lines.length; i++) {
      const ours = rpcscan[i];
      if (name === "JSON.parse+checks" && got[i] !== ours.kind && ours.kind === "invalid") {
        stricter++;
        continue;
      }
      if (got[i] !== ours.kind) {
        throw new Error(`${shape}: ${name} says ${got[i]} for line ${i}, rpcscan parse ${ours.kind} (${ours.reason})`);
      }
    }
  }
  if (check) {
    console.log(`check ${shape}: ${lines.length} messages, every contender agrees on every kind (but ${stricter} that only rpcscan finds invalid)`);
    continue;
  }
  const times = new Map(contenders.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, f] of r % 2 ? [...contenders].reverse() : contenders) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < lines.length; i++) f(lines[i]);
      times.get(name).push(Number(process.hrtime.bigint() - t0));
    }
  }
  const base = median(times.get("JSON.parse+checks"));
  for (const [name] of contenders) {
    const ns = median(times.get(name));
    table.push({
      shape,
      avg_bytes: Math.round(bytes / lines.length),
      contender: name,
      ns_per_msg: Math.round(ns / lines.length),
      "MB/s": Math.round(bytes / (ns / 1e3)),
      vs_JSON_parse: (base / ns).toFixed(2) + "x",
    });
  }
}
if (!check) {
  console.table(table);
  console.log(`# load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (sink ${sink.n % 10})`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ loadBefore, loadAfter: loadavg(), rounds, mb, table }, null, 1));
}
