// Copies the WebAssembly module cargo built (wasm32-unknown-unknown, release) to
// dist/rpcscan.wasm, where rpcscan/wasm looks for it. Honours CARGO_TARGET_DIR.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const js = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const target = process.env.CARGO_TARGET_DIR ?? join(js, "target");
const from = join(target, "wasm32-unknown-unknown", "release", "rpcscan_wasm.wasm");
mkdirSync(join(js, "dist"), { recursive: true });
copyFileSync(from, join(js, "dist", "rpcscan.wasm"));
console.log(`dist/rpcscan.wasm <- ${from}`);
