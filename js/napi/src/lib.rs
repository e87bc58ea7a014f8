//! The Node add-on behind the `rpcscan` npm package: thin napi-rs wrappers around
//! `rpcscan-js-core`. Messages arrive as `Buffer` / `Uint8Array` and are read where they lie
//! (no copy); verdicts leave as records written into a `Float64Array` the package owns, so a
//! call makes no JavaScript object. The package's TypeScript (`js/src/`) is the public API.
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CStr};
use std::mem::ManuallyDrop;
use std::ptr;

use napi::bindgen_prelude::{Buffer, Float64Array, Object};
use napi::{sys, Env, Error, JsValue, Result, Status};
use napi_derive::napi;
use rpcscan_js_core as core;

thread_local! {
    // The package's record array (set once per thread by `set_record`), kept alive by the
    // reference it holds. Never dropped: a reference released after the environment is
    // torn down (thread-local destructors run late) would be a use after free.
    static RECORD: RefCell<Option<ManuallyDrop<Float64Array>>> = const { RefCell::new(None) };
    // Where that array's numbers are, for `parse`: its backing store, which never moves.
    static RECORD_AT: Cell<Option<(*mut f64, usize)>> = const { Cell::new(None) };
}

/// Hands the add-on the `Float64Array` (at least `tables().record` numbers) that `parse`
/// writes each record into: passing it on every call would cost a typed-array lookup each.
#[napi]
pub fn set_record(mut record: Float64Array) -> Result<()> {
    if record.len() < core::RECORD_LEN {
        return Err(Error::new(Status::InvalidArg, "record is too short"));
    }
    // SAFETY: only the pointer and length are taken here; `parse` writes through them
    // (see there why that is sound).
    let numbers = unsafe { record.as_mut() };
    RECORD_AT.set(Some((numbers.as_mut_ptr(), numbers.len())));
    RECORD.with_borrow_mut(|slot| *slot = Some(ManuallyDrop::new(record)));
    Ok(())
}

// `classify` and `parse`, the calls a router makes per message, are plain N-API callbacks
// registered below (`fast_exports`), not `#[napi]` functions: for every call with
// arguments napi-rs opens and closes a "native borrow" scope (an `Arc<Mutex<..>>`
// allocated and freed per call, and a thread-local stack), which cost about as much as
// classifying a small message. These read their two arguments with three N-API calls and
// allocate nothing. Their types are declared by hand in `src/index.ts` (`Fast`).

/// The two arguments `(message: Uint8Array, strict: boolean)` of a raw callback: the
/// message's bytes where they lie (no copy) and the flag; `None`, with a `TypeError`
/// thrown, when they are not that.
///
/// # Safety
///
/// `env` and `info` are those of a callback N-API is running; the slice may be read until
/// the callback returns (JavaScript is blocked meanwhile, and the bytes of a typed array
/// do not move while it is reachable, as it is from the arguments).
unsafe fn message_args<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Option<(&'a [u8], bool)> {
    let mut argc = 2usize;
    let mut argv: [sys::napi_value; 2] = [ptr::null_mut(); 2];
    // SAFETY: `env` and `info` are the running callback's (the caller's contract); `argv`
    // has room for `argc` values; `this` and `data` are not asked for (null is allowed).
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || argc < 2 {
        // SAFETY: as above.
        unsafe { throw_type_error(env, c"expected (message: Uint8Array, strict: boolean)") };
        return None;
    }
    let mut kind: sys::napi_typedarray_type = -1;
    let mut len = 0usize;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: `argv[0]` is a value of this callback; the out-pointers are valid, and the
    // array buffer and byte offset are not asked for (null is allowed). N-API gives `data`
    // already advanced by the view's byte offset.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            argv[0],
            &mut kind,
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
        // SAFETY: as above.
        unsafe { throw_type_error(env, c"message must be a Buffer or Uint8Array") };
        return None;
    }
    let mut strict = false;
    // SAFETY: `argv[1]` is a value of this callback; `strict` is a valid out-pointer.
    if unsafe { sys::napi_get_value_bool(env, argv[1], &mut strict) } != sys::Status::napi_ok {
        // SAFETY: as above.
        unsafe { throw_type_error(env, c"strict must be a boolean") };
        return None;
    }
    let bytes = if len == 0 || data.is_null() {
        &[][..]
    } else {
        // SAFETY: N-API says the typed array's `len` bytes start at `data`; they stay
        // there and are not written while the callback runs (the caller's contract).
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
    };
    Some((bytes, strict))
}

/// Throws a `TypeError` with `message`.
///
/// # Safety
///
/// `env` is that of a callback N-API is running.
unsafe fn throw_type_error(env: sys::napi_env, message: &CStr) {
    // SAFETY: `env` is the running callback's; the message is a NUL-terminated string.
    unsafe { sys::napi_throw_type_error(env, ptr::null(), message.as_ptr()) };
}

/// `classify(message, strict)`: the kind of one message, an index into `tables().kinds`.
unsafe extern "C" fn classify_raw(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: N-API runs this callback with its `env` and `info`.
    let Some((message, strict)) = (unsafe { message_args(env, info) }) else {
        return ptr::null_mut();
    };
    let kind = core::classify(message, strict);
    let mut out: sys::napi_value = ptr::null_mut();
    // SAFETY: `env` is the running callback's; `out` is a valid out-pointer. On failure
    // `out` stays null, which N-API returns as `undefined`.
    unsafe { sys::napi_create_uint32(env, kind, &mut out) };
    out
}

/// `parse(message, strict)`: scans one message and writes its record
/// (`rpcscan-js-core`'s `slot` layout) into the array given to `setRecord`.
unsafe extern "C" fn parse_raw(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: N-API runs this callback with its `env` and `info`.
    let Some((message, strict)) = (unsafe { message_args(env, info) }) else {
        return ptr::null_mut();
    };
    let Some((at, len)) = RECORD_AT.get() else {
        // SAFETY: as above.
        unsafe { throw_type_error(env, c"setRecord was not called") };
        return ptr::null_mut();
    };
    // SAFETY: the array is alive (the reference `RECORD` holds keeps it from the
    // collector, and it is never released), its backing store does not move, and
    // JavaScript is blocked in this synchronous call on the one thread that may touch it.
    // It is the package's private array (record.ts), never handed out, so the message
    // (only read) cannot be a view of the same memory.
    let record = unsafe { std::slice::from_raw_parts_mut(at, len) };
    core::parse_into(message, strict, record);
    // A null return is `undefined` to JavaScript.
    ptr::null_mut()
}

/// Adds `classify` and `parse` (the raw callbacks above) to the add-on's exports.
#[napi(module_exports)]
pub fn fast_exports(exports: Object, env: Env) -> Result<()> {
    let functions: [(&CStr, RawCallback); 2] = [(c"classify", classify_raw), (c"parse", parse_raw)];
    for (name, callback) in functions {
        let mut function: sys::napi_value = ptr::null_mut();
        // SAFETY: `env` is the environment loading the module; `name` is NUL-terminated
        // (length -1 says so); `function` is a valid out-pointer.
        let status = unsafe {
            sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                -1,
                Some(callback),
                ptr::null_mut(),
                &mut function,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::GenericFailure, "napi_create_function failed"));
        }
        // SAFETY: `exports` is the module's exports object in this environment; `function`
        // was just made in it.
        let status = unsafe {
            sys::napi_set_named_property(env.raw(), exports.raw(), name.as_ptr(), function)
        };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::GenericFailure, "napi_set_named_property failed"));
        }
    }
    Ok(())
}

/// An N-API callback.
type RawCallback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

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
