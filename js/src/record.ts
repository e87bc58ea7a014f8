// Records → JavaScript values, shared by the Node add-on and the WebAssembly module.
//
// A backend (napi/ or wasm/, both over js/core) answers with a *record*: numbers in a
// Float64Array (kind, reason, offset, then `start, len` spans of the id, method, params...)
// laid out as rpcscan-js-core's `slot` module says. Spans point into the caller's own bytes,
// so raw members become views of them (`subarray`, no copy) and strings are decoded only
// for the members a router reads (id, method, tool name, error message). No Node API here:
// this file is part of the WebAssembly build for edge runtimes.

/** The five kinds of docs/spec.md §1. */
export type Kind = "request" | "notification" | "result" | "error" | "invalid";

/** Why a message is invalid (docs/spec.md §4). */
export type Reason =
  | "invalid_utf8"
  | "bom"
  | "syntax"
  | "trailing_bytes"
  | "too_deep"
  | "too_large"
  | "empty"
  | "not_an_object"
  | "batch"
  | "empty_batch"
  | "duplicate_key"
  | "bad_version"
  | "bad_method"
  | "bad_params"
  | "bad_id"
  | "result_and_error"
  | "no_result_or_error"
  | "method_with_response"
  | "bad_error_object";

/** A framing of docs/spec.md §7. */
export type Framing = "ndjson" | "content-length" | "sse" | "json-seq";

/**
 * A JSON-RPC id, exact: `raw` is its text as sent (quotes and escapes included for a
 * string), `value` what it means: a `number` for an integer within ±(2^53-1), a `bigint`
 * beyond, a `string`, or `null` (error responses only).
 */
export interface Id {
  readonly raw: string;
  readonly value: number | bigint | string | null;
}

/**
 * The verdict on one message. `kind` says which members are set: `method` (requests and
 * notifications), `toolName` (a `tools/call` request's `params.name`), `params` / `result` /
 * `errorData` as raw JSON bytes (views of the input, not copies), `errorCode` and
 * `errorMessage` (error responses); for `"invalid"`, `reason`, `code` (-32700 or -32600),
 * `offset` (the first offending byte, -32700 family only), `description`, and the `id` to
 * answer with (recovered, or `null`).
 */
export interface Message {
  readonly kind: Kind;
  readonly id: Id | null;
  readonly method: string | null;
  readonly toolName: string | null;
  readonly params: Uint8Array | null;
  readonly result: Uint8Array | null;
  readonly errorCode: number | bigint | null;
  readonly errorMessage: string | null;
  readonly errorData: Uint8Array | null;
  readonly reason: Reason | null;
  readonly code: -32700 | -32600 | null;
  readonly offset: number | null;
  readonly description: string | null;
}

/** The names behind a backend's numbers (rpcscan-js-core's `tables`). */
export interface Tables {
  kinds: Kind[];
  reasons: [Reason, -32700 | -32600, string][];
  record: number;
  frame: number;
  kernel_level: string;
}

// rpcscan-js-core's `slot` module.
const KIND = 0;
const REASON = 1;
const OFFSET = 2;
const ID_TYPE = 3;
const ID = 4;
const ID_TEXT = 6;
const METHOD = 7;
const TOOL = 10;
const PARAMS = 13;
const RESULT = 15;
const ERROR_CODE = 17;
const ERROR_MESSAGE = 19;
const ERROR_DATA = 22;
const ID_NUMBER = 26;
const ERROR_CODE_NUMBER = 27;
const METHOD_HASH = 28;
const TOOL_HASH = 29;
const ERROR_MESSAGE_HASH = 30;
/** Numbers in a message record: checked against the backend's `tables().record`. */
export const RECORD_LEN = 31;

