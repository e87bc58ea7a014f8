// classify, parse, respond and rewriteId through both builds (docs/spec.md §1–§5).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { builds, cli, REPO, str } from "./helpers.mjs";

const TEXT = { [-32700]: "Parse error", [-32600]: "Invalid Request", [-32601]: "Method not found" };
const spaced = (id, code) =>
  `{"jsonrpc": "2.0", "id": ${id}, "error": {"code": ${code}, "message": "${TEXT[code]}"}}`;
const SAMPLE = `${REPO}/examples/mcp-traffic.ndjson`;

for (const [name, rpc] of builds) {
  describe(`api (${name})`, () => {
    test("offsets point at the first offending byte", () => {
      for (const [msg, offset] of [['{"a":}', 5], ["\xef\xbb\xbf{}", 0], ["{} x", 3], ["  ", 2]]) {
        const m = rpc.parse(Buffer.from(msg, "latin1"));
        assert.equal(m.offset, offset, msg);
        assert.equal(m.code, -32700);
        assert.match(m.description, new RegExp(`\\(-32700\\) at byte ${offset}$`));
      }
    });

    test("integer ids are exact: numbers while safe, bigints beyond", () => {
      for (const [raw, value] of [
        ["7", 7],
        ["-12", -12],
        ["9007199254740991", 9007199254740991],
        ["9007199254740993", 9007199254740993n],
        ["18446744073709551617", 18446744073709551617n],
        ["-10000000000000000000000000000000000000007", -10000000000000000000000000000000000000007n],
      ]) {
        const m = rpc.parse(`{"jsonrpc":"2.0","id":${raw},"method":"m"}`);
        assert.deepEqual(m.id, { raw, value }, raw);
      }
      // -0 keeps its text; its value is the number -0.
      const zero = rpc.parse('{"jsonrpc":"2.0","id":-0,"method":"m"}').id;
      assert.equal(zero.raw, "-0");
      assert.ok(Object.is(zero.value, -0));
      const e = rpc.parse('{"jsonrpc":"2.0","id":1,"error":{"code":-184467440737095516160,"message":"x"}}');
      assert.equal(e.errorCode, -184467440737095516160n);
    });

    test("a tool name envelope mode only noted, with a bad escape: its raw text, no throw", () => {
      for (const name of ["k\\k", "k\\uZZZZ", "\\q"]) {
        const msg = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}"}}`;
        assert.equal(rpc.parse(msg).kind, "invalid", name);
        const m = rpc.parse(msg, { strict: false });
        assert.deepEqual([m.kind, m.toolName], ["request", name], name);
      }
    });

    test("string and null ids, raw members as bytes", () => {
      let m = rpc.parse(String.raw`{"jsonrpc":"2.0","id":"a\u0062","method":"n\u00e9","params":[1, 2]}`);
      assert.deepEqual(m.id, { raw: String.raw`"a\u0062"`, value: "ab" });
      assert.equal(m.method, "n\u00e9");
      assert.equal(str(m.params), "[1, 2]");
      m = rpc.parse('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"x":1}}}');
      assert.deepEqual([m.kind, m.id], ["error", { raw: "null", value: null }]);
      assert.deepEqual([m.errorCode, m.errorMessage, str(m.errorData), m.result], [-32700, "Parse error", '{"x":1}', null]);
      m = rpc.parse('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      assert.deepEqual([m.kind, m.id, m.params], ["notification", null, null]);
      m = rpc.parse('{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}');
      assert.deepEqual(JSON.parse(str(m.result)), { tools: [] });
      // A lone surrogate escape: a JavaScript string can hold it.
      m = rpc.parse(String.raw`{"jsonrpc":"2.0","id":"\ud800","method":"m"}`);
      assert.equal(m.id.value, "\ud800");
    });

    test("the same texts come back for repeated methods, and the right ones", () => {
      // Texts are reused by hash: different methods must never be confused.
      const methods = ["tools/call", "tools/list", "ping", "a", "b", "ab", "ba", "x".repeat(64), "x".repeat(65)];
      for (let round = 0; round < 3; round++) {
        for (const method of methods) {
          assert.equal(rpc.parse(`{"jsonrpc":"2.0","id":1,"method":"${method}"}`).method, method);
        }
      }
    });

    test("the tool name of tools/call", () => {
      const m = rpc.parse('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"météo","arguments":{}}}');
      assert.equal(m.toolName, "météo");
      assert.equal(rpc.parse('{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"x"}}').toolName, null);
      assert.equal(rpc.parse('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}').toolName, null);
    });

    test("strings: non-ASCII text in, UTF-8 spans out", () => {
      const text = '{"jsonrpc":"2.0","id":"ключ","method":"工具/call","params":{"emoji":"😀"}}';
      const m = rpc.parse(text);
      assert.deepEqual([m.kind, m.id.value, m.id.raw, m.method], ["request", "ключ", '"ключ"', "工具/call"]);
      assert.deepEqual(JSON.parse(str(m.params)), { emoji: "😀" });
      assert.equal(rpc.classify(text), "request");
      const bad = rpc.parse('{"jsonrpc":"2.0","id":"é","method":5}');
      assert.deepEqual([bad.reason, bad.id.raw], ["bad_method", '"é"']);
    });

    test("raw members are views of the caller's bytes, not copies", () => {
      const msg = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}';
      const big = Buffer.from(`garbage${msg}more garbage`);
      for (const input of [big.subarray(7, 7 + msg.length), new Uint8Array(big.buffer, big.byteOffset + 7, msg.length)]) {
        const m = rpc.parse(input);
        assert.equal(m.params.buffer, big.buffer);
        assert.equal(m.params.byteOffset, big.byteOffset + 7 + msg.indexOf('{"name"'));
        big[7 + msg.indexOf('"t"') + 1] = "u".charCodeAt(0);
        assert.equal(str(m.params), '{"name":"u"}');
        big[7 + msg.indexOf('"t"') + 1] = "t".charCodeAt(0);
      }
      assert.equal(rpc.classify(new TextEncoder().encode(msg).buffer), "request");
    });

    test("respond answers as rpcscan respond", () => {
      const req = '{"jsonrpc":"2.0","id":"q","method":"resources/list"}';
      assert.equal(str(rpc.respond(req)), spaced('"q"', -32601));
      assert.equal(rpc.respond(req, ["resources/list"]), null);
      assert.equal(rpc.respond(req, new Set(["resources/list"])), null);
      assert.equal(rpc.respond('{"jsonrpc":"2.0","id":1,"method":"tools/call"}'), null);
      assert.equal(rpc.respond('{"jsonrpc":"2.0","method":"nope"}'), null);
      assert.equal(rpc.respond('{"jsonrpc":"2.0","id":1,"result":{}}'), null);
      assert.equal(rpc.respond('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}'), null);
      assert.equal(str(rpc.respond("")), spaced("null", -32700));
      assert.equal(str(rpc.respond('{"jsonrpc":"1.0","id":9,"method":"x"}', [])), spaced("9", -32600));
      // A method name with a newline is one name, not two.
      assert.equal(rpc.respond(String.raw`{"jsonrpc":"2.0","id":1,"method":"a\nb"}`, ["a\nb"]), null);
      assert.notEqual(rpc.respond(String.raw`{"jsonrpc":"2.0","id":1,"method":"a"}`, ["a\nb"]), null);
    });

    test("respond matches the CLI on the sample traffic", (t) => {
      const bin = cli();
      if (!bin) return t.skip("no rpcscan binary: set RPCSCAN_BIN");
      const supported = ["tools/list", "tools/call"];
      const lines = readFileSync(SAMPLE, "latin1").split("\n").filter((l) => l.trim());
      const want = execFileSync(bin, ["respond", "--supported", supported.join(","), SAMPLE], { encoding: "latin1" })
        .split("\n")
        .slice(0, -1);
      const ours = [];
      for (const line of lines) {
        const bytes = Buffer.from(line, "latin1");
        const answer = rpc.respond(bytes, supported);
        if (answer !== null) ours.push(Buffer.from(answer).toString("latin1"));
        else if (rpc.classify(bytes) === "request") ours.push("supported");
      }
      assert.ok(want.length > 20);
      assert.deepEqual(ours, want);
    });

    test("rewriteId replaces the id and keeps every other byte", () => {
      const msg = '{"jsonrpc": "2.0", "id" : -0 , "method":"m"}';
      assert.equal(str(rpc.rewriteId(msg, "x-7")), '{"jsonrpc": "2.0", "id" : "x-7" , "method":"m"}');
      assert.equal(str(rpc.rewriteId(msg, 12)), '{"jsonrpc": "2.0", "id" : 12 , "method":"m"}');
      assert.equal(str(rpc.rewriteId(msg, 18446744073709551617n)), '{"jsonrpc": "2.0", "id" : 18446744073709551617 , "method":"m"}');
      assert.equal(str(rpc.rewriteId(msg, 'q"\u2028')), String.raw`{"jsonrpc": "2.0", "id" : "q\"` + "\u2028" + '" , "method":"m"}');
      // An original id goes back exactly, escapes and all.
      const original = rpc.parse(String.raw`{"jsonrpc":"2.0","id":"a\u0062","method":"m"}`).id;
      const forwarded = rpc.rewriteId(String.raw`{"jsonrpc":"2.0","id":"a\u0062","method":"m"}`, 1);
      assert.equal(str(forwarded), '{"jsonrpc":"2.0","id":1,"method":"m"}');
      const answer = rpc.rewriteId('{"jsonrpc":"2.0","id":1,"result":{}}', original);
      assert.equal(str(answer), String.raw`{"jsonrpc":"2.0","id":"a\u0062","result":{}}`);
      assert.equal(rpc.rewriteId('{"jsonrpc":"2.0","method":"m"}', 1), null);
      assert.equal(rpc.rewriteId("{", 1), null);
      assert.throws(() => rpc.rewriteId(msg, 1.5), RangeError);
      assert.throws(() => rpc.rewriteId(msg, 2 ** 53), RangeError);
      assert.throws(() => rpc.rewriteId(msg, { raw: "null" }), TypeError);
      assert.throws(() => rpc.rewriteId(msg, { raw: '1,"x":2' }), TypeError);
      assert.throws(() => rpc.rewriteId(msg, null), TypeError);
    });

    test("bad arguments throw TypeError; bad bytes never throw", () => {
      for (const bad of [null, undefined, 5, 1.5, ["x"], { a: 1 }, new Uint16Array(2)]) {
        assert.throws(() => rpc.classify(bad), TypeError);
        assert.throws(() => rpc.parse(bad), TypeError);
        assert.throws(() => rpc.respond(bad), TypeError);
      }
      assert.throws(() => rpc.respond("{}", "tools/list"), TypeError);
      assert.throws(() => rpc.respond("{}", [1]), TypeError);
      assert.throws(() => rpc.parse("{}", { strict: "yes" }), TypeError);
      assert.throws(() => new rpc.Scanner({ framing: "lines" }), TypeError);
      assert.throws(() => new rpc.Scanner({ maxMessageSize: 0 }), RangeError);
      // Every prefix of a message and a few thousand random byte strings: an answer each.
      const msg = Buffer.from('{"jsonrpc":"2.0","id":"é\\n","method":"tools/call","params":{"name":"x","a":[1,2.5e3,null,true]}}');
      for (let i = 0; i <= msg.length; i++) {
        assert.ok(["invalid", "request"].includes(rpc.parse(msg.subarray(0, i)).kind));
      }
      let seed = 7;
      const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
      const alphabet = Buffer.from('{}[]",:0123456789-.eE\\u tfnrl "jsonrpc2.0idmethod\xff\xc3\xa9');
      for (let n = 0; n < 3000; n++) {
        const bytes = Buffer.alloc(next() % 40, 0).map(() => alphabet[next() % alphabet.length]);
        const m = rpc.parse(bytes);
        assert.equal(m.kind, rpc.classify(bytes));
        assert.equal(rpc.respond(bytes) === null, m.kind !== "invalid" && m.kind !== "request");
      }
    });
  });
}

test("both builds give the same answers", { skip: builds.length < 2 }, () => {
  const [[, a], [, b]] = builds;
  const lines = readFileSync(SAMPLE).toString("latin1").split("\n");
  for (const line of lines) {
    const bytes = Buffer.from(line, "latin1");
    for (const strict of [true, false]) {
      const x = a.parse(bytes, { strict });
      const y = b.parse(bytes, { strict });
      assert.deepEqual({ ...x, params: str(x.params), result: str(x.result), errorData: str(x.errorData) },
        { ...y, params: str(y.params), result: str(y.result), errorData: str(y.errorData) }, line);
    }
  }
});
