//! The executable's own pages after start-up. Everything the start runs once (the command line,
//! the policy language, the signature compiler, the OpenAPI reader) is code and read-only data of
//! the binary, and the kernel maps it in 64 KiB around each page touched; those pages stay in the
//! process's resident set for its whole life although a running proxy never runs them again.
//! [`release_start_pages`] unmaps the binary's read-only segments once the start is over: they are
//! clean copies of the file, still in the page cache, so what runs next is mapped back in on its
//! first use (a minor fault, no read from disk) and only that stays resident.

/// Hands back the pages of the executable's read-only segments (code, constants, the relocation
/// tables the loader has applied); the writable segment, which holds what the loader relocated,
/// is left alone. Returns whether it did: on a binary with text relocations (its code pages were
/// written at load, so they are no longer copies of the file) and on systems other than 64-bit
/// Linux it does nothing.
pub fn release_start_pages() -> bool {
    imp::release()
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod imp {
    use libc::{Elf64_Phdr, PF_W, PT_DYNAMIC, PT_LOAD, PT_PHDR};

    /// `DT_TEXTREL`, `DT_FLAGS` and its `DF_TEXTREL` bit (the ELF specification's values).
    const DT_TEXTREL: u64 = 22;
    const DT_FLAGS: u64 = 30;
    const DF_TEXTREL: u64 = 4;

    #[allow(unsafe_code)]
    pub fn release() -> bool {
        // SAFETY: `getauxval` reads the auxiliary vector the kernel gave the process; it takes
        // no pointer and returns 0 for an entry that is absent.
        let (at_phdr, phnum) = unsafe {
            (
                libc::getauxval(libc::AT_PHDR),
                libc::getauxval(libc::AT_PHNUM),
            )
        };
        if at_phdr == 0 || phnum == 0 {
            return false;
        }
        // SAFETY: AT_PHDR and AT_PHNUM are the address and length of the executable's program
        // header table, which the kernel mapped with the executable; it stays mapped (read-only,
        // never written) for the life of the process.
        let headers =
            unsafe { std::slice::from_raw_parts(at_phdr as *const Elf64_Phdr, phnum as usize) };
        // Where the executable was loaded: the table's address less its own link-time address.
        let Some(base) = headers
            .iter()
            .find(|h| h.p_type == PT_PHDR)
            .map(|h| (at_phdr as usize).wrapping_sub(h.p_vaddr as usize))
        else {
            return false;
        };
        if text_relocations(headers, base) {
            return false;
        }
        // SAFETY: `sysconf` reads a constant of the system.
        let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
            p if p > 0 => p as usize,
            _ => return false,
        };
        let segments: Vec<(usize, usize)> = headers
            .iter()
            .filter(|h| h.p_type == PT_LOAD && h.p_flags & PF_W == 0)
            .map(|h| {
                let start = (base + h.p_vaddr as usize) & !(page - 1);
                let end = (base + (h.p_vaddr + h.p_memsz) as usize).next_multiple_of(page);
                (start, end)
            })
            .collect();
        for (start, end) in segments {
            // SAFETY: [start, end) is one read-only segment of the executable, widened to whole
            // pages (the loader maps each segment on pages of its own). Its pages were never
            // written (no text relocations; read-only mappings), so after MADV_DONTNEED each
            // access maps the same bytes again from the file: nothing that runs, this function
            // included, can tell, except by the page faults.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        }
        true
    }

    /// Whether the dynamic section asks the loader to write into read-only segments.
    #[allow(unsafe_code)]
    fn text_relocations(headers: &[Elf64_Phdr], base: usize) -> bool {
        let Some(dynamic) = headers.iter().find(|h| h.p_type == PT_DYNAMIC) else {
            return false;
        };
        let entries = dynamic.p_memsz as usize / 16;
        // SAFETY: PT_DYNAMIC is the executable's dynamic section as loaded, an array of
        // (tag, value) pairs of two 64-bit words, mapped for the life of the process.
        let table = unsafe {
            std::slice::from_raw_parts(
                (base + dynamic.p_vaddr as usize) as *const [u64; 2],
                entries,
            )
        };
        table
            .iter()
            .take_while(|[tag, _]| *tag != 0)
            .any(|&[tag, value]| tag == DT_TEXTREL || (tag == DT_FLAGS && value & DF_TEXTREL != 0))
    }
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
mod imp {
    pub fn release() -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
mod tests {
    use std::io::{Read, Seek, SeekFrom};

    /// A constant that lands in the binary's read-only data, a page-aligned MiB of it.
    #[repr(align(4096))]
    struct Block([u8; 1 << 20]);
    static BLOCK: Block = Block([7; 1 << 20]);

    /// How many of the pages of `bytes` are mapped in this process (`/proc/self/pagemap`: one
    /// 64-bit entry per page, bit 63 set when present).
    fn mapped_pages(bytes: &[u8]) -> usize {
        let first = bytes.as_ptr() as u64 / 4096;
        let pages = bytes.len() / 4096;
        let mut map = std::fs::File::open("/proc/self/pagemap").expect("pagemap");
        map.seek(SeekFrom::Start(first * 8)).expect("seek");
        let mut entries = vec![0u8; pages * 8];
        map.read_exact(&mut entries).expect("read");
        entries
            .chunks_exact(8)
            .filter(|e| u64::from_le_bytes((*e).try_into().expect("8 bytes")) >> 63 == 1)
            .count()
    }

    /// The binary's read-only pages leave the resident set, and read the same when touched again
    /// (this test's own code runs on after the call, mapped back from the file as it runs).
    #[test]
    fn start_pages_leave_the_resident_set_and_come_back_unchanged() {
        let block = std::hint::black_box(&BLOCK.0[..]);
        let sum: u64 = block.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(mapped_pages(block), 256);
        assert!(super::release_start_pages());
        // Its middle half: the kernel maps pages around each one touched, so the block's edges
        // come back as soon as the data beside it is read.
        assert_eq!(mapped_pages(&block[1 << 18..3 << 18]), 0);
        let again: u64 = block.iter().map(|&b| u64::from(b)).sum();
        assert_eq!((sum, again), (7 << 20, 7 << 20));
        assert_eq!(mapped_pages(block), 256);
    }
}
