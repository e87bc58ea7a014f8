//! rpcscan as a WebAssembly module for edge runtimes (Cloudflare Workers, Deno, browsers,
//! Node): `wasm32-unknown-unknown`, a plain C ABI, no imports, no JavaScript glue generator.
//! The npm package's `rpcscan/wasm` (`js/src/wasm.ts`) drives it.
//!
//! WebAssembly cannot read JavaScript's memory, so the module keeps its own buffers and
//! the host writes into them: a message goes into the *input* buffer (`rpcscan_input(len,
//! align)` returns where to write `len` bytes), a second argument (the supported methods, a new id)
//! into the *aux* buffer, and answers come back in the *out* buffer (`rpcscan_out_ptr` /
//! `rpcscan_out_len`) or the record (`rpcscan_record`, `rpcscan-js-core`'s layout). Any call
//! that allocates may grow the memory: the host re-reads `memory.buffer` after each call.
//! Pointers and lengths are `u32` (wasm32). Nothing here is `unsafe` but the exported names.
#![deny(missing_docs)]
// `#[no_mangle]` is the only "unsafe" thing here (the unsafe_code lint flags it); there is
// no unsafe block.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};

use rpcscan_js_core as core;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Where in the input buffer the message starts (0-15, see `rpcscan_input`).
    static INPUT_START: Cell<usize> = const { Cell::new(0) };
    static AUX: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static RECORD: RefCell<[f64; core::RECORD_LEN]> = const { RefCell::new([0.0; core::RECORD_LEN]) };
    static SCANNERS: RefCell<Vec<Option<core::Scanner>>> = const { RefCell::new(Vec::new()) };
}

fn grow(buf: &RefCell<Vec<u8>>, len: usize) -> usize {
    let mut buf = buf.borrow_mut();
    if buf.len() < len {
        buf.resize(len, 0);
    }
    buf.as_mut_ptr() as usize
}

fn with_input<R>(len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
    let start = INPUT_START.get();
    INPUT.with_borrow(|input| f(input.get(start..start.saturating_add(len)).unwrap_or(&[])))
}

fn with_aux<R>(len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
    AUX.with_borrow(|aux| f(aux.get(..len).unwrap_or(&[])))
}

fn set_out(bytes: &[u8]) {
    OUT.with_borrow_mut(|out| {
        out.clear();
        out.extend_from_slice(bytes);
    });
}

/// Where to write a message of `len` bytes (the input buffer, grown as needed): an address
/// equal to `align` modulo 16. The host passes its bytes' address modulo 16 as far as it
/// knows it (a typed array's `byteOffset`: backing stores are 16-byte aligned), so the copy
/// runs between addresses 16-byte apart. glibc's `memcpy` (2.36, AMD EPYC) takes 1.1 µs
/// for 63 KB then, 1.2-1.5 µs at other distances and 18 µs when the destination is 1-15
/// bytes past the source modulo 4 KB (its `rep movsb`); see docs/performance.md.
#[no_mangle]
pub extern "C" fn rpcscan_input(len: usize, align: usize) -> usize {
    INPUT.with(|b| {
        let base = grow(b, len.saturating_add(15));
        let start = align.wrapping_sub(base) & 15;
        INPUT_START.set(start);
        base + start
    })
}

/// Where to write a second argument of `len` bytes (the aux buffer).
#[no_mangle]
pub extern "C" fn rpcscan_aux(len: usize) -> usize {
    AUX.with(|b| grow(b, len))
}

/// Where the record of the last `rpcscan_parse` is (`RECORD_LEN` f64s; it never moves).
#[no_mangle]
pub extern "C" fn rpcscan_record() -> usize {
    RECORD.with_borrow(|r| r.as_ptr() as usize)
}

/// Where the last answer's bytes are.
#[no_mangle]
pub extern "C" fn rpcscan_out_ptr() -> usize {
    OUT.with_borrow(|o| o.as_ptr() as usize)
}

/// How long the last answer is.
#[no_mangle]
pub extern "C" fn rpcscan_out_len() -> usize {
    OUT.with_borrow(|o| o.len())
}

/// The kind of the message in the input buffer's first `len` bytes (an index into `Kind::ALL`).
#[no_mangle]
pub extern "C" fn rpcscan_classify(len: usize, strict: u32) -> u32 {
    with_input(len, |msg| core::classify(msg, strict != 0))
}

/// Scans the message in the input buffer into the record.
#[no_mangle]
pub extern "C" fn rpcscan_parse(len: usize, strict: u32) {
    with_input(len, |msg| {
        RECORD.with_borrow_mut(|rec| core::parse_into(msg, strict != 0, rec));
    });
}

/// The supported methods in the aux buffer: each a little-endian `u32` length, then UTF-8.
fn methods(aux: &[u8]) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = aux;
    while let Some((len, tail)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let Some(name) = tail.get(..len) else { break };
        if let Ok(name) = std::str::from_utf8(name) {
            names.push(name);
        }
        rest = &tail[len..];
    }
    names
}

