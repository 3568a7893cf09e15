//! Phase 1 checks: request line, URL (evasions, metacharacters, URL and method entities),
//! file types and lengths, headers, cookies, query parameters, XFF; then the body plan
//! ([`super::body_plan`]).

use std::net::IpAddr;

use super::known_fields::Known;
use crate::parse::query;
use crate::policy::compile::compiled::{CompiledPolicy, MAX_ITEMS, Scratch, pick};
use crate::policy::decl::ParamLocation;
use crate::signatures::Target;
use crate::violation::{Context, Violation, ViolationKind as K};

/// The bytes `url_evasions` looks for besides `//`: `\\`, `%` (of `%5c`), `.`, `;`, tab,
/// vertical tab, form feed, space and bytes from 0x80 up.
const URL_EVASION_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i >= 0x80
            || matches!(
                i as u8,
                b'\\' | b'%' | b'.' | b';' | b'\t' | 0x0b | 0x0c | b' '
            );
        i += 1;
    }
    t
};

impl CompiledPolicy {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Records `v` unless its violation is switched off (neither alarm nor block).
    pub(in crate::policy) fn push(&self, out: &mut Vec<Violation>, v: Violation) {
        let s = self.settings[v.kind as usize];
        if v.kind == K::AttackSignature || s.alarm || s.block {
            out.push(v);
        }
    }

    /// [`Self::push`] for each of `raised`.
    pub(in crate::policy) fn push_all(
        &self,
        out: &mut Vec<Violation>,
        raised: impl IntoIterator<Item = Violation>,
    ) {
        for v in raised {
            self.push(out, v);
        }
    }

    fn on(&self, k: K) -> bool {
        let s = self.settings[k as usize];
        s.alarm || s.block
    }

    /// An evasion sub-check, when enabled and VIOL_EVASION is on.
    pub(in crate::policy) fn evasion(
        &self,
        out: &mut Vec<Violation>,
        what: &'static str,
        ctx: Context,
        snippet: &[u8],
    ) {
        if self.on(K::Evasion)
            && self.evasions.on(what)
            && !out.iter().any(|v| v.kind == K::Evasion && v.detail == what)
        {
            out.push(
                Violation::new(K::Evasion, ctx)
                    .detail(what)
                    .snippet(snippet),
            );
        }
    }

    /// Whether an HTTP-protocol sub-check is enabled and VIOL_HTTP_PROTOCOL is on (to skip the
    /// work of a check whose finding would not be recorded).
    pub(in crate::policy) fn protocol_on(&self, what: &'static str) -> bool {
        self.on(K::HttpProtocol) && self.http_checks.on(what)
    }

    /// An HTTP-protocol sub-check, when enabled and VIOL_HTTP_PROTOCOL is on.
    pub(in crate::policy) fn protocol(&self, out: &mut Vec<Violation>, what: &'static str) {
        if self.protocol_on(what)
            && !out
                .iter()
                .any(|v| v.kind == K::HttpProtocol && v.detail == what)
        {
            out.push(Violation::new(K::HttpProtocol, Context::Request).detail(what));
        }
    }

    /// The client address after the policy's XFF trust settings.
    pub fn client_address(&self, head: &crate::RequestHead, peer: IpAddr) -> IpAddr {
        if !self.trust_xff {
            return peer;
        }
        let names: Vec<&str> = if self.xff_headers.is_empty() {
            vec!["x-forwarded-for"]
        } else {
            self.xff_headers.iter().map(String::as_str).collect()
        };
        for n in names {
            if let Some(v) = head.headers.get(n).and_then(|v| v.to_str().ok())
                && let Some(ip) = v.split(',').next_back().and_then(|a| a.trim().parse().ok())
            {
                return ip;
            }
        }
        peer
    }