// rpcscan-js-core's `frame_slot` module.
export const F_TYPE = 0;
export const F_OFFSET = 1;
export const F_BYTES = 2;
export const F_BODY_OFFSET = 4;
export const F_EVENT = 5;
export const F_LAST_EVENT_ID = 7;
export const F_ERROR_KIND = 9;
export const F_ERROR_TEXT = 11;
export const F_ERROR_LEN = 13;
export const F_ERROR_REASON = 14;
export const F_ERROR_ID = 15;
export const F_ERROR_ID_TYPE = 17;
export const F_RECORD = 18;
/** Numbers in a frame record: checked against the backend's `tables().frame`. */
export const FRAME_LEN = F_RECORD + RECORD_LEN;

// rpcscan-js-core's `id_type` and `text` modules.
const ID_INTEGER = 1;
const ID_STRING = 2;
const ID_NULL = 3;
const TEXT_ASCII = 0;
const TEXT_UTF8 = 1;
const TEXT_ESCAPED = 2;

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Checks a backend's tables against this file's layout. */
export function checkTables(tables: Tables): Tables {
  if (tables.record !== RECORD_LEN || tables.frame !== FRAME_LEN || tables.kinds.length !== 5) {
    throw new Error(
      `rpcscan: the native module's record layout (${tables.record}/${tables.frame}) ` +
        `is not this package's (${RECORD_LEN}/${FRAME_LEN}): rebuild the package`,
    );
  }
  return tables;
}

/** `len` ASCII bytes at `start` as a string. */
export function ascii(bytes: Uint8Array, start: number, len: number): string {
  if (len <= 24) {
    let s = "";
    for (let i = start; i < start + len; i++) s += String.fromCharCode(bytes[i]!);
    return s;
  }
  return utf8.decode(bytes.subarray(start, start + len));
}

/** `len` UTF-8 bytes at `start` as a string. */
export function text(bytes: Uint8Array, start: number, len: number): string {
  return utf8.decode(bytes.subarray(start, start + len));
}

/** The text of a JSON string whose raw content (between the quotes) is at `start`. */
function jsonText(bytes: Uint8Array, start: number, len: number, how: number): string {
  if (how === TEXT_ASCII) return ascii(bytes, start, len);
  if (how === TEXT_UTF8) return text(bytes, start, len);
  // Escapes: JSON.parse decodes them as the scanner validated them, lone surrogates
  // included (a JavaScript string can hold one). Envelope mode does not validate what it
  // only notes (a tools/call's params.name): a bad escape there leaves the raw text, as
  // written, rather than throwing (parse never throws on any bytes).
  const raw = text(bytes, start, len);
  try {
    return JSON.parse('"' + raw + '"') as string;
  } catch {
    return raw;
  }
}

// Texts made before, by the hash the backend wrote (short ASCII texts without escapes):
// methods, tool names and error messages repeat, and reusing a string is several times
// cheaper than making one. A hit is checked byte for byte, so a collision costs time only.
const texts = new Map<number, string>();
const MAX_TEXTS = 4096;

/** A string member of the record, or null; `hash` is its slot of rpcscan-js-core's text_hash. */
function stringAt(bytes: Uint8Array, rec: Float64Array, at: number, hash: number): string | null {
  const start = rec[at]!;
  if (start < 0) return null;
  const len = rec[at + 1]!;
  const key = rec[hash]!;
  if (key < 0) return jsonText(bytes, start, len, rec[at + 2]!);
  const known = texts.get(key);
  if (known !== undefined && known.length === len) {
    let i = 0;
    while (i < len && known.charCodeAt(i) === bytes[start + i]) i++;
    if (i === len) return known;
  }
  const made = ascii(bytes, start, len);
  if (texts.size >= MAX_TEXTS) texts.clear();
  texts.set(key, made);
  return made;
}

type ViewOf = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => Uint8Array;
// The constructor `subarray` would use for the last input type (a `Buffer`'s is Node's
// FastBuffer, a `Uint8Array`'s Uint8Array): its species, as TypedArraySpeciesCreate finds it.
let lastType: unknown;
let lastView: ViewOf = Uint8Array;

