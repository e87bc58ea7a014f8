// Builds the WebAssembly module a second time without simd128 (the portable kernels) and
// copies it to dist-portable/rpcscan.wasm, for the tests that hold the simd128 module's
// verdicts to the portable one's (test/wasm-levels.test.mjs). Its own target directory
// ($CARGO_TARGET_DIR/wasm-portable), so the two builds' flags never evict each other.
// RUSTFLAGS replaces .cargo/config.toml's `+simd128` for this build only.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const js = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(process.env.CARGO_TARGET_DIR ?? join(js, "target"), "wasm-portable");
execFileSync(
  "cargo",
  ["build", "--release", "--manifest-path", "wasm/Cargo.toml", "--target", "wasm32-unknown-unknown"],
  { cwd: js, stdio: "inherit", env: { ...process.env, CARGO_TARGET_DIR: target, RUSTFLAGS: "-C target-feature=-simd128" } },
);
const from = join(target, "wasm32-unknown-unknown", "release", "rpcscan_wasm.wasm");
mkdirSync(join(js, "dist-portable"), { recursive: true });
copyFileSync(from, join(js, "dist-portable", "rpcscan.wasm"));
console.log(`dist-portable/rpcscan.wasm <- ${from}`);
