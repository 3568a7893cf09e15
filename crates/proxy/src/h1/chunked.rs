//! The chunked transfer coding of HTTP/1.1 bodies, request and response: a decoder that turns what arrives into
//! data and trailer fields (pure, fed any split of the bytes; the fuzz target `h1_wire` drives it),
//! and the encoder the client sees (hyper's format: uppercase hex sizes, trailers only where the
//! client and the response allow them).

use bytes::{Buf, BytesMut};
use http::HeaderName;

/// Longest chunk-size or trailer line accepted (as the request guard's).
const MAX_LINE: usize = 4096;
/// Largest trailer section kept.
const MAX_TRAILERS: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size,
    Data(u64),
    DataEnd,
    Trailers,
    Done,
}

/// Decodes a chunked body; see [`Decoder::decode`].
#[derive(Debug)]
pub struct Decoder {
    state: State,
    /// The raw trailer section (field lines, without the final empty line).
    trailers: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            state: State::Size,
            trailers: Vec::new(),
        }
    }
}

/// What [`Decoder::next`] took off the buffer.
#[derive(Debug)]
pub enum Piece {
    /// Body bytes (split off the buffer, no copy).
    Data(BytesMut),
    /// The body ended (the trailers, if any, are kept); the bytes after it stay in the buffer.
    End,
}