    /// Checks the request line and headers; returns true when the body must be inspected.
    pub fn check_headers(
        &self,
        head: &crate::RequestHead,
        tls: bool,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) -> bool {
        *s = Scratch {
            hits: std::mem::take(&mut s.hits),
            buf: std::mem::take(&mut s.buf),
            ..Scratch::default()
        };
        let method = head.method.as_str();
        if !self.methods.iter().any(|m| m == method) {
            self.push(
                out,
                Violation::new(K::Method, Context::Request).snippet(method.as_bytes()),
            );
        }
        let raw_path = head.uri.path().as_bytes();
        let raw_query = head.uri.query().unwrap_or("").as_bytes();
        self.url_evasions(raw_path, out);
        let mut flags = query::DecodeFlags::default();
        let decoded = query::decode(raw_path, false, self.passes, &mut flags);
        self.flag_evasions(&flags, Context::Url, raw_path, out);
        self.check_controls(out, b"", &decoded);
        self.check_encoding(out, Context::Url, None, &decoded);
        let path = normalize_path(&decoded);
        let mark = out.len();
        self.check_url(method, tls, (&path, head.uri.path()), s, out);
        self.check_cors(head, tls, s, out);
        self.stage_url(s, out, mark);
        self.grpc_bind(head, s);
        let mark = out.len();
        self.check_filetype(&path, raw_query.len() as u64, head, s, out);
        self.stage_filetype(s, out, mark);
        s.path = path;
        self.check_positional(s, out);
        let known = Known::of(&head.headers);
        // Kept for the open-redirect check of this phase and the body's; it shares the head's
        // bytes. The site's name is found from it only when a value reaches that check: finding
        // it for every request costs more than the few gated values of a clean one.
        s.host = known.host.map(|h| head.headers.shared(h.as_bytes()));
        self.check_path_url(s, out, raw_path);
        if !raw_query.is_empty() {
            for (n, v, _) in query::pairs(raw_query, MAX_ITEMS) {
                self.check_param(s, out, n, v, ParamLocation::Query, true);
            }
            self.scan_whole_pairs(s, out, raw_query, Context::Query);
        }
        self.check_header_fields(head, &known, s, out);
        self.check_protocol(head, &known, out);
        let inspect = self.plan_body(head, &known, s, out);
        let inspect = self.api_head(head, &known, s.expects_body, s, out) || inspect;
        self.check_mandatory(s, out, false);
        self.check_declared_length(s, out);
        inspect
    }

    /// Scans a whole `k=v&k=v` string (query string, form body) after its parameters: it
    /// catches what no single parameter shows (an attack split across parameters at an `=` or
    /// `&`, a malformed string); a signature already found in a parameter is that parameter's to
    /// judge, so its overrides and exemptions hold.
    pub(in crate::policy) fn scan_whole_pairs(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        raw: &[u8],
        ctx: Context,
    ) {
        let (ov, check) = self.url_sig(s);
        if !check || self.sigs.is_empty() {
            return;
        }
        let ov: std::borrow::Cow<[(u32, bool)]> = if s.param_hits.is_empty() {
            ov.into()
        } else {
            let hits = s.param_hits.iter().map(|&id| (id, false));
            ov.iter().copied().chain(hits).collect()
        };
        let mut f = query::DecodeFlags::default();
        let q = query::decode(raw, true, self.passes, &mut f);
        self.scan(s, out, Target::QueryString, ctx, None, &q, &ov, false);
    }

    pub(super) fn url_sig(&self, s: &Scratch) -> (&[(u32, bool)], bool) {
        match s.url.and_then(|i| self.urls.get(i)) {
            Some(u) => (&u.overrides, u.sig_check),
            None => (&[], true),
        }
    }

