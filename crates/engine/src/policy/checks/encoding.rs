//! VIOL_ENCODING: request text that is not valid in the policy's character set
//! (`applicationLanguage`; BIG-IP calls it "Failed to convert character").
//!
//! Checked after percent-decoding: the URL path, and every parameter name and value (query string,
//! form and multipart fields, path segments, JSON values handled as parameters). Header and cookie
//! bytes are not (high bytes in headers are the HTTP-protocol check "High ASCII characters in
//! headers"). UTF-8 (the default) is validated with `std::str::from_utf8`, which rejects overlong
//! forms, surrogates and truncated sequences; the other 29 charsets of the format go through the
//! WHATWG decoders of `encoding_rs` (`iso-8859-1` is decoded as windows-1252, as browsers do).
//! `auto-detect` (BIG-IP's default) and `undefined` check nothing. One violation per request.
//!
//! Cost: ASCII values (nearly all) are settled by `<[u8]>::is_ascii`; the rest go through
//! `from_utf8`, or for the other charsets a decoder writing into a stack buffer (no allocation).

use encoding_rs::{DecoderResult, Encoding};

use crate::policy::PolicyError;
use crate::policy::compile::compiled::CompiledPolicy;
use crate::policy::decl;
use crate::violation::{Context, Violation, ViolationKind as K};

/// The values of `applicationLanguage` the format allows (NAP schema), plus BIG-IP's `auto-detect`.
pub const LANGUAGES: &[&str] = &[
    "auto-detect",
    "big5",
    "euc-jp",
    "euc-kr",
    "gb18030",
    "gb2312",
    "gbk",
    "iso-8859-1",
    "iso-8859-10",
    "iso-8859-13",
    "iso-8859-15",
    "iso-8859-16",
    "iso-8859-2",
    "iso-8859-3",
    "iso-8859-4",
    "iso-8859-5",
    "iso-8859-6",
    "iso-8859-7",
    "iso-8859-8",
    "iso-8859-9",
    "koi8-r",
    "shift_jis",
    "utf-8",
    "windows-1250",
    "windows-1251",
    "windows-1252",
    "windows-1253",
    "windows-1255",
    "windows-1256",
    "windows-1257",
    "windows-874",
];

/// The character set request text is validated against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charset {
    /// `auto-detect` / `undefined`: nothing is checked.
    Unchecked,
    Utf8,
    Legacy(&'static Encoding),
}

impl Charset {
    /// Reads `policy.applicationLanguage` (absent: utf-8, the NAP default).
    pub fn from_decl(d: &decl::Policy, warnings: &mut Vec<String>) -> Result<Charset, PolicyError> {
        let Some(raw) = d.application_language.as_deref() else {
            return Ok(Charset::Utf8);
        };
        let name = raw.trim().to_ascii_lowercase();
        match name.as_str() {
            "utf-8" | "utf8" => Ok(Charset::Utf8),
            "auto-detect" => Ok(Charset::Unchecked),
            "undefined" | "" => {
                warnings.push(format!(
                    "policy.applicationLanguage: \"{raw}\" names no character set; request text is not checked for VIOL_ENCODING"
                ));
                Ok(Charset::Unchecked)
            }
            n if LANGUAGES.contains(&n) => Encoding::for_label(n.as_bytes())
                .map(Charset::Legacy)
                .ok_or_else(|| {
                    PolicyError::invalid(
                        "policy.applicationLanguage",
                        format!("\"{raw}\" has no decoder"),
                    )
                }),
            _ => Err(PolicyError::invalid(
                "policy.applicationLanguage",
                format!(
                    "unknown value \"{raw}\" (expected one of {})",
                    LANGUAGES.join(", ")
                ),
            )),
        }
    }

    /// True when `bytes` is not valid text in this character set.
    pub fn rejects(self, bytes: &[u8]) -> bool {
        match self {
            Charset::Unchecked => false,
            // ASCII (nearly every value) is settled by the inlined word-at-a-time test.
            Charset::Utf8 => !bytes.is_ascii() && std::str::from_utf8(bytes).is_err(),
            Charset::Legacy(enc) => !bytes.is_ascii() && !decodes(enc, bytes),
        }
    }

    /// The name the violation's detail uses.
    pub fn label(self) -> &'static str {
        match self {
            Charset::Unchecked => "any",
            Charset::Utf8 => "UTF-8",
            Charset::Legacy(enc) => enc.name(),
        }
    }
}

