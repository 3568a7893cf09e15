//! The data plane a controller drives, as the controller keeps it: the topology, the engine of
//! each virtual server, what the last apply and the monitors saw. It lives beside the admin
//! state, attached by [`crate::open`] (`MgmtState::attach`), so the admin-server core knows
//! neither the proxy nor the engine.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use portcullis_admin::MgmtState;
use portcullis_engine::Engine;
use portcullis_proxy::Topology;

/// The controller's side of the data plane; one per state, found with [`PlaneState::of`].
pub struct PlaneState {
    pub topology: Arc<dyn Topology>,
    /// Listener errors by virtual fullPath, from the last apply.
    pub listener_errors: RwLock<HashMap<String, String>>,
    /// One engine per virtual server, kept across applies so a policy swap stays in place.
    pub engines: Mutex<HashMap<String, Arc<Engine>>>,
    /// Serialises applies so the data plane always converges on the newest configuration.
    pub apply_lock: Mutex<()>,
    /// Member health as the monitors see it, by member key (absent = up).
    pub member_down: RwLock<HashMap<String, String>>,
    /// Members whose monitors passed in the last round.
    pub member_up: RwLock<HashSet<String>>,
}

impl PlaneState {
    pub(crate) fn new(topology: Arc<dyn Topology>) -> Self {
        PlaneState {
            topology,
            listener_errors: Default::default(),
            engines: Default::default(),
            apply_lock: Default::default(),
            member_down: Default::default(),
            member_up: Default::default(),
        }
    }

    /// The data plane of a state opened by [`crate::open`].
    ///
    /// Every controller route runs on such a state: `open` attaches the data plane before the
    /// state is shared, and only `open` registers the controller's surface, so its absence is a
    /// bug in the composition rather than a condition a request can cause.
    pub fn of(st: &MgmtState) -> Arc<PlaneState> {
        st.attached::<PlaneState>()
            .expect("a controller's state has its data plane, attached by `open`")
    }
}