    fn url_evasions(&self, raw: &[u8], out: &mut Vec<Violation>) {
        if raw.windows(2).any(|w| w == b"//") {
            self.evasion(out, "Multiple slashes", Context::Url, raw);
        }
        // The other checks all need one of these bytes: most paths have none, and one pass over
        // the path settles that.
        if !raw.iter().any(|&b| URL_EVASION_BYTES[usize::from(b)]) {
            return;
        }
        if raw.contains(&b'\\') || raw.windows(3).any(|w| w.eq_ignore_ascii_case(b"%5c")) {
            self.evasion(out, "IIS backslashes", Context::Url, raw);
        }
        if raw.windows(3).any(|w| w == b"/./" || w == b"/..")
            || raw.ends_with(b"/.")
            || super::dot_segments::encoded_dot_segment(raw)
        {
            self.evasion(out, "Directory traversals", Context::Url, raw);
        }
        // Path parameters in the last segment (`;jsessionid=…`, an ad server's `;src=…;ord=…`)
        // are how those applications address a resource; one in an earlier segment is dropped
        // by servlet containers before routing, so `/admin;x/secret` reaches `/admin/secret`
        // while a rule on that path never sees it.
        if let Some(p) = memchr::memchr(b';', raw)
            && raw[p..].contains(&b'/')
        {
            self.evasion(out, "Semicolon path parameters", Context::Url, raw);
        }
        // A path is written by a browser or a library, which escape a `%` as `%25`: a `%` before
        // anything but two hex digits (`%zz`, `%%32%65`, a `%` at the end) is hand-made, and
        // servers disagree on it. Parameter values keep their leniency (`100% sure`), a path
        // does not. (`%uXXXX` is the "%u decoding" evasion's.)
        if let Some(at) = memchr::memchr(b'%', raw)
            && bad_percent(&raw[at..])
        {
            self.evasion(out, "Bad unescape", Context::Url, raw);
        }
        if raw.iter().any(|b| *b >= 0x80) {
            self.evasion(out, "Bare byte decoding", Context::Url, raw);
        }
        if raw.iter().any(|b| matches!(b, b'\t' | 0x0b | 0x0c)) {
            self.evasion(out, "Apache whitespace", Context::Url, raw);
        }
        if raw.contains(&b' ') {
            self.protocol(out, "Unescaped space in URL");
        }
    }

    pub(in crate::policy) fn flag_evasions(
        &self,
        f: &query::DecodeFlags,
        ctx: Context,
        raw: &[u8],
        out: &mut Vec<Violation>,
    ) {
        if f.bad_escape {
            self.evasion(out, "Bad unescape", ctx, raw);
        }
        if f.percent_u {
            self.evasion(out, "%u decoding", ctx, raw);
        }
        // F5 semantics of `maxDecodingPasses`: the evasion is a value still encoded after that many
        // passes. A value needing two passes is ordinary on the web (a URL carried in a
        // parameter keeps its own `%20`s: `dl=https%3A%2F%2Fh%2F%3Fq%3Da%2520b`), and the
        // signatures already see every decoded pass.
        if f.exhausted {
            self.evasion(out, "Multiple decoding", ctx, raw);
        }
        if f.overlong {
            self.evasion(out, "IIS Unicode codepoints", ctx, raw);
        }
        if f.nul {
            self.protocol(out, "Null in request");
        }
    }

    fn check_url(
        &self,
        method: &str,
        tls: bool,
        (path, raw_path): (&[u8], &str),
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) {
        let fits = |u: &crate::policy::compile::compiled::CompiledUrl, strict: bool| {
            (!strict || u.https.is_none_or(|h| h == tls))
                && u.method.as_deref().is_none_or(|m| m == method)
        };
        let mut idx = None;
        for strict in [true, false] {
            let candidates = self
                .urls
                .iter()
                .enumerate()
                .filter(|(_, u)| fits(u, strict));
            idx = pick(candidates, |(_, u)| &u.m, path, self.fold).map(|(i, _)| i);
            if idx.is_some() {
                break;
            }
        }
        s.url = idx;
        // Explicit policy URLs first, then the OpenAPI operations, then the policy wildcards.
        let explicit = idx.is_some_and(|i| self.urls.get(i).is_some_and(|u| u.m.glob.is_none()));
        let by_spec = !explicit && self.api_url(method, raw_path, idx.is_some(), s, out);
        if by_spec && idx.is_none() {
            if let Some(c) = self.url_table.first_bad(path) {
                self.push(
                    out,
                    Violation::new(K::UrlMetachar, Context::Url)
                        .snippet(path)
                        .metachar(c),
                );
            }
            if !self.sigs.is_empty() {
                self.scan(s, out, Target::Url, Context::Url, None, path, &[], false);
            }
            return;
        }
        let Some(u) = idx.and_then(|i| self.urls.get(i)) else {
            self.push(
                out,
                Violation::new(K::Url, Context::Url)
                    .snippet(path)
                    .detail("URL not in the policy"),
            );
            return;
        };
        if !u.allowed && !by_spec {
            self.push(
                out,
                Violation::new(K::Url, Context::Url)
                    .snippet(path)
                    .detail("disallowed URL"),
            );
        }
        if let Some((_, allowed)) = u.methods_override.iter().find(|(m, _)| m == method) {
            if !allowed {
                self.push(
                    out,
                    Violation::new(K::Method, Context::Request).snippet(method.as_bytes()),
                );
            } else {
                out.retain(|v| v.kind != K::Method);
            }
        }
        if u.meta_check
            && let Some(c) = u.table.first_bad(path)
        {
            self.push(
                out,
                Violation::new(K::UrlMetachar, Context::Url)
                    .snippet(path)
                    .metachar(c),
            );
        }
        if u.sig_check {
            let ov = &u.overrides;
            self.scan(s, out, Target::Url, Context::Url, None, path, ov, false);
        }
    }

