//! The signature scan of one value, with what it is judged as: the policy's enabled signatures
//! minus the entity's overrides, the scan memo kept away from secrets, and a value that is a JSON
//! document of its own (telemetry sends events as JSON text inside JSON bodies and form fields)
//! scanned key by key and string by string, as the JSON it is: read as one flat text, the quotes,
//! braces and markup of neighbouring fields look like injections, and a field's value is never
//! seen alone.

use crate::openapi::{Arena, Json, JsonBody};
use crate::parse::json;
use crate::policy::compile::compiled::{CompiledPolicy, MAX_ITEMS, Scratch};
use crate::signatures::{MemoUse, SignatureDb, Target, with_memo};
use crate::violation::{Context, Violation, ViolationKind as K};

/// Shortest value taken apart as a JSON document (`{"a":1}` and shorter are read as they are).
const MIN_DOCUMENT: usize = 8;
/// Bytes a document's key path buffer starts with.
const PATH_ROOM: usize = 64;
/// JSON documents inside JSON documents taken apart (a string holding JSON holding JSON).
const MAX_NESTING: u8 = 3;

/// What a value is scanned as: its target and context, its name, the entity's signature
/// overrides, and whether it may be a secret. The items of a JSON document inside the value are
/// judged as the value is, with their own target.
#[derive(Clone, Copy)]
struct Judged<'a> {
    target: Target,
    ctx: Context,
    name: Option<&'a str>,
    overrides: &'a [(u32, bool)],
    mask: bool,
}

