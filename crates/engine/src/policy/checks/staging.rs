//! Entity staging (`performStaging`, `docs/policy.md`): a URL, parameter, cookie or file
//! type entity with `performStaging: true` is being tried out. The violations its own checks raise
//! are recorded and logged (`Violation::staged`, `"staged": true` in the event) but never block and
//! never raise the violation rating (`rating`); a request whose only violations are staged is
//! alarmed, not blocked. The policy-level `performStaging: false` switches staging off for every
//! entity ("all entities are enforced"). Signature staging is separate (`signature-settings`,
//! `signature_selection`).
//!
//! What belongs to an entity:
//! - URL: what the URL check raises for the matched URL (illegal/disallowed URL, method overrides,
//!   URL meta-characters, URL signatures);
//! - file type: disallowed file type, URL / query string / request length;
//! - parameter: everything its check raises (repeated, location, name and value meta-characters,
//!   empty, static values, length, data type, numeric range, regex, base64, signatures in its
//!   name and value, and for `valueType` json/xml the value's JSON/XML violations);
//! - cookie: the signatures found in its value.
//!
//! The checks mark what they appended since a mark (`out[mark..]`), so the per-request cost of a
//! policy without staged entities is one flag test per entity check, no allocation.

use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::policy::decl;
use crate::violation::Violation;

/// Whether an entity whose `performStaging` is `entity` is in staging under policy `d`.
pub(in crate::policy) fn staged(d: &decl::Policy, entity: decl::lenient::Lenient<bool>) -> bool {
    entity.or(false) && d.perform_staging.or(true)
}

/// Marks every violation appended since `mark` as staged (the checks append; nothing before
/// `mark` is touched, so a request-level finding such as an evasion keeps blocking).
pub(in crate::policy) fn mark_staged(out: &mut [Violation], mark: usize) {
    for v in out.iter_mut().skip(mark) {
        v.staged = true;
    }
}

impl CompiledPolicy {
    /// After the URL check: its violations are staged when the matched URL is.
    pub(in crate::policy) fn stage_url(&self, s: &Scratch, out: &mut [Violation], mark: usize) {
        if s.url
            .and_then(|i| self.urls.get(i))
            .is_some_and(|u| u.staged)
        {
            mark_staged(out, mark);
        }
    }

    /// After the file-type check: its violations are staged when the matched file type is.
    pub(in crate::policy) fn stage_filetype(
        &self,
        s: &Scratch,
        out: &mut [Violation],
        mark: usize,
    ) {
        if s.filetype
            .and_then(|i| self.filetypes.get(i))
            .is_some_and(|f| f.staged)
        {
            mark_staged(out, mark);
        }
    }
}
