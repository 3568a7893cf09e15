//! What kind of text a value is, for the signatures whose patterns mean an attack in some values
//! and nothing in others (`unless:` in the database). A comment-after-quote (`'--`) or a shell
//! separator before a short word is an injection in a form field, and an accident in the bytes
//! of a protobuf message or a zlib stream carried in a JSON string; `union select` in a search
//! query is a payload, and in another site's URL carried in a `Referer` it is that site's search.
//!
//! The shapes are judged only for a value some such signature matched (rarely), never on the
//! clean path.

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

/// Odd bytes make up at least one byte in fifty, there are at least six of them and at least four
/// different ones: control bytes other than white space, DEL, C1 controls (UTF-8 `c2 80`–`c2 9f`)
/// and bytes that are not UTF-8. Binary encodings use many different such bytes (protobuf tags
/// and lengths, compressed streams); a payload that slips a NUL or a vertical tab between its
/// characters (`.%00./`, `1%0Band%0B1=1`) repeats one or two and stays text.
fn is_binary(v: &[u8]) -> bool {
    let mut seen = [false; 256];
    let mut odd = 0usize;
    let mut note = |b: u8, odd: &mut usize| {
        *odd += 1;
        seen[usize::from(b)] = true;
    };
    let mut rest = v;
    while !rest.is_empty() {
        let (good, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (g, b) = rest.split_at(e.valid_up_to());
                (std::str::from_utf8(g).unwrap_or_default(), b)
            }
        };
        for c in good.chars() {
            if (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{7f}' {
                // C0 controls and DEL by their value, C1 controls by theirs.
                note((u32::from(c) & 0xff) as u8, &mut odd);
            }
        }
        if bad.is_empty() {
            break;
        }
        note(bad[0], &mut odd);
        rest = &bad[1..];
    }
    let distinct = seen.iter().filter(|&&x| x).count();
    odd >= 6 && distinct >= 4 && odd * 50 >= v.len()
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
        let protobuf =
            b"\n\xc3\x02\n\x06021436\x12\x0c333.1007.0.0\x1a\xaa\x02\nw\x08d\x10\x05\x1a/54F00853";
        assert_eq!(shapes(protobuf), bin);
        let zlib_in_json =
            "x\u{9c}\u{ed}}ks\u{1b}\u{c7}\u{95}\u{f6}_a\u{f1}\u{d3}n\u{95}Aa\u{6}\u{3}\u{cc}\u{80}";
        assert_eq!(shapes(zlib_in_json.as_bytes()), bin);
        assert_eq!(
            shapes(b"GIF89a\xa0\x00\xf7\x00\x00\xff\x00\x01\x02===\x13\x13\x1b"),
            bin
        );
        assert_eq!(shapes(b"../../etc/passwd\x00.png"), 0);
        assert_eq!(
            shapes(b".\x00.\\.\x00.\\.\x00.\\.\x00.\\windows\\win.ini"),
            0
        );
        assert_eq!(
            shapes(b"..\x01\xef\x80\xa5..\x01\xef\x80\xa5..\x01boot.ini"),
            0
        );
        assert_eq!(shapes("tab\tnew\nline 中文".as_bytes()), 0);
    }
}
