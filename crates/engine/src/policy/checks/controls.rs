//! Control characters in the request target: a decoded query parameter's name and value, and the
//! decoded path ("Control character in request", VIOL_HTTP_PROTOCOL). A target is a link or an
//! address typed or built from text: a tab or a line break from a text area is the only control a
//! value carries, and a name none. A backspace, an escape sequence or a vertical tab there is
//! written by hand, to end a string early in a parser written in C, to rewrite a terminal or a log
//! line, or to split a token where one reader skips the byte and another does not. In a form
//! body only a line break in a name counts (a header or a log line forged from the name):
//! analytics beacons post log lines whose fields are separated by other control bytes (`\x03`).
//! A header value is read the same way where the application decodes it (a `Referer` or a
//! header of its own as a URL or an argument): a percent-encoded control there is one a browser
//! or a library never writes, since they send only text in fields. NUL is the "Null in request"
//! check's.

use crate::policy::compile::compiled::CompiledPolicy;
use crate::violation::Violation;

const WHAT: &str = "Control character in request";

impl CompiledPolicy {
    /// Judges one decoded name (empty for the path) and value.
    pub(in crate::policy) fn check_controls(
        &self,
        out: &mut Vec<Violation>,
        name: &[u8],
        value: &[u8],
    ) {
        if (name.iter().any(|&b| b != 0 && (b < 0x20 || b == 0x7f))
            || value.iter().copied().any(control))
            && self.protocol_on(WHAT)
        {
            self.protocol(out, WHAT);
        }
    }
}

impl CompiledPolicy {
    /// Judges a decoded form parameter's name.
    pub(in crate::policy) fn check_line_break_in_name(
        &self,
        out: &mut Vec<Violation>,
        name: &[u8],
    ) {
        if name.iter().any(|&b| b == b'\r' || b == b'\n') && self.protocol_on(WHAT) {
            self.protocol(out, WHAT);
        }
    }
}

impl CompiledPolicy {
    /// Judges a header field's value (not `Cookie`'s, whose values applications encode as they
    /// like) for a control byte written as a percent escape; called only for a value holding `%`.
    pub(in crate::policy) fn check_header_controls(&self, out: &mut Vec<Violation>, value: &[u8]) {
        if encoded_control(value) && self.protocol_on(WHAT) {
            self.protocol(out, WHAT);
        }
    }
}

/// Whether `v` holds `%XX` naming a [`control`] byte.
fn encoded_control(v: &[u8]) -> bool {
    let hex = |b: u8| char::from(b).to_digit(16);
    memchr::memchr_iter(b'%', v).any(|i| {
        let (Some(h), Some(l)) = (
            v.get(i + 1).copied().and_then(hex),
            v.get(i + 2).copied().and_then(hex),
        ) else {
            return false;
        };
        control((h * 16 + l) as u8)
    })
}

/// A control byte a value typed as text does not hold: C0 but NUL, tab, line feed and carriage
/// return; and DEL.
fn control(b: u8) -> bool {
    matches!(b, 0x01..=0x08 | 0x0b | 0x0c | 0x0e..=0x1f | 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_controls_are_found_in_a_field() {
        for v in ["a%01b", "Mozilla%1B[31m", "x%7F", "%0b"] {
            assert!(encoded_control(v.as_bytes()), "{v}");
        }
        for v in [
            "a%0d%0ab",
            "%09",
            "100%",
            "%00",
            "https://a.example/?q=%E4%B8%AD",
            "%zz%1",
        ] {
            assert!(!encoded_control(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn text_controls_pass_others_do_not() {
        for b in [b'\t', b'\n', b'\r', 0, b' ', b'a', 0x80, 0xe4] {
            assert!(!control(b), "{b:#x}");
        }
        for b in [0x01, 0x08, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f] {
            assert!(control(b), "{b:#x}");
        }
    }
}
