//! The one outcome type of the engine: what to do with a request, why, and how to answer if blocked.

use serde::Serialize;

use super::violation::Violation;
use portcullis_support::SupportId;

/// What the engine decided for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// No violation: forward.
    Pass,
    /// Violations were found but none blocks (or the policy is transparent): forward and log.
    Alarm,
    /// Answer with the block response; nothing more goes upstream.
    Block,
}

/// Which block response a blocked request gets (rendered by [`super::response`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockReply {
    /// The default HTML "Request Rejected" page, HTTP 200 (what clients of the real system expect).
    DefaultPage,
    /// The API-security JSON response: 403 `{"supportID":"<id>"}`, no-cache, closing.
    ApiJson,
    /// gRPC trailers-only response: HTTP 200, `grpc-status`, `grpc-message`.
    Grpc { status: u32, message: String },
    /// A custom page from the policy's `response-pages`; `<%TS.request.ID()%>` is replaced by the id.
    Custom {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// A redirect (`responseActionType: redirect`); the URL may contain the support-id placeholder.
    Redirect { location: String },
}

/// The verdict for one request, produced once the deciding phase has run.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub action: Action,
    pub support_id: SupportId,
    /// Violation rating 1–5 (0 when there is no violation); see `docs/detection.md`.
    pub rating: u8,
    pub violations: Vec<Violation>,
    /// The response to send when `action` is `Block`.
    pub reply: BlockReply,
}

impl Verdict {
    pub fn pass() -> Self {
        Self::pass_with(SupportId::random())
    }

    /// A pass verdict for a request whose support id is already drawn.
    pub fn pass_with(support_id: SupportId) -> Self {
        Verdict {
            action: Action::Pass,
            support_id,
            rating: 0,
            violations: Vec::new(),
            reply: BlockReply::DefaultPage,
        }
    }

    pub fn is_block(&self) -> bool {
        self.action == Action::Block
    }
}
