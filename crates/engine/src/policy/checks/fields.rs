//! Phase 1 checks on header fields: counts, repetition, lengths, metacharacters, signatures,
//! header-located parameters, mandatory headers, and the Cookie header (malformed pairs, cookie
//! entities, cookie-located parameters).

use std::net::IpAddr;

use super::field_memo::with_field_memo;
use super::known_fields::Known;
use super::scan::is_credential_header;
use crate::FieldKind;
use crate::parse::{cookie, query};
use crate::policy::compile::charset::HeaderBytes;
use crate::policy::compile::compiled::{CompiledHeader, CompiledPolicy, MAX_ITEMS, Scratch, pick};
use crate::policy::decl::ParamLocation;
use crate::signatures::Target;
use crate::violation::{Context, Violation, ViolationKind as K};

impl CompiledPolicy {
    pub(in crate::policy) fn check_header_fields(
        &self,
        head: &crate::RequestHead,
        known: &Known<'_>,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) {
        let h = &head.headers;
        let header_params = self
            .params
            .iter()
            .any(|p| p.location == ParamLocation::Header);
        if h.len() as u64 > self.max_headers {
            self.protocol(out, "Check maximum number of headers");
        }
        const MULTIPLE_HOSTS: &str = "Multiple host headers";
        const IP_HOST: &str = "Host header contains IP address";
        if known.hosts > 1 && self.protocol_on(MULTIPLE_HOSTS) {
            self.protocol(out, MULTIPLE_HOSTS);
        }
        if self.protocol_on(IP_HOST)
            && let Some(host) = known.host.and_then(|v| v.to_str().ok())
        {
            let bare = host.rsplit_once(':').map_or(host, |(a, p)| {
                if p.bytes().all(|b| b.is_ascii_digit()) {
                    a
                } else {
                    host
                }
            });
            if bare.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
                self.protocol(out, IP_HOST);
            }
        }
        if known.transfer_encoding && known.content_length.is_some() {
            self.protocol(out, "Chunked request with Content-Length header");
        }
        // A header map lists each name's values one after another: the entity is picked once per
        // name, and a repetition is the next field having the same name (no lookup by name).
        with_field_memo(|mut memo| {
            let mut fields = h.iter_kinds().enumerate().peekable();
            // The entity of the current name, picked when a field of it is first checked.
            let (mut current, mut cfg) = (None, None);
            while let Some((at, (name, kind, v))) = fields.next() {
                if current != Some(name) {
                    current = Some(name);
                    cfg = None;
                    let repeated = fields.peek().is_some_and(|(_, (next, _, _))| *next == name);
                    if repeated {
                        let c = self
                            .index
                            .headers
                            .pick(&self.headers, kind, name.as_bytes());
                        cfg = Some(c);
                        if c.is_some_and(|c| !c.allow_repeat) {
                            self.push(
                                out,
                                Violation::new(K::HeaderRepeated, Context::Header).named(name),
                            );
                        }
                    }
                }
                let bytes = v.as_bytes();
                if memo
                    .as_deref()
                    .is_some_and(|m| m.clean(self, at, name, bytes))
                {
                    continue;
                }
                let cfg = *cfg.get_or_insert_with(|| {
                    self.index
                        .headers
                        .pick(&self.headers, kind, name.as_bytes())
                });
                let mark = out.len();
                let judged =
                    self.check_field(s, out, known, (name, kind, bytes), cfg, header_params);
                // Kept only when nothing was found, nothing found could have been left out as a
                // repeat of what `out` already held, and the checks read nothing but the field.
                if let Some(m) = memo.as_deref_mut()
                    && !judged
                    && out.len() == mark
                    && !bytes.is_empty()
                    && !header_params
                    && !matches!(kind, FieldKind::Cookie | FieldKind::Referer)
                    && cfg.is_some_and(|c| c.sig_check && !c.mask && !is_credential_header(name))
                    && !out
                        .iter()
                        .any(|v| matches!(v.kind, K::Evasion | K::HttpProtocol))
                {
                    m.keep(self, at, name, bytes);
                }
            }
        });
        for c in self
            .headers
            .iter()
            .filter(|c| c.mandatory && c.m.glob.is_none())
        {
            if !h.contains_key(c.m.name.as_str()) {
                self.push(
                    out,
                    Violation::new(K::MandatoryHeader, Context::Header).named(c.m.name.clone()),
                );
            }
        }
        s.ajax = known
            .requested_with
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"XMLHttpRequest"));
    }

    /// The checks of one field (`cfg`: its entity); true when the open-redirect check judged the
    /// value, which reads the request's `Host`.
    fn check_field(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        known: &Known<'_>,
        (n, kind, bytes): (&str, FieldKind, &[u8]),
        cfg: Option<&CompiledHeader>,
        header_params: bool,
    ) -> bool {
        if bytes.is_empty() {
            self.protocol(out, "Header name with no header value");
            // No client has sent the obsolete `Request-Range` since Netscape 4 (its signature
            // takes any value); an empty one, which no value scan sees, probes for a server
            // that still reads it.
            if n == "request-range" {
                self.protocol(out, "Malformed Range header");
            }
        }
        if self.max_header_len.exceeded(bytes.len() as u64) {
            self.push(
                out,
                Violation::new(K::HeaderLength, Context::Header)
                    .named(n)
                    .detail(format!("{} bytes", bytes.len())),
            );
        }
        let seen = self.header_bytes.classes(bytes);
        if seen & HeaderBytes::HIGH != 0 {
            self.protocol(out, "High ASCII characters in headers");
        }
        if seen & HeaderBytes::NUL != 0 {
            self.protocol(out, "Null in request");
        }
        if kind == FieldKind::Cookie {
            self.check_cookies(bytes, s, out);
            return false;
        }
        // The byte classes of the one pass above gate both checks of escapes in the value.
        let escaped = seen & (HeaderBytes::PERCENT | HeaderBytes::ESCAPE) != 0;
        let judged = self.check_redirect_header(s, out, n, bytes, escaped);
        if seen & HeaderBytes::PERCENT != 0 {
            self.check_header_controls(out, bytes);
        }
        if seen & HeaderBytes::METACHAR != 0
            && let Some(c) = self.header_bytes.first_bad(bytes)
        {
            self.push(
                out,
                Violation::new(K::HeaderMetachar, Context::Header)
                    .named(n)
                    .metachar(c),
            );
        }
        if let Some(c) = cfg
            && c.sig_check
            && !self.sigs.is_empty()
        {
            let decoded;
            let value = if c.percent_decode {
                let mut f = query::DecodeFlags::default();
                decoded = decode_header(bytes, c.url_normalize, self.passes, &mut f);
                if f.nul {
                    self.protocol(out, "Null in request");
                }
                // No client writes an overlong form: it is there to get past a decoder.
                if f.overlong {
                    self.evasion(out, "IIS Unicode codepoints", Context::Header, bytes);
                }
                &decoded[..]
            } else {
                bytes
            };
            let (ov, mask) = (&c.overrides, c.mask);
            self.scan(
                s,
                out,
                Target::Header,
                Context::Header,
                Some(n),
                value,
                ov,
                mask,
            );
            if let Some(file) = upload_file_name(n, value) {
                let ctx = Context::Header;
                self.scan(s, out, Target::Filename, ctx, Some(n), file, ov, mask);
            }
            if kind == FieldKind::Referer
                && let Some(q) = known.host.and_then(|h| own_page_query(bytes, h.as_bytes()))
            {
                self.scan_own_page_params(s, out, q, ov, mask);
            }
        }
        if header_params {
            self.check_named_location(s, out, n.as_bytes(), bytes, ParamLocation::Header);
        }
        judged
    }

    /// Scans the query parameters of a page of the site's own (its `Referer`) as the parameters
    /// they were to the application: a browser sends the address of the page it comes from, so a
    /// reflected payload that reached that page comes back in every request the page makes, and
    /// an attacker can put one there without it being the request's own. Another site's page
    /// carries that site's parameters (its search, its ids), which this application never reads.
    fn scan_own_page_params(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        query: &[u8],
        ov: &[(u32, bool)],
        mask: bool,
    ) {
        // What a parameter of the request found is that parameter's to judge (the whole query
        // string's scan leaves it); a page parameter is not one of the request's.
        let mark = s.param_hits.len();
        let ctx = Context::Header;
        let name = Some("referer");
        for (n, v, _) in query::pairs(query, MAX_ITEMS) {
            let mut f = query::DecodeFlags::default();
            let n = query::decode(n, true, self.passes, &mut f);
            let v = query::decode(v, true, self.passes, &mut f);
            self.scan(s, out, Target::ParamName, ctx, name, &n, ov, mask);
            self.scan(s, out, Target::ParamValue, ctx, name, &v, ov, mask);
        }
        s.param_hits.truncate(mark);
    }

    fn check_cookies(&self, header: &[u8], s: &mut Scratch, out: &mut Vec<Violation>) {
        if self.max_cookie_len.exceeded(header.len() as u64) {
            self.push(
                out,
                Violation::new(K::CookieLength, Context::Cookie)
                    .detail(format!("{} bytes", header.len())),
            );
        }
        let mut count = 0u64;
        for pair in cookie::pairs(header).take(MAX_ITEMS) {
            count += 1;
            match pair {
                Err(bad) => self.push(
                    out,
                    Violation::new(K::CookieMalformed, Context::Cookie).snippet(bad),
                ),
                Ok((name, value)) => {
                    self.check_redirect(s, out, Context::Cookie, name, value, value);
                    let n = super::params::as_text(name);
                    match pick(self.cookies.iter(), |c| &c.m, name, false) {
                        Some(c) if c.sig_check => {
                            let (ov, mark) = (&c.overrides, out.len());
                            let ctx = Context::Cookie;
                            self.scan(s, out, Target::CookieName, ctx, Some(&n), name, ov, false);
                            self.scan(
                                s,
                                out,
                                Target::Cookie,
                                Context::Cookie,
                                Some(&n),
                                value,
                                ov,
                                false,
                            );
                            if c.staged {
                                super::staging::mark_staged(out, mark);
                            }
                        }
                        _ => {}
                    }
                    if self
                        .params
                        .iter()
                        .any(|p| p.location == ParamLocation::Cookie)
                    {
                        self.check_named_location(s, out, name, value, ParamLocation::Cookie);
                    }
                }
            }
        }
        if count > self.max_cookies {
            self.protocol(out, "Check maximum number of cookies");
        }
    }
}

