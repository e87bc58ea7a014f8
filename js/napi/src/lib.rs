//! The Node add-on behind the `rpcscan` npm package: thin napi-rs wrappers around
//! `rpcscan-js-core`. Messages arrive as `Buffer` / `Uint8Array` and are read where they lie
//! (no copy); verdicts leave as records written into a `Float64Array` the package owns, so a
//! call makes no JavaScript object. The package's TypeScript (`js/src/`) is the public API.
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use napi::bindgen_prelude::{Buffer, Float64Array};
use napi::{Error, Result, Status};
use napi_derive::napi;
use rpcscan_js_core as core;

/// The kind of one message: an index into `tables().kinds`.
#[napi]
pub fn classify(message: &[u8], strict: bool) -> u32 {
    core::classify(message, strict)
}

thread_local! {
    // The package's record array (set once per thread by `set_record`), kept alive by the
    // reference it holds. Never dropped: a reference released after the environment is
    // torn down (thread-local destructors run late) would be a use after free.
    static RECORD: RefCell<Option<ManuallyDrop<Float64Array>>> = const { RefCell::new(None) };
}

/// Hands the add-on the `Float64Array` (at least `tables().record` numbers) that `parse`
/// writes each record into: passing it on every call would cost a typed-array lookup each.
#[napi]
pub fn set_record(record: Float64Array) -> Result<()> {
    if record.len() < core::RECORD_LEN {
        return Err(Error::new(Status::InvalidArg, "record is too short"));
    }
    RECORD.with_borrow_mut(|slot| *slot = Some(ManuallyDrop::new(record)));
    Ok(())
}

/// Scans one message and writes its record (`rpcscan-js-core`'s `slot` layout) into the
/// array given to `set_record`.
#[napi]
pub fn parse(message: &[u8], strict: bool) -> Result<()> {
    RECORD.with_borrow_mut(|slot| {
        let Some(record) = slot.as_mut() else {
            return Err(Error::new(Status::GenericFailure, "setRecord was not called"));
        };
        // SAFETY: the array is alive (the reference it holds keeps it from the collector,
        // and it is never released), its backing store does not move, and JavaScript is
        // blocked in this synchronous call on the one thread that may touch it. It is the
        // package's private array (record.ts), never handed out, so the message (only
        // read) cannot be a view of the same memory.
        let record = unsafe { record.as_mut() };
        core::parse_into(message, strict, record);
        Ok(())
    })
}

/// `rpcscan respond`'s answer to one message, or `null` when it gets none.
#[napi]
pub fn respond(message: &[u8], strict: bool, supported: Vec<String>) -> Option<Buffer> {
    core::respond(message, strict, |m| core::is_supported(m, &supported)).map(Buffer::from)
}

/// The message with its id replaced by `newId` (raw JSON), or `null` when the message is
/// invalid or has no id; throws when `newId` is not an integer literal or a string.
#[napi]
pub fn rewrite_id(message: &[u8], strict: bool, new_id: &[u8]) -> Result<Option<Buffer>> {
    core::rewrite_id(message, strict, new_id)
        .map(|out| out.map(Buffer::from))
        .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))
}

/// The names behind the records' numbers, as JSON (`rpcscan-js-core`'s `tables`).
#[napi]
pub fn tables() -> String {
    core::tables()
}

/// The frames one `push` or `finish` completed: their bytes and their records.
#[napi(object)]
pub struct Frames {
    /// The frames' bytes, concatenated; the records' spans point into it.
    pub out: Buffer,
    /// `tables().frame` numbers per frame.
    pub records: Float64Array,
}

/// A byte stream through a framing decoder (`rpcscan-js-core`'s `Scanner`).
#[napi]
pub struct NativeScanner {
    inner: core::Scanner,
}

#[napi]
impl NativeScanner {
    /// `framing`: `auto`, `ndjson`, `content-length`, `sse` or `json-seq`.
    #[napi(constructor)]
    pub fn new(framing: String, max_message_size: f64, strict: bool) -> Result<Self> {
        let framing = core::FramingChoice::from_name(&framing).ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!("unknown framing {framing:?} (expected auto, ndjson, content-length, sse or json-seq)"),
            )
        })?;
        if !(1.0..=4_294_967_295.0).contains(&max_message_size) {
            return Err(Error::new(Status::InvalidArg, "maxMessageSize must be 1 to 2^32-1 bytes"));
        }
        Ok(NativeScanner { inner: core::Scanner::new(framing, max_message_size as usize, strict) })
    }

    /// Appends a chunk; returns the frames it completed.
    #[napi]
    pub fn push(&mut self, chunk: &[u8]) -> Frames {
        self.inner.push(chunk);
        self.take()
    }

    /// End of input: the frames left.
    #[napi]
    pub fn finish(&mut self) -> Frames {
        self.inner.finish();
        self.take()
    }

    /// The framing in use once known (`auto` decides on the first line), else `null`.
    #[napi(getter)]
    pub fn framing(&self) -> Option<&'static str> {
        self.inner.framing().map(|f| f.as_str())
    }

    fn take(&mut self) -> Frames {
        Frames {
            out: Buffer::from(std::mem::take(&mut self.inner.out)),
            records: Float64Array::new(std::mem::take(&mut self.inner.records)),
        }
    }
}
