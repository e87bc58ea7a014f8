// The WebAssembly module's simd128 kernels against its portable twin: the module as shipped
// (dist/rpcscan.wasm, built with simd128) and the same module built without it
// (dist-portable/rpcscan.wasm, `npm run build:wasm-portable`) must give the same verdict,
// reason, offset, id, method, tool name and raw members on every message, in strict and
// envelope mode. WebAssembly has no run-time feature detection, so the two levels are two
// builds; this is the wasm32 counterpart of the Rust tests that compare every x86 and ARM
// level with the scalar one.
//
// The messages: the fuzz corpora (differential, classify, respond), the repository's
// sample traffic and the JSONTestSuite files, each also cut short every few bytes; and
// generated strings with every byte value at every position of a 64-byte block (and past
// it), in a key, a method, an id and a skipped value, so every lane of every kernel sees
// every byte.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { REPO, hex, specRows } from "./helpers.mjs";

const dist = new URL("../dist/", import.meta.url);
const portablePath = new URL("../dist-portable/rpcscan.wasm", import.meta.url);

async function load(tag, file) {
  // A query string makes a separate instance of the entry, with its own module.
  const api = await import(new URL(`wasm.js?${tag}`, dist).href);
  api.initSync(new WebAssembly.Module(readFileSync(file)));
  return api;
}

assert.ok(existsSync(portablePath), "dist-portable/rpcscan.wasm is missing: run `npm run build:wasm-portable`");
const simd = await load("simd128", new URL("rpcscan.wasm", dist));
const portable = await load("portable", portablePath);

/** A message's verdict and members, comparable with deepEqual. */
function verdict(m) {
  const bytes = (b) => (b === null ? null : Buffer.from(b).toString("hex"));
  const big = (v) => (typeof v === "bigint" ? `${v}n` : v);
  return {
    kind: m.kind,
    id: m.id === null ? null : [m.id.raw, big(m.id.value)],
    method: m.method,
    toolName: m.toolName,
    params: bytes(m.params),
    result: bytes(m.result),
    errorCode: big(m.errorCode),
    errorMessage: m.errorMessage,
    errorData: bytes(m.errorData),
    reason: m.reason,
    code: m.code,
    offset: m.offset,
  };
}

let compared = 0;
function agree(msg, what) {
  for (const strict of [true, false]) {
    const options = { strict };
    const want = verdict(portable.parse(msg, options));
    const got = verdict(simd.parse(msg, options));
    if (got.kind !== want.kind || JSON.stringify(got) !== JSON.stringify(want)) {
      assert.deepEqual(got, want, `${what} (strict: ${strict}): ${Buffer.from(msg).toString("hex").slice(0, 300)}`);
    }
    assert.equal(simd.classify(msg, options), want.kind, what);
    compared++;
  }
}

/** Every file of a directory of the repository. */
const filesOf = (dir) => readdirSync(`${REPO}/${dir}`).map((name) => [`${dir}/${name}`, readFileSync(`${REPO}/${dir}/${name}`)]);
const linesOf = (file) => {
  const data = readFileSync(`${REPO}/${file}`);
  const lines = [];
  for (let start = 0, i = data.indexOf(10); start < data.length; start = i + 1, i = data.indexOf(10, start)) {
    lines.push(data.subarray(start, i < 0 ? data.length : i));
    if (i < 0) break;
  }
  return lines;
};