/// A header value percent-decoded; with `url` (a URL-valued header such as `Referer`), its query
/// is decoded as the page it names decoded it, `+` being a space: a payload echoed from that
/// page's parameters reads as it did there.
fn decode_header<'a>(
    bytes: &'a [u8],
    url: bool,
    passes: u8,
    f: &mut query::DecodeFlags,
) -> std::borrow::Cow<'a, [u8]> {
    match memchr::memchr(b'?', bytes) {
        Some(q) if url && bytes[q..].contains(&b'+') => {
            let mut v = query::decode(&bytes[..q], false, passes, f).into_owned();
            v.extend_from_slice(&query::decode(&bytes[q..], true, passes, f));
            std::borrow::Cow::Owned(v)
        }
        _ => query::decode(bytes, false, passes, f),
    }
}

/// The query of a `Referer` that names a page of the request's own host (`scheme://host/…?query`,
/// up to a `#`); `None` for another host's page or a page without a query.
fn own_page_query<'a>(referer: &'a [u8], host: &[u8]) -> Option<&'a [u8]> {
    // Most Referers carry no query (a site's pages link to each other by path): one search
    // settles them before the host is compared.
    memchr::memchr(b'?', referer)?;
    let colon = memchr::memchr(b':', referer)?;
    let (scheme, rest) = referer.split_at(colon);
    let rest = rest.strip_prefix(b"://")?;
    if scheme.is_empty()
        || !scheme
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return None;
    }
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    if !super::protocol::same_host(&rest[..end], host) {
        return None;
    }
    let page = &rest[end..];
    let page = &page[..memchr::memchr(b'#', page).unwrap_or(page.len())];
    let q = &page[memchr::memchr(b'?', page)? + 1..];
    (!q.is_empty()).then_some(q)
}

