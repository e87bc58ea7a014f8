//! Borrowing the bytes of any object with the buffer protocol (`bytes`, `bytearray`,
//! `memoryview`, `array.array('B')`, NumPy `uint8` arrays...), without a copy.
//!
//! pyo3 only offers `PyBuffer` under the limited API from Python 3.11 on, and this
//! extension is an `abi3` build for 3.9 and later. `PyObject_GetBuffer` /
//! `PyBuffer_Release` and the `Py_buffer` layout have been part of CPython's public C API,
//! unchanged, since 3.3; they are declared here for 3.9 and 3.10.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi::{PyObject, Py_ssize_t};
use pyo3::prelude::*;

/// CPython's `Py_buffer` (Include/pybuffer.h).
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut PyObject,
    len: Py_ssize_t,
    itemsize: Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut Py_ssize_t,
    strides: *mut Py_ssize_t,
    suboffsets: *mut Py_ssize_t,
    internal: *mut c_void,
}

/// `PyBUF_SIMPLE`: one C-contiguous block of bytes, or an error.
const PY_BUF_SIMPLE: c_int = 0;
/// `PyBUF_FULL_RO` (`PyBUF_INDIRECT | PyBUF_FORMAT`): any layout, strided included.
const PY_BUF_FULL_RO: c_int = 0x0100 | 0x0010 | 0x0008 | 0x0004;

impl RawBuffer {
    fn empty() -> RawBuffer {
        RawBuffer {
            buf: ptr::null_mut(),
            obj: ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: ptr::null_mut(),
            shape: ptr::null_mut(),
            strides: ptr::null_mut(),
            suboffsets: ptr::null_mut(),
            internal: ptr::null_mut(),
        }
    }
}

extern "C" {
    fn PyObject_GetBuffer(obj: *mut PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// A held buffer: its bytes stay put until it is dropped.
pub struct Bytes {
    view: RawBuffer,
    /// The exporter is a `bytes` object (directly or under a `memoryview`).
    immutable: bool,
}

// SAFETY: the exporter keeps the memory alive and unmoved while the view is held (that is
// the buffer protocol's contract), whichever thread reads it. Release needs the GIL and
// happens in `Drop`, which takes it.
unsafe impl Send for Bytes {}
// SAFETY: as above; the bytes are only ever read through `&[u8]`.
unsafe impl Sync for Bytes {}

impl Bytes {
    /// Borrows `obj`'s bytes; `TypeError` when it has no contiguous byte buffer.
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
        let mut view = RawBuffer::empty();
        // SAFETY: `obj` is a live object (we hold the GIL through `Bound`), `view` is a
        // writable `Py_buffer`; on success the exporter fills it and owns a reference in it.
        let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut view, PY_BUF_SIMPLE) };
        if rc != 0 {
            let cause = PyErr::take(obj.py());
            let name = obj.get_type().name()?;
            let err = if is_non_contiguous(obj) {
                PyTypeError::new_err(format!(
                    "expected a contiguous buffer of bytes: this {name} is not contiguous \
                     (a strided slice or view); copy it first, e.g. bytes(view)"
                ))
            } else {
                PyTypeError::new_err(format!(
                    "expected bytes, bytearray, memoryview, mmap, str or another object with \
                     the buffer protocol, not {name}"
                ))
            };
            err.set_cause(obj.py(), cause);
            return Err(err);
        }
        let immutable = exported_by_bytes(obj);
        Ok(Bytes { view, immutable })
    }

    /// `true` when the bytes cannot change while they are read: the exporter is a `bytes`
    /// object, directly or under a `memoryview`. Only then may they be read with the GIL
    /// released; a `bytearray`, an `mmap` or an array (read-only views of them included)
    /// could be written to by another thread meanwhile.
    pub fn is_immutable(&self) -> bool {
        self.immutable
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        let len = usize::try_from(self.view.len).unwrap_or(0);
        if self.view.buf.is_null() || len == 0 {
            return &[];
        }
        // SAFETY: PyBUF_SIMPLE gives `len` contiguous bytes at `buf`, valid until the view
        // is released in `Drop`, which cannot happen while `&self` is borrowed. A
        // `bytearray` resized meanwhile is refused by CPython while an export is held.
        unsafe { std::slice::from_raw_parts(self.view.buf.cast::<u8>(), len) }
    }
}

/// The object is an exact `bytes`, or a `memoryview` of one.
fn exported_by_bytes(obj: &Bound<'_, PyAny>) -> bool {
    use pyo3::types::{PyBytes, PyMemoryView};
    if obj.is_exact_instance_of::<PyBytes>() {
        return true;
    }
    obj.is_exact_instance_of::<PyMemoryView>()
        && obj.getattr("obj").is_ok_and(|base| base.is_exact_instance_of::<PyBytes>())
}

/// An object that does export a buffer, only not one contiguous block (a strided
/// `memoryview`, a NumPy slice): asking for any layout succeeds where the simple one failed.
fn is_non_contiguous(obj: &Bound<'_, PyAny>) -> bool {
    let mut view = RawBuffer::empty();
    // SAFETY: as in `Bytes::get`; a view obtained here is released at once.
    let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut view, PY_BUF_FULL_RO) };
    if rc != 0 {
        drop(PyErr::take(obj.py()));
        return false;
    }
    // SAFETY: filled by the successful call above, released once.
    unsafe { PyBuffer_Release(&mut view) };
    true
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        Python::attach(|_py| {
            // SAFETY: `view` was filled by a successful `PyObject_GetBuffer` and is
            // released exactly once, with the GIL held.
            unsafe { PyBuffer_Release(&mut self.view) }
        });
    }
}
