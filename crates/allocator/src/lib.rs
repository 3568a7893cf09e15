//! The process's memory: the global allocator (mimalloc, with the two options that keep an idle
//! proxy small) and the binary's start-up pages ([`release_start_pages`]).
//!
//! The binary names [`Allocator`] as its `#[global_allocator]` and calls [`tune`] first in `main`.
//! This is the only crate of the workspace with `unsafe` code: mimalloc's options are reachable
//! only through its C API, and the kernel's `madvise` only through the C library.

mod pages;

pub use pages::release_start_pages;

/// The allocator type the binary installs (the proxy allocates per request: hyper, headers).
pub use mimalloc::MiMalloc as Allocator;

/// mimalloc's option numbers (the `mi_option_e` enum of its v3 header), which libmimalloc-sys
/// does not name; `options_are_the_ones_meant` pins them to their defaults.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc hand freed memory back to the kernel at once. By default it waits a second
/// and purges only when the thread that freed allocates again, so the memory the policy and
/// signature compile frees stays resident in an idle proxy; and it commits whole arenas up
/// front, so what it purges is not decommitted. A value set in the environment
/// (`MIMALLOC_PURGE_DELAY`, `MIMALLOC_ARENA_EAGER_COMMIT`) still wins. Call it first in `main`,
/// before other threads exist.
#[allow(unsafe_code)]
pub fn tune() {
    // SAFETY: `mi_option_set_default` writes one entry of mimalloc's static option table (bounds
    // checked on its side, no pointer passed); both options are read afresh on each use, and this
    // runs on the main thread before any other thread exists.
    unsafe {
        libmimalloc_sys::mi_option_set_default(MI_OPTION_PURGE_DELAY, 0);
        libmimalloc_sys::mi_option_set_default(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
}

#[cfg(test)]
mod tests {
    /// The option numbers name the options meant: their defaults are those of mimalloc v3
    /// (a purge delay of 1000 ms, arenas committed eagerly where the OS overcommits), and after
    /// `tune` both read 0. A renumbering in a newer mimalloc fails here.
    #[test]
    #[allow(unsafe_code)]
    fn options_are_the_ones_meant() {
        // SAFETY: reads of mimalloc's option table, no pointers.
        let read = |option| unsafe { libmimalloc_sys::mi_option_get(option) };
        assert_eq!(read(super::MI_OPTION_PURGE_DELAY), 1000);
        assert_eq!(read(super::MI_OPTION_ARENA_EAGER_COMMIT), 2);
        super::tune();
        assert_eq!(read(super::MI_OPTION_PURGE_DELAY), 0);
        assert_eq!(read(super::MI_OPTION_ARENA_EAGER_COMMIT), 0);
    }
}
