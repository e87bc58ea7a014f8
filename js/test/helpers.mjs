// What the tests share: both builds of the package (the N-API add-on and the WebAssembly
// module, each test runs on both), the rule book's table, and the CLI.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import * as napi from "../dist/index.js";
import * as wasm from "../dist/wasm.js";

export const JS_DIR = fileURLToPath(new URL("..", import.meta.url));
export const REPO = fileURLToPath(new URL("../..", import.meta.url));

await wasm.init(readFileSync(new URL("../dist/rpcscan.wasm", import.meta.url)));

/** [name, api] for each build: `RPCSCAN_JS_BACKEND=napi|wasm` keeps one. */
export const builds = [
  ["napi", napi],
  ["wasm", wasm],
].filter(([name]) => !process.env.RPCSCAN_JS_BACKEND || process.env.RPCSCAN_JS_BACKEND === name);

/**
 * The oracle's rule-book table as JSON (python/spectable, the rows the Rust and Python tests
 * check): $RPCSCAN_SPEC_TABLE (js/ci.sh writes it), else built here with cargo.
 */
export function specRows() {
  const path = process.env.RPCSCAN_SPEC_TABLE;
  const text = path
    ? readFileSync(path, "utf8")
    : execFileSync("cargo", ["run", "-q", "--release", "-p", "rpcscan-python-spectable"], {
        cwd: `${REPO}/python`,
        encoding: "utf8",
        maxBuffer: 1 << 28,
      });
  return JSON.parse(text);
}

/** The `rpcscan` binary ($RPCSCAN_BIN), or null: tests that need it skip, unless
 * RPCSCAN_REQUIRE_CLI=1 (js/ci.sh) turns that into a failure. */
export function cli() {
  const path = process.env.RPCSCAN_BIN;
  if (!path && process.env.RPCSCAN_REQUIRE_CLI === "1") throw new Error("RPCSCAN_BIN is not set");
  return path || null;
}

export const hex = (s) => Buffer.from(s, "hex");
export const str = (bytes) => (bytes === null ? null : Buffer.from(bytes).toString("utf8"));
