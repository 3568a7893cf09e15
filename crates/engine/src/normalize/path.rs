//! URL path normalisation: backslashes, repeated slashes, `.`/`..` segments, `;` path parameters,
//! trailing dots and slashes, Apache whitespace; reports each as an evasion.

use super::{Evasion, Evasions};

/// Normalises a decoded path. The result always starts with `/`, has no empty, `.` or `..` segments
/// (`..` never climbs above the root), no `;parameters` and no trailing dots on segments; a trailing
/// slash is kept (it is reported, not removed, since `/dir/` and `/dir` may differ to the server).
pub fn normalize_path(path: &[u8], ev: &mut Evasions) -> Vec<u8> {
    let mut segs: Vec<Vec<u8>> = Vec::new();
    let mut trailing_slash = false;
    let mut buf: Vec<u8> = Vec::with_capacity(path.len());
    for &b in path {
        match b {
            b'\\' => {
                ev.insert(Evasion::IisBackslashes);
                buf.push(b'/');
            }
            b'\t' | 0x0b | 0x0c | b'\r' => {
                ev.insert(Evasion::ApacheWhitespace);
                buf.push(b);
            }
            _ => buf.push(b),
        }
    }
    let body = buf.strip_prefix(b"/").unwrap_or(&buf);
    let parts: Vec<&[u8]> = body.split(|&b| b == b'/').collect();
    let last = parts.len().saturating_sub(1);
    for (i, part) in parts.iter().enumerate() {
        let mut seg: &[u8] = part;
        if let Some(pos) = seg.iter().position(|&b| b == b';') {
            ev.insert(Evasion::SemicolonPathParameters);
            seg = &seg[..pos];
        }
        if seg.is_empty() {
            if i == last && i > 0 {
                trailing_slash = true;
            } else if i != last {
                ev.insert(Evasion::MultipleSlashes);
            }
            continue;
        }
        match seg {
            b"." => {
                ev.insert(Evasion::DirectoryTraversals);
                if i == last {
                    trailing_slash = true;
                }
            }
            b".." => {
                ev.insert(Evasion::DirectoryTraversals);
                segs.pop();
                if i == last {
                    trailing_slash = true;
                }
            }
            _ => {
                let mut s = seg;
                if s.len() > 1 && s.ends_with(b".") && s.iter().any(|&b| b != b'.') {
                    ev.insert(Evasion::TrailingDot);
                    while s.len() > 1 && s.ends_with(b".") {
                        s = &s[..s.len() - 1];
                    }
                }
                segs.push(s.to_vec());
            }
        }
    }
    if trailing_slash && !segs.is_empty() {
        ev.insert(Evasion::TrailingSlash);
    }
    let mut out = Vec::with_capacity(path.len() + 1);
    for s in &segs {
        out.push(b'/');
        out.extend_from_slice(s);
    }
    if out.is_empty() || trailing_slash {
        out.push(b'/');
    }
    out
}
