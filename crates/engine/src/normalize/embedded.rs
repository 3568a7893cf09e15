//! Encodings carried inside a value rather than around all of it, each a view the signatures also
//! see: the text of base64 tokens embedded in other text (`s:44:"JyBhbmQg…"` in a serialized object, a JSON field
//! `"L2V0Yy9wYXNzd2Q="`), the parameters of a URL carried in a value (a `Referer`, a return
//! address) that are base64 as a whole, UTF-16 text (every other byte NUL), markup split into
//! words with short tags a sanitizer strips (`autof<x>ocus`, `al<b>ert`), and a value that is one
//! XML element around its text (`<string>&#39; or 1=1--</string>`).

use super::{Evasions, base64_text, decode_percent_once};

/// Shortest base64 token decoded inside a value: shorter runs are words, ids and hashes far more
/// often than encoded text, and a payload of a few characters is short in any encoding.
const MIN_RUN: usize = 12;

fn base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_')
}

/// The text of the base64 tokens embedded in a value (12 characters or more, both letter cases,
/// optional `=` padding) that decode to printable text, one after another with a space between;
/// `None` when there is none. A token's text is looked at on its own: glued to what surrounds
/// the token, random printable bytes of a decoded fingerprint would read as code (`$` + `{"k"`).
/// A value that is base64 as a whole is decoded by [`base64_text`] instead.
pub fn base64_tokens(value: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    // Invariant: `i` is 0 or follows a byte outside the alphabet, so a run found from a probe
    // starts where its token does.
    let mut i = 0;
    while i + MIN_RUN <= value.len() {
        // A run of MIN_RUN or more starting anywhere in i..=probe holds the byte at `probe`:
        // prose and JSON, whose words are shorter, are skipped MIN_RUN bytes at a time.
        let probe = i + MIN_RUN - 1;
        if !base64_byte(value[probe]) {
            i = probe + 1;
            continue;
        }
        let mut start = probe;
        while start > i && base64_byte(value[start - 1]) {
            start -= 1;
        }
        let mut run_end = probe + 1;
        while run_end < value.len() && base64_byte(value[run_end]) {
            run_end += 1;
        }
        let mut end = run_end;
        while end < value.len() && end - run_end < 2 && value[end] == b'=' {
            end += 1;
        }
        // Past the padding, or past the byte after the run (outside the alphabet).
        i = if end > run_end { end } else { run_end + 1 };
        take_token(value, start..run_end, end, &mut out);
    }
    out
}

/// Appends to `out` the text of the token made of the alphabet run `run` of `value` and its
/// padding up to `end`, when it is one (long enough, both letter cases, not the whole value) and
/// decodes to printable text.
fn take_token(value: &[u8], run: std::ops::Range<usize>, end: usize, out: &mut Option<Vec<u8>>) {
    let token = &value[run.start..end];
    let whole = run.start == 0 && end == value.len();
    let mixed =
        token.iter().any(u8::is_ascii_uppercase) && token.iter().any(u8::is_ascii_lowercase);
    if whole || run.len() < MIN_RUN || !mixed {
        return;
    }
    if let Some(text) = base64_text(token) {
        append_text(out, &text);
    }
}

/// Appends one decoded text to the view being built, a space between it and the one before.
fn append_text(out: &mut Option<Vec<u8>>, text: &[u8]) {
    let o = out.get_or_insert_with(Vec::new);
    if !o.is_empty() {
        o.push(b' ');
    }
    o.extend_from_slice(text);
}

/// The text of the query parameters of a URL inside `value` (after its first `?`, up to a `#`)
/// whose values are wholly base64 once percent-decoded, one after another with a space between;
/// `None` when there is none. The application that reads such a URL back (a `Referer` it
/// redirects to, a return address) decodes those parameters as it decodes its own, so they are
/// judged as the request's own parameters are: from six characters, where an embedded token
/// needs twelve (`; id` is `OyBpZA==`).
pub(super) fn url_query_base64(value: &[u8]) -> Option<Vec<u8>> {
    let url = &value[..memchr::memchr(b'#', value).unwrap_or(value.len())];
    let query = &url[memchr::memchr(b'?', url)? + 1..];
    let mut out: Option<Vec<u8>> = None;
    for pair in query.split(|&b| b == b'&') {
        let Some(eq) = memchr::memchr(b'=', pair) else {
            continue;
        };
        let raw = &pair[eq + 1..];
        if raw.len() < super::text::BASE64_MIN_CHARS
            || !raw
                .iter()
                .all(|&b| base64_byte(b) || b == b'=' || b == b'%')
        {
            continue;
        }
        let decoded;
        let v = if raw.contains(&b'%') {
            decoded = decode_percent_once(raw, &mut Evasions::default()).0;
            &decoded[..]
        } else {
            raw
        };
        if let Some(text) = base64_text(v) {
            append_text(&mut out, &text);
        }
    }
    out
}

