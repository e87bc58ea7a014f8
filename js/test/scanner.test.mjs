// Scanner, scanStream (web) and scanTransform (Node): the four framings of docs/spec.md §7,
// any chunking, bad frames reported and never fatal.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, test } from "node:test";

import { scanTransform } from "../dist/index.js";
import { builds, REPO, str } from "./helpers.mjs";

const SAMPLE = readFileSync(`${REPO}/examples/mcp-traffic.ndjson`);

/** What a test compares: every item with its bytes as text. */
const plain = (items) =>
  items.map((it) =>
    it.type === "frame"
      ? { ...it, bytes: str(it.bytes), message: { ...it.message, params: str(it.message.params), result: str(it.message.result), errorData: str(it.message.errorData) } }
      : it,
  );

function scanAll(rpc, input, chunk, options) {
  const s = new rpc.Scanner(options);
  const items = [];
  for (let i = 0; i < input.length; i += chunk) items.push(...s.push(input.subarray(i, i + chunk)));
  items.push(...s.end());
  return items;
}

for (const [name, rpc] of builds) {
  describe(`Scanner (${name})`, () => {
    test("NDJSON: the sample traffic, whole or a byte at a time, is the same frames", () => {
      const whole = scanAll(rpc, SAMPLE, SAMPLE.length);
      const lines = SAMPLE.toString("latin1").split("\n").filter((l) => l.trim() !== "");
      assert.equal(whole.length, lines.length);
      assert.deepEqual(whole.map((f) => f.message.kind), lines.map((l) => rpc.classify(Buffer.from(l, "latin1"))));
      assert.deepEqual(plain(scanAll(rpc, SAMPLE, 1)), plain(whole));
      assert.deepEqual(plain(scanAll(rpc, SAMPLE, 977, { framing: "ndjson" })), plain(whole));
    });

    test("offsets are stream offsets; the last line needs no newline", () => {
      const items = scanAll(rpc, Buffer.from('{"jsonrpc":"2.0","method":"a"}\r\n\n{"jsonrpc":"2.0","id":1,"result":{}}'), 5);
      assert.deepEqual(items.map((f) => [f.offset, f.bodyOffset, f.message.kind]), [[0, 0, "notification"], [33, 33, "result"]]);
    });

    test("a line over the limit is a bad frame with its id, and the stream goes on", () => {
      const input = Buffer.from('{"jsonrpc":"2.0","id":"r-1","result":"' + "x".repeat(100) + '"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
      for (const chunk of [1, 7, input.length]) {
        const [bad, ok, ...rest] = scanAll(rpc, input, chunk, { maxMessageSize: 64 });
        assert.equal(rest.length, 0);
        assert.deepEqual([bad.type, bad.error, bad.reason, bad.code, bad.offset], ["bad-frame", "too_large", "too_large", -32700, 0]);
        assert.deepEqual(bad.id, { raw: '"r-1"', value: "r-1" });
        assert.match(bad.description, /exceeds the maximum message size of 64 bytes/);
        assert.deepEqual([ok.type, ok.message.kind, ok.message.id.value], ["frame", "request", 2]);
      }
    });

    test("Content-Length: frames, a duplicate header reported, resynchronised", () => {
      const input = Buffer.from(
        'Content-Length: 2\r\n\r\n{}' +
          "Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}\r\n" +
          'Content-Length: 40\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}' +
          "Content-Length: 10\r\n\r\n{}",
      );
      for (const chunk of [1, 3, input.length]) {
        const items = scanAll(rpc, input, chunk);
        assert.deepEqual(items.map((i) => i.type === "frame" ? i.message.kind : i.error), ["invalid", "duplicate_length", "request", "truncated"]);
        assert.equal(items[0].message.reason, "bad_version");
        assert.deepEqual([items[1].offset, items[1].length], [23, 44]); // the header block and the body skipped to resync (rpcscan::frame::FrameError)
      }
      const s = new rpc.Scanner();
      s.push("Content-Length: 2\r\n\r\n{}");
      assert.equal(s.framing, "content-length");
      s.close();
    });

    test("SSE: events joined from data lines, event names and ids", () => {
      const input = Buffer.from(
        'event: message\nid: 7\ndata: {"jsonrpc":"2.0",\ndata: "id":1,"result":{}}\n\n: keep-alive\n\ndata: {"jsonrpc":"2.0","method":"n"}\n\n',
      );
      for (const chunk of [1, 10, input.length]) {
        const items = scanAll(rpc, input, chunk);
        assert.deepEqual(
          items.map((i) => [i.message.kind, i.event, i.lastEventId, i.bodyOffset === null]),
          [["result", "message", "7", true], ["notification", null, "7", false]],
        );
        assert.equal(str(items[0].bytes), '{"jsonrpc":"2.0",\n"id":1,"result":{}}');
      }
    });

    test("json-seq: records after RS, junk before the first reported", () => {
      const input = Buffer.from('x\x1e{"jsonrpc":"2.0","method":"a"}\n\x1e{"jsonrpc":"2.0","id":1,"result":1}\n');
      const items = scanAll(rpc, input, 4, { framing: "json-seq" });
      assert.deepEqual(items.map((i) => i.type === "frame" ? i.message.kind : i.error), ["junk", "notification", "result"]);
    });

    test("envelope mode through the scanner", () => {
      const input = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"a":[1,]}}\n');
      assert.equal(scanAll(rpc, input, 100)[0].message.kind, "invalid");
      assert.equal(scanAll(rpc, input, 100, { strict: false })[0].message.kind, "result");
    });

    test("a closed scanner refuses more", () => {
      const s = new rpc.Scanner();
      s.end();
      assert.throws(() => s.push("{}"), /closed/);
      assert.equal(s.framing, null);
    });

    test("scanStream: a web TransformStream", async () => {
      const chunks = [];
      for (let i = 0; i < SAMPLE.length; i += 1000) chunks.push(SAMPLE.subarray(i, i + 1000));
      const source = new ReadableStream({
        start(c) {
          for (const x of chunks) c.enqueue(x);
          c.close();
        },
      });
      const items = [];
      for await (const item of source.pipeThrough(rpc.scanStream())) items.push(item);
      assert.deepEqual(plain(items), plain(scanAll(rpc, SAMPLE, SAMPLE.length)));
    });
  });
}

test("scanTransform: a Node Transform in a pipeline (N-API build)", async () => {
  const items = [];
  await pipeline(
    Readable.from([SAMPLE.subarray(0, 5000), SAMPLE.subarray(5000), Buffer.from("\nnot json\n")]),
    scanTransform({ framing: "ndjson" }),
    new Writable({
      objectMode: true,
      write(item, _enc, done) {
        items.push(item);
        done();
      },
    }),
  );
  const last = items.at(-1);
  assert.deepEqual([last.type, last.message.kind, last.message.reason], ["frame", "invalid", "syntax"]);
  assert.equal(items.length, SAMPLE.toString().split("\n").filter((l) => l.trim()).length + 1);
});
