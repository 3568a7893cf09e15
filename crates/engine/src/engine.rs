//! The engine handle shared by a listener: one immutable compiled policy, swapped atomically.

use std::sync::Arc;

use arc_swap::ArcSwap;

use super::policy::CompiledPolicy;

/// Holds the active policy. Requests take one snapshot and keep it to the end; `apply` publishes a
/// new policy for the requests that start after it, so a swap never fails a request in flight.
pub struct Engine {
    active: ArcSwap<CompiledPolicy>,
}

impl Engine {
    pub fn new(policy: CompiledPolicy) -> Self {
        Engine {
            active: ArcSwap::from_pointee(policy),
        }
    }

    /// An engine starting with a policy that may be shared with other engines.
    pub fn from_shared(policy: Arc<CompiledPolicy>) -> Self {
        Engine {
            active: ArcSwap::new(policy),
        }
    }

    /// Publishes `policy` with one atomic swap.
    pub fn apply(&self, policy: CompiledPolicy) {
        self.active.store(Arc::new(policy));
    }

    /// Publishes a policy shared with other engines (one compiled policy on several listeners).
    pub fn apply_shared(&self, policy: Arc<CompiledPolicy>) {
        self.active.store(policy);
    }

    /// The policy to use for one request, from its start to its end.
    pub fn snapshot(&self) -> Arc<CompiledPolicy> {
        self.active.load_full()
    }
}