/// `rpcscan respond`'s answer to the message in the input buffer, the supported methods in
/// the aux buffer (`aux_len` bytes, see `methods`): 1 with the answer in the out buffer,
/// 0 when the message gets none.
#[no_mangle]
pub extern "C" fn rpcscan_respond(len: usize, strict: u32, aux_len: usize) -> u32 {
    let answer = with_input(len, |msg| {
        with_aux(aux_len, |aux| {
            let supported = methods(aux);
            core::respond(msg, strict != 0, |m| core::is_supported(m, &supported))
        })
    });
    match answer {
        Some(bytes) => {
            set_out(&bytes);
            1
        }
        None => 0,
    }
}

/// The message in the input buffer with its id replaced by the raw JSON in the aux buffer:
/// 1 with the message in the out buffer, 0 when it is invalid or has no id, -1 when the new
/// id is not an integer literal or a string.
#[no_mangle]
pub extern "C" fn rpcscan_rewrite_id(len: usize, strict: u32, aux_len: usize) -> i32 {
    let rewritten =
        with_input(len, |msg| with_aux(aux_len, |id| core::rewrite_id(msg, strict != 0, id)));
    match rewritten {
        Ok(Some(bytes)) => {
            set_out(&bytes);
            1
        }
        Ok(None) => 0,
        Err(_) => -1,
    }
}

/// Writes the tables (`rpcscan-js-core`'s `tables`, JSON) into the out buffer.
#[no_mangle]
pub extern "C" fn rpcscan_tables() {
    set_out(core::tables().as_bytes());
}

/// The framings by number: 0 auto, 1 ndjson, 2 content-length, 3 sse, 4 json-seq.
const FRAMINGS: [&str; 5] = ["auto", "ndjson", "content-length", "sse", "json-seq"];

/// A new scanner (`rpcscan-js-core`'s `Scanner`): its handle, or -1 for an unknown framing
/// number or a zero size limit.
#[no_mangle]
pub extern "C" fn rpcscan_scanner_new(framing: u32, max_message_size: u32, strict: u32) -> i32 {
    let Some(choice) =
        FRAMINGS.get(framing as usize).and_then(|name| core::FramingChoice::from_name(name))
    else {
        return -1;
    };
    if max_message_size == 0 {
        return -1;
    }
    let scanner = core::Scanner::new(choice, max_message_size as usize, strict != 0);
    SCANNERS.with_borrow_mut(|all| {
        let handle = match all.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                all.push(None);
                all.len() - 1
            }
        };
        all[handle] = Some(scanner);
        handle as i32
    })
}

fn with_scanner<R>(handle: u32, none: R, f: impl FnOnce(&mut core::Scanner) -> R) -> R {
    SCANNERS.with_borrow_mut(|all| match all.get_mut(handle as usize) {
        Some(Some(scanner)) => f(scanner),
        _ => none,
    })
}

/// Feeds the input buffer's first `len` bytes to the scanner; returns how many frames (and
/// bad frames) it completed, whose records and bytes `rpcscan_scanner_*` then give.
#[no_mangle]
pub extern "C" fn rpcscan_scanner_push(handle: u32, len: usize) -> usize {
    with_input(len, |chunk| {
        with_scanner(handle, 0, |s| {
            s.push(chunk);
            s.records.len() / core::FRAME_LEN
        })
    })
}

/// End of input for the scanner: how many frames are left (as `rpcscan_scanner_push`).
#[no_mangle]
pub extern "C" fn rpcscan_scanner_finish(handle: u32) -> usize {
    with_scanner(handle, 0, |s| {
        s.finish();
        s.records.len() / core::FRAME_LEN
    })
}

/// Where the scanner's last frame records are (`FRAME_LEN` f64s each).
#[no_mangle]
pub extern "C" fn rpcscan_scanner_records(handle: u32) -> usize {
    with_scanner(handle, 0, |s| s.records.as_ptr() as usize)
}

/// Where the scanner's last frames' bytes are.
#[no_mangle]
pub extern "C" fn rpcscan_scanner_out(handle: u32) -> usize {
    with_scanner(handle, 0, |s| s.out.as_ptr() as usize)
}

/// How many bytes the scanner's last frames hold.
#[no_mangle]
pub extern "C" fn rpcscan_scanner_out_len(handle: u32) -> usize {
    with_scanner(handle, 0, |s| s.out.len())
}

/// The scanner's framing by number (as `rpcscan_scanner_new`), 0 while `auto` is undecided.
#[no_mangle]
pub extern "C" fn rpcscan_scanner_framing(handle: u32) -> u32 {
    with_scanner(handle, 0, |s| {
        s.framing().and_then(|f| FRAMINGS.iter().position(|n| *n == f.as_str())).unwrap_or(0) as u32
    })
}

/// Drops the scanner; its handle may be given out again.
#[no_mangle]
pub extern "C" fn rpcscan_scanner_free(handle: u32) {
    SCANNERS.with_borrow_mut(|all| {
        if let Some(slot) = all.get_mut(handle as usize) {
            *slot = None;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_methods_are_length_prefixed() {
        let mut aux = Vec::new();
        for name in ["tools/list", "a\nb", ""] {
            aux.extend_from_slice(&(name.len() as u32).to_le_bytes());
            aux.extend_from_slice(name.as_bytes());
        }
        assert_eq!(methods(&aux), ["tools/list", "a\nb", ""]);
        // Truncated input ends the list; it never panics.
        assert_eq!(methods(&aux[..6]), Vec::<&str>::new());
        assert_eq!(methods(&[1, 0]), Vec::<&str>::new());
    }
}
