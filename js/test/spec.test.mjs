// The rule book's table (docs/spec.md §1–§4, JSON-RPC 2.0 §7, and the generated rows), the
// one the Rust and Python tests check, through both builds of the package.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { builds, hex, specRows, str } from "./helpers.mjs";

const KINDS = new Set(["request", "notification", "result", "error"]);
const TEXT = { [-32700]: "Parse error", [-32600]: "Invalid Request", [-32601]: "Method not found" };
const spaced = (id, code) =>
  `{"jsonrpc": "2.0", "id": ${id}, "error": {"code": ${code}, "message": "${TEXT[code]}"}}`;

const rows = specRows();

for (const [name, rpc] of builds) {
  describe(`rule book table (${name})`, () => {
    test("has rows", () => assert.ok(rows.length > 50, `${rows.length} rows`));

    test("every row: kind or reason, code, id, offset family, the answer byte for byte", () => {
      for (const row of rows) {
        const msg = hex(row.message_hex);
        const { verdict: want, code, id: wantId } = row;
        const shown = row.message_hex.slice(0, 200);
        const m = rpc.parse(msg);
        if (code === null) {
          assert.ok(KINDS.has(want), shown);
          assert.equal(rpc.classify(msg), want, shown);
          assert.equal(m.kind, want, shown);
          assert.equal(m.reason, null, shown);
          assert.equal(m.id?.raw ?? null, wantId, shown);
        } else {
          assert.equal(rpc.classify(msg), "invalid", shown);
          assert.equal(m.kind, "invalid", shown);
          assert.deepEqual([m.reason, m.code], [want, code], shown);
          assert.equal(m.id?.raw ?? null, wantId, shown);
          assert.equal(m.offset !== null, code === -32700, shown);
          assert.equal(str(rpc.respond(msg)), spaced(wantId ?? "null", code), shown);
        }
        if (code !== -32700) {
          // Envelope mode agrees on every JSON text.
          assert.equal(rpc.classify(msg, { strict: false }), code === null ? want : "invalid", shown);
          if (code !== null) assert.equal(rpc.parse(msg, { strict: false }).reason, want, shown);
        }
      }
    });

    test("every reason but too_large and empty_batch is in the table", () => {
      const seen = new Set(rows.map((r) => r.verdict));
      const all = rpc.reasons();
      assert.equal(all.length, 19);
      for (const [reason, code] of all) {
        assert.ok(code === -32700 || code === -32600);
        // too_large needs a size limit (the Scanner's), empty_batch batch mode.
        assert.ok(seen.has(reason) || reason === "too_large" || reason === "empty_batch", reason);
      }
    });
  });
}
