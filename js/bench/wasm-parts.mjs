// Where the WebAssembly build's `parse` spends its time beside the scan, per message of one
// shape (image by default), in one process with every contender interleaved:
//
//   copy+classify, copy+parse  the module's exports alone (the message copied into module
//                              memory, then the scan; parse also writes the record)
//   +Message                   copy+parse, then the package's Message from the record
//                              (record.js's messageOf, as `parse` does)
//   +Message, no result view   the same with the record's `result` span cleared
//   +Message, no id            the same with the record's id cleared
//   api classify, api parse    the package's functions (what bench/bench.mjs times)
//
// Each pass reads kind, id value, method and tool name as bench.mjs's router does. Figures:
// the median and minimum over the rounds of ns per message. Then, unless --no-getters, the
// cost of making one image Message in a loop (2e5 calls, the best of 15) with `result`
// eager (as the package does) or as an own enumerable getter (an object literal's `get`,
// or Object.defineProperty with one shared getter): what a lazy `result` would cost.
//
//   node bench/wasm-parts.mjs [--rounds N] [--shape image] [--mb 4] [--no-getters]
//
// The corpus is bench.mjs's (under RPCSCAN_JS_TARGET or CARGO_TARGET_DIR): run
// `node bench/bench.mjs --shapes image` once first.
import { existsSync, readFileSync } from "node:fs";
import { cpus, homedir, loadavg } from "node:os";

import * as record from "../dist/record.js";
import * as wasm from "../dist/wasm.js";
import { readMessage, sink } from "./read.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i < 0 ? dflt : argv[i + 1];
};
const rounds = Number(opt("--rounds", 61));
const shape = opt("--shape", "image");
const mb = opt("--mb", "4");
const target = process.env.RPCSCAN_JS_TARGET ?? process.env.CARGO_TARGET_DIR ?? `${homedir()}/.cache/rpcscan/target-js`;
const file = `${target}/js-bench-corpus/${shape}-${mb}.ndjson`;
if (!existsSync(file)) throw new Error(`${file} is missing: run node bench/bench.mjs --shapes ${shape} --mb ${mb} once first`);

const moduleBytes = readFileSync(new URL("../dist/rpcscan.wasm", import.meta.url));
await wasm.init(moduleBytes);
// A second instance of the module for the bare calls.
const ex = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes), {}).exports;
ex.rpcscan_tables();
const tables = JSON.parse(
  new TextDecoder().decode(new Uint8Array(ex.memory.buffer, ex.rpcscan_out_ptr(), ex.rpcscan_out_len())),
);
const data = readFileSync(file);
const lines = [];
for (let start = 0, i = data.indexOf(10); i >= 0; start = i + 1, i = data.indexOf(10, start)) {
  if (i > start) lines.push(data.subarray(start, i));
}
// Grow the input buffer once, so the memory's views stay valid.
ex.rpcscan_input(Math.max(...lines.map((l) => l.length)), 0);
const u8 = new Uint8Array(ex.memory.buffer);
const rec = new Float64Array(ex.memory.buffer, ex.rpcscan_record(), record.RECORD_LEN);
const scratch = new Float64Array(record.RECORD_LEN);
const put = (b) => {
  u8.set(b, ex.rpcscan_input(b.length, b.byteOffset & 15) >>> 0);
  return b.length;
};
// rpcscan-js-core's slots: the result span's start, the id's type.
const RESULT = 15;
const ID_TYPE = 3;

/** copy+parse, then the Message from a copy of the record with slot `clear` set to -1 (none: -1). */
const withMessage = (clear) => (b) => {
  ex.rpcscan_parse(put(b), 1);
  scratch.set(rec);
  if (clear >= 0) scratch[clear] = -1;
  return readMessage(record.messageOf(tables, b, scratch, 0));
};
const contenders = {
  "copy+classify": (b) => ex.rpcscan_classify(put(b), 1),
  "copy+parse": (b) => {
    ex.rpcscan_parse(put(b), 1);
    return rec[0];
  },
  "+Message": withMessage(-1),
  "+Message, no result view": withMessage(RESULT),
  "+Message, no id": withMessage(ID_TYPE),
  "api classify": (b) => wasm.classify(b),
  "api parse": (b) => readMessage(wasm.parse(b)),
};
const times = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  const order = Object.entries(contenders);
  for (const [name, f] of r % 2 ? order.reverse() : order) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < lines.length; i++) f(lines[i]);
    times[name].push(Number(process.hrtime.bigint() - t0) / lines.length);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`# node ${process.version}, ${cpus()[0]?.model ?? "?"} x${cpus().length}, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`# ${shape}: ${lines.length} messages, ${rounds} rounds interleaved, ns per message`);
for (const [name, t] of Object.entries(times)) {
  console.log(`${name.padEnd(26)} median ${median(t).toFixed(0).padStart(6)}  min ${Math.min(...t).toFixed(0).padStart(6)}`);
}

if (!argv.includes("--no-getters")) {
  // One record in a loop: the Message as the package makes it, and with `result` as an own
  // enumerable getter (which spread, Object.keys and JSON.stringify still see).
  const b = lines[0];
  ex.rpcscan_parse(put(b), 1);
  const r = Float64Array.from(rec);
  const View = b.constructor[Symbol.species] ?? Uint8Array;
  const view = (s, len) => (s < 0 ? null : new View(b.buffer, b.byteOffset + s, len));
  // Every variant makes the same 13 members; only `result` differs.
  const m0 = record.messageOf(tables, b, r, 0);
  const [s, len] = [r[RESULT], r[RESULT + 1]];
  const shared = {
    get() {
      return view(s, len);
    },
    enumerable: true,
    configurable: true,
  };
  const { kind, id, method, toolName, params, errorCode, errorMessage, errorData } = m0;
  const { reason, code, offset, description } = m0;
  const variants = {
    "result null (a floor)": () => ({
      kind, id, method, toolName, params,
      result: null,
      errorCode, errorMessage, errorData, reason, code, offset, description,
    }),
    "result eager (the package)": () => ({
      kind, id, method, toolName, params,
      result: view(s, len),
      errorCode, errorMessage, errorData, reason, code, offset, description,
    }),
    "result as literal getter": () => ({
      kind, id, method, toolName, params,
      get result() {
        return view(s, len);
      },
      errorCode, errorMessage, errorData, reason, code, offset, description,
    }),
    "result by defineProperty": () =>
      Object.defineProperty(
        { kind, id, method, toolName, params, errorCode, errorMessage, errorData, reason, code, offset, description },
        "result",
        shared,
      ),
  };
  const best = {};
  for (let k = 0; k < 15; k++) {
    for (const [name, f] of Object.entries(variants)) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < 2e5; i++) sink.n += f().kind.length;
      best[name] = Math.min(best[name] ?? Infinity, Number(process.hrtime.bigint() - t0) / 2e5);
    }
  }
  console.log(`# one ${shape} Message in a loop, ns per call (best of 15 x 2e5)`);
  for (const [name, ns] of Object.entries(best)) console.log(`${name.padEnd(26)} ${ns.toFixed(0).padStart(6)}`);
}
console.log(`# load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")} (sink ${sink.n % 10})`);
