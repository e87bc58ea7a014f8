//! A counting global allocator (per thread) for the no-allocation promises.
//!
//! A `#[global_allocator]` belongs to the final binary, so each test binary that counts
//! installs it itself, with [`install_counting_allocator!`](crate::install_counting_allocator):
//!
//! ```ignore
//! rpcscan_testkit::install_counting_allocator!();
//! use rpcscan_testkit::alloc::allocations_during;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator and counts allocations and reallocations per thread.
pub struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls per thread.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Makes [`Counting`] the global allocator of the binary this is written in (once, at the
/// crate root of a test); without it [`allocations_during`] counts nothing.
#[macro_export]
macro_rules! install_counting_allocator {
    () => {
        #[global_allocator]
        static COUNTING_ALLOCATOR: $crate::alloc::Counting = $crate::alloc::Counting;
    };
}

/// How many allocations (and reallocations) this thread made while running `f`.
pub fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}
