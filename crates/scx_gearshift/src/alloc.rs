//! The scheduler's memory: a buddy-alloc arena as the global allocator, locked in RAM.
//!
//! The scheduling thread must never page-fault: while it waits for a page, the tasks it should
//! dispatch wait too, and if the fault needs a task only it can dispatch (kswapd, kcompactd),
//! the system stalls. So every allocation comes from one preallocated arena that `mlockall`
//! pins, and compaction is told to leave locked pages alone while we run.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use buddy_alloc::{BuddyAllocParam, FastAllocParam, NonThreadsafeAlloc};

/// Size of the global arena.
pub const ARENA_BYTES: usize = 64 << 20;
/// Alignment both buddy-alloc allocators guarantee (their block/leaf size).
const NATIVE_ALIGN: usize = 64;
const LEAF_BYTES: usize = 64;

/// A thread-safe global allocator over a fixed memory range.
pub struct ArenaAlloc {
    locked: AtomicBool,
    inner: UnsafeCell<NonThreadsafeAlloc>,
    allocations: AtomicU64,
    used_bytes: AtomicU64,
}

// SAFETY: `inner` is only touched with `locked` held.
unsafe impl Sync for ArenaAlloc {}

impl ArenaAlloc {
    /// An allocator over `len` bytes at `base`: an eighth for small blocks, the rest buddy.
    ///
    /// # Safety
    /// `base..base+len` must be zeroed, 4096-aligned memory used by nothing else, for as long
    /// as the allocator is used.
    pub const unsafe fn new(base: *const u8, len: usize) -> Self {
        let fast = len / 8 / 4096 * 4096;
        Self {
            locked: AtomicBool::new(false),
            inner: UnsafeCell::new(NonThreadsafeAlloc::new(
                FastAllocParam::new(base, fast),
                BuddyAllocParam::new_with_zero_filled(base.add(fast), len - fast, LEAF_BYTES),
            )),
            allocations: AtomicU64::new(0),
            used_bytes: AtomicU64::new(0),
        }
    }

    /// Allocations made so far (for the zero-allocations-per-task benchmark).
    pub fn allocations(&self) -> u64 {
        self.allocations.load(Ordering::Relaxed)
    }

    /// Bytes currently allocated.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }

    fn with_inner<R>(&self, f: impl FnOnce(&NonThreadsafeAlloc) -> R) -> R {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
        // SAFETY: the lock is held.
        let r = f(unsafe { &*self.inner.get() });
        self.locked.store(false, Ordering::Release);
        r
    }
}

unsafe impl GlobalAlloc for ArenaAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.used_bytes
            .fetch_add(layout.size() as u64, Ordering::Relaxed);
        if layout.align() <= NATIVE_ALIGN {
            return self.with_inner(|a| unsafe { a.alloc(layout) });
        }
        // Larger alignment: over-allocate, align up, keep the raw pointer just below.
        let Ok(padded) = Layout::from_size_align(layout.size() + layout.align(), NATIVE_ALIGN)
        else {
            return std::ptr::null_mut();
        };
        let raw = self.with_inner(|a| unsafe { a.alloc(padded) });
        if raw.is_null() {
            return raw;
        }
        let aligned = ((raw as usize + layout.align()) & !(layout.align() - 1)) as *mut u8;
        // SAFETY: aligned - raw >= NATIVE_ALIGN >= 8, inside the padded block.
        unsafe { (aligned as *mut *mut u8).sub(1).write(raw) };
        aligned
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.used_bytes
            .fetch_sub(layout.size() as u64, Ordering::Relaxed);
        let raw = if layout.align() <= NATIVE_ALIGN {
            ptr
        } else {
            // SAFETY: written by alloc() above.
            unsafe { (ptr as *mut *mut u8).sub(1).read() }
        };
        self.with_inner(|a| unsafe { a.dealloc(raw, layout) });
    }
}

#[repr(C, align(4096))]
struct Heap([u8; ARENA_BYTES]);

static mut HEAP: Heap = Heap([0; ARENA_BYTES]);

/// The arena the `scx_gearshift` binary installs as its global allocator.
// SAFETY: HEAP is zeroed, page-aligned, and used by nothing but this allocator.
pub static ARENA: ArenaAlloc =
    unsafe { ArenaAlloc::new((&raw const HEAP.0) as *const u8, ARENA_BYTES) };

/// Zero-sized handle to [`ARENA`] for `#[global_allocator]`.
pub struct GlobalArena;

unsafe impl GlobalAlloc for GlobalArena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { ARENA.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { ARENA.dealloc(ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_arena(len: usize) -> &'static ArenaAlloc {
        let layout = Layout::from_size_align(len, 4096).unwrap();
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!base.is_null());
        Box::leak(Box::new(unsafe { ArenaAlloc::new(base, len) }))
    }

    #[test]
    fn honours_large_alignments() {
        let a = test_arena(1 << 20);
        for align in [8usize, 64, 128, 4096] {
            let layout = Layout::from_size_align(100, align).unwrap();
            let p = unsafe { a.alloc(layout) };
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0, "align {align}");
            unsafe { a.dealloc(p, layout) };
        }
        assert_eq!(a.used_bytes(), 0);
    }

    #[test]
    fn concurrent_use_never_hands_out_the_same_memory_twice() {
        let a = test_arena(64 << 20);
        let threads: Vec<_> = (0..4u8)
            .map(|id| {
                std::thread::spawn(move || {
                    let mut live = Vec::new();
                    for round in 0..2000usize {
                        let size = 16 + (round * 37 + id as usize * 11) % 3000;
                        let layout = Layout::from_size_align(size, 8).unwrap();
                        let p = unsafe { a.alloc(layout) };
                        assert!(!p.is_null());
                        unsafe { p.write_bytes(id, size) };
                        live.push((p, layout));
                        if round % 3 == 0 {
                            let (q, l) = live.swap_remove(round % live.len());
                            // Nobody else wrote into our block.
                            let bytes = unsafe { std::slice::from_raw_parts(q, l.size()) };
                            assert!(bytes.iter().all(|&b| b == id));
                            unsafe { a.dealloc(q, l) };
                        }
                    }
                    for (q, l) in live {
                        let bytes = unsafe { std::slice::from_raw_parts(q, l.size()) };
                        assert!(bytes.iter().all(|&b| b == id));
                        unsafe { a.dealloc(q, l) };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(a.used_bytes(), 0);
        assert_eq!(a.allocations(), 4 * 2000);
    }

    #[test]
    fn exhaustion_is_a_null_pointer_not_corruption() {
        let a = test_arena(1 << 20);
        let layout = Layout::from_size_align(4 << 20, 8).unwrap();
        assert!(unsafe { a.alloc(layout) }.is_null());
    }
}