/// UTF-16 text (little or big endian, with or without a byte-order mark) as UTF-8, when at least
/// eight characters are ASCII with a NUL beside each; `None` otherwise.
pub fn utf16_text(value: &[u8]) -> Option<Vec<u8>> {
    let (body, little) = match value {
        [0xff, 0xfe, rest @ ..] => (rest, true),
        [0xfe, 0xff, rest @ ..] => (rest, false),
        [_, 0, ..] => (value, true),
        [0, _, ..] => (value, false),
        _ => return None,
    };
    if body.len() < 16 {
        return None;
    }
    let units = body.chunks_exact(2).map(|p| {
        if little {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    let ascii = units.clone().filter(|&u| (0x20..0x7f).contains(&u)).count();
    if ascii < 8 || ascii * 10 < body.len() / 2 * 9 {
        return None;
    }
    let text: String = char::decode_utf16(units)
        .map(|c| c.unwrap_or('\u{fffd}'))
        .collect();
    Some(text.into_bytes())
}

/// The value with short tags that split a word removed (`autof<x>ocus` → `autofocus`,
/// `al</b>ert` → `alert`, `java<!---->script` → `javascript`); `None` when there is none.
pub fn unsplit_words(value: &[u8]) -> Option<Vec<u8>> {
    let tag_end = |at: usize| -> Option<usize> {
        let rest = &value[at..];
        let body = rest.strip_prefix(b"<")?;
        if let Some(after) = body.strip_prefix(b"!----") {
            return after.first().is_some_and(|&b| b == b'>').then_some(at + 7);
        }
        let name = body.strip_prefix(b"/").unwrap_or(body);
        let n = name.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        (n <= 8 && name.get(n) == Some(&b'>')).then(|| at + (rest.len() - name.len()) + n + 1)
    };
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    for at in memchr::memchr_iter(b'<', value) {
        if at < copied || at == 0 || !value[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        if let Some(end) =
            tag_end(at).filter(|&e| value.get(e).is_some_and(u8::is_ascii_alphanumeric))
        {
            let o = out.get_or_insert_with(|| Vec::with_capacity(value.len()));
            o.extend_from_slice(&value[copied..at]);
            copied = end;
        }
    }
    let mut o = out?;
    o.extend_from_slice(&value[copied..]);
    Some(o)
}

/// The text of a value that is one XML element and nothing else, `<string>&#39;--</string>`,
/// with its character references resolved: XML serializers (Go's `xml.Encoder`, XML-RPC, SOAP
/// clients writing one field) send a string so, and the application that parses the value reads
/// the text, where a signature anchored at the value's start or end finds its payload. Only an
/// element without attributes whose text holds no markup of its own qualifies; `None` otherwise.
pub(super) fn element_text(value: &[u8]) -> Option<Vec<u8>> {
    let v = value.trim_ascii();
    let body = v.strip_prefix(b"<")?;
    let name_len = body
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'.' | b'-'))
        .count();
    let name = &body[..name_len];
    if !name
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    {
        return None;
    }
    let rest = body[name_len..].strip_prefix(b">")?;
    let inner = rest
        .strip_suffix(b">")?
        .strip_suffix(name)?
        .strip_suffix(b"</")?;
    if inner.is_empty() || memchr::memchr(b'<', inner).is_some() {
        return None;
    }
    Some(super::decode_html_entities(inner).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_element_values_are_read_as_their_text() {
        let v = b"<string>&#39; or &#34;a&#34;=&#34;a</string>";
        assert_eq!(element_text(v).as_deref(), Some(&b"' or \"a\"=\"a"[..]));
        assert_eq!(
            element_text(b" <ns:v>//evil.example/x.php?</ns:v>\n").as_deref(),
            Some(&b"//evil.example/x.php?"[..])
        );
        // Markup with attributes, children, other closing names or no text is not one element's
        // text; neither is a value that merely starts with a tag.
        for other in [
            &b"<a href=x>y</a>"[..],
            b"<p><b>bold</b></p>",
            b"<b>x</i>",
            b"<b></b>",
            b"<br> text",
            b"<1>x</1>",
            b"plain text",
        ] {
            assert_eq!(
                element_text(other),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn embedded_base64_tokens_are_decoded() {
        let v = br#"s:44:"JyBhbmQgMT0yIHVuaW9uIHNlbGVjdCAxLDIsMyAtLSA=";"#;
        assert_eq!(
            base64_tokens(v).as_deref(),
            Some(&b"' and 1=2 union select 1,2,3 -- "[..])
        );
        let j = br#"'{"id":"L2V0Yy9wYXNzd2Q="}'"#;
        assert_eq!(base64_tokens(j).as_deref(), Some(&b"/etc/passwd"[..]));
        // Ids, hashes, words and random tokens stay as they are.
        for plain in [
            &b"session=9f8e7d6c5b4a39281706a1b2c3d4e5f6"[..],
            b"a very long lowercase wordsequencewithoutspaces",
            b"token=Xk9fQ2m8ZrT4pLw7vB1nY6sE3uH5jK0a",
            b"PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        ] {
            assert_eq!(
                base64_tokens(plain),
                None,
                "{}",
                String::from_utf8_lossy(plain)
            );
        }
    }

    #[test]
    fn base64_parameters_of_a_carried_url_are_decoded() {
        let referer = b"https://shop.example/list?page=2&q=OyBpZA%3D%3D&sort=asc#top";
        assert_eq!(url_query_base64(referer).as_deref(), Some(&b"; id"[..]));
        assert_eq!(
            url_query_base64(b"/r?a=e3s3Kjd9fQ&b=JGlkOw").as_deref(),
            Some(&b"{{7*7}} $id;"[..])
        );
        // Ids, words, hex and short values, and parameters after the fragment, are left alone.
        for plain in [
            &b"https://www.example.com/s?wd=shoes&rsv_iqid=0xb513b424000662f2&f=8"[..],
            b"https://example.com/a?session=9f8e7d6c5b4a39281706a1b2c3d4e5f6",
            b"https://example.com/a#x?q=OyBpZA==",
            b"no query here OyBpZA==",
        ] {
            assert_eq!(
                url_query_base64(plain),
                None,
                "{}",
                String::from_utf8_lossy(plain)
            );
        }
    }

    #[test]
    fn utf16_text_is_read() {
        let le: Vec<u8> = "<script>alert(1)</script>"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(
            utf16_text(&le).as_deref(),
            Some(&b"<script>alert(1)</script>"[..])
        );
        let be: Vec<u8> = [0xfe, 0xff]
            .into_iter()
            .chain("../../etc/passwd".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(utf16_text(&be).as_deref(), Some(&b"../../etc/passwd"[..]));
        assert_eq!(utf16_text(b"a\x00b plain text with one nul"), None);
        assert_eq!(utf16_text(b"\x08\x96\x01\x12\x07example\x1a\x00"), None);
    }

    #[test]
    fn words_split_by_tags_are_joined() {
        assert_eq!(
            unsplit_words(br#"\"autof<x>ocus o<x>nfocus=alert<x>(1)//"#).as_deref(),
            Some(&br#"\"autofocus onfocus=alert<x>(1)//"#[..])
        );
        assert_eq!(
            unsplit_words(b"java<!---->script:al</b>ert(1)").as_deref(),
            Some(&b"javascript:alert(1)"[..])
        );
        assert_eq!(unsplit_words(b"<b>bold</b> and <i>x</i>"), None);
        assert_eq!(unsplit_words(b"a<b and c>d"), None);
    }

    /// The tokens as a byte-by-byte scan finds them: every maximal run of the alphabet (what is
    /// kept of a run found is [`take_token`]'s, shared: the test is of the probing scan).
    fn tokens_byte_by_byte(value: &[u8]) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        let mut i = 0;
        while i < value.len() {
            if !base64_byte(value[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < value.len() && base64_byte(value[i]) {
                i += 1;
            }
            let mut end = i;
            while end < value.len() && end - i < 2 && value[end] == b'=' {
                end += 1;
            }
            take_token(value, start..i, end, &mut out);
            i = end;
        }
        out
    }

    #[test]
    fn probing_finds_the_tokens_a_byte_by_byte_scan_finds() {
        // Tokens of every length around the bound, glued to padding, separators and each other.
        let pieces: [&[u8]; 12] = [
            b"L2V0Yy9wYXNzd2Q=",
            b"JyBhbmQgMT0yIHVuaW9uIHNlbGVjdCAxLDIsMyAtLSA=",
            b"PHNjcmlwdD4=",
            b"Zm9vYmFyYmF6cXV4",
            b"abcdefghijk",
            b"ABCDEFGHIJKl",
            b"==",
            b"=",
            b" ",
            b"\"",
            b",",
            b"x",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let mut v = Vec::new();
            for _ in 0..next() % 8 {
                v.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            assert_eq!(
                base64_tokens(&v),
                tokens_byte_by_byte(&v),
                "{}",
                String::from_utf8_lossy(&v)
            );
        }
    }
}
