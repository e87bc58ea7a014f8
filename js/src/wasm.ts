// rpcscan for edge runtimes: the same API as the Node add-on over the WebAssembly module
// (js/wasm, wasm32-unknown-unknown, no imports). Uses no Node API: it runs in Cloudflare
// Workers, Deno, browsers and Node alike. Call `init` (or `initSync`) once first.
//
// WebAssembly cannot read JavaScript memory, so each message is copied into the module's
// memory (one memcpy); the answers' raw members are still views of *your* bytes, since the
// record's spans are offsets into what you passed.

import { type Backend, type FrameBatch, makeApi } from "./api.js";
import { FRAME_LEN, RECORD_LEN, type Tables } from "./record.js";

export type { Frame, BadFrame, Input, Options, ScanItem, ScannerOptions } from "./api.js";
export type { Framing, Id, Kind, Message, Reason } from "./record.js";

interface Exports {
  memory: WebAssembly.Memory;
  rpcscan_input(len: number, align: number): number;
  rpcscan_aux(len: number): number;
  rpcscan_record(): number;
  rpcscan_out_ptr(): number;
  rpcscan_out_len(): number;
  rpcscan_classify(len: number, strict: number): number;
  rpcscan_parse(len: number, strict: number): void;
  rpcscan_respond(len: number, strict: number, auxLen: number): number;
  rpcscan_rewrite_id(len: number, strict: number, auxLen: number): number;
  rpcscan_tables(): void;
  rpcscan_scanner_new(framing: number, max: number, strict: number): number;
  rpcscan_scanner_push(handle: number, len: number): number;
  rpcscan_scanner_finish(handle: number): number;
  rpcscan_scanner_records(handle: number): number;
  rpcscan_scanner_out(handle: number): number;
  rpcscan_scanner_out_len(handle: number): number;
  rpcscan_scanner_framing(handle: number): number;
  rpcscan_scanner_free(handle: number): void;
}

/** What `init` accepts: a compiled module (a Worker's `import wasm from "rpcscan/rpcscan.wasm"`), the module's bytes, a `Response`, or a URL to fetch. */
export type WasmSource = WebAssembly.Module | BufferSource | Response | PromiseLike<Response> | URL | string;

const FRAMINGS = ["auto", "ndjson", "content-length", "sse", "json-seq"];
const encoder = new TextEncoder();

let ex: Exports | undefined;
let u8 = new Uint8Array(0);
let record = new Float64Array(0);

function exports(): Exports {
  if (ex === undefined) throw new Error("rpcscan/wasm: call init() (or initSync()) first");
  return ex;
}

/**
 * The module's memory as bytes, views renewed when it has grown. Growing a (non-shared)
 * memory detaches its old `ArrayBuffer`, and a view of a detached buffer has length 0 (the
 * module's memory never has): testing that costs a few ns, reading `memory.buffer` (a host
 * call) ~60-80 ns, once or twice per message before.
 */
function mem(): Uint8Array {
  if (u8.byteLength === 0) {
    const buffer = ex!.memory.buffer;
    u8 = new Uint8Array(buffer);
    record = new Float64Array(buffer, ex!.rpcscan_record() >>> 0, RECORD_LEN);
  }
  return u8;
}

// The message lands at its own address modulo 16 (its byteOffset: backing stores are
// 16-byte aligned), which keeps libc's memcpy on its fast path (see rpcscan_input).
function put(bytes: Uint8Array): number {
  const at = exports().rpcscan_input(bytes.length, bytes.byteOffset & 15) >>> 0;
  mem().set(bytes, at);
  return bytes.length;
}

function putAux(bytes: Uint8Array): number {
  const at = ex!.rpcscan_aux(bytes.length) >>> 0;
  mem().set(bytes, at);
  return bytes.length;
}

/** The out buffer's bytes, copied out of the module's memory. */
function out(): Uint8Array {
  const at = ex!.rpcscan_out_ptr() >>> 0;
  const len = ex!.rpcscan_out_len() >>> 0;
  return mem().slice(at, at + len);
}

/** The supported methods for rpcscan_respond: each a u32 LE length, then UTF-8. */
function methods(names: readonly string[]): Uint8Array {
  const parts = names.map((n) => encoder.encode(n));
  const bytes = new Uint8Array(parts.reduce((n, p) => n + 4 + p.length, 0));
  const view = new DataView(bytes.buffer);
  let at = 0;
  for (const p of parts) {
    view.setUint32(at, p.length, true);
    bytes.set(p, at + 4);
    at += 4 + p.length;
  }
  return bytes;
}

// Scanners dropped without close() or end() give their module memory back when collected.
const scanners = new FinalizationRegistry<number>((handle) => ex?.rpcscan_scanner_free(handle));

