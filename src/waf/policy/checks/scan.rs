//! The signature scan of one value, with what it is judged as: the policy's enabled signatures
//! minus the entity's overrides, the scan memo kept away from secrets, and a value that is a JSON
//! document of its own (telemetry sends events as JSON text inside JSON bodies and form fields)
//! scanned key by key and string by string, as the JSON it is: read as one flat text, the quotes,
//! braces and markup of neighbouring fields look like injections, and a field's value is never
//! seen alone. Imports: `compiled`, `waf::{parse, signatures, violation}`.

use crate::waf::parse::json;
use crate::waf::policy::compile::compiled::{CompiledPolicy, MAX_ITEMS, Scratch};
use crate::waf::signatures::{SignatureDb, Target};
use crate::waf::violation::{Context, Violation, ViolationKind as K};

/// Shortest value taken apart as a JSON document (`{"a":1}` and shorter are read as they are).
const MIN_DOCUMENT: usize = 8;
/// JSON documents inside JSON documents taken apart (a string holding JSON holding JSON).
const MAX_NESTING: u8 = 3;

impl CompiledPolicy {
    /// Runs the signatures of `target` over `value`, minus disabled ones and entity overrides.
    /// Values that may be secrets (masked, cookies, credentials) bypass the scan memo.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::waf::policy) fn scan(
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
        self.scan_nested(s, out, target, ctx, name, value, overrides, mask, 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn scan_nested(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        target: Target,
        ctx: Context,
        name: Option<&str>,
        value: &[u8],
        overrides: &[(u32, bool)],
        mask: bool,
        depth: u8,
    ) {
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
            let mut items: Vec<(Vec<u8>, bool)> = Vec::new();
            let walked = json::walk(value, |it| {
                if items.len() < MAX_ITEMS {
                    items.push(match it {
                        json::Item::Key { key, .. } => (key.as_bytes().to_vec(), true),
                        json::Item::Value { value, .. } => (value.as_bytes().to_vec(), false),
                    });
                }
            });
            if walked.is_ok() {
                for (item, is_key) in items {
                    let t = if is_key {
                        Target::ParamName
                    } else {
                        Target::Json
                    };
                    let d = depth + 1;
                    self.scan_nested(s, out, t, ctx, name, &item, overrides, mask, d);
                }
                return;
            }
        }
        s.hits.clear();
        let db = SignatureDb::builtin();
        if mask || target == Target::Cookie || name.is_some_and(is_credential_header) {
            db.scan(target, value, &mut s.hits);
        } else {
            db.scan_memoized(target, value, &mut s.hits);
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
        if target == Target::Header {
            // A signature about one header's grammar (`Accept`, `Range`) says nothing of others.
            let header = name.unwrap_or("");
            s.hits.retain(|id| {
                db.get(*id).is_none_or(|info| {
                    info.headers.is_empty() || info.headers.iter().any(|h| h == header)
                })
            });
        }
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

/// A JSON object or array by its first and last bytes (what is parsed to be sure).
fn is_document(value: &[u8]) -> bool {
    let v = value.trim_ascii();
    v.len() >= MIN_DOCUMENT
        && matches!(
            (v.first(), v.last()),
            (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
        )
}

/// Headers that carry credentials (not memoized: see `signatures::memo`).
fn is_credential_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("proxy-authorization")
}