/// Decodes `bytes` without replacement into a stack buffer; false at the first malformed sequence.
fn decodes(enc: &'static Encoding, mut bytes: &[u8]) -> bool {
    let mut decoder = enc.new_decoder_without_bom_handling();
    let mut buf = [0u8; 512];
    loop {
        let (result, read, _) = decoder.decode_to_utf8_without_replacement(bytes, &mut buf, true);
        match result {
            DecoderResult::InputEmpty => return true,
            DecoderResult::OutputFull => bytes = &bytes[read..],
            DecoderResult::Malformed(_, _) => return false,
        }
    }
}

impl CompiledPolicy {
    /// Raises VIOL_ENCODING (once per request) when `name` or `value` is not valid text in the
    /// policy's character set. `value` is already percent-decoded.
    #[inline]
    pub(in crate::policy) fn check_encoding(
        &self,
        out: &mut Vec<Violation>,
        ctx: Context,
        name: Option<&[u8]>,
        value: &[u8],
    ) {
        // ASCII is valid text in every character set: nearly every request ends here.
        if value.is_ascii() && name.is_none_or(<[u8]>::is_ascii) {
            return;
        }
        self.check_encoding_of_text(out, ctx, name, value);
    }

    fn check_encoding_of_text(
        &self,
        out: &mut Vec<Violation>,
        ctx: Context,
        name: Option<&[u8]>,
        value: &[u8],
    ) {
        let st = self.settings[K::Encoding as usize];
        if !(st.alarm || st.block) || self.charset == Charset::Unchecked {
            return;
        }
        let bad_name = name.is_some_and(|n| self.charset.rejects(n));
        if !bad_name && !self.charset.rejects(value) {
            return;
        }
        if out.iter().any(|v| v.kind == K::Encoding) {
            return;
        }
        let mut v = Violation::new(K::Encoding, ctx)
            .snippet(if bad_name {
                name.unwrap_or(value)
            } else {
                value
            })
            .detail(format!(
                "{} is not valid {}",
                if bad_name { "name" } else { "value" },
                self.charset.label()
            ));
        if let Some(n) = name {
            v = v.named(String::from_utf8_lossy(n));
        }
        out.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn charset(lang: &str) -> Result<Charset, PolicyError> {
        let d = decl::Policy {
            application_language: lang.to_string().into(),
            ..decl::Policy::default()
        };
        Charset::from_decl(&d, &mut Vec::new())
    }

    #[test]
    fn utf8_rejects_invalid_overlong_and_truncated_sequences() {
        let c = charset("utf-8").unwrap_or(Charset::Unchecked);
        assert!(!c.rejects("café ünïcödé 日本".as_bytes()));
        assert!(c.rejects(b"caf\xe9"), "latin-1 e-acute alone");
        assert!(c.rejects(b"\xc0\xaf"), "overlong slash");
        assert!(c.rejects(b"\xed\xa0\x80"), "UTF-16 surrogate");
        assert!(c.rejects(b"\xe6\x97"), "truncated");
    }

    #[test]
    fn legacy_charsets_decode_their_own_text_only() {
        let sjis = charset("shift_jis").unwrap_or(Charset::Unchecked);
        assert!(!sjis.rejects(b"\x93\xfa\x96\x7b")); // 日本
        assert!(sjis.rejects(b"\x93"), "lead byte without trail");
        let latin = charset("iso-8859-1").unwrap_or(Charset::Unchecked);
        assert!(!latin.rejects(b"caf\xe9"));
        let greek = charset("iso-8859-7").unwrap_or(Charset::Unchecked);
        assert!(greek.rejects(b"\xff"), "0xFF is unassigned in ISO-8859-7");
        // A long value crosses the 512-byte stack buffer.
        let mut long = b"\x93\xfa".repeat(400);
        long.extend_from_slice(b"\x96\x7b");
        assert!(!sjis.rejects(&long));
    }

    #[test]
    fn unknown_and_unchecked_languages() {
        assert_eq!(charset("auto-detect"), Ok(Charset::Unchecked));
        let mut w = Vec::new();
        let d = decl::Policy {
            application_language: "undefined".to_string().into(),
            ..decl::Policy::default()
        };
        assert_eq!(Charset::from_decl(&d, &mut w), Ok(Charset::Unchecked));
        assert_eq!(w.len(), 1);
        let e = charset("klingon")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.starts_with("policy.applicationLanguage: unknown value \"klingon\" (expected one of auto-detect, big5"),
            "{e}"
        );
    }
}
