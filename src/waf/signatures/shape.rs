//! What kind of text a value is, for the signatures whose patterns mean an attack in some values
//! and nothing in others (`unless:` in the database). A comment-after-quote (`'--`) or a shell
//! separator before a short word is an injection in a form field, and an accident in the bytes
//! of a protobuf message or a zlib stream carried in a JSON string; `union select` in a search
//! query is a payload, and in another site's URL carried in a `Referer` it is that site's search.
//!
//! The shapes are judged only for a value some such signature matched (rarely), never on the
//! clean path. Imports: std only.

/// A shape a signature can be exempt in (bit flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Binary data: control bytes, C1 controls or invalid UTF-8 make up a noticeable part of it
    /// (protobuf, compressed or image bytes, Latin-1-decoded binary in a JSON string).
    Binary = 1,
    /// An absolute `http(s)` URL with nothing in it that could leave a quoted SQL string or an
    /// HTML attribute (no quote, no `<` or `>`): another page's address, its query the
    /// parameters of that page.
    Url = 2,
}

impl Shape {
    /// The database spelling: `binary`, `url`.
    pub fn parse(name: &str) -> Option<Shape> {
        match name {
            "binary" => Some(Shape::Binary),
            "url" => Some(Shape::Url),
            _ => None,
        }
    }
}

/// The shapes of `value`, as a bit set of [`Shape`]s.
pub fn shapes(value: &[u8]) -> u8 {
    let mut out = 0;
    if is_binary(value) {
        out |= Shape::Binary as u8;
    }
    if is_plain_url(value) {
        out |= Shape::Url as u8;
    }
    out
}

/// At least three odd bytes, and at least one in fifty: control bytes other than white space,
/// DEL, C1 controls (UTF-8 `c2 80`–`c2 9f`) and bytes that are not UTF-8. Text has none; a
/// payload with a NUL or two stays text.
fn is_binary(v: &[u8]) -> bool {
    let mut odd = 0usize;
    let mut rest = v;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                odd += odd_chars(s);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                odd += odd_chars(std::str::from_utf8(good).unwrap_or_default());
                let skip = e.error_len().unwrap_or(bad.len()).max(1);
                odd += skip;
                rest = &bad[skip..];
            }
        }
    }
    odd >= 3 && odd * 50 >= v.len()
}

fn odd_chars(s: &str) -> usize {
    s.chars()
        .filter(|&c| (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{7f}')
        .count()
}

/// `http://` or `https://`, a host name (letters, digits, `.`, `-`, an optional port), then the
/// end, a `/`, `?` or `#`; and no byte that breaks out of a quoted string or an attribute.
fn is_plain_url(v: &[u8]) -> bool {
    let v = v.trim_ascii_start();
    let rest = if v.len() >= 8 && v[..8].eq_ignore_ascii_case(b"https://") {
        &v[8..]
    } else if v.len() >= 7 && v[..7].eq_ignore_ascii_case(b"http://") {
        &v[7..]
    } else {
        return false;
    };
    let host = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':'))
        .count();
    host > 0
        && matches!(rest.get(host), None | Some(b'/' | b'?' | b'#'))
        && !v
            .iter()
            .any(|b| matches!(b, b'\'' | b'"' | b'`' | b'<' | b'>' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_told_apart() {
        let url = Shape::Url as u8;
        let bin = Shape::Binary as u8;
        assert_eq!(
            shapes(b"https://cn.bing.com/search?q=site:segmentfault.com union select 1"),
            url
        );
        assert_eq!(shapes(b"https://x.example/?q=1' union select 1"), 0);
        assert_eq!(shapes(b"https://x.example/\"><script>"), 0);
        assert_eq!(shapes(b"javascript://x.example/%0aalert(1)"), 0);
        assert_eq!(shapes(b"http://evil/?a=b"), url);
        assert_eq!(shapes(b"\n\x06021436\x12\x0c333.1007.0.0\x1a\x02\nw"), bin);
        assert_eq!(
            shapes("x\u{9c}\u{ed}}ks\u{1b}\u{c7}\u{95} abc".as_bytes()),
            bin
        );
        assert_eq!(shapes(b"GIF89a\xa0\x00\xf7\x00\x00\xff"), bin);
        assert_eq!(shapes(b"../../etc/passwd\x00.png"), 0);
        assert_eq!(shapes("tab\tnew\nline 中文".as_bytes()), 0);
    }
}
