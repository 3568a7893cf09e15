//! Request bodies sent with a `Content-Encoding`: browsers' telemetry and log shippers gzip their
//! JSON, and a WAF that inspects the compressed bytes sees neither the JSON nor an attack in it.
//! The body is inflated (bounded: at most `limit` bytes of output, so a small bomb costs no more
//! than the inspection limit) and inspected as what it is.

use std::io::Read;

/// A content coding the engine can undo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    /// `deflate`: zlib-wrapped as the standard says, or raw deflate as some clients send it.
    Deflate,
}

impl Coding {
    /// The coding named by a `Content-Encoding` value: one of gzip, x-gzip or deflate (a list of
    /// codings, or any other, is left as it is).
    pub fn of(header: &[u8]) -> Option<Coding> {
        let v = header.trim_ascii();
        if v.eq_ignore_ascii_case(b"gzip") || v.eq_ignore_ascii_case(b"x-gzip") {
            Some(Coding::Gzip)
        } else if v.eq_ignore_ascii_case(b"deflate") {
            Some(Coding::Deflate)
        } else {
            None
        }
    }
}

/// The decoded body, and whether it was cut at `limit` bytes. `None` when `data` is not in the
/// coding (the body is then inspected as it came).
pub fn inflate(coding: Coding, data: &[u8], limit: usize) -> Option<(Vec<u8>, bool)> {
    let read = |r: &mut dyn Read| -> Option<(Vec<u8>, bool)> {
        let mut out = Vec::new();
        let n = r.take(limit as u64 + 1).read_to_end(&mut out).ok()?;
        let cut = n > limit;
        out.truncate(limit);
        Some((out, cut))
    };
    match coding {
        Coding::Gzip => read(&mut flate2::read::MultiGzDecoder::new(data)),
        Coding::Deflate => read(&mut flate2::read::ZlibDecoder::new(data))
            .or_else(|| read(&mut flate2::read::DeflateDecoder::new(data))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).expect("write");
        e.finish().expect("finish")
    }

    #[test]
    fn bodies_are_inflated_within_the_limit() {
        let body = br#"{"q":"1 union select password from users"}"#;
        let (out, cut) = inflate(Coding::Gzip, &gzip(body), 1 << 20).expect("gzip");
        assert_eq!((&out[..], cut), (&body[..], false));
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(body).expect("write");
        let (out, _) = inflate(Coding::Deflate, &z.finish().expect("z"), 100).expect("zlib");
        assert_eq!(out, body);
        let bomb = gzip(&vec![b'a'; 1 << 20]);
        let (out, cut) = inflate(Coding::Gzip, &bomb, 4096).expect("bomb");
        assert_eq!((out.len(), cut), (4096, true));
        assert!(inflate(Coding::Gzip, b"not gzip at all", 100).is_none());
        assert_eq!(Coding::of(b" GZIP "), Some(Coding::Gzip));
        assert_eq!(Coding::of(b"gzip, br"), None);
    }
}