impl CompiledPolicy {
    /// Runs the signatures of `target` over `value`, minus disabled ones and entity overrides.
    /// Values that may be secrets (masked, cookies, credentials) bypass the scan memo.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::policy) fn scan(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        target: Target,
        ctx: Context,
        name: Option<&str>,
        value: &[u8],
        overrides: &[(u32, bool)],
        mask: bool,
    ) {
        let judged = Judged {
            target,
            ctx,
            name,
            overrides,
            mask,
        };
        // A lone value borrows the memo only if the prefilter leaves it a look-up to make.
        self.scan_judged(s, out, judged, value, None, 0, MemoUse::AtLookUp);
    }

    /// [`Self::scan`] of a whole request body as `Target::Body`, its JSON parse shared with the
    /// body's other checks.
    pub(in crate::policy) fn scan_body(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        body: &JsonBody<'_>,
        overrides: &[(u32, bool)],
    ) {
        let judged = Judged {
            target: Target::Body,
            ctx: Context::Body,
            name: None,
            overrides,
            mask: false,
        };
        // One borrow of the memo for every item of the document.
        with_memo(|memo| {
            self.scan_judged(s, out, judged, body.bytes(), Some(body), 0, memo.into())
        });
    }

    /// `parsed` is `value`'s parse when a reader before has one to share; a value that is not a
    /// document (nearly all of them) costs no arena.
    #[allow(clippy::too_many_arguments)]
    fn scan_judged(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        j: Judged,
        value: &[u8],
        parsed: Option<&JsonBody<'_>>,
        depth: u8,
        mut memo: MemoUse<'_>,
    ) {
        let target = j.target;
        if value.is_empty() || self.sigs.is_empty() {
            return;
        }
        if depth < MAX_NESTING
            && matches!(
                target,
                Target::ParamValue | Target::Json | Target::Cookie | Target::Body
            )
            && is_document(value)
        {
            let arena = Arena::new();
            let own;
            let written = match parsed {
                Some(body) => body.written(),
                None => {
                    own = JsonBody::new(value, &arena);
                    own.written()
                }
            };
            // A malformed document is scanned as the text it is, below.
            if let Ok(doc) = written {
                self.scan_items(s, out, j, doc, depth, memo);
                return;
            }
        }
        if depth < MAX_NESTING
            && matches!(target, Target::ParamValue | Target::Json | Target::Cookie)
            && let Some(doc) = base64_document(value)
        {
            // The document is also read as the text it decodes to, by the views of the value.
            self.scan_judged(s, out, j, &doc, None, depth + 1, memo.reborrow());
        }
        if depth < MAX_NESTING
            && target == Target::Cookie
            && let Some(doc) = percent_document(value)
        {
            self.scan_judged(s, out, j, &doc, None, depth + 1, memo.reborrow());
        }
        self.scan_text(s, out, j, value, memo);
    }

    /// Every key and scalar of `doc` (at most `MAX_ITEMS`), judged as `j` is with its own target.
    fn scan_items(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        j: Judged,
        doc: &Json<'_>,
        depth: u8,
        memo: MemoUse<'_>,
    ) {
        let mut items = 0;
        let mut path = String::new();
        let db = SignatureDb::builtin();
        // An item's target is never a cookie's or a header's: whether it is memoized is the
        // document's to say, the same for every item.
        let memoize = memoizes(&Judged {
            target: Target::Json,
            ..j
        });
        let mut memo = if memoize { memo } else { MemoUse::Off };
        json::scalars(doc, &mut |item| {
            items += 1;
            if items > MAX_ITEMS {
                return;
            }
            let (t, text) = match item {
                json::Scalar::Key(k) => (Target::ParamName, k.as_bytes()),
                json::Scalar::KeyPath { parent, key } => {
                    path.clear();
                    // Room for most paths at once, rather than a few regrowths a document.
                    path.reserve(PATH_ROOM.max(parent.len() + 1 + key.len()));
                    path.push_str(parent);
                    path.push('.');
                    path.push_str(key);
                    (Target::KeyPath, path.as_bytes())
                }
                json::Scalar::Value(v) => (Target::Json, v.as_bytes()),
                json::Scalar::Integer(digits) => (Target::Json, digits),
            };
            // Most items are neither a document nor base64 of one: their text is scanned as it
            // is, without the checks of a value that may be. Most of those are settled clean by
            // their bytes or the memo, which is asked first, without the scan's calls around it
            // (kept out of this loop, which runs for every item).
            let whole = t != Target::Json || !may_hold_document(text);
            if !(whole && db.settled(memo.reborrow(), t, text)) {
                self.scan_item(
                    s,
                    out,
                    Judged { target: t, ..j },
                    text,
                    whole,
                    depth,
                    memo.reborrow(),
                );
            }
        });
    }

    /// One item of a document that its bytes and the memo did not settle: scanned as the text it
    /// is when `whole`, else as a value that may be a document of its own.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn scan_item(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        item: Judged,
        text: &[u8],
        whole: bool,
        depth: u8,
        memo: MemoUse<'_>,
    ) {
        if whole {
            self.scan_text(s, out, item, text, memo);
        } else {
            self.scan_judged(s, out, item, text, None, depth + 1, memo);
        }
    }

    /// The signature scan of `value` as it is (not taken apart as a document), and the violation
    /// of what it hit, answered from `memo` unless the value may be a secret. Inlined into both
    /// callers: the scan of every header and parameter goes through here and should not pay for a
    /// call of its own.
    #[inline(always)]
    fn scan_text(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        j: Judged,
        value: &[u8],
        memo: MemoUse<'_>,
    ) {
        let Judged {
            target,
            ctx,
            name,
            overrides,
            mask,
        } = j;
        if value.is_empty() {
            return;
        }
        s.hits.clear();
        let db = SignatureDb::builtin();
        let mut memo = if memoizes(&j) { memo } else { MemoUse::Off };
        match (target, name) {
            // A signature about one header's grammar (`Accept`, `Range`) says nothing of others.
            (Target::Header, header) => {
                let header = header.unwrap_or("");
                db.scan_header(header, value, &mut s.hits, memo.reborrow());
                if !is_standard_header(header) {
                    // An application reads its own headers (`X-Callback-Url`, `X-Api-Key`) as
                    // arguments, not the standard ones a browser or HTTP client sends: such a
                    // header's value is also judged as a parameter's value is.
                    db.scan_memoized(memo, Target::ParamValue, value, &mut s.hits);
                }
            }
            _ => db.scan_memoized(memo, target, value, &mut s.hits),
        }
        if s.hits.is_empty() {
            return;
        }
        if matches!(
            target,
            Target::ParamName | Target::ParamValue | Target::Json
        ) {
            s.param_hits.extend_from_slice(&s.hits);
        }
        s.hits.retain(|id| {
            self.sigs.contains_key(id) && !overrides.iter().any(|(o, en)| o == id && !en)
        });
        if s.hits.is_empty() {
            return;
        }
        s.hits.sort_unstable();
        s.hits.dedup();
        let mut v = Violation::new(K::AttackSignature, ctx).signatures(s.hits.clone());
        if let Some(n) = name {
            v = v.named(n);
        }
        v = if mask {
            v.snippet(b"********")
        } else {
            v.snippet(value)
        };
        out.push(v);
    }
}

