//! The compiled entities: name matchers with precedence (and [`NameIndex`], their precompiled
//! lookup), URL/parameter/header/cookie/filetype entities, JSON and XML profiles, and the per-request [`Scratch`]. Plain data, built by
//! `compiled::compile`, read-only afterwards.

use regex::Regex;

use super::charset::Table;
use super::glob::Glob;
use crate::FieldKind;
use crate::policy::decl::lenient::Limit;
use crate::policy::decl::{Base64Mode, DataType, EntityType, ParamLocation, ValueType};

/// A name matcher: exact (case per policy) or wildcard, with its precedence.
#[derive(Clone, Debug)]
pub struct NameMatch {
    pub name: String,
    pub glob: Option<Glob>,
    pub order: u64,
}

impl NameMatch {
    pub fn new(
        name: &str,
        kind: Option<EntityType>,
        order: impl Into<Option<u64>>,
        fold: bool,
        slash: bool,
    ) -> Self {
        let wild = kind == Some(EntityType::Wildcard);
        NameMatch {
            name: if fold {
                name.to_ascii_lowercase()
            } else {
                name.to_string()
            },
            glob: wild.then(|| Glob::new(name, slash, fold)),
            order: order.into().unwrap_or(u64::MAX / 2),
        }
    }
    pub fn matches(&self, s: &[u8], fold: bool) -> bool {
        match &self.glob {
            Some(g) => g.is_match(s),
            None if fold => self.name.as_bytes().eq_ignore_ascii_case(s),
            None => self.name.as_bytes() == s,
        }
    }
}

/// Picks the entity for `name`: explicit first, then wildcards by order, then longest pattern.
pub fn pick<I>(
    items: impl IntoIterator<Item = I>,
    m: impl Fn(&I) -> &NameMatch,
    s: &[u8],
    fold: bool,
) -> Option<I> {
    let mut best: Option<(I, (u8, u64, usize))> = None;
    for it in items {
        let rank = {
            let nm = m(&it);
            if !nm.matches(s, fold) {
                continue;
            }
            match &nm.glob {
                None => (0, 0, 0),
                Some(g) => (1, nm.order, usize::MAX - g.specificity()),
            }
        };
        if best.as_ref().is_none_or(|(_, r)| rank < *r) {
            best = Some((it, rank));
        }
    }
    best.map(|(t, _)| t)
}

/// [`pick`] over a fixed list, precompiled: exact names by hash (binary search), then the
/// wildcards already in precedence order, so a lookup reads one or two entries instead of the
/// whole list. Same result as [`pick`] with the same `fold`.
#[derive(Clone, Debug, Default)]
pub struct NameIndex {
    fold: bool,
    len: usize,
    /// (hash of the name, folded when `fold`; position), sorted.
    exact: Vec<(u64, u32)>,
    /// Positions of the wildcards: by order, most specific first, then position.
    wild: Vec<u32>,
}

fn name_hash(s: &[u8], fold: bool) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in s {
        let b = if fold { b.to_ascii_lowercase() } else { b };
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

impl NameIndex {
    pub fn new<'a>(names: impl IntoIterator<Item = &'a NameMatch>, fold: bool) -> Self {
        let mut ix = NameIndex {
            fold,
            ..NameIndex::default()
        };
        let mut wild = Vec::new();
        for (i, nm) in names.into_iter().enumerate() {
            ix.len = i + 1;
            match &nm.glob {
                None => ix
                    .exact
                    .push((name_hash(nm.name.as_bytes(), fold), i as u32)),
                Some(g) => wild.push(((nm.order, usize::MAX - g.specificity()), i as u32)),
            }
        }
        ix.exact.sort_unstable();
        wild.sort_by_key(|(rank, _)| *rank);
        ix.wild = wild.into_iter().map(|(_, i)| i).collect();
        ix
    }

    /// The position in `items` (the list the index was built from) of the entity for `s`, among
    /// those `keep` accepts.
    pub fn pick<T>(
        &self,
        items: &[T],
        m: impl Fn(&T) -> &NameMatch,
        keep: impl Fn(&T) -> bool,
        s: &[u8],
    ) -> Option<usize> {
        if items.len() != self.len {
            // Not the list the index was built from: the plain scan.
            let kept = items.iter().enumerate().filter(|(_, t)| keep(t));
            return pick(kept, |(_, t)| m(t), s, self.fold).map(|(i, _)| i);
        }
        let h = name_hash(s, self.fold);
        let from = self.exact.partition_point(|e| e.0 < h);
        let exact = self.exact[from..].iter().take_while(|e| e.0 == h);
        exact
            .map(|e| e.1)
            .chain(self.wild.iter().copied())
            .map(|i| i as usize)
            .find(|&i| keep(&items[i]) && m(&items[i]).matches(s, self.fold))
    }
}