/**
 * A raw member of the record as a view of `bytes`, or null: what `bytes.subarray(start,
 * start + len)` gives (the same type, the same memory), made directly with the species
 * constructor, without `subarray`'s argument handling (Node's `Buffer#subarray` is
 * JavaScript; for an image result the view was the `Message`'s largest cost).
 */
function rawAt(bytes: Uint8Array, rec: Float64Array, at: number): Uint8Array | null {
  const start = rec[at]!;
  if (start < 0) return null;
  const type = bytes.constructor;
  if (type !== lastType) {
    const species = (type as { [Symbol.species]?: unknown } | undefined)?.[Symbol.species];
    lastView = typeof species === "function" ? (species as ViewOf) : Uint8Array;
    lastType = type;
  }
  return new lastView(bytes.buffer, bytes.byteOffset + start, rec[at + 1]!);
}

/** An integer literal's value: a number when it is safe, else a bigint. */
export function integer(raw: string): number | bigint {
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : BigInt(raw);
}

/**
 * An id of type `type` (rpcscan-js-core's `id_type`) whose raw text is at `start`;
 * `number` is its value when the backend found it a safe integer, else NaN.
 */
export function idOf(
  bytes: Uint8Array,
  type: number,
  start: number,
  len: number,
  how: number,
  number = NaN,
): Id | null {
  if (type === ID_INTEGER) {
    // A safe integer prints back as its raw text (JSON has no leading zeros or `+`; the
    // backend leaves `-0` out).
    if (number === number) return { raw: String(number), value: number };
    const raw = ascii(bytes, start, len);
    return { raw, value: integer(raw) };
  }
  if (type === ID_STRING) {
    const raw = how === TEXT_ASCII ? ascii(bytes, start, len) : text(bytes, start, len);
    // Without escapes the text is the raw text between the quotes.
    const value = how === TEXT_ESCAPED ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    return { raw, value };
  }
  if (type === ID_NULL) return { raw: "null", value: null };
  return null;
}

/**
 * The message a record at `rec[at..]` describes, its spans into `bytes`. One object shape
 * for every kind (V8 keeps it monomorphic).
 */
export function messageOf(tables: Tables, bytes: Uint8Array, rec: Float64Array, at: number): Message {
  const kind = tables.kinds[rec[at + KIND]!]!;
  const id = idOf(
    bytes,
    rec[at + ID_TYPE]!,
    rec[at + ID]!,
    rec[at + ID + 1]!,
    rec[at + ID_TEXT]!,
    rec[at + ID_NUMBER]!,
  );
  if (kind === "invalid") {
    const [reason, code, description] = tables.reasons[rec[at + REASON]!]!;
    const offset = rec[at + OFFSET]!;
    return {
      kind,
      id,
      method: null,
      toolName: null,
      params: null,
      result: null,
      errorCode: null,
      errorMessage: null,
      errorData: null,
      reason,
      code,
      offset: offset < 0 ? null : offset,
      description: offset < 0 ? `${description} (${code})` : `${description} (${code}) at byte ${offset}`,
    };
  }
  // Records are written from `at`: these members are read relative to it.
  const sub = at === 0 ? rec : rec.subarray(at, at + RECORD_LEN);
  const codeStart = sub[ERROR_CODE]!;
  const codeNumber = sub[ERROR_CODE_NUMBER]!;
  return {
    kind,
    id,
    method: stringAt(bytes, sub, METHOD, METHOD_HASH),
    toolName: stringAt(bytes, sub, TOOL, TOOL_HASH),
    params: rawAt(bytes, sub, PARAMS),
    result: rawAt(bytes, sub, RESULT),
    errorCode:
      codeStart < 0
        ? null
        : codeNumber === codeNumber
          ? codeNumber
          : integer(ascii(bytes, codeStart, sub[ERROR_CODE + 1]!)),
    errorMessage: stringAt(bytes, sub, ERROR_MESSAGE, ERROR_MESSAGE_HASH),
    errorData: rawAt(bytes, sub, ERROR_DATA),
    reason: null,
    code: null,
    offset: null,
    description: null,
  };
}
