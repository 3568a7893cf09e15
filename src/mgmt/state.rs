//! The management plane's shared state and configuration, and the per-request context handlers see.
//! Imports: `store`, `proxy::topology` (the narrow apply interface), `waf::Engine`, `mgmt::*`.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use serde::Deserialize;
use serde_json::Value;

use super::auth::{AuthCache, User};
use super::dispatch::Route;
use super::kinds::KindSpec;
use super::query::Query;
use crate::proxy::topology::Topology;
use crate::store::{Store, Table};
use crate::waf::Engine;

/// Tunables of the management plane (the `mgmt` section of the config file; every field has a
/// documented default, see docs/mgmt.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MgmtConfig {
    /// The data directory (store, certificate, downloads, file store).
    pub data_dir: PathBuf,
    /// Software version reported in `selfLink` `?ver=` and `sys/version`.
    pub version: String,
    /// Product name reported by `device-info` and `sys/version`.
    pub product: String,
    /// Allow `POST /mgmt/tm/util/bash` for administrators (off by default).
    pub util_bash: bool,
    /// Largest file accepted by the upload endpoints, in bytes.
    pub max_upload_bytes: u64,
    /// Largest JSON request body, in bytes.
    pub max_json_bytes: usize,
    /// Default token lifetime in seconds (tokens may be PATCHed up to 36000).
    pub token_timeout: u64,
    /// Failed logins in a row that lock a user out.
    pub lockout_attempts: u32,
    /// How long a locked-out user stays locked, in seconds.
    pub lockout_seconds: u64,
}

impl Default for MgmtConfig {
    fn default() -> Self {
        MgmtConfig {
            data_dir: PathBuf::from("./portcullis-data"),
            version: "15.1.10".into(),
            product: "BIG-IP".into(),
            util_bash: false,
            max_upload_bytes: 256 * 1024 * 1024,
            max_json_bytes: 16 * 1024 * 1024,
            token_timeout: 1200,
            lockout_attempts: 5,
            lockout_seconds: 300,
        }
    }
}

/// Everything a handler may touch; shared behind an `Arc`.
pub struct MgmtState {
    pub store: Arc<Store>,
    pub cfg: MgmtConfig,
    pub topology: Arc<dyn Topology>,
    pub auth: AuthCache,
    /// Listener errors by virtual fullPath, from the last apply.
    pub listener_errors: RwLock<HashMap<String, String>>,
    /// One engine per virtual server, kept across applies so a policy swap stays in place.
    pub engines: Mutex<HashMap<String, Arc<Engine>>>,
    /// Serialises applies so the data plane always converges on the newest configuration.
    pub apply_lock: Mutex<()>,
    /// Member health as the monitors see it, by member key (absent = up).
    pub member_down: RwLock<HashMap<String, String>>,
    /// Members whose monitors passed in the last round.
    pub member_up: RwLock<std::collections::HashSet<String>>,
    /// Routes and kinds registered by other modules (ASM policies and tasks, AS3, central tasks).
    pub extensions: RwLock<Extensions>,
}

/// What other modules add to the `/mgmt` surface; see [`MgmtState::extend`].
#[derive(Clone, Default)]
pub struct Extensions {
    /// Fixed routes, matched before the built-in ones.
    pub routes: Vec<&'static Route>,
    /// Object kinds served by the generic engine.
    pub kinds: Vec<&'static KindSpec>,
    /// State other modules attach, one value per type (e.g. the central manager's task runner);
    /// see [`MgmtState::attach`].
    pub data: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl MgmtState {
    /// Adds routes and kinds (e.g. `/mgmt/tm/asm/...`, `/mgmt/shared/appsvcs/...`, `/mgmt/cm/...`);
    /// they get the same authentication, role check, error objects and engine.
    pub fn extend(&self, routes: &'static [Route], kinds: &'static [&'static KindSpec]) {
        let mut e = self.extensions.write();
        e.routes.extend(routes.iter());
        e.kinds.extend(kinds.iter().copied());
    }

    /// Attaches a value other modules' handlers find again with [`MgmtState::attached`].
    pub fn attach<T: Any + Send + Sync>(&self, value: Arc<T>) {
        self.extensions
            .write()
            .data
            .insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T` attached earlier, if any.
    pub fn attached<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let v = self.extensions.read().data.get(&TypeId::of::<T>())?.clone();
        v.downcast::<T>().ok()
    }

    /// `https://localhost<path>?ver=<version>`.
    pub fn link(&self, path: &str) -> String {
        format!("https://localhost{path}?ver={}", self.cfg.version)
    }

    pub fn downloads_dir(&self) -> PathBuf {
        self.cfg.data_dir.join("downloads")
    }

    pub fn filestore_dir(&self) -> PathBuf {
        self.cfg.data_dir.join("filestore")
    }

    /// A value of the node's own metadata.
    pub fn meta(&self, key: &str) -> Option<Value> {
        self.store.get(Table::Meta, key).ok().flatten()
    }
}

/// One authenticated request as handlers see it.
pub struct Ctx<'a> {
    pub st: &'a MgmtState,
    pub user: User,
    pub method: http::Method,
    /// The path without a trailing slash.
    pub path: String,
    pub query: Query,
    pub headers: &'a http::HeaderMap,
    pub peer: String,
    /// The token used to authenticate, if any.
    pub token: Option<String>,
}
