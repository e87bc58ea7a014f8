//! Column storage reused from one read to the next. The columns `scan` builds (`crate::scan`)
//! are `Vec`s taken from here, and become Arrow buffers that give their `Vec` back when the
//! last reader of the table drops it (through `bytes::Bytes::from_owner`: no copy, no
//! unsafe code). A table of a 500 MB log holds about 100 MB of columns: freed to the
//! allocator, most of it goes back to the system (glibc trims its heaps), and the next
//! read's columns fault it in again, page by page, which cost about a tenth of a read's
//! CPU time. Kept here instead, up to [`MAX_BYTES`] per element type, the next read writes
//! into pages already there.

use std::sync::Mutex;

use arrow_buffer::{ArrowNativeType, Buffer, ScalarBuffer, ToByteSlice};

/// Bytes a pool keeps at most (capacity of the `Vec`s held, per element type): more than
/// the columns of a few hundred MB of log, a bound on what stays allocated after the tables
/// are gone.
pub(crate) const MAX_BYTES: usize = 128 << 20;

/// How many of the `Vec`s kept last [`Pool::take`] looks through for one large enough.
const LOOK: usize = 16;

/// Free `Vec`s of one element type, and their capacity in bytes.
pub(crate) struct Pool<T> {
    free: Mutex<(Vec<Vec<T>>, usize)>,
}

/// The element types with a pool.
pub(crate) trait Pooled: ArrowNativeType {
    fn pool() -> &'static Pool<Self>;
}

/// One pool per column element type (`static NAME`), and its [`Pooled`] impl.
macro_rules! pools {
    ($($t:ty => $name:ident),* $(,)?) => {$(
        pub(crate) static $name: Pool<$t> = Pool::new();
        impl Pooled for $t {
            fn pool() -> &'static Pool<$t> {
                &$name
            }
        }
    )*};
}
pools!(u64 => U64, i64 => I64, i8 => I8, u8 => U8);

impl<T> Pool<T> {
    const fn new() -> Pool<T> {
        Pool { free: Mutex::new((Vec::new(), 0)) }
    }
}

impl<T: Pooled> Pool<T> {
    /// An empty `Vec` with room for at least `n` elements: a kept one when there is one
    /// (of the last few kept, the smallest large enough, else the last).
    pub(crate) fn take(&self, n: usize) -> Vec<T> {
        let kept = match self.free.lock() {
            Ok(mut free) => {
                let vecs = &mut free.0;
                let from = vecs.len().saturating_sub(LOOK);
                let fits = (from..vecs.len())
                    .filter(|&i| vecs[i].capacity() >= n)
                    .min_by_key(|&i| vecs[i].capacity());
                let v = match fits {
                    Some(i) => Some(vecs.swap_remove(i)),
                    None => vecs.pop(),
                };
                if let Some(v) = &v {
                    free.1 -= bytes_of(v);
                }
                v
            }
            Err(_) => None,
        };
        let mut v = kept.unwrap_or_default();
        v.reserve(n);
        v
    }

    /// Keeps `v` for a later [`Pool::take`], unless the pool is full.
    pub(crate) fn give(&self, mut v: Vec<T>) {
        let size = bytes_of(&v);
        if size == 0 {
            return;
        }
        if let Ok(mut free) = self.free.lock() {
            if free.1 + size <= MAX_BYTES {
                v.clear();
                free.1 += size;
                free.0.push(v);
            }
        }
    }
}

fn bytes_of<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// A column's `Vec` owned by an Arrow buffer: back to its pool when the buffer goes.
struct Owner<T: Pooled>(Vec<T>);

impl<T: Pooled> AsRef<[u8]> for Owner<T> {
    fn as_ref(&self) -> &[u8] {
        self.0.to_byte_slice()
    }
}

impl<T: Pooled> Drop for Owner<T> {
    fn drop(&mut self) {
        T::pool().give(std::mem::take(&mut self.0));
    }
}

/// `v` as an Arrow buffer, without a copy; `v` goes back to its pool when the buffer is
/// dropped.
pub(crate) fn buffer<T: Pooled>(v: Vec<T>) -> Buffer {
    Buffer::from(bytes::Bytes::from_owner(Owner(v)))
}

/// `v` as a typed Arrow buffer (a `Vec<T>` is aligned for `T`), without a copy.
pub(crate) fn scalars<T: Pooled>(v: Vec<T>) -> ScalarBuffer<T> {
    let len = v.len();
    ScalarBuffer::new(buffer(v), 0, len)
}
