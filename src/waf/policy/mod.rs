//! The compiled policy (SCAFFOLD: replaced by the WAF-engine work of issue 3).
//!
//! This file fixes the interface the transaction needs from a compiled policy; the real policy
//! layers (declaration → model → compiled) live beside it once built.

use std::net::IpAddr;

use super::transaction::Step;
use super::verdict::{Action, Reply, Verdict};
use super::violation::Violation;
use crate::support::SupportId;

/// Per-request scratch space owned by the transaction (body buffers, parser state, counters).
#[derive(Default)]
pub struct Scratch {}

/// An immutable, shareable, compiled policy.
pub struct CompiledPolicy {
    name: String,
    blocking: bool,
    reply: Reply,
}

impl CompiledPolicy {
    /// A policy that allows everything (what a listener without a policy runs).
    pub fn allow_all(name: &str) -> Self {
        CompiledPolicy {
            name: name.to_string(),
            blocking: false,
            reply: Reply::DefaultPage,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The client address after the policy's XFF trust settings.
    pub fn client_address(&self, _head: &http::request::Parts, peer: IpAddr) -> IpAddr {
        peer
    }

    /// Checks the request line and headers; returns true when the body must be inspected.
    pub fn check_headers(
        &self,
        _head: &http::request::Parts,
        _s: &mut Scratch,
        _out: &mut Vec<Violation>,
    ) -> bool {
        false
    }

    pub fn check_body_chunk(
        &self,
        _chunk: &[u8],
        _s: &mut Scratch,
        _out: &mut Vec<Violation>,
    ) -> Step {
        Step::PassRest
    }

    pub fn check_body_end(&self, _s: &mut Scratch, _out: &mut Vec<Violation>) {}

    pub fn check_response_headers(
        &self,
        _status: u16,
        _h: &http::HeaderMap,
        _out: &mut Vec<Violation>,
    ) {
    }

    /// Rates the violations found so far and decides.
    pub fn decide(&self, support_id: SupportId, violations: &[Violation], _s: &Scratch) -> Verdict {
        let action = if self.blocking {
            Action::Block
        } else {
            Action::Alarm
        };
        Verdict {
            action,
            support_id,
            rating: 3,
            violations: violations.to_vec(),
            reply: self.reply.clone(),
        }
    }
}

/// A policy document compiled, with the warnings for accepted-but-unenforced sections.
pub struct Loaded {
    pub policy: CompiledPolicy,
    pub warnings: Vec<String>,
}

/// Why a policy document cannot be used; the message names the JSON path and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);

/// Parses, validates and compiles a declarative policy document. `base` is the document's own link
/// (e.g. `file:///etc/policies/p.json`), against which relative links inside it are resolved through
/// `resolver`.
pub fn load(
    doc: &[u8],
    _base: &str,
    _resolver: &dyn super::Resolver,
) -> Result<Loaded, PolicyError> {
    let v: serde_json::Value = serde_json::from_slice(doc)
        .map_err(|e| PolicyError(format!("line {} column {}: {e}", e.line(), e.column())))?;
    let name = v
        .pointer("/policy/name")
        .and_then(|n| n.as_str())
        .unwrap_or("policy");
    Ok(Loaded {
        policy: CompiledPolicy::allow_all(name),
        warnings: Vec::new(),
    })
}