/// The lookups of the entity lists that do not change after compilation. (Cookie lists are
/// short: a plain [`pick`] over them costs less than hashing the name; header names are looked up
/// by their kind, no hashing.)
#[derive(Clone, Debug, Default)]
pub struct Indexes {
    pub filetypes: NameIndex,
    pub headers: HeaderKinds,
}

impl Indexes {
    pub fn new(filetypes: &[CompiledFiletype], headers: &[CompiledHeader]) -> Self {
        Indexes {
            filetypes: NameIndex::new(filetypes.iter().map(|f| &f.m), true),
            headers: HeaderKinds::new(headers),
        }
    }
}

/// The header entity [`pick`] gives each field name of one kind ([`FieldKind::NAMED`]), found
/// once at compilation: most of a request's names are such names, and the pick reads every
/// entity of the list.
#[derive(Clone, Debug, Default)]
pub struct HeaderKinds {
    /// How many entities the list had (another list is picked from by name).
    len: usize,
    /// By `kind as usize`: `None` for the kinds of several names (or none), else the pick.
    picks: Vec<Option<Option<usize>>>,
}

impl HeaderKinds {
    fn new(headers: &[CompiledHeader]) -> Self {
        let mut picks = vec![None; FieldKind::COUNT];
        for (kind, name) in FieldKind::NAMED {
            let picked = pick(
                headers.iter().enumerate(),
                |(_, c)| &c.m,
                name.as_bytes(),
                true,
            );
            picks[kind as usize] = Some(picked.map(|(i, _)| i));
        }
        HeaderKinds {
            len: headers.len(),
            picks,
        }
    }

    /// The entity of `headers` for the field `name` of kind `kind`: [`pick`] with names folded.
    pub fn pick<'h>(
        &self,
        headers: &'h [CompiledHeader],
        kind: FieldKind,
        name: &[u8],
    ) -> Option<&'h CompiledHeader> {
        match self.picks.get(kind as usize) {
            Some(Some(picked)) if headers.len() == self.len => picked.and_then(|i| headers.get(i)),
            _ => pick(headers.iter(), |c| &c.m, name, true),
        }
    }
}

