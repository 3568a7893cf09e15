//! The one pass over a request document's text that builds its [`Json`] tree: strings without
//! escapes borrowed from the text, objects and arrays moved into the document's arena at their
//! final size from the parse's scratch stacks. Requests are small documents of short strings, where a generic
//! deserializer's per-token visitor calls cost more than the bytes themselves.
//!
//! It reads only what it can read exactly as serde_json does, and declines the rest: any error
//! (serde_json then reports it, with its own words and position), nesting near serde_json's limit,
//! a surrogate escape that does not pair, and every number but a plain integer (a fraction or an
//! exponent is handed to serde_json's own number reader, so its rounding stays the one in force).
//! A declined document is parsed again by serde_json from its start, so acceptance, the tree and
//! the error text are serde_json's in every case.

use super::json::{Json, Scratch};
use crate::json_plain::plain_run;
use serde_json::Number;

/// Deepest nesting read here: serde_json refuses 128 open containers, and a document that nears
/// that is left to it, so that the limit is exactly its own.
const MAX_DEPTH: usize = 100;

/// Why the reader stopped: the document is left to serde_json.
struct Declined;

type Read<T> = Result<T, Declined>;

/// Reads a whole document (white space around it allowed); `None` when serde_json must read it.
pub(super) fn document<'a>(text: &'a str, scratch: &mut Scratch<'a>) -> Option<Json<'a>> {
    let mut r = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        scratch,
    };
    let doc = r.value(0).ok()?;
    r.skip_space();
    (r.at == r.bytes.len()).then_some(doc)
}

struct Reader<'a, 's> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    scratch: &'s mut Scratch<'a>,
}