    fn check_filetype(
        &self,
        path: &[u8],
        qlen: u64,
        head: &crate::RequestHead,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
    ) {
        let last = path.rsplit(|b| *b == b'/').next().unwrap_or(b"");
        let ext: &[u8] = match last.iter().rposition(|b| *b == b'.') {
            Some(i) if i + 1 < last.len() && !is_host_name(last, i) => &last[i + 1..],
            _ => b"no_ext",
        };
        let Some(i) = self
            .index
            .filetypes
            .pick(&self.filetypes, |f| &f.m, |_| true, ext)
        else {
            self.push(out, Violation::new(K::Filetype, Context::Url).snippet(ext));
            return;
        };
        s.filetype = Some(i);
        let f = &self.filetypes[i];
        if !f.allowed {
            self.push(out, Violation::new(K::Filetype, Context::Url).snippet(ext));
        }
        if f.url_len.is_some_and(|l| path.len() as u64 > l) {
            self.push(
                out,
                Violation::new(K::UrlLength, Context::Url).detail(format!("{} bytes", path.len())),
            );
        }
        if f.qs_len.is_some_and(|l| qlen > l) {
            self.push(
                out,
                Violation::new(K::QueryStringLength, Context::Query)
                    .detail(format!("{qlen} bytes")),
            );
        }
        let req: u64 = (head.uri.path().len() + head.uri.query().map_or(0, |q| q.len() + 1)) as u64
            + head
                .headers
                .iter()
                .map(|(k, v)| (k.len() + v.len() + 4) as u64)
                .sum::<u64>();
        s.request_len = req;
        if f.req_len.is_some_and(|l| req > l) {
            self.push(
                out,
                Violation::new(K::RequestLength, Context::Request).detail(format!("{req} bytes")),
            );
        }
    }
    /// The matched URL's positional parameters: path segment N (1-based) is parameter `name`.
    fn check_positional(&self, s: &mut Scratch, out: &mut Vec<Violation>) {
        let Some(u) = s.url.and_then(|i| self.urls.get(i)) else {
            return;
        };
        if u.positional.is_empty() {
            return;
        }
        // A copy: parameter lookup reads `s.path` for URL-level parameters.
        let path = s.path.clone();
        for (idx, name) in &u.positional {
            let seg = path
                .split(|b| *b == b'/')
                .filter(|p| !p.is_empty())
                .nth(idx - 1);
            match seg {
                Some(v) => self.check_param(s, out, name.as_bytes(), v, ParamLocation::Path, false),
                None => self.push(
                    out,
                    Violation::new(K::MandatoryParameter, Context::Url).named(name.clone()),
                ),
            }
        }
    }
}

/// True when a `%` in `s` (which starts at one) is not followed by two hex digits or by `u` and
/// four.
fn bad_percent(s: &[u8]) -> bool {
    let hex = |i: usize| s.get(i).is_some_and(u8::is_ascii_hexdigit);
    memchr::memchr_iter(b'%', s).any(|i| {
        let escape = hex(i + 1) && hex(i + 2);
        let unicode = matches!(s.get(i + 1), Some(b'u' | b'U')) && (2..6).all(|k| hex(i + k));
        !escape && !unicode
    })
}