/// The enabled sub-checks of VIOL_EVASION or VIOL_HTTP_PROTOCOL (a handful of names).
#[derive(Clone, Debug, Default)]
pub struct SubChecks(Vec<&'static str>);

impl SubChecks {
    pub fn enabled(all: &std::collections::HashMap<&'static str, bool>) -> Self {
        let mut on: Vec<&'static str> =
            all.iter().filter(|(_, on)| **on).map(|(n, _)| *n).collect();
        on.sort_unstable();
        SubChecks(on)
    }

    pub fn on(&self, what: &str) -> bool {
        self.0.contains(&what)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    Form,
    Json(usize),
    Xml(usize),
    Signatures,
    Disallow,
    Ignore,
}

#[derive(Clone, Debug)]
pub struct ContentRule {
    pub header: String,
    pub value: Glob,
    pub kind: BodyKind,
    /// `type: grpc`: the index of the `grpc-profiles` entry the rule binds the URL to.
    pub grpc: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct CompiledUrl {
    pub m: NameMatch,
    pub method: Option<String>,
    pub https: Option<bool>,
    pub allowed: bool,
    pub sig_check: bool,
    pub overrides: Vec<(u32, bool)>,
    pub meta_check: bool,
    pub table: Table,
    pub content: Vec<ContentRule>,
    pub mandatory_body: bool,
    pub methods_override: Vec<(String, bool)>,
    /// Positional (path-segment) parameters: 1-based segment index and parameter name.
    pub positional: Vec<(usize, String)>,
    /// `performStaging`: the URL's violations are reported, never enforced.
    pub staged: bool,
    /// `disallowFileUploadOfExecutables` (`checks/upload.rs`).
    pub no_executables: bool,
    /// `html5CrossOriginRequestsEnforcement` in `enforce` mode (`checks/cors.rs`).
    pub cors: Option<Box<crate::policy::checks::cors::Cors>>,
}

#[derive(Clone, Debug)]
pub struct CompiledParam {
    pub m: NameMatch,
    pub url: Option<NameMatch>,
    pub location: ParamLocation,
    pub value_type: ValueType,
    pub data_type: DataType,
    pub mandatory: bool,
    pub allow_empty: bool,
    pub allow_repeat: bool,
    pub min_len: Option<u64>,
    pub max_len: Option<u64>,
    pub min: Option<(f64, bool)>,
    pub max: Option<(f64, bool)>,
    pub multiple_of: Option<f64>,
    pub regex: Option<Regex>,
    pub statics: Vec<String>,
    pub sig_check: bool,
    pub overrides: Vec<(u32, bool)>,
    pub meta_check: bool,
    pub value_table: Table,
    pub name_table: Table,
    pub base64: Base64Mode,
    pub sensitive: bool,
    /// `performStaging`: the parameter's violations are reported, never enforced.
    pub staged: bool,
    /// `valueType` json/xml: the index of the JSON or XML profile that parses the value.
    pub value_profile: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct CompiledHeader {
    pub m: NameMatch,
    pub mandatory: bool,
    pub allow_repeat: bool,
    pub sig_check: bool,
    pub overrides: Vec<(u32, bool)>,
    pub percent_decode: bool,
    /// `urlNormalization`: the value is a URL whose query is read as a query string.
    pub url_normalize: bool,
    pub mask: bool,
}

#[derive(Clone, Debug)]
pub struct CompiledCookie {
    pub m: NameMatch,
    pub sig_check: bool,
    pub overrides: Vec<(u32, bool)>,
    pub staged: bool,
}

#[derive(Clone, Debug)]
pub struct CompiledFiletype {
    pub m: NameMatch,
    pub allowed: bool,
    pub url_len: Option<u64>,
    pub qs_len: Option<u64>,
    pub post_len: Option<u64>,
    pub req_len: Option<u64>,
    pub staged: bool,
}

#[derive(Clone, Debug)]
pub struct CompiledJson {
    pub name: String,
    pub max_array: Limit,
    pub max_depth: Limit,
    pub max_total: Limit,
    pub max_value: Limit,
    pub sig_check: bool,
    pub meta_check: bool,
    pub table: Table,
    pub overrides: Vec<(u32, bool)>,
    pub as_params: bool,
}

#[derive(Clone, Debug)]
pub struct CompiledXml {
    pub name: String,
    pub allow_dtd: bool,
    pub allow_external: bool,
    pub allow_pi: bool,
    pub allow_cdata: bool,
    pub max_depth: usize,
    pub sig_check: bool,
    pub meta_check: bool,
    pub table: Table,
    pub overrides: Vec<(u32, bool)>,
}

/// Per-request scratch space owned by the transaction (body buffers, parser state, counters).
#[derive(Default)]
pub struct Scratch {
    pub url: Option<usize>,
    pub body_kind: Option<BodyKind>,
    pub body: Vec<u8>,
    pub body_len: u64,
    pub body_truncated: bool,
    pub boundary: Option<String>,
    pub filetype: Option<usize>,
    /// (name key, occurrences) of each parameter seen: a request's few parameters stay inline,
    /// so counting them allocates nothing.
    pub params_seen: portcullis_support::InlineVec<(u64, u8), 16>,
    pub param_count: u64,
    pub hits: Vec<u32>,
    /// Signature ids found in query parameter names/values before the parameter's overrides
    /// apply: the whole-query-string scan leaves those to the parameter's own verdict.
    pub param_hits: Vec<u32>,
    pub buf: Vec<u8>,
    pub method_get_or_head: bool,
    pub expects_body: bool,
    pub content_length: Option<u64>,
    pub request_len: u64,
    pub ajax: bool,
    /// A gRPC call on a gRPC URL of the policy: blocks get the gRPC reply.
    pub grpc: bool,
    /// The request says it is gRPC (`content-type: application/grpc...`), on a known URL or not.
    pub grpc_content: bool,
    pub path: Vec<u8>,
    /// The request's `Host` (sharing the head's bytes), which the open-redirect check compares
    /// URLs in values with.
    pub host: Option<bytes::Bytes>,
    /// The OpenAPI operation phase 1 matched (looked up again at body end).
    pub api: Option<crate::policy::checks::api::ApiRequest>,
    /// The gRPC profile the URL is bound to, and the call's message inspector.
    pub grpc_profile: Option<usize>,
    pub grpc_stream: Option<crate::grpc::GrpcStream>,
    /// A gRPC call on a URL no profile binds: its messages, scanned as raw bytes one by one.
    pub grpc_opaque: Option<crate::grpc::OpaqueCall>,
    /// The body's `Content-Encoding`, undone before the body is inspected.
    pub body_coding: Option<crate::parse::coding::Coding>,
    /// The JSON body is a sequence of documents, one a line (NDJSON, JSON Lines, JSON text
    /// sequences).
    pub json_lines: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_picks_like_the_scan() {
        let e = |n: &str, wild: bool, order: Option<u64>, fold: bool| {
            let kind = wild.then_some(EntityType::Wildcard);
            NameMatch::new(n, kind, order, fold, true)
        };
        for fold in [true, false] {
            let names = vec![
                e("*", true, None, fold),
                e("Bak", false, None, fold),
                e("bak", false, None, fold),
                e("b*", true, None, fold),
                e("ba*", true, None, fold),
                e("*k", true, Some(1), fold),
                e("php", false, None, fold),
                e("x-*", true, Some(2), fold),
            ];
            let ix = NameIndex::new(names.iter(), fold);
            for s in [
                "bak", "BAK", "Bak", "back", "ba", "php", "PHP", "x-y", "zz", "", "k",
            ] {
                let s = s.as_bytes();
                let scan = pick(names.iter().enumerate(), |(_, m)| m, s, fold).map(|(i, _)| i);
                assert_eq!(ix.pick(&names, |m| m, |_| true, s), scan, "{s:?} {fold}");
                let odd = |m: &NameMatch| m.name.len() % 2 == 1;
                let kept = names.iter().enumerate().filter(|(_, m)| odd(m));
                let scan = pick(kept, |(_, m)| m, s, fold).map(|(i, _)| i);
                assert_eq!(ix.pick(&names, |m| m, odd, s), scan, "{s:?} {fold}");
            }
        }
    }

    /// A header entity found by a name's kind is the one the scan over the list finds.
    #[test]
    fn header_kinds_pick_like_the_scan() {
        let h = |n: &str, wild: bool, order: Option<u64>| CompiledHeader {
            m: NameMatch::new(n, wild.then_some(EntityType::Wildcard), order, true, true),
            mandatory: false,
            allow_repeat: true,
            sig_check: true,
            overrides: Vec::new(),
            percent_decode: false,
            url_normalize: false,
            mask: false,
        };
        let lists = [
            vec![
                h("*", true, None),
                h("Cookie", false, None),
                h("user-*", true, Some(1)),
            ],
            vec![
                h("x-*", true, None),
                h("*-length", true, Some(2)),
                h("HOST", false, None),
            ],
            Vec::new(),
        ];
        for headers in lists {
            let kinds = HeaderKinds::new(&headers);
            for (kind, name) in FieldKind::NAMED {
                let scan = pick(headers.iter(), |c| &c.m, name.as_bytes(), true);
                let ours = kinds.pick(&headers, kind, name.as_bytes());
                assert_eq!(ours.map(|c| &c.m.name), scan.map(|c| &c.m.name), "{name}");
            }
            let other = kinds.pick(&headers, FieldKind::Other, b"x-api-key");
            let scan = pick(headers.iter(), |c| &c.m, b"x-api-key", true);
            assert_eq!(other.map(|c| &c.m.name), scan.map(|c| &c.m.name));
        }
    }
}
