//! Dot segments written with escapes (`/%2e%2e/`, `/.%2e/`, `/%252e%252e/`, `..` between escaped
//! slashes): the "Directory traversals" evasion for paths whose `..` only appears once decoded.
//!
//! Browsers and URL libraries resolve a segment that is `.` or `..` before sending, and the URL
//! standard reads `%2e` in such a segment as a dot, so they resolve the escaped forms too: a path
//! still holding one was written by hand. It is aimed at a server or a proxy that resolves dot
//! segments before it decodes (or after, while the rules in front of it did the other), so that
//! `/static/%2e%2e/admin` or Apache 2.4.49's `/cgi-bin/.%2e/` reaches what no rule on the path
//! names. The raw bytes are read only when they hold an escape of a dot or a slash.

use crate::parse::query;

/// Whether some segment of the raw path (query excluded) is `.` or `..` once its escapes are
/// decoded, up to three passes (`%252e` is `%2e` escaped again), splitting on `/` and `\` and
/// dropping a segment's `;` parameters (Tomcat's `..;/`).
pub(super) fn encoded_dot_segment(raw: &[u8]) -> bool {
    if !escapes_dot_or_slash(raw) {
        return false;
    }
    let mut flags = query::DecodeFlags::default();
    let decoded = query::decode(raw, false, 3, &mut flags);
    decoded
        .split(|&b| b == b'/' || b == b'\\')
        .map(|seg| seg.split(|&b| b == b';').next().unwrap_or(seg))
        .any(|seg| seg == b"." || seg == b"..")
}

/// `%2e`, `%2f`, `%5c` in either case, or `%25` (an escape escaped again).
fn escapes_dot_or_slash(raw: &[u8]) -> bool {
    memchr::memchr_iter(b'%', raw).any(|i| {
        matches!(
            (raw.get(i + 1), raw.get(i + 2).map(u8::to_ascii_lowercase)),
            (Some(b'2'), Some(b'e' | b'f' | b'5')) | (Some(b'5'), Some(b'c'))
        )
    })
}

#[cfg(test)]
mod tests {
    use super::encoded_dot_segment;

    #[test]
    fn escaped_dot_segments_are_found() {
        for p in [
            "/%2e%2e/etc/passwd",
            "/a/.%2e/b",
            "/a/%2E./b",
            "/%2e/WEB-INF/web.xml",
            "/static/%2e%2e%2fadmin",
            "/a/%252e%252e/b",
            "/a/%2e%2e;/b",
            "/a%5c%2e%2e%5cb",
            "/a/%2e%2e",
        ] {
            assert!(encoded_dot_segment(p.as_bytes()), "{p}");
        }
    }

    #[test]
    fn ordinary_escaped_paths_pass() {
        for p in [
            "/files/report%202024.pdf",
            "/wiki/Mr%2E_Smith",
            "/download/file%2F.hidden",
            "/a/%2e%2e%2e/b",
            "/search/50%25",
            "/assets/app.min.js",
            "/v1/items/%2Fa%2Fb",
        ] {
            assert!(!encoded_dot_segment(p.as_bytes()), "{p}");
        }
    }
}