/// Resolves `.`/`..` segments, collapses `//` and turns `\` into `/` (the path the URL entities see).
pub fn normalize_path(p: &[u8]) -> Vec<u8> {
    let plain = p.first() == Some(&b'/')
        && !p.contains(&b'\\')
        && !p.windows(2).any(|w| w == b"//" || w == b"/.");
    if plain {
        return p.to_vec();
    }
    let mut segs: Vec<&[u8]> = Vec::new();
    let unified: Vec<u8> = p
        .iter()
        .map(|b| if *b == b'\\' { b'/' } else { *b })
        .collect();
    for seg in unified.split(|b| *b == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                segs.pop();
            }
            s => segs.push(s),
        }
    }
    let mut out = Vec::with_capacity(p.len() + 1);
    for s in &segs {
        out.push(b'/');
        out.extend_from_slice(s);
    }
    if out.is_empty() || (unified.ends_with(b"/") && !segs.is_empty()) {
        out.push(b'/');
    }
    out
}

/// `.com` is both the DOS program type and the commonest top-level domain, and REST paths end in
/// host names (`/api/v2/host/floors/example-news.com`, `/whois/www.example.com`). A COM program
/// has an 8.3 name; a segment whose stem is longer, or holds dots, is a host name and has no file
/// type. (`dot` is the place of the last dot in `segment`.)
fn is_host_name(segment: &[u8], dot: usize) -> bool {
    let (stem, ext) = (&segment[..dot], &segment[dot + 1..]);
    ext.eq_ignore_ascii_case(b"com")
        && (stem.len() > 8 || stem.contains(&b'.'))
        && stem.split(|b| *b == b'.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::Arc;

    use super::normalize_path;
    use crate::resolver::NoResolver;
    use crate::signatures::{SignatureDb, Target};
    use crate::transaction::{ConnInfo, Transaction};

    #[test]
    fn secrets_stay_out_of_the_scan_memo() {
        let doc = br#"{"policy": {"name": "m", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
            "sensitive-parameters": [{"name": "password"}]}}"#;
        let policy = crate::policy::load(doc, "m.json", &NoResolver).expect("loads");
        let head = http::Request::get("/login?q=walking+boots&password=hunter2x")
            .header("user-agent", "curl/8.5.0 memo-test")
            .header("authorization", "Basic dXNlcjpodW50ZXIyeA==")
            .header("cookie", "session=s3cr3t-session-id")
            .body(())
            .expect("request")
            .into_parts()
            .0
            .into();
        let conn = ConnInfo {
            peer: IpAddr::V4(Ipv4Addr::LOCALHOST),
            tls: false,
        };
        Transaction::new(Arc::new(policy.policy), conn).on_request_headers(&head);
        let db = SignatureDb::builtin();
        assert!(db.memoizes(Target::Header, b"curl/8.5.0 memo-test"));
        assert!(db.memoizes(Target::ParamValue, b"walking boots"));
        assert!(!db.memoizes(Target::ParamValue, b"hunter2x"));
        assert!(!db.memoizes(Target::Header, b"Basic dXNlcjpodW50ZXIyeA=="));
        assert!(!db.memoizes(Target::Cookie, b"s3cr3t-session-id"));
    }

    #[test]
    fn hand_made_escapes_in_paths() {
        for bad in [
            &b"%zzadmin"[..],
            b"%%32%65",
            b"%",
            b"%2",
            b"%2e%g1",
            b"%u00",
        ] {
            assert!(super::bad_percent(bad), "{bad:?}");
        }
        for good in [&b"%2e%2E/a"[..], b"%25zz", b"%u002e", b"%E4%BD%A0"] {
            assert!(!super::bad_percent(good), "{good:?}");
        }
    }

    #[test]
    fn paths_are_normalised() {
        assert_eq!(normalize_path(b"/a/b"), b"/a/b");
        assert_eq!(normalize_path(b"/a/./b/../c"), b"/a/c");
        assert_eq!(normalize_path(b"/a//b\\c/"), b"/a/b/c/");
        assert_eq!(normalize_path(b"/../../etc/passwd"), b"/etc/passwd");
        assert_eq!(normalize_path(b""), b"/");
        assert_eq!(normalize_path(b"/."), b"/");
    }
}
