//! A URL written into the request path as one of its segments (`/index.php/http://evil.example/x`,
//! `/redirect/https:%2f%2fevil.example`): a route that hands the rest of its path to an include, a
//! fetch or a redirect is given another host's address where its own file names go.
//!
//! The decoded path cannot tell such a segment from the URL that ad exchanges' cookie-sync routes
//! carry as a segment (`/check_uuid/https%3A%2F%2Fprebid-server…`): decoded, both read
//! `/https:/host/…`. How the segment was written does tell them apart. A client that puts a URL
//! into a segment builds it with `encodeURIComponent` or its like, which escapes the colon; a
//! scheme whose colon is written as it is was typed into the path by hand. So the raw target is
//! read here: a segment whose `http`/`https` scheme (letters possibly escaped) ends in a literal
//! colon, followed by a slash or a backslash (literal or escaped), names another host unless
//! the host is the site's own. Such a segment is reported as the signature of this technique,
//! so the policy's signature settings (enabled, overridden on the URL) decide; the signature's
//! own pattern, which the decoded path never matches, catches the same URL in the path's decoded
//! views. Reporting it directly, rather than scanning the segment again, keeps the signature
//! scan's call sites, which the compiler inlines into the hot paths, as they are.

use super::protocol::{host_port, same_host};
use super::redirect::{own, site_host};
use crate::normalize::{Evasions, decode_percent_once};
use crate::policy::compile::compiled::CompiledPolicy;
use crate::policy::compile::entities::Scratch;
use crate::violation::{Context, Violation, ViolationKind as K};

/// The signature of a URL typed into the path (`policies/signatures/ssrf_files.sig`).
const SIGNATURE: u32 = 300008351;

impl CompiledPolicy {
    /// Judges the raw request path (before percent-decoding) for a URL written as a segment.
    pub(in crate::policy) fn check_path_url(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        raw: &[u8],
    ) {
        // Nearly every path has no colon at all: one search settles it.
        if memchr::memchr(b':', raw).is_none() || self.sigs.is_empty() {
            return;
        }
        let Some(url) = url_segment(raw) else {
            return;
        };
        let host = s.host.as_ref().map(|h| &h[..]).unwrap_or(b"");
        if !host.is_empty() && own_site(authority(&url), host) {
            return;
        }
        let (ov, check) = self.url_sig(s);
        if check
            && self.sigs.contains_key(&SIGNATURE)
            && !ov.iter().any(|&(id, enabled)| id == SIGNATURE && !enabled)
        {
            out.push(
                Violation::new(K::AttackSignature, Context::Url)
                    .signatures(vec![SIGNATURE])
                    .snippet(&url),
            );
        }
    }
}

/// The first segment of `raw` that is an `http(s)` URL written with a literal colon, as
/// `scheme://` and the rest of the path decoded; `None` when there is none.
fn url_segment(raw: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    while let Some(p) = memchr::memchr(b'/', &raw[at..]) {
        let start = at + p + 1;
        if let Some(url) = url_at(&raw[start..]) {
            return Some(url);
        }
        at = start;
    }
    None
}

/// `seg` read as `scheme:` + separator, the scheme `http` or `https` with any of its letters
/// percent-escaped.
fn url_at(seg: &[u8]) -> Option<Vec<u8>> {
    let mut scheme = Vec::with_capacity(5);
    let mut i = 0;
    while scheme.len() <= 5 {
        match seg.get(i)? {
            b':' => break,
            b'%' => {
                let b = hex_byte(seg.get(i + 1..i + 3)?)?;
                scheme.push(b.to_ascii_lowercase());
                i += 3;
            }
            b => {
                scheme.push(b.to_ascii_lowercase());
                i += 1;
            }
        }
    }
    if !(scheme == b"http" || scheme == b"https") || seg.get(i) != Some(&b':') {
        return None;
    }
    let rest = &seg[i + 1..];
    let sep = match rest.first()? {
        b'/' | b'\\' => 1,
        b'%' if rest.len() >= 3
            && (rest[1..3].eq_ignore_ascii_case(b"2f")
                || rest[1..3].eq_ignore_ascii_case(b"5c")) =>
        {
            3
        }
        _ => return None,
    };
    // The slashes (two, one, or escaped) are written as the two a URL has; what follows is the
    // authority and the rest of the path, decoded as the route that fetches it decodes them.
    let mut tail = &rest[sep..];
    while let Some(t) = strip_separator(tail) {
        tail = t;
    }
    let mut url = scheme;
    url.extend_from_slice(b"://");
    url.extend_from_slice(&decode_percent_once(tail, &mut Evasions::default()).0);
    Some(url)
}

