//! Open redirects to a host that imitates the site's (VIOL_REDIRECT): a parameter whose value is a
//! URL, or a scheme-relative reference (`//host`, `\\host`, `/\host`), to another host that carries
//! the site's own name where a careless check looks for it: inside the host
//! (`shop.example.com.evil.example`, `evilshop.example.com`), as the user information before the
//! real host (`shop.example.com@evil.example`, with the `/` that would have ended it encoded or
//! written as a backslash: `shop.example.com%2f@evil.example`), or in the other host's path or
//! query (`evil.example/?shop.example.com`). A redirect target checked with `contains`,
//! `startsWith` or a loose pattern passes these, and the browser goes to the other host.
//!
//! A URL to another site is not judged by itself: return addresses, OAuth `redirect_uri`s and
//! shared links name other sites all the time, and only the application knows which it trusts.
//! What is judged is the site's name placed to pass for the site, which no link to a real
//! page has. Subdomains of the site are its own, and another URL carried inside the value
//! (`?u=https://shop.example.com/…`, a share link) is that URL's, not an imitation.

use super::protocol::host_port;
use crate::policy::compile::compiled::CompiledPolicy;
use crate::policy::compile::entities::Scratch;
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    /// Judges one parameter's decoded `value`, and its `raw` form (still percent-encoded where
    /// the parameter was), since a `%2f` that ends the host for the server's decoder does not for
    /// the browser that gets it back in a `Location`.
    pub(in crate::policy) fn check_redirect(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        name: &[u8],
        raw: &[u8],
        value: &[u8],
    ) {
        let s_ = self.settings[K::Redirect as usize];
        if !(s_.alarm || s_.block) || !url_like(value) && !url_like(raw) {
            return;
        }
        let Some(site) = s.host.as_ref().and_then(|h| site_host(h.as_bytes())) else {
            return;
        };
        if let Some(how) = imitates(site, value).or_else(|| imitates(site, raw)) {
            self.push(
                out,
                Violation::new(K::Redirect, Context::Parameter)
                    .named(String::from_utf8_lossy(name))
                    .detail(how)
                    .snippet(value),
            );
        }
    }
}

/// Whether `v` starts as a URL with an authority: an optional scheme, then two slashes or
/// backslashes in any mix. Most values fail at their first bytes.
fn url_like(v: &[u8]) -> bool {
    authority_start(v.trim_ascii()).is_some()
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
fn site_host(host: &[u8]) -> Option<&[u8]> {
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
/// user information), since the attack lives in the difference.
fn imitates(site: &[u8], v: &[u8]) -> Option<&'static str> {
    let v = v.trim_ascii();
    let rest = &v[authority_start(v)?..];
    for lenient in [false, true] {
        let end = rest
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#') || (!lenient && b == b'\\'))
            .unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, hostport) = match authority.iter().rposition(|&b| b == b'@') {
            Some(i) => (&authority[..i], &authority[i + 1..]),
            None => (&authority[..0], authority),
        };
        let (host, _) = host_port(hostport);
        if host.is_empty() || own(site, host) {
            continue;
        }
        if find(host, site).is_some() {
            return Some("a URL to a host that contains the site's name");
        }
        if find(userinfo, site).is_some() {
            return Some("a URL with the site's name as user information before another host");
        }
        if !lenient && named_in_tail(site, tail) {
            return Some("a URL to another host with the site's name in its path or query");
        }
    }
    None
}

/// The site itself or one of its subdomains.
fn own(site: &[u8], host: &[u8]) -> bool {
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
            assert!(imitates(SITE, v.as_bytes()).is_some(), "{v}");
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
            assert_eq!(imitates(SITE, v.as_bytes()), None, "{v}");
        }
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
