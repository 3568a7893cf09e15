//! Open redirects to a host that imitates the site's (VIOL_REDIRECT): a value that is a URL, or a
//! scheme-relative reference (`//host`, `\\host`, `/\host`), to another host that carries the
//! site's own name where a careless check looks for it: inside the host
//! (`shop.example.com.evil.example`, `evilshop.example.com`), as the user information before the
//! real host (`shop.example.com@evil.example`, with the `/` that would have ended it encoded or
//! written as a backslash: `shop.example.com%2f@evil.example`), or in the other host's path or
//! query (`evil.example/?shop.example.com`). A redirect target checked with `contains`,
//! `startsWith` or a loose pattern passes these, and the browser goes to the other host.
//!
//! Where: parameters (query, form, multipart), JSON string values, cookies, and the headers an
//! application takes a destination or its own address from (`Referer`, which it redirects back
//! to; `Origin`, which a CORS check trusts by the same loose match; `X-Forwarded-Host`, from which
//! it builds absolute links; and its own headers, `X-Return-Url` and the like). Each value is also
//! read with the encodings a client wraps a redirect target in undone (percent-encoding once more,
//! `\u00XX` and `\xXX` escapes, HTML references, base64), since the application decodes them
//! before it redirects.
//!
//! A URL to another site is not judged by itself: return addresses, OAuth `redirect_uri`s and
//! shared links name other sites all the time, and only the application knows which it trusts.
//! What is judged is the site's name placed to pass for the site, which no link to a real
//! page has. Subdomains of the site are its own, and another URL carried inside the value
//! (`?u=https://shop.example.com/…`, a share link) is that URL's, not an imitation. In a header,
//! the site's name in the other URL's path or query does not count: a `Referer` from a search for
//! the site carries it there.

use super::protocol::host_port;
use crate::normalize::{Evasions, base64_text, decode_percent, decoded_text};
use crate::policy::compile::compiled::CompiledPolicy;
use crate::policy::compile::entities::Scratch;
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    /// Judges one value found in `ctx` under `name`: its decoded form, its `raw` form (still
    /// percent-encoded where it was: a `%2f` that ends the host for the server's decoder does not
    /// for the browser that gets it back in a `Location`), and the decoded views of it.
    pub(in crate::policy) fn check_redirect(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        ctx: Context,
        name: &[u8],
        raw: &[u8],
        value: &[u8],
    ) {
        let s_ = self.settings[K::Redirect as usize];
        if !(s_.alarm || s_.block) {
            return;
        }
        // Most values are `raw` itself (a cookie, an undecoded parameter): the same slice needs
        // no comparison of its bytes.
        let same = std::ptr::eq(raw, value) || raw == value;
        if !(may_reference_host(value) || !same && may_reference_host(raw)) {
            return;
        }
        self.judge_redirect(s, out, ctx, name, raw, value, same);
    }

    /// The part of [`Self::check_redirect`] past its gate: `value` (or `raw`, when not `same`)
    /// may reference another host.
    #[allow(clippy::too_many_arguments)]
    fn judge_redirect(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        ctx: Context,
        name: &[u8],
        raw: &[u8],
        value: &[u8],
        same: bool,
    ) {
        let Some(site) = s.host.as_deref().and_then(site_host) else {
            return;
        };
        let tail = ctx != Context::Header;
        let how = imitates(site, value, tail)
            .or_else(|| (!same).then(|| imitates(site, raw, tail)).flatten())
            .or_else(|| decoded(value).and_then(|v| imitates(site, &v, tail)));
        if let Some(how) = how {
            self.push(
                out,
                Violation::new(K::Redirect, ctx)
                    .named(String::from_utf8_lossy(name))
                    .detail(how)
                    .snippet(value),
            );
        }
    }

    /// Judges a request header's value when it is one an application redirects by or trusts as
    /// its own address (above); `escaped` says the value holds `%`, `&` or `\\` (the header
    /// checks' one pass over its bytes found them), so only its slashes and its start are left
    /// for the gate to look at. True when the value was judged, which reads the request's
    /// `Host`.
    pub(in crate::policy) fn check_redirect_header(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        name: &str,
        value: &[u8],
        escaped: bool,
    ) -> bool {
        let s_ = self.settings[K::Redirect as usize];
        if !(s_.alarm || s_.block) {
            return false;
        }
        let (ctx, n) = (Context::Header, name.as_bytes());
        if matches!(name, "x-forwarded-host" | "x-host" | "x-original-host") {
            // A host, not a URL: read as the authority of one.
            let host = [&b"//"[..], value].concat();
            self.judge_redirect(s, out, ctx, n, &host, &host, true);
            return true;
        }
        if !(escaped || authority_or_base64(value)) {
            return false;
        }
        // The standard-header test comes after the gate: most values never reach it.
        if matches!(name, "referer" | "origin") || !super::scan::is_standard_header(name) {
            self.judge_redirect(s, out, ctx, n, value, value, true);
            return true;
        }
        false
    }
}

