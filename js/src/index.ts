// rpcscan for Node: the N-API add-on (js/napi) behind the package's API (api.ts), plus a
// Node `Transform` for stream pipelines. Buffers and Uint8Arrays are read where they lie.

import { createRequire } from "node:module";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Transform, type TransformCallback } from "node:stream";

import { type Backend, makeApi, type ScanItem, type ScannerOptions } from "./api.js";
import type * as Binding from "./binding.js";
import { RECORD_LEN, type Tables } from "./record.js";

export type { Frame, BadFrame, Input, Options, ScanItem, ScannerOptions } from "./api.js";
export type { Framing, Id, Kind, Message, Reason } from "./record.js";

/**
 * The add-on's two per-message calls: plain N-API callbacks (napi/src/lib.rs,
 * `fast_exports`), so napi-rs's generated binding.d.ts does not list them.
 */
interface Fast {
  /** The kind of one message: an index into `tables().kinds`. */
  classify(message: Uint8Array, strict: boolean): number;
  /** Scans one message and writes its record into the array given to `setRecord`. */
  parse(message: Uint8Array, strict: boolean): void;
}

/** Loads the add-on built for this platform (`rpcscan.<platform>-<arch>[-<abi>].node`). */
function load(): typeof Binding & Fast {
  const here = dirname(fileURLToPath(import.meta.url));
  const prefix = `rpcscan.${process.platform}-${process.arch}`;
  const found = readdirSync(here).filter((f) => f.startsWith(prefix) && f.endsWith(".node"));
  if (found.length === 0) {
    throw new Error(`rpcscan: no add-on for ${process.platform}-${process.arch} in ${here} (build it: npm run build:napi)`);
  }
  // glibc before musl when both are there; one is the usual case.
  found.sort((a, b) => Number(a.includes("musl")) - Number(b.includes("musl")));
  return createRequire(import.meta.url)(join(here, found[0]!)) as typeof Binding & Fast;
}

const binding = load();
// The add-on writes each record into this array, which never leaves the package.
const record = new Float64Array(RECORD_LEN);
binding.setRecord(record);

const backend: Backend = {
  name: "napi",
  tables: () => JSON.parse(binding.tables()) as Tables,
  classify: (bytes, strict) => binding.classify(bytes, strict),
  parse(bytes, strict) {
    binding.parse(bytes, strict);
    return record;
  },
  respond: (bytes, strict, supported) => binding.respond(bytes, strict, supported as string[]),
  rewriteId(bytes, strict, newId) {
    try {
      return binding.rewriteId(bytes, strict, newId);
    } catch {
      return undefined;
    }
  },
  scanner(framing, max, strict) {
    const inner = new binding.NativeScanner(framing, max, strict);
    return {
      push: (chunk) => inner.push(chunk),
      finish: () => inner.finish(),
      get framing() {
        return inner.framing;
      },
      close() {},
    };
  },
};

const api = makeApi(() => backend);

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
/** Which build answers: `"napi"` here, `"wasm"` in `rpcscan/wasm`. */
export const backendName = "napi" as const;

/**
 * A Node `Transform` from byte chunks to scan items (object mode on its readable side):
 * `pipeline(process.stdin, scanTransform(), consumer)`. Bad frames are items, never errors.
 */
export function scanTransform(options: ScannerOptions = {}): Transform {
  const scanner = new Scanner(options);
  return new Transform({
    readableObjectMode: true,
    transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback) {
      try {
        for (const item of scanner.push(chunk)) this.push(item satisfies ScanItem);
        done();
      } catch (e) {
        done(e as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        for (const item of scanner.end()) this.push(item);
        done();
      } catch (e) {
        done(e as Error);
      }
    },
    destroy(error, done) {
      scanner.close();
      done(error);
    },
  });
}