/// Whether a value judged as `j` may be answered from the scan memo: not when it may be a secret
/// (see `signatures::memo`).
fn memoizes(j: &Judged) -> bool {
    !(j.mask || j.target == Target::Cookie || j.name.is_some_and(is_credential_header))
}

/// A JSON object or array by its first and last bytes (what is parsed to be sure).
fn is_document(value: &[u8]) -> bool {
    let v = value.trim_ascii();
    v.len() >= MIN_DOCUMENT
        && matches!(
            (v.first(), v.last()),
            (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
        )
}

/// Whether `value` may be a document or base64 of one ([`is_document`] or [`base64_opening`]),
/// told by its first byte for nearly every value that is neither.
#[inline]
fn may_hold_document(value: &[u8]) -> bool {
    match value.first() {
        Some(b'{' | b'[' | b'e' | b'W') => is_document(value) || base64_opening(value),
        Some(b) if b.is_ascii_whitespace() => is_document(value),
        _ => false,
    }
}

/// The JSON document a value is the base64 encoding of (`eyJ…` is `{"`), standard or URL-safe:
/// applications pass state and filters this way, and read its fields as parameters, so each
/// field is judged on its own as a document's are (`{"id":"1 and 1=2"}` read as one text hides
/// the value's start in the middle of the text).
fn base64_document(value: &[u8]) -> Option<Vec<u8>> {
    let alphabet =
        |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=');
    if !base64_opening(value) || value.len() < 2 * MIN_DOCUMENT || !value.iter().all(alphabet) {
        return None;
    }
    crate::normalize::base64_text(value).filter(|doc| is_document(doc))
}

/// The JSON document a cookie value is the percent-encoding of: a cookie cannot hold `"`, `,`
/// or `;` as written, so clients store JSON with `encodeURIComponent` (`%7B%22…`), and Express
/// marks a JSON cookie `j:`, which its cookie parser reads back as an object. Unlike a parameter,
/// a cookie is scanned as it came, so without this its keys would not be judged one by one.
fn percent_document(value: &[u8]) -> Option<Vec<u8>> {
    let v = value.trim_ascii();
    let v = if v.len() > 4 && v[..4].eq_ignore_ascii_case(b"j%3a") {
        &v[4..]
    } else {
        v
    };
    let opens = |p: &[u8]| v.len() >= 3 && v[..3].eq_ignore_ascii_case(p);
    if !(opens(b"%7b") || opens(b"%5b")) {
        return None;
    }
    let mut ev = crate::normalize::Evasions::default();
    let (doc, _) = crate::normalize::decode_percent_once(v, &mut ev);
    is_document(&doc).then_some(doc)
}

/// Whether `value` starts as the base64 of a JSON document does: `{"`, `{` + line break, `[{`,
/// `["` or `[` + space, `[` + line break.
fn base64_opening(value: &[u8]) -> bool {
    matches!(value.get(..2), Some(b"ey" | b"ew" | b"W3" | b"Wy" | b"Ww"))
}

/// Headers that carry credentials (not memoized: see `signatures::memo`).
pub(super) fn is_credential_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("proxy-authorization")
}

/// Request headers defined by HTTP and its extensions or sent by browsers, CDNs and proxies on
/// their own (name in lower case, as `http` keeps it): the protocol reads them, not the
/// application's code as arguments.
pub(super) fn is_standard_header(name: &str) -> bool {
    name.starts_with("sec-")
        || name.starts_with("accept")
        || name.starts_with("content-")
        || name.starts_with("if-")
        || name.starts_with("access-control-request-")
        || name.starts_with("x-forwarded-")
        || matches!(
            name,
            "authorization"
                | "cache-control"
                | "connection"
                | "cookie"
                | "date"
                | "dnt"
                | "downlink"
                | "dpr"
                | "early-data"
                | "ect"
                | "expect"
                | "forwarded"
                | "from"
                | "host"
                | "keep-alive"
                | "max-forwards"
                | "origin"
                | "pragma"
                | "priority"
                | "proxy-authorization"
                | "proxy-connection"
                | "purpose"
                | "range"
                | "referer"
                | "rtt"
                | "save-data"
                | "te"
                | "trailer"
                | "transfer-encoding"
                | "upgrade"
                | "upgrade-insecure-requests"
                | "user-agent"
                | "via"
                | "viewport-width"
                | "device-memory"
                | "x-real-ip"
                | "x-requested-with"
                | "true-client-ip"
                | "cdn-loop"
                | "http2-settings"
                | "alt-used"
        )
}
