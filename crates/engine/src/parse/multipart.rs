//! `multipart/form-data` bodies: the boundary from the Content-Type, then each part's
//! Content-Disposition `name`/`filename` and its value; `multipart/related` bodies (MTOM/XOP), split
//! the same way into header blocks and contents. Malformed framing is an error (the caller
//! raises the http-protocol sub-violation), never a panic.

/// One part of a multipart body.
#[derive(Debug, PartialEq, Eq)]
pub struct Part<'a> {
    /// The part's header block, as framed (judged for headers a browser never writes).
    pub headers: &'a [u8],
    pub name: &'a [u8],
    pub filename: Option<&'a [u8]>,
    pub value: &'a [u8],
}

/// The boundary parameter of a `multipart/*` Content-Type.
pub fn boundary(content_type: &str) -> Option<&str> {
    content_type
        .split(';')
        .skip(1)
        .find_map(|p| {
            let (k, v) = p.split_once('=')?;
            (k.trim().eq_ignore_ascii_case("boundary")).then(|| v.trim().trim_matches('"'))
        })
        .filter(|b| !b.is_empty() && b.len() <= 200)
}

/// A part as framed: its header block and its content.
pub type RawPart<'a> = (&'a [u8], &'a [u8]);

/// Why a multipart body does not split into parts; the text is the violation's detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MultipartError {
    #[error("no opening boundary")]
    NoOpeningBoundary,
    #[error("more than {limit} parts")]
    TooManyParts { limit: usize },
    #[error("part without a header block")]
    NoHeaders,
    #[error("missing closing boundary")]
    NoClosingBoundary,
    #[error("part without Content-Disposition name")]
    NoName,
}

/// Splits `body` into parts, at most `limit` of them.
pub fn parts<'a>(
    body: &'a [u8],
    boundary: &str,
    limit: usize,
) -> Result<Vec<Part<'a>>, MultipartError> {
    split(body, boundary, limit)?
        .into_iter()
        .map(|(headers, value)| {
            let (name, filename) = disposition(headers).ok_or(MultipartError::NoName)?;
            Ok(Part {
                headers,
                name,
                filename,
                value,
            })
        })
        .collect()
}

/// The parts of a `multipart/related` body (MTOM/XOP, SOAP with attachments) as (header block,
/// content): its parts are named by `Content-ID`, not by a form's `Content-Disposition`, so none
/// is refused for lacking a name.
pub fn related_parts<'a>(
    body: &'a [u8],
    boundary: &str,
    limit: usize,
) -> Result<Vec<RawPart<'a>>, MultipartError> {
    split(body, boundary, limit)
}

/// Splits `body` at `boundary` into (header block, content) pairs, at most `limit` of them.
fn split<'a>(
    body: &'a [u8],
    boundary: &str,
    limit: usize,
) -> Result<Vec<RawPart<'a>>, MultipartError> {
    let delim = format!("--{boundary}");
    let d = delim.as_bytes();
    let mut out = Vec::new();
    let mut pos = find(body, d, 0).ok_or(MultipartError::NoOpeningBoundary)?;
    loop {
        pos += d.len();
        if body[pos..].starts_with(b"--") {
            return Ok(out);
        }
        if out.len() >= limit {
            return Err(MultipartError::TooManyParts { limit });
        }
        let head_start = pos + skip_crlf(&body[pos..]);
        let head_end = find(body, b"\r\n\r\n", head_start).ok_or(MultipartError::NoHeaders)?;
        let value_start = head_end + 4;
        let next = find(body, d, value_start).ok_or(MultipartError::NoClosingBoundary)?;
        let mut value_end = next;
        if body[..value_end].ends_with(b"\r\n") {
            value_end -= 2;
        }
        out.push((
            &body[head_start..head_end],
            &body[value_start..value_end.max(value_start)],
        ));
        pos = next;
    }
}

fn skip_crlf(s: &[u8]) -> usize {
    if s.starts_with(b"\r\n") { 2 } else { 0 }
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    hay[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn disposition(headers: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let line = headers
        .split(|b| *b == b'\n')
        .find(|l| l.len() > 20 && l[..20].eq_ignore_ascii_case(b"content-disposition:"))?;
    let param = |key: &[u8]| -> Option<&[u8]> {
        let mut i = 0;
        while let Some(p) = find(line, key, i) {
            let before = if p == 0 { b';' } else { line[p - 1] };
            let rest = &line[p + key.len()..];
            if (before == b';' || before == b' ') && rest.first() == Some(&b'"') {
                let end = rest[1..].iter().position(|b| *b == b'"')?;
                return Some(&rest[1..1 + end]);
            }
            i = p + 1;
        }
        None
    };
    Some((param(b"name=")?, param(b"filename=")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_parts() {
        let body = b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.php\"\r\nContent-Type: text/plain\r\n\r\n<?php ?>\r\n--XX--\r\n";
        assert_eq!(boundary("multipart/form-data; boundary=XX"), Some("XX"));
        let p = parts(body, "XX", 10).unwrap();
        assert_eq!(
            p[0],
            Part {
                headers: b"Content-Disposition: form-data; name=\"a\"",
                name: b"a",
                filename: None,
                value: b"1"
            }
        );
        assert_eq!(p[1].filename, Some(&b"x.php"[..]));
        assert_eq!(
            parts(b"--XX\r\nno headers", "XX", 10).err(),
            Some(MultipartError::NoHeaders)
        );
    }

    #[test]
    fn related_parts_need_no_name() {
        let body = b"--b1\r\nContent-Type: application/xop+xml\r\nContent-ID: <root>\r\n\r\n<a/>\r\n--b1\r\nContent-ID: <1>\r\n\r\n\x89PNG\r\n--b1--\r\n";
        let p = related_parts(body, "b1", 10).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].1, b"<a/>");
        assert_eq!(p[1].1, b"\x89PNG");
        assert_eq!(parts(body, "b1", 10).err(), Some(MultipartError::NoName));
        assert_eq!(
            related_parts(b"--b1\r\nContent-ID: <r>\r\n\r\n<a/>", "b1", 10).err(),
            Some(MultipartError::NoClosingBoundary)
        );
    }
}