impl Decoder {
    /// Consumes what it can of `buf`, handing data to `data`. `Ok(true)` once the body ended (the
    /// bytes after it stay in `buf`), `Ok(false)` when more bytes are needed.
    pub fn decode(
        &mut self,
        buf: &mut BytesMut,
        data: &mut impl FnMut(&[u8]),
    ) -> Result<bool, &'static str> {
        loop {
            match self.next(buf)? {
                None => return Ok(false),
                Some(Piece::Data(d)) => data(&d),
                Some(Piece::End) => return Ok(true),
            }
        }
    }

    /// The next piece of the body at the start of `buf`; `Ok(None)` when more bytes are needed.
    pub fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Piece>, &'static str> {
        loop {
            match self.state {
                State::Done => return Ok(Some(Piece::End)),
                State::Size => {
                    let Some(line) = take_line(buf)? else {
                        return Ok(None);
                    };
                    self.state = match httparse::parse_chunk_size(&line) {
                        Ok(httparse::Status::Complete((_, 0))) => State::Trailers,
                        Ok(httparse::Status::Complete((_, n))) => State::Data(n),
                        _ => return Err("malformed chunk size"),
                    };
                }
                State::Data(n) => {
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    let take = (buf.len() as u64).min(n) as usize;
                    let left = n - take as u64;
                    self.state = if left == 0 {
                        State::DataEnd
                    } else {
                        State::Data(left)
                    };
                    return Ok(Some(Piece::Data(buf.split_to(take))));
                }
                State::DataEnd => {
                    if buf.len() < 2 {
                        return Ok(None);
                    }
                    if &buf[..2] != b"\r\n" {
                        return Err("malformed chunk end");
                    }
                    buf.advance(2);
                    self.state = State::Size;
                }
                State::Trailers => {
                    let Some(line) = take_line(buf)? else {
                        return Ok(None);
                    };
                    if &line[..] == b"\r\n" {
                        self.state = State::Done;
                    } else if self.trailers.len() + line.len() > MAX_TRAILERS {
                        return Err("trailers too large");
                    } else {
                        self.trailers.extend_from_slice(&line);
                    }
                }
            }
        }
    }

    /// The trailer fields (once the body ended), as name/value pairs; malformed ones are left out.
    pub fn trailers(&self) -> Vec<(HeaderName, Vec<u8>)> {
        // Most chunked bodies end without trailers: nothing to copy or parse.
        if self.trailers.is_empty() {
            return Vec::new();
        }
        let mut block = self.trailers.clone();
        block.extend_from_slice(b"\r\n");
        let mut fields = [httparse::EMPTY_HEADER; 64];
        match httparse::parse_headers(&block, &mut fields) {
            Ok(httparse::Status::Complete((_, parsed))) => parsed
                .iter()
                .filter_map(|h| {
                    let name = HeaderName::from_bytes(h.name.as_bytes()).ok()?;
                    Some((name, h.value.to_vec()))
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// Takes one CRLF-terminated line off `buf` (`None`: not complete yet).
fn take_line(buf: &mut BytesMut) -> Result<Option<BytesMut>, &'static str> {
    match memchr::memchr(b'\n', buf) {
        Some(i) if i + 1 > MAX_LINE => Err("chunk line too long"),
        Some(i) if i == 0 || buf[i - 1] != b'\r' => Err("bare LF in chunked body"),
        Some(i) => Ok(Some(buf.split_to(i + 1))),
        None if buf.len() > MAX_LINE => Err("chunk line too long"),
        None => Ok(None),
    }
}

/// Appends one chunk of `data` (not empty) in hyper's format.
pub fn encode_chunk(out: &mut Vec<u8>, data: &[u8]) {
    use std::io::Write as _;
    let _ = write!(out, "{:X}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends the last chunk and the trailer fields `allowed` lets through (hyper leaves out fields
/// that may not be trailers).
pub fn encode_end(
    out: &mut Vec<u8>,
    trailers: &[(HeaderName, Vec<u8>)],
    allowed: Option<&[HeaderName]>,
) {
    use http::header::*;
    out.extend_from_slice(b"0\r\n");
    if let Some(allowed) = allowed {
        for (name, value) in trailers {
            let forbidden = matches!(
                *name,
                AUTHORIZATION
                    | CACHE_CONTROL
                    | CONTENT_ENCODING
                    | CONTENT_LENGTH
                    | CONTENT_RANGE
                    | CONTENT_TYPE
                    | HOST
                    | MAX_FORWARDS
                    | SET_COOKIE
                    | TRAILER
                    | TRANSFER_ENCODING
                    | TE
            );
            if allowed.contains(name) && !forbidden {
                out.extend_from_slice(name.as_str().as_bytes());
                out.extend_from_slice(b": ");
                out.extend_from_slice(value);
                out.extend_from_slice(b"\r\n");
            }
        }
    }
    out.extend_from_slice(b"\r\n");
}

/// The fuzz entry point: decodes `bytes` as a chunked body fed in pieces of `split` bytes.
#[cfg(any(test, fuzzing))]
pub fn fuzz_chunked(bytes: &[u8], split: usize) -> Option<(Vec<u8>, usize)> {
    let mut dec = Decoder::default();
    let mut buf = BytesMut::new();
    let mut body = Vec::new();
    for piece in bytes.chunks(split.max(1)) {
        buf.extend_from_slice(piece);
        if dec
            .decode(&mut buf, &mut |d| body.extend_from_slice(d))
            .ok()?
        {
            return Some((body, dec.trailers().len()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_any_split_and_keeps_what_follows() {
        let wire = b"3\r\nabc\r\n10;ext=1\r\n0123456789abcdef\r\n0\r\nGrpc-Status: 0\r\nx-t: y\r\n\r\nNEXT";
        for split in 1..wire.len() {
            let mut dec = Decoder::default();
            let mut buf = BytesMut::new();
            let mut body = Vec::new();
            let mut done = false;
            for piece in wire.chunks(split) {
                buf.extend_from_slice(piece);
                if !done {
                    done = dec
                        .decode(&mut buf, &mut |d| body.extend_from_slice(d))
                        .expect("valid");
                }
            }
            assert!(done, "split {split}");
            assert_eq!(body, b"abc0123456789abcdef");
            assert_eq!(&buf[..], b"NEXT");
            let t = dec.trailers();
            assert_eq!(t.len(), 2);
            assert_eq!(t[0].0, "grpc-status");
        }
    }

    #[test]
    fn malformed_bodies_are_errors() {
        for wire in [
            &b"x\r\n"[..],
            b"3\r\nabcXY",
            b"3\nabc\r\n",
            b"ffffffffffffffffff\r\n",
        ] {
            let mut buf = BytesMut::from(wire);
            assert!(
                Decoder::default().decode(&mut buf, &mut |_| {}).is_err(),
                "{wire:?}"
            );
        }
    }

    #[test]
    fn encodes_as_hyper_does() {
        let mut out = Vec::new();
        encode_chunk(&mut out, &[b'a'; 26]);
        let t = vec![
            (HeaderName::from_static("grpc-status"), b"0".to_vec()),
            (HeaderName::from_static("content-type"), b"x".to_vec()),
            (HeaderName::from_static("x-other"), b"1".to_vec()),
        ];
        let allowed = [
            HeaderName::from_static("grpc-status"),
            HeaderName::from_static("content-type"),
        ];
        encode_end(&mut out, &t, Some(&allowed));
        let expected = format!("1A\r\n{}\r\n0\r\ngrpc-status: 0\r\n\r\n", "a".repeat(26));
        assert_eq!(String::from_utf8(out).expect("utf8"), expected);
        let mut out = Vec::new();
        encode_end(&mut out, &t, None);
        assert_eq!(out, b"0\r\n\r\n");
    }
}
