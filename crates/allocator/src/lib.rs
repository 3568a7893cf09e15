//! The process's memory: the global allocator (mimalloc: freed memory handed back at once while
//! the proxy starts, after a delay while it serves, see [`tune`] and [`hand_back`]) and the
//! binary's start-up pages ([`release_start_pages`]).
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

/// The purge delay once the start is over, in milliseconds (mimalloc's default).
const SERVING_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// Makes mimalloc hand freed memory back to the kernel at once while the proxy starts. By default
/// it waits a second and purges only when the thread that freed allocates again, so the memory
/// the policy and signature compile frees would stay resident in an idle proxy; and it commits
/// whole arenas up front, so what it purges is not decommitted. [`hand_back`] restores the delay
/// once the start is over. A value set in the environment (`MIMALLOC_PURGE_DELAY`,
/// `MIMALLOC_ARENA_EAGER_COMMIT`) still wins. Call it first in `main`, before other threads exist.
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

/// Call when a piece of work that allocated much and freed it is over (the start, with the policy
/// and the signature database compiled; a reload): hands back to the kernel now the freed memory
/// mimalloc still holds, then gives the purge delay back its default. Purging
/// every page the moment it empties suits the start, but a proxy empties pages on every
/// connection (its buffers, the connection's task): each connection would pay `madvise` calls,
/// then a page fault for each page touched again. With the delay, a page emptied under traffic is
/// reused before it is purged.
#[allow(unsafe_code)]
pub fn hand_back() {
    // SAFETY: `mi_collect` takes no pointer; mimalloc runs it on any thread at any time (it
    // collects the calling thread's heap and purges the arenas under its own guard).
    unsafe { libmimalloc_sys::mi_collect(true) }
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` stores one word of mimalloc's static option table (bounds
        // checked on its side, no pointer passed). Other threads read that word without a lock,
        // as they do when mimalloc fills the table lazily on a first read: the store is one
        // aligned machine word, so a reader sees the old delay or the new one, and either is a
        // valid delay.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, SERVING_PURGE_DELAY_MS) }
    }
}

#[cfg(test)]
mod tests {
    /// The option numbers name the options meant: their defaults are those of mimalloc v3
    /// (a purge delay of 1000 ms, arenas committed eagerly where the OS overcommits); after
    /// `tune` both read 0, and after `hand_back` the delay is the default again. A renumbering
    /// in a newer mimalloc fails here.
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
        super::hand_back();
        assert_eq!(read(super::MI_OPTION_PURGE_DELAY), 1000);
    }
}