/// Whether `v` may reference another host, judged from its bytes before anything is decoded:
/// two slashes of either kind in a row (where an authority starts), or an escape that may hide
/// them (a percent escape, an HTML or JavaScript escape, base64 of a URL's start). Most header
/// and parameter values have none of these, and cost one pass over their bytes.
fn may_reference_host(v: &[u8]) -> bool {
    // A value up to this long is read a byte at a time: most parameter and cookie values are a
    // few bytes, where a `memchr` call's fixed cost is most of the work; a longer one is searched
    // by `memchr`'s wide loads.
    const SHORT: usize = 48;
    if v.len() > SHORT {
        return memchr::memchr3(b'%', b'&', b'\\', v).is_some() || authority_or_base64(v);
    }
    let mut slash = false;
    for &b in v {
        match b {
            b'%' | b'&' | b'\\' => return true,
            b'/' if slash => return true,
            _ => slash = b == b'/',
        }
    }
    base64_start(v)
}

/// Whether `v`, known to hold no `%`, `&` or `\\`, holds two slashes in a row or starts with
/// base64 of a URL's start.
fn authority_or_base64(v: &[u8]) -> bool {
    memchr::memchr_iter(b'/', v).any(|i| v.get(i + 1).is_some_and(|&b| matches!(b, b'/' | b'\\')))
        || base64_start(v)
}

/// Whether `v` starts (after white space) with base64 of a URL's start.
fn base64_start(v: &[u8]) -> bool {
    let v = v.trim_ascii_start();
    matches!(v.first(), Some(b'a' | b'S' | b'L' | b'X'))
        && BASE64_STARTS.iter().any(|p| v.starts_with(p))
}

/// Base64 of `http`, `HTTP`, `//`, `\\` and `/\`: where a redirect target starts.
const BASE64_STARTS: [&[u8]; 5] = [b"aHR0c", b"SFRUU", b"Ly", b"XF", b"L1"];

/// The value with the encodings a redirect target is wrapped in undone, when it has one:
/// percent-encoding (a cookie is not decoded for us; a parameter's value may be encoded twice),
/// HTML references and JavaScript escapes (`&#x2f;`, `\u002f`) or base64 of a URL, then whatever
/// percent-encoding they held. Each is tried only where the value's bytes show it.
fn decoded(v: &[u8]) -> Option<Vec<u8>> {
    let percent =
        |v: &[u8]| memchr::memchr(b'%', v).map(|_| decode_percent(v, 3, &mut Evasions::default()));
    let v = v.trim_ascii();
    let once = percent(v);
    let cur: &[u8] = once.as_deref().unwrap_or(v);
    let text = if memchr::memchr2(b'\\', b'&', cur).is_some() {
        decoded_text(cur)
    } else if BASE64_STARTS.iter().any(|p| cur.starts_with(p)) {
        base64_text(cur)
    } else {
        None
    };
    match text {
        Some(t) => percent(&t).or(Some(t)),
        None => once,
    }
}

/// Where the authority begins in a URL or scheme-relative reference, after the extra slashes
/// browsers skip (`///host`).
fn authority_start(v: &[u8]) -> Option<usize> {
    let scheme = v
        .iter()
        .take(17)
        .position(|&b| b == b':')
        .filter(|&i| {
            i > 0
                && v[0].is_ascii_alphabetic()
                && v[..i]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        })
        .map_or(0, |i| i + 1);
    let rest = &v[scheme..];
    let slash = |b: &u8| matches!(b, b'/' | b'\\');
    if rest.len() < 3 || !slash(&rest[0]) || !slash(&rest[1]) {
        return None;
    }
    let extra = rest.iter().take_while(|b| slash(b)).count();
    Some(scheme + extra)
}