describe("WebAssembly simd128 kernels against the portable build", () => {
  test("the two modules run the levels they are built for", () => {
    assert.equal(simd.kernelLevel(), "simd128");
    assert.equal(portable.kernelLevel(), "scalar");
  });

  test("the fuzz corpora, the sample traffic, JSONTestSuite and the rule book's table, whole and cut short", () => {
    const messages = [
      ...filesOf("fuzz/corpus/differential"),
      ...filesOf("fuzz/corpus/classify"),
      ...filesOf("fuzz/corpus/respond"),
      ...filesOf("tests/data/jsontestsuite/test_parsing"),
      ...linesOf("examples/mcp-traffic.ndjson").map((l, i) => [`mcp-traffic.ndjson:${i + 1}`, l]),
      ...linesOf("tests/data/agree/traffic.ndjson").map((l, i) => [`agree/traffic.ndjson:${i + 1}`, l]),
      ...specRows().map((row, i) => [`spec row ${i}`, hex(row.message_hex)]),
    ];
    assert.ok(messages.length > 600, `${messages.length} messages`);
    for (const [what, msg] of messages) {
      agree(msg, what);
      // Cut short inside containers, strings and blocks.
      for (let cut = 1; cut < msg.length; cut += msg.length > 4096 ? 61 : 7) agree(msg.subarray(0, cut), `${what}[..${cut}]`);
    }
  });

  test("every byte value at every position of a string, in a key, a method, an id and a skipped value", () => {
    const text = (len, at, byte) => {
      const s = Buffer.alloc(len, "k");
      if (at < len) s[at] = byte;
      return s;
    };
    const join = (...parts) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));
    for (const len of [15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 130]) {
      for (let at = 0; at <= len; at++) {
        for (let byte = 0; byte < 256; byte++) {
          const s = text(len, at, byte);
          agree(join('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"', s, '","x":1}}'), `tool ${len} ${at} ${byte}`);
          if (byte % 3 === 0) {
            agree(join('{"jsonrpc":"2.0","id":"', s, '","result":{"', s, '":["', s, '"]}}'), `id/key ${len} ${at} ${byte}`);
            agree(join('{"jsonrpc":"2.0","method":"', s, '"}'), `method ${len} ${at} ${byte}`);
          }
        }
      }
    }
    // Strings long enough for the run's 256-byte steps (simd128's plain-ASCII test): the
    // bytes that end or break a plain run, at every position, in ASCII and in text that
    // turns non-ASCII half way.
    for (const len of [600, 1100]) {
      for (let at = 0; at <= len; at++) {
        for (const byte of [0x00, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5c, 0x7e, 0x7f, 0x80, 0xa1, 0xa2, 0xc3, 0xff]) {
          const s = text(len, at, byte);
          agree(join('{"jsonrpc":"2.0","id":2,"result":{"text":"', s, '","n":[1]}}'), `long ${len} ${at} ${byte}`);
          if (byte % 2 === 0) {
            const mixed = join(s.subarray(0, len >> 1), "é", s.subarray(len >> 1));
            agree(join('{"jsonrpc":"2.0","id":2,"result":{"text":"', mixed, '"}}'), `long mixed ${len} ${at} ${byte}`);
          }
        }
      }
    }
    // Every byte value inside the run's 512-byte quick test (bytes 256-767 of the string
    // after its first plain 256) and just past it, in base64-like text.
    const b64 = Buffer.from("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkrLw==".repeat(20).slice(0, 1400));
    for (const at of [0, 255, 256, 257, 400, 511, 767, 768, 1279, 1280, 1399]) {
      for (let byte = 0; byte < 256; byte++) {
        const s = Buffer.from(b64);
        s[at] = byte;
        agree(join('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"', s, '"}]}}'), `base64 ${at} ${byte}`);
      }
    }
    // Escapes and UTF-8 across a block boundary, at every offset.
    for (const special of ['\\"', "\\\\", "\\u00e9", "\\ud83d\\ude00", "\\x", "é", "日本", "\u{1F600}", "\xff"]) {
      for (let at = 0; at < 140; at++) {
        const s = join("k".repeat(at), Buffer.from(special, special === "\xff" ? "latin1" : "utf8"), "k".repeat(70));
        agree(join('{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"', s, '"}]}}'), `escape ${special} at ${at}`);
      }
    }
    assert.ok(compared > 100_000, `${compared} comparisons`);
  });
});
