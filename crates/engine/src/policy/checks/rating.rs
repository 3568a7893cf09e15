//! Violation rating and the blocking decision (the table is in `docs/policy.md`).
//!
//! Rating of one violation: enforced attack signature of high accuracy 5, medium 4, low 3;
//! malformed bodies, threat campaigns and oversize requests 5; evasions, HTTP-protocol and
//! encoding 3; every other violation 2. The request's rating is the highest, plus one (at most 4)
//! when three or more distinct violation kinds were found. A request is blocked iff the policy is
//! blocking and a violation (or signature) set to block was found, or the rating is ≥ 4 and
//! VIOL_RATING_THREAT blocks, or the rating is 3 and VIOL_RATING_NEED_EXAMINATION blocks.
//! Violations of an entity in staging (`Violation::staged`, see `staging`) are reported but
//! neither rated nor blocking.

use crate::policy::compile::compiled::{CompiledPolicy, Scratch};
use crate::signatures::Level;
use crate::verdict::{Action, BlockReply, Verdict};
use crate::violation::{Context, Violation, ViolationKind as K};
use portcullis_support::SupportId;

impl CompiledPolicy {
    /// Rating 1–5 of one violation (0 for staged signatures and for violations of entities in
    /// staging, which never count).
    pub fn rate(&self, v: &Violation) -> u8 {
        if v.staged {
            return 0;
        }
        match v.kind {
            K::AttackSignature => v
                .signature_ids
                .iter()
                .filter_map(|id| self.sigs.get(id))
                .filter(|a| !a.staged)
                .map(|a| match a.accuracy {
                    Level::High => 5,
                    Level::Medium => 4,
                    Level::Low => 3,
                })
                .max()
                .unwrap_or(0),
            K::JsonMalformed
            | K::XmlMalformed
            | K::GrpcMalformed
            | K::CookieMalformed
            | K::GraphqlMalformed
            | K::ThreatCampaign
            | K::RequestMaxLength
            | K::MultipartMalformed => 5,
            K::Evasion | K::HttpProtocol | K::Encoding => 3,
            _ => 2,
        }
    }

    /// True when this violation alone asks to block.
    fn blocks(&self, v: &Violation) -> bool {
        if v.staged {
            return false;
        }
        if v.kind == K::AttackSignature {
            return v
                .signature_ids
                .iter()
                .filter_map(|id| self.sigs.get(id))
                .any(|a| a.block && !a.staged);
        }
        self.settings[v.kind as usize].block
    }

    /// The page a request the proxy refuses before judging it is answered with (its status is
    /// the refusal's): the policy's blocking page, so a client of the site sees one page for
    /// every request stopped, or the default page when the policy redirects blocked requests (a
    /// redirect under an error status is not followed).
    pub(crate) fn refusal_page(&self) -> crate::verdict::BlockReply {
        match &self.reply {
            crate::verdict::BlockReply::Redirect { .. } => crate::verdict::BlockReply::DefaultPage,
            page => page.clone(),
        }
    }

    fn reply_for(&self, s: &Scratch) -> crate::verdict::BlockReply {
        if s.grpc {
            return self.grpc_reply.clone();
        }
        if s.grpc_content && self.reply == crate::verdict::BlockReply::ApiJson {
            // A gRPC call to a service the policy does not know is an illegal URL: it gets the
            // HTML page, not the API-security template's JSON (`docs/grpc.md`). A custom page the
            // policy sets is kept.
            return crate::verdict::BlockReply::DefaultPage;
        }
        match (&self.ajax_reply, s.ajax) {
            (Some(r), true) => r.clone(),
            _ => self.reply.clone(),
        }
    }

    /// Rates the violations found so far and decides. The decision holds only what it adds to
    /// `violations` (the rating violations that apply): a transaction decides after each phase,
    /// and copying every violation found into each decision would cost a copy of each string.
    pub(crate) fn decide(&self, violations: &[Violation], s: &Scratch) -> Decision {
        let Judgement {
            rating,
            block,
            derived,
        } = self.judge(violations);
        let found = !violations.is_empty() || !derived.is_empty();
        let action = if !found {
            Action::Pass
        } else if block && self.blocking {
            Action::Block
        } else {
            Action::Alarm
        };
        Decision {
            action,
            rating: rating.max(u8::from(found)),
            derived,
            reply: self.reply_for(s),
        }
    }

    /// The rating of `violations` and whether they block in blocking mode, whatever the policy's
    /// enforcement mode (what a transparent policy would do once switched to blocking), with the
    /// rating violations that apply.
    pub fn judge(&self, violations: &[Violation]) -> Judgement {
        let mut rating = violations.iter().map(|v| self.rate(v)).max().unwrap_or(0);
        let mut kinds: Vec<K> = violations
            .iter()
            .filter(|v| !v.staged)
            .map(|v| v.kind)
            .collect();
        kinds.sort();
        kinds.dedup();
        if kinds.len() >= 3 && rating < 4 {
            rating += 1;
        }
        let mut derived = Vec::new();
        let threat = self.settings[K::RatingThreat as usize];
        let exam = self.settings[K::RatingNeedExamination as usize];
        let mut block = violations.iter().any(|v| self.blocks(v));
        if rating >= 4 && (threat.alarm || threat.block) {
            derived.push(
                Violation::new(K::RatingThreat, Context::Request).detail(match rating {
                    // Every blocked attack has one: its text without the formatter.
                    4 => "violation rating 4".to_string(),
                    5 => "violation rating 5".to_string(),
                    _ => format!("violation rating {rating}"),
                }),
            );
            block |= threat.block;
        }
        if rating == 3 && (exam.alarm || exam.block) {
            derived.push(
                Violation::new(K::RatingNeedExamination, Context::Request)
                    .detail("violation rating 3"),
            );
            block |= exam.block;
        }
        Judgement {
            rating,
            block,
            derived,
        }
    }

    /// The violations of `violations` that block on their own in blocking mode.
    pub fn blocking<'a>(&self, violations: &'a [Violation]) -> impl Iterator<Item = &'a Violation> {
        violations.iter().filter(|v| self.blocks(v))
    }
}

/// What [`CompiledPolicy::decide`] decided about the violations it was given.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decision {
    pub action: Action,
    /// Violation rating 1–5 (0 when there is no violation).
    pub rating: u8,
    /// The rating violations that apply, which follow the given ones in the verdict.
    pub derived: Vec<Violation>,
    /// The response to send when `action` is `Block`.
    pub reply: BlockReply,
}

impl Decision {
    pub fn is_block(&self) -> bool {
        self.action == Action::Block
    }

    /// The verdict on `violations`, the ones this decision was made on (or more: a later phase's
    /// are kept in order), followed by the rating violations it added.
    pub fn into_verdict(self, support_id: SupportId, mut violations: Vec<Violation>) -> Verdict {
        violations.extend(self.derived);
        Verdict {
            action: self.action,
            support_id,
            rating: self.rating,
            violations,
            reply: self.reply,
        }
    }
}

/// What [`CompiledPolicy::judge`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Violation rating 1–5 (0: none).
    pub rating: u8,
    /// Whether the request is blocked in blocking mode.
    pub block: bool,
    /// VIOL_RATING_THREAT / VIOL_RATING_NEED_EXAMINATION, when they apply.
    pub derived: Vec<Violation>,
}