/// The site's name as links to it write it: `Host` without port, final dot or leading `www.`; only
/// a name with a dot and a letter (an address or `localhost` is not imitated by containing it).
pub(super) fn site_host(host: &[u8]) -> Option<&[u8]> {
    let (h, _) = host_port(host.trim_ascii());
    let h = if h.len() > 4 && h[..4].eq_ignore_ascii_case(b"www.") {
        &h[4..]
    } else {
        h
    };
    (h.len() >= 4 && h.contains(&b'.') && h.iter().any(u8::is_ascii_alphabetic)).then_some(h)
}

/// How URL `v` imitates `site`, if it does. The authority is read twice: as a browser reads it
/// (ended by `/`, `\`, `?` or `#`) and as lenient server-side parsers do (a backslash kept in the
/// user information), since the attack lives in the difference. With `tail`, the site's name in the
/// other host's path or query counts too.
fn imitates(site: &[u8], v: &[u8], tail_counts: bool) -> Option<&'static str> {
    let v = v.trim_ascii();
    let rest = &v[authority_start(v)?..];
    let end = |lenient: bool| {
        rest.iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#') || (!lenient && b == b'\\'))
            .unwrap_or(rest.len())
    };
    let strict = end(false);
    imitated(site, rest, strict, tail_counts).or_else(|| {
        // The lenient reading differs only where a backslash ended the browser's.
        (rest.get(strict) == Some(&b'\\'))
            .then(|| imitated(site, rest, end(true), false))
            .flatten()
    })
}

/// How the URL whose authority is `rest[..end]` imitates `site`; with `tail_counts`, the site's
/// name in the path or query after it counts too.
fn imitated(site: &[u8], rest: &[u8], end: usize, tail_counts: bool) -> Option<&'static str> {
    let (authority, tail) = rest.split_at(end);
    let (userinfo, hostport) = match authority.iter().rposition(|&b| b == b'@') {
        Some(i) => (&authority[..i], &authority[i + 1..]),
        None => (&authority[..0], authority),
    };
    let (host, _) = host_port(hostport);
    if host.is_empty() || own(site, host) {
        return None;
    }
    if find(host, site).is_some() {
        return Some("a URL to a host that contains the site's name");
    }
    if find(userinfo, site).is_some() {
        return Some("a URL with the site's name as user information before another host");
    }
    if tail_counts && named_in_tail(site, tail) {
        return Some("a URL to another host with the site's name in its path or query");
    }
    None
}

/// The site itself or one of its subdomains.
pub(super) fn own(site: &[u8], host: &[u8]) -> bool {
    host.len() >= site.len() && {
        let (head, tail) = host.split_at(host.len() - site.len());
        tail.eq_ignore_ascii_case(site) && (head.is_empty() || head.ends_with(b"."))
    }
}

/// The site's name in a path or query, other than as the host of a URL carried there (`//` or its
/// escape before it: a share link's `?u=https://site/…`).
fn named_in_tail(site: &[u8], tail: &[u8]) -> bool {
    let mut from = 0;
    while let Some(i) = find(&tail[from..], site) {
        let before = &tail[..from + i];
        let carried = before.ends_with(b"//")
            || before.len() >= 6 && before[before.len() - 6..].eq_ignore_ascii_case(b"%2f%2f");
        if !carried {
            return true;
        }
        from += i + 1;
    }
    false
}