impl<'a> Reader<'a, '_> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after white space, not consumed.
    fn peek(&mut self) -> Read<u8> {
        self.skip_space();
        self.bytes.get(self.at).copied().ok_or(Declined)
    }

    fn value(&mut self, depth: usize) -> Read<Json<'a>> {
        match self.peek()? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => {
                self.at += 1;
                Ok(Json::String(self.string()?))
            }
            b't' => self.word(b"true", Json::Bool(true)),
            b'f' => self.word(b"false", Json::Bool(false)),
            b'n' => self.word(b"null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Declined),
        }
    }

    fn word(&mut self, word: &[u8], value: Json<'a>) -> Read<Json<'a>> {
        if !self.bytes[self.at..].starts_with(word) {
            return Err(Declined);
        }
        self.at += word.len();
        Ok(value)
    }

    fn array(&mut self, depth: usize) -> Read<Json<'a>> {
        if depth > MAX_DEPTH {
            return Err(Declined);
        }
        self.at += 1;
        let base = self.scratch.items.len();
        if self.peek()? == b']' {
            self.at += 1;
            return Ok(Json::Array(&[]));
        }
        loop {
            let item = self.value(depth)?;
            self.scratch.items.push(item);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => break,
                _ => return Err(Declined),
            }
        }
        self.at += 1;
        Ok(self.scratch.array(base))
    }

    fn object(&mut self, depth: usize) -> Read<Json<'a>> {
        if depth > MAX_DEPTH {
            return Err(Declined);
        }
        self.at += 1;
        let base = self.scratch.pairs.len();
        if self.peek()? == b'}' {
            self.at += 1;
            return Ok(Json::Object(&[]));
        }
        loop {
            if self.peek()? != b'"' {
                return Err(Declined);
            }
            self.at += 1;
            let key = self.string()?;
            if self.peek()? != b':' {
                return Err(Declined);
            }
            self.at += 1;
            let value = self.value(depth)?;
            self.scratch.pairs.push((key, value));
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => break,
                _ => return Err(Declined),
            }
        }
        self.at += 1;
        Ok(self.scratch.object(base))
    }

    /// A string's contents after its opening quote, up to and past its closing one. Inlined into
    /// its two callers (every key and string value of a document comes through here): a string
    /// without escapes, nearly all of them, is a run and its closing quote, no call of its own.
    #[inline(always)]
    fn string(&mut self) -> Read<&'a str> {
        let start = self.at;
        let end = start + plain_run(&self.bytes[start..]);
        self.at = end;
        if self.bytes.get(end) == Some(&b'"') {
            self.at = end + 1;
            // Quotes are ASCII: both ends are character boundaries of the text.
            return self.text.get(start..end).ok_or(Declined);
        }
        self.string_rest(start)
    }

    /// The rest of a string that its first run did not close: unescaped from its first
    /// backslash (at `self.at`), or declined.
    #[inline(never)]
    fn string_rest(&mut self, start: usize) -> Read<&'a str> {
        match self.bytes.get(self.at) {
            Some(b'\\') => {
                let mut out = std::mem::take(&mut self.scratch.unescaped);
                out.clear();
                let read = self.escaped(start, &mut out);
                let s = read.map(|()| self.scratch.string(&out));
                self.scratch.unescaped = out;
                s
            }
            _ => Err(Declined),
        }
    }

    /// The string from `start` with the rest of it from its first backslash (at `self.at`),
    /// unescaped into `out`.
    fn escaped(&mut self, start: usize, out: &mut String) -> Read<()> {
        out.push_str(self.text.get(start..self.at).ok_or(Declined)?);
        loop {
            match self.bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let c = self.escape()?;
                    out.push(c);
                }
                Some(_) => {
                    let from = self.at;
                    self.at = from + plain_run(&self.bytes[from..]);
                    if self.at == from {
                        return Err(Declined);
                    }
                    out.push_str(self.text.get(from..self.at).ok_or(Declined)?);
                }
                None => return Err(Declined),
            }
        }
    }

    /// One escape sequence (at its backslash); a `\u` surrogate only as a whole pair.
    fn escape(&mut self) -> Read<char> {
        let c = match self.bytes.get(self.at + 1).ok_or(Declined)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(self.at + 2)?;
                self.at += 6;
                return match unit {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                            return Err(Declined);
                        }
                        let low = self.hex4(self.at + 2)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(Declined);
                        }
                        self.at += 6;
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or(Declined)
                    }
                    _ => char::from_u32(unit).ok_or(Declined),
                };
            }
            _ => return Err(Declined),
        };
        self.at += 2;
        Ok(c)
    }

    fn hex4(&self, at: usize) -> Read<u32> {
        let digits = self.bytes.get(at..at + 4).ok_or(Declined)?;
        digits.iter().try_fold(0u32, |n, &b| {
            let d = char::from(b).to_digit(16).ok_or(Declined)?;
            Ok(n << 4 | d)
        })
    }

    /// A number: a plain integer read here (what serde_json makes of it: `u64` when it is not
    /// negative, else `i64`), anything else by serde_json's number reader over its bytes.
    fn number(&mut self) -> Read<Json<'a>> {
        let start = self.at;
        let negative = self.bytes[start] == b'-';
        let digits = start + usize::from(negative);
        let mut end = digits;
        while self.bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let more = self
            .bytes
            .get(end)
            .is_some_and(|b| matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        // No leading zero, and not `-0`, which serde_json reads as a float.
        let zero = end > digits && self.bytes[digits] == b'0';
        let plain = !more && end > digits && (!zero || (end == digits + 1 && !negative));
        if plain && let Some(n) = integer(&self.bytes[digits..end], negative) {
            self.at = end;
            return Ok(Json::Number(n));
        }
        while self
            .bytes
            .get(end)
            .is_some_and(|b| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            end += 1;
        }
        let text = self.text.get(start..end).ok_or(Declined)?;
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Number(n)) => {
                self.at = end;
                Ok(Json::Number(n))
            }
            _ => Err(Declined),
        }
    }
}