const backend: Backend = {
  name: "wasm",
  tables() {
    exports().rpcscan_tables();
    return JSON.parse(new TextDecoder().decode(out())) as Tables;
  },
  classify: (bytes, strict) => exports().rpcscan_classify(put(bytes), strict ? 1 : 0),
  parse(bytes, strict) {
    ex!.rpcscan_parse(put(bytes), strict ? 1 : 0);
    mem();
    return record;
  },
  respond(bytes, strict, supported) {
    const len = put(bytes);
    const auxLen = putAux(methods(supported));
    return ex!.rpcscan_respond(len, strict ? 1 : 0, auxLen) === 1 ? out() : null;
  },
  rewriteId(bytes, strict, newId) {
    const len = put(bytes);
    const auxLen = putAux(newId);
    const done = ex!.rpcscan_rewrite_id(len, strict ? 1 : 0, auxLen);
    return done === 1 ? out() : done === 0 ? null : undefined;
  },
  scanner(framing, max, strict) {
    const handle = exports().rpcscan_scanner_new(FRAMINGS.indexOf(framing), max >>> 0, strict ? 1 : 0);
    if (handle < 0) throw new RangeError(`rpcscan/wasm: bad scanner settings (${framing}, ${max})`);
    const token = {};
    scanners.register(token, handle, token);
    let live = true;
    const batch = (count: number): FrameBatch => {
      const bytes = mem();
      const at = ex!.rpcscan_scanner_records(handle) >>> 0;
      const records = new Float64Array(bytes.buffer, at, count * FRAME_LEN).slice();
      const outAt = ex!.rpcscan_scanner_out(handle) >>> 0;
      return { out: bytes.slice(outAt, outAt + (ex!.rpcscan_scanner_out_len(handle) >>> 0)), records };
    };
    return {
      push(chunk) {
        const len = put(chunk);
        return batch(ex!.rpcscan_scanner_push(handle, len) >>> 0);
      },
      finish: () => batch(ex!.rpcscan_scanner_finish(handle) >>> 0),
      get framing() {
        const n = live ? ex!.rpcscan_scanner_framing(handle) : 0;
        return n === 0 ? null : FRAMINGS[n]!;
      },
      close() {
        if (live) {
          live = false;
          scanners.unregister(token);
          ex!.rpcscan_scanner_free(handle);
        }
      },
    };
  },
};

function adopt(instance: WebAssembly.Instance): void {
  ex = instance.exports as unknown as Exports;
  u8 = new Uint8Array(0);
  mem();
}

/** A `Response`'s body, or the bytes themselves. */
async function bytesOf(source: unknown): Promise<BufferSource> {
  const response = source as { arrayBuffer?: unknown };
  if (typeof response.arrayBuffer === "function" && !(source instanceof ArrayBuffer)) {
    return await (source as Response).arrayBuffer();
  }
  return source as BufferSource;
}

function isModule(source: unknown): source is WebAssembly.Module {
  return source instanceof WebAssembly.Module;
}

/**
 * Instantiates the module from what the runtime gives: in a Cloudflare Worker the
 * `WebAssembly.Module` of `import wasm from "rpcscan/rpcscan.wasm"`; elsewhere its bytes,
 * a `Response`, or a URL (default: `rpcscan.wasm` beside this file, fetched).
 */
export async function init(source?: WasmSource): Promise<void> {
  if (ex !== undefined) return;
  let from: unknown = source ?? new URL("./rpcscan.wasm", import.meta.url);
  if (from instanceof URL || typeof from === "string") from = fetch(from);
  if (typeof (from as { then?: unknown } | null)?.then === "function") from = await (from as PromiseLike<unknown>);
  if (isModule(from)) {
    adopt(await WebAssembly.instantiate(from, {}));
    return;
  }
  adopt((await WebAssembly.instantiate(await bytesOf(from), {})).instance);
}

/** `init` without waiting: from a compiled module or the module's bytes. */
export function initSync(source: WebAssembly.Module | BufferSource): void {
  if (ex !== undefined) return;
  const module = isModule(source) ? source : new WebAssembly.Module(source);
  adopt(new WebAssembly.Instance(module, {}));
}

const api = makeApi(() => {
  exports();
  return backend;
});

/** `"request"`, `"notification"`, `"result"`, `"error"` or `"invalid"` (docs/spec.md §1). */
export const classify = api.classify;
/** The verdict and the routing members of one message; never throws on any bytes. */
export const parse = api.parse;
/** `rpcscan respond`'s answer to one message, byte for byte, or `null`. */
export const respond = api.respond;
/** The message with another id, every other byte kept; `null` when it is invalid or has no id. */
export const rewriteId = api.rewriteId;
/** A stream scanner: `push(chunk)`, `end()`, each returning the frames completed. */
export const Scanner = api.Scanner;
/** A scanner's instances. */
export type Scanner = InstanceType<typeof api.Scanner>;
/** A web `TransformStream` from byte chunks to scan items. */
export const scanStream = api.scanStream;
/** The reason names with their codes. */
export const reasons = api.reasons;
/** The byte-scanning kernels this build runs (`"simd128"`, `"avx512"`, ...; see the README). */
export const kernelLevel = api.kernelLevel;
/** Which build answers: `"wasm"` here, `"napi"` in the Node entry. */
export const backendName = "wasm" as const;