fn strip_separator(v: &[u8]) -> Option<&[u8]> {
    match v.first()? {
        b'/' | b'\\' => Some(&v[1..]),
        b'%' if v.len() >= 3
            && (v[1..3].eq_ignore_ascii_case(b"2f") || v[1..3].eq_ignore_ascii_case(b"5c")) =>
        {
            Some(&v[3..])
        }
        _ => None,
    }
}

fn hex_byte(h: &[u8]) -> Option<u8> {
    let s = std::str::from_utf8(h).ok()?;
    u8::from_str_radix(s, 16).ok()
}

/// Whether `authority` names the site of `Host` or one of its subdomains (`www.` on either side
/// is the same site).
fn own_site(authority: &[u8], host: &[u8]) -> bool {
    let (a, _) = host_port(
        authority
            .iter()
            .rposition(|&b| b == b'@')
            .map_or(authority, |i| &authority[i + 1..]),
    );
    match site_host(host) {
        Some(site) => own(site, a),
        None => same_host(authority, host),
    }
}

/// The authority of `scheme://authority/…`.
fn authority(url: &[u8]) -> &[u8] {
    let a = memchr::memmem::find(url, b"://").map_or(url, |i| &url[i + 3..]);
    let end = a
        .iter()
        .position(|&b| matches!(b, b'/' | b'\\' | b'?' | b'#'))
        .unwrap_or(a.len());
    &a[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(p: &str) -> Option<String> {
        url_segment(p.as_bytes()).map(|u| String::from_utf8(u).unwrap())
    }

    #[test]
    fn urls_typed_into_the_path_are_found() {
        assert_eq!(
            seg("/index.php/http://evil.example/x").as_deref(),
            Some("http://evil.example/x")
        );
        assert_eq!(
            seg("/redirect/https:%2f%2fevil.example").as_deref(),
            Some("https://evil.example")
        );
        assert_eq!(
            seg("/%68ttp://evil.example/").as_deref(),
            Some("http://evil.example/")
        );
        assert_eq!(
            seg("/https:/evil.example/x").as_deref(),
            Some("https://evil.example/x")
        );
        assert_eq!(
            seg("/go/HTTP:\\\\evil.example").as_deref(),
            Some("http://evil.example")
        );
    }

    #[test]
    fn urls_a_client_encoded_as_a_segment_are_not() {
        // Cookie-sync routes and DoubleClick's matrix parameters, as real clients send them.
        assert_eq!(
            seg("/check_uuid/https%3A%2F%2Fprebid-server.rubiconproject.com%2Fsetuid"),
            None
        );
        assert_eq!(
            seg("/activityi;src=5406241;~oref=https%3A%2F%2Fwww.atlassian.com%2F"),
            None
        );
        assert_eq!(
            seg("/v1/mss_e28/cdn-prod/file:38b50ca6/touch/js/header.js"),
            None
        );
        assert_eq!(seg("/v1.0/me/drive/root:/docs"), None);
        assert_eq!(seg("/wiki/http:"), None);
        assert_eq!(seg("/a/httpsx://b"), None);
    }

    #[test]
    fn the_authority_is_read_for_the_site_check() {
        assert_eq!(
            authority(b"https://shop.example.com/a"),
            b"shop.example.com"
        );
        assert_eq!(authority(b"http://u@h:8080?x"), b"u@h:8080");
        assert!(own_site(b"www.shop.example.com", b"shop.example.com"));
        assert!(own_site(b"shop.example.com:443", b"www.shop.example.com"));
        assert!(own_site(b"10.0.0.1:8080", b"10.0.0.1"));
        assert!(!own_site(
            b"shop.example.com.evil.example",
            b"shop.example.com"
        ));
        assert!(!own_site(
            b"shop.example.com@evil.example",
            b"shop.example.com"
        ));
    }
}
