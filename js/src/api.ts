// The public API over a backend (the Node add-on or the WebAssembly module): one
// implementation, so both builds give the same answers by construction. No Node API here.

import {
  checkTables,
  F_BODY_OFFSET,
  F_BYTES,
  F_ERROR_ID,
  F_ERROR_ID_TYPE,
  F_ERROR_KIND,
  F_ERROR_LEN,
  F_ERROR_REASON,
  F_ERROR_TEXT,
  F_EVENT,
  F_LAST_EVENT_ID,
  F_OFFSET,
  F_RECORD,
  F_TYPE,
  FRAME_LEN,
  type Framing,
  type Id,
  idOf,
  type Kind,
  type Message,
  messageOf,
  type Reason,
  type Tables,
  text,
} from "./record.js";

/** The frames one push (or the end) completed: bytes and records (rpcscan-js-core). */
export interface FrameBatch {
  out: Uint8Array;
  records: Float64Array;
}

/** A backend's stream scanner. */
export interface BackendScanner {
  push(chunk: Uint8Array): FrameBatch;
  finish(): FrameBatch;
  readonly framing: string | null;
  close(): void;
}

/** What a build provides: rpcscan-js-core's functions over bytes and records. */
export interface Backend {
  readonly name: "napi" | "wasm";
  tables(): Tables;
  classify(bytes: Uint8Array, strict: boolean): number;
  /** The message's record (a buffer the backend reuses: read it before the next call). */
  parse(bytes: Uint8Array, strict: boolean): Float64Array;
  respond(bytes: Uint8Array, strict: boolean, supported: readonly string[]): Uint8Array | null;
  /** `undefined` when `newId` is not an id literal. */
  rewriteId(bytes: Uint8Array, strict: boolean, newId: Uint8Array): Uint8Array | null | undefined;
  scanner(framing: string, maxMessageSize: number, strict: boolean): BackendScanner;
}

/** Bytes to scan: `Buffer`, `Uint8Array` or `ArrayBuffer` (read in place), or a string (UTF-8). */
export type Input = Uint8Array | ArrayBuffer | string;

/** `strict: false` is envelope mode (docs/spec.md §6): values the scanner does not read are only checked structurally. */
export interface Options {
  strict?: boolean;
}

/** A stream scanner's settings. */
export interface ScannerOptions extends Options {
  /** `"auto"` (the default) decides from the first line, as `rpcscan --framing auto`. */
  framing?: Framing | "auto";
  /** Larger messages are reported as bad frames (`too_large`) as they stream past. Default 16 MiB. */
  maxMessageSize?: number;
}

/** A message cut from a stream. */
export interface Frame {
  readonly type: "frame";
  /** Stream offset of the frame (its line, header block, SSE event, or RS). */
  readonly offset: number;
  /** Stream offset of the message's first byte; `null` for an SSE event joined from lines. */
  readonly bodyOffset: number | null;
  /** The message's bytes, without line end, header, `data:` prefix or RS. */
  readonly bytes: Uint8Array;
  /** The SSE `event:` field, if set (`null`: the default, `message`). */
  readonly event: string | null;
  /** The SSE last event id after this event. */
  readonly lastEventId: string | null;
  /** The verdict on the message (`kind: "invalid"` for a bad message in a good frame). */
  readonly message: Message;
}

/** A frame the framing could not deliver: reported, skipped, and the stream goes on. */
export interface BadFrame {
  readonly type: "bad-frame";
  readonly offset: number;
  /** Stream bytes it spans (all skipped). */
  readonly length: number;
  /** `too_large`, `missing_length`, `duplicate_length`, `bad_length`, `bad_header`, `junk` or `truncated`. */
  readonly error: string;
  /** `too_large` or `syntax`, both answered with -32700. */
  readonly reason: Reason;
  readonly code: -32700;
  /** What is wrong, in words. */
  readonly description: string;
  /** An oversized NDJSON line's top-level id, found as it streamed past, or `null`. */
  readonly id: Id | null;
}

/** What a scanner yields. */
export type ScanItem = Frame | BadFrame;

const FRAMINGS = new Set(["auto", "ndjson", "content-length", "sse", "json-seq"]);
const DEFAULT_MAX = 16 * 1024 * 1024;
const encoder = new TextEncoder();

