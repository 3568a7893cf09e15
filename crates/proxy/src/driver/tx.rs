//! Where a request's transaction lives while the driver runs: in the driver itself, or shared with
//! the task that pumps a body to hyper's HTTP/2 client (which feeds the body phase). The logging
//! phase takes it from either.

use http::StatusCode;

use super::super::body::SharedTx;
use super::super::handler::{log_phase, log_transaction};
use super::Env;
use super::inspect::Inspector;
use std::sync::Arc;

use portcullis_engine::{BlockResponse, CompiledPolicy, ConnInfo, Step, Transaction};

/// The transaction of the request being driven.
// Inline, not boxed: it lives for the whole request, and a box would cost an allocation each.
#[allow(clippy::large_enum_variant)]
pub enum Tx {
    /// Not started (refused before the policy saw the request).
    None,
    Own(Transaction),
    Shared(SharedTx),
}

impl Tx {
    /// Starts the request's transaction where it lives for the rest of the request: made in a
    /// local and moved in, all of its bytes would be copied once more on every request.
    pub fn start(&mut self, policy: Arc<CompiledPolicy>, conn: ConnInfo) -> &mut Transaction {
        *self = Tx::Own(Transaction::new(policy, conn));
        match self {
            Tx::Own(t) => t,
            Tx::None | Tx::Shared(_) => unreachable!("set above"),
        }
    }

    /// Runs `f` on the transaction, if there still is one.
    pub fn with<R>(&mut self, f: impl FnOnce(&mut Transaction) -> R) -> Option<R> {
        match self {
            Tx::None => None,
            Tx::Own(t) => Some(f(t)),
            Tx::Shared(s) => s.lock().as_mut().map(f),
        }
    }

    /// The block response of the transaction.
    pub fn block_response(&mut self) -> Option<BlockResponse> {
        self.with(|t| t.block_response())
    }

    /// Shares the transaction (with a body pump), once.
    pub fn share(&mut self) -> SharedTx {
        let shared = match std::mem::replace(self, Tx::None) {
            Tx::Shared(s) => s,
            Tx::Own(t) => std::sync::Arc::new(parking_lot::Mutex::new(Some(t))),
            Tx::None => std::sync::Arc::new(parking_lot::Mutex::new(None)),
        };
        *self = Tx::Shared(shared.clone());
        shared
    }

    /// The logging phase; `fields`: the request's header fields (see `Transaction::finish`).
    pub fn log(&mut self, env: &Env<'_>, status: StatusCode, fields: &portcullis_engine::Fields) {
        match self {
            Tx::None => {}
            Tx::Own(t) => log_transaction(t, env.site, env.shared, status, fields),
            Tx::Shared(s) => log_phase(s, env.site, env.shared, status, fields),
        }
    }
}

impl Inspector for Tx {
    fn body(&mut self, chunk: &[u8]) -> Step {
        self.with(|t| t.on_request_body(chunk))
            .unwrap_or(Step::PassRest)
    }

    fn end(&mut self) -> Step {
        self.with(|t| t.on_request_end()).unwrap_or(Step::Forward)
    }

    fn overflow(&mut self, limit: u64) -> Step {
        self.with(|t| t.on_request_overflow(limit))
            .unwrap_or(Step::Forward)
    }
}
