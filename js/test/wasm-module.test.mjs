// The WebAssembly build is fit for edge runtimes: the module imports nothing, and
// rpcscan/wasm's JavaScript (dist/wasm.js and what it imports) uses no Node API.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const dist = new URL("../dist/", import.meta.url);

test("the module has no imports and exports its memory", () => {
  const module = new WebAssembly.Module(readFileSync(new URL("rpcscan.wasm", dist)));
  assert.deepEqual(WebAssembly.Module.imports(module), []);
  const names = WebAssembly.Module.exports(module).map((e) => e.name);
  assert.ok(names.includes("memory") && names.includes("rpcscan_parse"), names.join(" "));
});

test("rpcscan/wasm's JavaScript imports only its own files", () => {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(new URL(file, dist), "utf8");
    assert.doesNotMatch(source, /\brequire\(|\bprocess\.|\bBuffer\.|node:/, file);
    for (const [, spec] of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"']*?from\s+["']([^"']+)["']/g)) {
      assert.ok(spec.startsWith("./"), `${file} imports ${spec}`);
      visit(spec.slice(2));
    }
  };
  visit("wasm.js");
  assert.deepEqual([...seen].sort(), ["api.js", "record.js", "wasm.js"]);
});

test("init fails loudly before the module is there", async () => {
  // A fresh copy of the entry (a query string makes it a new module instance).
  const fresh = await import(new URL("wasm.js?fresh", dist).href);
  assert.throws(() => fresh.classify("{}"), /call init\(\)/);
  fresh.initSync(new WebAssembly.Module(readFileSync(new URL("rpcscan.wasm", dist))));
  assert.equal(fresh.classify('{"jsonrpc":"2.0","method":"x"}'), "notification");
});

test("a message lands at its own address modulo 16: every byteOffset gives the same answer", async () => {
  const wasm = await import(new URL("wasm.js", dist).href);
  wasm.initSync(new WebAssembly.Module(readFileSync(new URL("rpcscan.wasm", dist))));
  const text = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","data":"${"QUJD".repeat(400)}"}}`;
  const bad = `{"jsonrpc":"2.0","id":8,"result":{"a":"${"x".repeat(300)}\u0001"}}`;
  for (const [json, kind] of [[text, "request"], [bad, "invalid"]]) {
    const bytes = new TextEncoder().encode(json);
    const want = wasm.parse(bytes);
    for (let shift = 0; shift < 33; shift++) {
      const backing = new Uint8Array(bytes.length + 40);
      backing.set(bytes, shift);
      const view = backing.subarray(shift, shift + bytes.length);
      assert.equal(wasm.classify(view), kind, `shift ${shift}`);
      const got = wasm.parse(view);
      assert.deepEqual(
        [got.kind, got.id?.value, got.method, got.toolName, got.offset, got.params?.length],
        [want.kind, want.id?.value, want.method, want.toolName, want.offset, want.params?.length],
        `shift ${shift}`,
      );
      if (got.params !== null) assert.deepEqual(got.params, view.subarray(json.indexOf('"params":') + 9, json.length - 1));
    }
  }
});

test("the views are renewed when the module's memory grows, and raw members keep the input's type", async () => {
  // A fresh copy of the entry, so that its memory starts small: the 8 MB message grows it
  // (which detaches the old buffer) in the middle of the calls.
  const fresh = await import(new URL("wasm.js?grow", dist).href);
  fresh.initSync(new WebAssembly.Module(readFileSync(new URL("rpcscan.wasm", dist))));
  const small = new TextEncoder().encode('{"jsonrpc":"2.0","id":7,"result":[1,2]}');
  const big = new TextEncoder().encode(`{"jsonrpc":"2.0","id":8,"result":"${"x".repeat(8 << 20)}"}`);
  for (const bytes of [small, big, small, big]) {
    for (const input of [bytes, new Uint8Array(bytes), new (class extends Uint8Array {})(bytes)]) {
      const m = fresh.parse(input);
      assert.equal(m.kind, "result");
      assert.equal(m.id.value, bytes === small ? 7 : 8);
      assert.equal(Object.getPrototypeOf(m.result), Object.getPrototypeOf(input));
      assert.equal(m.result.buffer, input.buffer);
      assert.equal(m.result.byteOffset, input.byteOffset + bytes.indexOf(0x3a, 24) + 1);
      assert.equal(m.result.length, input.length - 1 - (m.result.byteOffset - input.byteOffset));
      assert.equal(fresh.classify(input), "result");
    }
  }
});