/// The integer of `digits` (no leading zero), negated when `negative`; `None` past the range in
/// which serde_json keeps an integer (`u64`, or `i64` when negative).
fn integer(digits: &[u8], negative: bool) -> Option<Number> {
    let magnitude = digits.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })?;
    if !negative {
        return Some(magnitude.into());
    }
    let value = 0i64.checked_sub_unsigned(magnitude)?;
    Some(value.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::json::Arena;

    fn read<'a>(text: &'a str, arena: &'a Arena) -> Option<(Json<'a>, bool)> {
        let mut scratch = Scratch::new(arena);
        let doc = document(text, &mut scratch)?;
        Some((doc, scratch.repeats))
    }

    /// What the reader makes of `bytes` is what serde_json makes of them, or it declines.
    fn agrees(bytes: &[u8]) -> bool {
        let arena = Arena::new();
        let theirs = super::super::json::parse_serde(bytes, &arena);
        let Some(ours) = std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| read(t, &arena))
        else {
            return false;
        };
        match theirs {
            Ok(theirs) => assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(bytes)),
            Err(e) => panic!(
                "read {ours:?}, serde_json: {e}: {}",
                String::from_utf8_lossy(bytes)
            ),
        }
        true
    }

    const SEEDS: &[&str] = &[
        r#"{"id":123,"name":"Rex","tags":[{"id":1,"name":"friendly"}],"w":21.5,"n":null}"#,
        r#" [ true , false , null , -0 , 0 , -1 , 1e3 , 1E+2 , 2.5e-3 , -9223372036854775808 ] "#,
        r#"[18446744073709551615,18446744073709551616,-9223372036854775809,007,1.,.5,-]"#,
        r#"{"a\"b":"x\u00e9\n\t\/\\\"","\ud83d\ude00":"\ud800","c":"\udc00\ud800x"}"#,
        r#"{"k":1,"k":{"k":[2,{"z":3,"z":4}]},"é":"日本語","e":"","a":{},"b":[]}"#,
        "{\"ctl\":\"a\u{1}b\",\"tab\":\"a\tb\"}",
        r#"{"a":1,}"#,
        r#"[1,2] x"#,
        r#"{"a" 1}"#,
        r#"[tru, nul, fals]"#,
        r#"{"u":"\u12G4","v":"\uD800\u0041","w":"\x"}"#,
        "\"long string with more than eight bytes and an escape \\n at the end\"",
        r#"{"photoUrls":["https://img.example.test/pets/123/1.jpg"],"notes":"Healthy and active."}"#,
    ];

    #[test]
    fn reads_what_serde_json_reads_or_declines() {
        // The ordinary documents are read here, not declined (a lone surrogate is).
        for text in [
            SEEDS[0],
            r#" [ true , false , null , 0 , -1 , 1e3 , 1E+2 , 2.5e-3 , -9223372036854775808 ] "#,
            r#"{"a\"b":"x\u00e9\n\t\/\\\"","\ud83d\ude00":"","c":"\u0000"}"#,
            SEEDS[4],
            SEEDS[11],
            SEEDS[12],
        ] {
            assert!(agrees(text.as_bytes()), "declined: {text}");
        }
        let arena = Arena::new();
        assert!(read(r#""\ud800""#, &arena).is_none());
        // Every seed, cut short, with a byte removed, or with a byte replaced by one that matters to
        // the grammar: whatever the reader accepts, serde_json accepts as the same tree.
        let (mut accepted, mut total) = (0, 0);
        for seed in SEEDS {
            let b = seed.as_bytes();
            let mut variants = vec![b.to_vec()];
            for i in 0..b.len() {
                variants.push(b[..i].to_vec());
                variants.push([&b[..i], &b[i + 1..]].concat());
                for &r in b"\"\\,]}[{:0-e.+ \x01u9tn" {
                    let mut v = b.to_vec();
                    v[i] = r;
                    variants.push(v);
                }
            }
            for v in variants {
                total += 1;
                accepted += usize::from(agrees(&v));
            }
        }
        // Most variants are malformed; a good share still reads.
        assert!(accepted > total / 10, "{accepted} of {total} read");
    }

    #[test]
    fn deep_documents_are_left_to_serde_json() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let arena = Arena::new();
        assert!(read(&deep, &arena).is_some());
        let deeper = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(read(&deeper, &arena).is_none());
    }
}
