//! `urls[].disallowFileUploadOfExecutables`: an executable uploaded to a URL that refuses them.
//!
//! An uploaded file (a multipart part with a `filename`) whose content starts like an executable
//! raises VIOL_FILE_UPLOAD, named by the part; a raw request body (no form, JSON or XML profile) that
//! does raises VIOL_FILE_UPLOAD_IN_BODY. Executables are recognised by their headers: Windows PE
//! (`MZ`, with the `PE\0\0` signature where the DOS header points, when that is inside the inspected
//! bytes), ELF, Mach-O (32/64-bit, either byte order, and universal `0xCAFEBABE`, which Java class
//! files share) and scripts with a `#!/` interpreter line. Both violations alarm (not block) in
//! the shipped templates, as in the systems we stand in for. On a URL in staging they are staged.
//! Only URLs with the switch pay anything (one flag test per upload otherwise).

use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::violation::{Context, Violation, ViolationKind as K};

/// What kind of executable `data` starts with, if any.
pub fn executable_kind(data: &[u8]) -> Option<&'static str> {
    if data.starts_with(b"\x7fELF") {
        return Some("ELF executable");
    }
    if data.starts_with(b"#!/") {
        return Some("script with an interpreter line");
    }
    if let Some(magic) = data.get(..4) {
        match magic {
            [0xfe, 0xed, 0xfa, 0xce | 0xcf] | [0xce | 0xcf, 0xfa, 0xed, 0xfe] => {
                return Some("Mach-O executable");
            }
            [0xca, 0xfe, 0xba, 0xbe] => return Some("Mach-O universal binary or Java class"),
            _ => {}
        }
    }
    if data.starts_with(b"MZ") && data.len() >= 64 {
        let at = u32::from_le_bytes([data[0x3c], data[0x3d], data[0x3e], data[0x3f]]) as usize;
        return match data.get(at..at.saturating_add(4)) {
            Some(b"PE\0\0") => Some("Windows PE executable"),
            Some(_) => None,
            // The PE header lies past what was inspected: the DOS header is enough.
            None => Some("DOS/Windows executable"),
        };
    }
    None
}

impl CompiledPolicy {
    /// Body phase: an uploaded file (`part` names it) or the raw body (`None`) on a URL with
    /// `disallowFileUploadOfExecutables`.
    pub(in crate::policy) fn check_upload(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        part: Option<&[u8]>,
        data: &[u8],
    ) {
        let Some(u) = s.url.and_then(|i| self.urls.get(i)) else {
            return;
        };
        if !u.no_executables {
            return;
        }
        let Some(kind) = executable_kind(data) else {
            return;
        };
        let mut v = match part {
            Some(name) => Violation::new(K::FileUpload, Context::Parameter)
                .named(String::from_utf8_lossy(name)),
            None => Violation::new(K::FileUploadInBody, Context::Body),
        }
        .snippet(&data[..data.len().min(16)])
        .detail(kind);
        v.staged = u.staged;
        self.push(out, v);
    }
}

#[cfg(test)]
mod tests {
    use super::executable_kind;

    #[test]
    fn executables_are_recognised_by_their_headers() {
        assert_eq!(
            executable_kind(b"\x7fELF\x02\x01\x01"),
            Some("ELF executable")
        );
        assert!(executable_kind(b"#!/bin/sh\nrm -rf /").is_some());
        assert!(executable_kind(b"\xcf\xfa\xed\xfe\x07").is_some());
        let mut pe = vec![0u8; 0x100];
        pe[..2].copy_from_slice(b"MZ");
        pe[0x3c] = 0x80;
        pe[0x80..0x84].copy_from_slice(b"PE\0\0");
        assert_eq!(executable_kind(&pe), Some("Windows PE executable"));
        pe[0x80] = b'X';
        assert_eq!(executable_kind(&pe), None, "MZ text that is not a PE file");
        pe[0x3c] = 0xff;
        pe[0x3d] = 0xff;
        assert_eq!(executable_kind(&pe), Some("DOS/Windows executable"));
        assert_eq!(executable_kind(b"MZ is a text"), None);
        assert_eq!(executable_kind(b"%PDF-1.7"), None);
        assert_eq!(executable_kind(b"# not a shebang"), None);
    }
}
