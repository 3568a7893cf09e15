//! The management plane's shared state and configuration, and the per-request context handlers see.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;
use serde::Deserialize;
use serde_json::Value;

use super::auth::{AuthCache, User};
use super::dispatch::Route;
use super::error::{MgmtError, MgmtResult};
use super::kinds::KindSpec;
use super::query::Query;
use super::reply::Reply;
use portcullis_store::{Store, Table};

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
    /// Failed logins one source address may make per `login_source_window` before its
    /// attempts are refused until the window ends.
    pub login_source_attempts: u32,
    /// The window of `login_source_attempts`, in seconds.
    pub login_source_window: u64,
    /// Failed logins per second across all sources (bursts of ten seconds' worth); past it,
    /// attempts are refused for a moment. Known credentials and tokens still work. 0: none.
    pub login_global_rate: u32,
    /// Request events kept in the store (`/mgmt/tm/asm/events/requests`); the oldest beyond
    /// this are pruned. 0: no count bound.
    pub events_max_count: usize,
    /// Request events older than this many seconds are pruned. 0: no age bound.
    pub events_max_age: u64,
    /// Queue length (events) of each event consumer (store writer, remote-log router, each
    /// syslog server or file); a full queue drops and counts.
    pub events_queue: usize,
    /// Limits and destination rules of server-side pulls (`fileReference.link`, policy links).
    pub fetch: portcullis_support::fetch::FetchConfig,
    /// Finished ASM tasks kept per task type (oldest dropped first).
    pub asm_tasks_kept: usize,
    /// Seconds for the TLS handshake, and for an HTTP/1.1 request head.
    pub header_read_timeout: u64,
    /// Seconds a connection may stay open with no request in flight.
    pub idle_timeout: u64,
    /// Longest silence while a request body arrives, in seconds; also the grace before
    /// `min_body_rate` applies.
    pub body_read_timeout: u64,
    /// Slowest average rate of a request body after the grace, in bytes per second (0: none).
    pub min_body_rate: u64,
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
            login_source_attempts: 10,
            login_source_window: 60,
            login_global_rate: 20,
            events_max_count: 10_000,
            events_max_age: 7 * 24 * 3600,
            events_queue: 8192,
            fetch: Default::default(),
            asm_tasks_kept: 100,
            header_read_timeout: 10,
            idle_timeout: 60,
            body_read_timeout: 10,
            min_body_rate: 1024,
        }
    }
}

impl MgmtConfig {
    /// The bounds of a request body of at most `max_bytes` on the admin port.
    pub fn body_limits(&self, max_bytes: u64) -> portcullis_support::body::BodyLimits {
        portcullis_support::body::BodyLimits {
            max_bytes,
            read_timeout: std::time::Duration::from_secs(self.body_read_timeout),
            min_rate: self.min_body_rate,
        }
    }
}

/// Everything a handler may touch; shared behind an `Arc`.
pub struct MgmtState {
    pub store: Arc<Store>,
    pub cfg: MgmtConfig,
    pub auth: AuthCache,
    /// Routes and kinds registered by other modules (ASM policies and tasks, AS3, central tasks).
    pub extensions: RwLock<Extensions>,
    /// The surface the state was opened with.
    pub builtins: Builtins,
    /// The `Arc` this state lives in, for work that outlives a request (asynchronous tasks).
    pub this: std::sync::Weak<MgmtState>,
}

/// The surface a state is opened with (the controller's objects): its fixed routes, matched
/// after the routes of [`Extensions`], its kinds, its login, and the queue of requests sent with
/// a coordination id (transactions).
pub struct Builtins {
    pub routes: &'static [Route],
    pub kinds: &'static [&'static KindSpec],
    /// Answers `POST /mgmt/shared/authn/login`: the state, the headers, the body, the peer.
    pub login: fn(&MgmtState, &http::HeaderMap, &[u8], &str) -> MgmtResult<Reply>,
    /// Queues a write sent with `X-F5-REST-Coordination-Id`: the context, the id, the raw
    /// query and the body.
    pub coordinated: fn(&Ctx<'_>, &str, Option<&str>, &[u8]) -> MgmtResult<Reply>,
    /// Rebuilds the data plane from the stored objects, after a write that touches it.
    pub reapply: fn(&MgmtState),
}

/// What other modules add to the `/mgmt` surface; see [`MgmtState::extend`].
#[derive(Clone, Default)]
pub struct Extensions {
    /// Fixed routes, matched before the built-in ones.
    pub routes: Vec<&'static Route>,
    /// Object kinds served by the generic engine.
    pub kinds: Vec<&'static KindSpec>,
    /// State other modules attach, one value per type (e.g. the controller's data plane, the
    /// central manager's task runner); see [`MgmtState::attach`].
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

    /// Brings the data plane in line with the store (the surface's [`Builtins::reapply`]).
    pub fn reapply(&self) {
        (self.builtins.reapply)(self)
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

impl Ctx<'_> {
    /// For endpoints that only read: 405 for any method but GET.
    pub fn only_get(&self) -> MgmtResult<()> {
        if self.method == http::Method::GET {
            Ok(())
        } else {
            Err(MgmtError::method_not_allowed(
                self.method.as_str(),
                &self.path,
            ))
        }
    }
}