/// ASCII case-insensitive substring search (values and names are short; URLs in values rare).
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &[u8] = b"shop.example.com";

    #[test]
    fn imitations_of_the_site_are_found() {
        for v in [
            "https://shop.example.com.evil.example/",
            "//shop.example.com.evil.example",
            "https://shop.example.comevil.example/",
            "https://evilshop.example.com/",
            "https://shop.example.com@evil.example/",
            "https://Shop.Example.com:443@evil.example/",
            "http://shop.example.com%2f@evil.example/",
            "http://shop.example.com%2f:foo@bar@evil.example/",
            "https://shop.example.com\\@evil.example/",
            "https://evil.example/?x=shop.example.com",
            "https://evil.example/shop.example.com",
            "https://evil.example#shop.example.com",
            "\\\\shop.example.com.evil.example",
            "/\\shop.example.com.evil.example",
        ] {
            assert!(imitates(SITE, v.as_bytes(), true).is_some(), "{v}");
            assert!(may_reference_host(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn values_without_an_authority_or_an_escape_skip_the_check() {
        for v in [
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "/account/settings",
            "en-US,en;q=0.5",
        ] {
            assert!(!may_reference_host(v.as_bytes()), "{v}");
        }
        for v in [
            "https://evil.example/",
            "%2F%2Fevil",
            "\\u002f\\u002f",
            "&#47;&#47;",
            "Ly9ldmls",
        ] {
            assert!(may_reference_host(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn short_and_long_values_are_gated_alike() {
        let pad = "x".repeat(60);
        for (v, refers) in [
            ("session=abc123", false),
            ("a/b/c", false),
            ("x//y", true),
            ("x/\\y", true),
            ("100%", true),
            ("a&b", true),
            ("  aHR0cHM6", true),
            ("aGVsbG8", false),
        ] {
            assert_eq!(may_reference_host(v.as_bytes()), refers, "{v}");
            let long = format!("{v}{pad}");
            assert_eq!(may_reference_host(long.as_bytes()), refers, "{long}");
        }
    }

    #[test]
    fn links_real_traffic_carries_pass() {
        for v in [
            "https://shop.example.com/account",
            "https://m.shop.example.com/x",
            "https://shop.example.com:8443/",
            "/account",
            "https://www.google.com/",
            "//kns.cnki.net/kns8/defaultresult/index",
            "https://accounts.google.com/o/oauth2/auth?redirect_uri=https://shop.example.com/cb",
            "https://www.facebook.com/sharer.php?u=https%3A%2F%2Fshop.example.com%2Fp%2F1",
            "https://web.archive.org/web/2020/https://shop.example.com/",
            "javascript:void(0);",
            "shop.example.com.evil.example",
        ] {
            assert_eq!(imitates(SITE, v.as_bytes(), true), None, "{v}");
        }
    }

    #[test]
    fn encoded_imitations_are_read_decoded() {
        for v in [
            "https%3A%2F%2Fshop.example.com.evil.example%2F",
            "%2F%2Fshop.example.com%40evil.example",
            "\\u0068ttps:\\u002f\\u002fshop.example.com.evil.example/",
            "&#104;ttps&#58;&#47;&#47;shop.example.com.evil.example/",
            "%26%23x2f%3B%26%23x2f%3Bshop.example.com.evil.example",
            "B64",
        ] {
            let v = v.replace(
                "B64",
                "aHR0cHM6Ly9zaG9wLmV4YW1wbGUuY29tLmV2aWwuZXhhbXBsZS8=",
            );
            let d = decoded(v.as_bytes()).unwrap_or_else(|| panic!("{v}"));
            assert!(imitates(SITE, &d, true).is_some(), "{v}");
        }
        for v in [
            "plain words",
            "aHR0cHM6Ly93d3cuZ29vZ2xlLmNvbS8=",
            "https%3A%2F%2Fwww.google.com%2F",
        ] {
            assert!(
                decoded(v.as_bytes()).is_none_or(|d| imitates(SITE, &d, true).is_none()),
                "{v}"
            );
        }
    }

    #[test]
    fn in_a_header_only_the_authority_counts() {
        let search = b"https://www.google.com/search?q=shop.example.com";
        assert!(imitates(SITE, search, true).is_some());
        assert_eq!(imitates(SITE, search, false), None);
        assert!(imitates(SITE, b"https://shop.example.com.evil.example/", false).is_some());
    }

    #[test]
    fn the_site_is_a_name() {
        assert_eq!(
            site_host(b"www.Shop.example.com:8080"),
            Some(&b"Shop.example.com"[..])
        );
        assert_eq!(site_host(b"shop.example.com."), Some(SITE));
        for h in [&b"localhost"[..], b"127.0.0.1", b"[::1]:443", b"a.b", b""] {
            assert_eq!(site_host(h), None, "{h:?}");
        }
    }
}