/// The name a raw upload's file is to be stored under: the whole value of the headers upload
/// clients name the file in (spelt with `-`, `_` or `.`: servers that map header names to
/// variables read all three as one), or the `filename` parameter of a `Content-Disposition`
/// request header.
fn upload_file_name<'a>(header: &str, value: &'a [u8]) -> Option<&'a [u8]> {
    match header {
        "x-filename" | "x_filename" | "x.filename" | "x-file-name" => Some(value),
        "content-disposition" => {
            let at = memchr::memmem::find(&value.to_ascii_lowercase(), b"filename=")?;
            let rest = &value[at + b"filename=".len()..];
            Some(match rest.strip_prefix(b"\"") {
                Some(quoted) => quoted.split(|b| *b == b'"').next().unwrap_or(quoted),
                None => rest
                    .split(|b| *b == b';')
                    .next()
                    .unwrap_or(rest)
                    .trim_ascii(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::own_page_query;

    #[test]
    fn a_referer_query_is_the_sites_own_only_on_its_host() {
        let own = |r: &str, h: &str| own_page_query(r.as_bytes(), h.as_bytes()).map(<[u8]>::to_vec);
        assert_eq!(
            own("http://a.example/p?x=1&y=2#f", "a.example"),
            Some(b"x=1&y=2".to_vec())
        );
        assert_eq!(
            own("https://A.example:8443/p?x=1", "a.example:8443"),
            Some(b"x=1".to_vec())
        );
        assert_eq!(
            own("http://a.example?x=1", "a.example"),
            Some(b"x=1".to_vec())
        );
        for (r, h) in [
            ("http://b.example/p?x=1", "a.example"),
            ("http://a.example:81/p?x=1", "a.example:82"),
            ("http://a.example/p", "a.example"),
            ("http://a.example/p#f?x=1", "a.example"),
            ("http://a.example/p?", "a.example"),
            ("/p?x=1", "a.example"),
            ("a b://a.example/p?x=1", "a.example"),
        ] {
            assert_eq!(own(r, h), None, "{r} {h}");
        }
    }
}