/** The bytes of an argument, or a TypeError. */
export function bytesOf(input: unknown, what = "message"): Uint8Array {
  if (input instanceof Uint8Array) return input;
  if (typeof input === "string") return encoder.encode(input);
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  throw new TypeError(`${what} must be a Uint8Array, Buffer, ArrayBuffer or string, not ${describe(input)}`);
}

function describe(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

function strictOf(options: Options | undefined): boolean {
  if (options === undefined) return true;
  if (typeof options !== "object" || options === null) throw new TypeError("options must be an object");
  const strict = options.strict;
  if (strict === undefined) return true;
  if (typeof strict !== "boolean") throw new TypeError("options.strict must be a boolean");
  return strict;
}

/** The raw JSON of a new id, or a TypeError / RangeError. */
function idLiteral(id: unknown): Uint8Array {
  if (typeof id === "number") {
    if (!Number.isSafeInteger(id)) throw new RangeError("a number id must be a safe integer (use a bigint beyond 2^53)");
    return encoder.encode(String(id));
  }
  if (typeof id === "bigint") return encoder.encode(id.toString());
  if (typeof id === "string") return encoder.encode(JSON.stringify(id));
  if (typeof id === "object" && id !== null && typeof (id as Id).raw === "string") {
    return encoder.encode((id as Id).raw);
  }
  throw new TypeError(`the new id must be a number, bigint, string or Id, not ${describe(id)}`);
}

/** The functions and classes of the package over one backend. */
export function makeApi(backend: () => Backend) {
  let cached: Tables | undefined;
  const tables = (): Tables => (cached ??= checkTables(backend().tables()));

  /**
   * The kind of one message: `"request"`, `"notification"`, `"result"`, `"error"` or
   * `"invalid"` (docs/spec.md §1).
   */
  function classify(message: Input, options?: Options): Kind {
    const b = backend();
    return tables().kinds[b.classify(bytesOf(message), strictOf(options))]!;
  }

  /**
   * Scans one message: its kind and the members a router reads, or for an invalid message
   * its reason, code, offset and the id to answer with. Never throws on any input bytes.
   */
  function parse(message: Input, options?: Options): Message {
    const bytes = bytesOf(message);
    const record = backend().parse(bytes, strictOf(options));
    return messageOf(tables(), bytes, record, 0);
  }

  /**
   * What `rpcscan respond` answers to one message (docs/spec.md §4), byte for byte: the
   * -32700 / -32600 error response for an invalid message (with the recovered id or
   * `null`), -32601 for a request whose method is not in `supported`, and `null` for a
   * supported request, a notification, a result or an error.
   */
  function respond(
    message: Input,
    supported: Iterable<string> = ["tools/list", "tools/call"],
    options?: Options,
  ): Uint8Array | null {
    if (typeof supported === "string" || supported === null || typeof supported !== "object") {
      throw new TypeError("supported must be an iterable of method names, not one string");
    }
    const names = Array.from(supported);
    for (const name of names) {
      if (typeof name !== "string") throw new TypeError("supported must hold strings");
    }
    return backend().respond(bytesOf(message), strictOf(options), names);
  }

  /**
   * The message with its id replaced by `id` and every other byte as it was
   * (`rpcscan::rewrite`), or `null` when the message is invalid or has no id. `id`: a safe
   * integer, a bigint, a string (written as a JSON string), or an `Id` (its `raw` text,
   * exactly: how an original id is put back).
   */
  function rewriteId(message: Input, id: number | bigint | string | Id, options?: Options): Uint8Array | null {
    const out = backend().rewriteId(bytesOf(message), strictOf(options), idLiteral(id));
    if (out === undefined) throw new TypeError("the new id must be an integer literal or a JSON string");
    return out;
  }

  /**
   * A byte stream cut into messages (NDJSON, Content-Length, SSE or json-seq; `auto` by
   * default) and scanned: feed chunks of any size to `push`, call `end` at the end of input;
   * each returns the frames it completed. Bad frames are items too: nothing is fatal.
   */
  class Scanner {
    #inner: BackendScanner;
    #closed = false;

    constructor(options: ScannerOptions = {}) {
      const framing = options.framing ?? "auto";
      if (!FRAMINGS.has(framing)) {
        throw new TypeError(`unknown framing ${JSON.stringify(framing)} (expected auto, ndjson, content-length, sse or json-seq)`);
      }
      const max = options.maxMessageSize ?? DEFAULT_MAX;
      if (!Number.isInteger(max) || max < 1 || max > 0xffff_ffff) {
        throw new RangeError("maxMessageSize must be an integer from 1 to 2^32-1");
      }
      this.#inner = backend().scanner(framing, max, strictOf(options));
    }

    /** The framing in use, once known (`auto` decides on the first line), else `null`. */
    get framing(): Framing | null {
      return this.#closed ? null : (this.#inner.framing as Framing | null);
    }

    /** Appends a chunk; returns the frames and bad frames it completed. */
    push(chunk: Input): ScanItem[] {
      this.#open();
      return items(tables(), this.#inner.push(bytesOf(chunk, "chunk")));
    }

    /** End of input: the last frames (NDJSON's last line without `\n`, a truncated frame's error...). The scanner is closed after it. */
    end(): ScanItem[] {
      this.#open();
      const out = items(tables(), this.#inner.finish());
      this.close();
      return out;
    }

    /** Frees the scanner (WebAssembly memory) without reading what is left. */
    close(): void {
      if (!this.#closed) {
        this.#closed = true;
        this.#inner.close();
      }
    }

    #open(): void {
      if (this.#closed) throw new Error("the scanner is closed");
    }
  }

  /**
   * A web `TransformStream` from byte chunks (or strings) to scan items, for `fetch`
   * bodies, Workers and Node's web streams alike.
   */
  function scanStream(options: ScannerOptions = {}): TransformStream<Input, ScanItem> {
    let scanner: Scanner | undefined;
    return new TransformStream<Input, ScanItem>({
      start() {
        scanner = new Scanner(options);
      },
      transform(chunk, controller) {
        for (const item of scanner!.push(chunk)) controller.enqueue(item);
      },
      flush(controller) {
        for (const item of scanner!.end()) controller.enqueue(item);
      },
    });
  }

  /** The reason names of docs/spec.md §4 with their codes, in the library's order. */
  function reasons(): [Reason, -32700 | -32600][] {
    return tables().reasons.map(([name, code]) => [name, code]);
  }

  /**
   * The byte-scanning kernels this build runs: `"avx512"`, `"avx2"`, `"neon"` or
   * `"scalar"` for the Node add-on (picked for the CPU at run time), `"simd128"` for the
   * WebAssembly module (`"scalar"` for a module built without simd128). Verdicts are the
   * same at every level.
   */
  function kernelLevel(): string {
    return tables().kernel_level;
  }

  return { classify, parse, respond, rewriteId, Scanner, scanStream, reasons, kernelLevel };
}

/** The scan items of a batch. */
function items(tables: Tables, batch: FrameBatch): ScanItem[] {
  const { out, records } = batch;
  const list: ScanItem[] = [];
  for (let at = 0; at + FRAME_LEN <= records.length; at += FRAME_LEN) {
    const offset = records[at + F_OFFSET]!;
    const span = (slot: number): string | null => {
      const start = records[at + slot]!;
      return start < 0 ? null : text(out, start, records[at + slot + 1]!);
    };
    if (records[at + F_TYPE] === 0) {
      const start = records[at + F_BYTES]!;
      const body = records[at + F_BODY_OFFSET]!;
      list.push({
        type: "frame",
        offset,
        bodyOffset: body < 0 ? null : body,
        bytes: out.subarray(start, start + records[at + F_BYTES + 1]!),
        event: span(F_EVENT),
        lastEventId: span(F_LAST_EVENT_ID),
        message: messageOf(tables, out, records, at + F_RECORD),
      });
    } else {
      const idStart = records[at + F_ERROR_ID]!;
      const idLen = records[at + F_ERROR_ID + 1]!;
      // A recovered string id may hold escapes or non-ASCII: decode it as UTF-8 JSON.
      const idHow = idStart >= 0 && out.subarray(idStart, idStart + idLen).some((b) => b === 0x5c || b > 0x7f) ? 2 : 0;
      list.push({
        type: "bad-frame",
        offset,
        length: records[at + F_ERROR_LEN]!,
        error: span(F_ERROR_KIND) ?? "",
        reason: tables.reasons[records[at + F_ERROR_REASON]!]![0],
        code: -32700,
        description: span(F_ERROR_TEXT) ?? "",
        id: idStart < 0 ? null : idOf(out, records[at + F_ERROR_ID_TYPE]!, idStart, idLen, idHow),
      });
    }
  }
  return list;
}
