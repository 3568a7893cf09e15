//! `portcullis demo`: the embedded default, one connected system with no arguments,
//! configuration or network. A controller (the `/mgmt` admin API over HTTPS, state in a
//! temporary directory removed on exit) drives the data plane: the demo API (built in, on
//! loopback) is the member of `/Common/demo_pool`, the proxy is the virtual server
//! `/Common/demo_vs`, and the demo policy of `policies/demo/` (embedded in the binary) is the ASM
//! policy `/Common/demo_api_policy` attached to it. A blocked request's support id finds its
//! event at `/mgmt/tm/asm/events/requests/<id>` and in the web console at `/ui/`. The banner
//! prints curl commands for all of it.

pub(crate) mod grpc;
pub(crate) mod upstream;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;

use crate::admin::Role;
use crate::admin::User;
use crate::admin::call_as;
use crate::admin::{MgmtConfig, MgmtState};
use crate::mgmt::asm::put_policy_linked;
use crate::mgmt::asm::{apply_policy, attach_policy};
use crate::mgmt::{AdminServer, ServeArgs, ServeError, shutdown_signal};
use crate::proxy::Dataplane;
use crate::proxy::{DataplaneShared, DataplaneSharedError};
use crate::support::links::DOWNLOADS;
use crate::waf::MemResolver;
use crate::waf::policy::PolicyError;
use crate::waf::{CompiledPolicy, policy};

pub use grpc::server::{handle as handle_grpc, serve_listener as serve_grpc};
pub use grpc::{DemoGrpc, GrpcStatus};
pub use upstream::start as start_upstream;

/// The demo policy, as shipped in `policies/demo/policy.json`.
pub const POLICY_JSON: &str = include_str!("../../policies/demo/policy.json");
/// The OpenAPI spec of the demo API the policy links to.
pub const OPENAPI_YAML: &str = include_str!("../../policies/demo/demo-api.yaml");
/// The IDL of the demo gRPC service (the policy's gRPC profile links to it).
pub const DEMO_PROTO: &str = include_str!("../../policies/demo/demo.proto");
/// The base link the embedded policy is loaded with.
pub const POLICY_LINK: &str = "file:///portcullis/policies/demo/policy.json";

/// The virtual server, pool and ASM policy the demo creates on its controller.
pub const VIRTUAL: &str = "/Common/demo_vs";
pub const POOL: &str = "/Common/demo_pool";
pub const POLICY: &str = "/Common/demo_api_policy";

/// What `portcullis demo` takes: where to listen, and where events go.
#[derive(clap::Args, Clone, Debug)]
pub struct DemoOptions {
    /// Address of the WAF proxy (the demo virtual server).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Address of the HTTPS admin API (the /mgmt REST API of the demo controller).
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub admin_listen: SocketAddr,
    /// Append security events (JSON lines) to this file instead of writing them to stdout.
    #[arg(long)]
    pub event_log: Option<PathBuf>,
}

/// The embedded files, keyed by every way the policy may spell the link.
pub fn resolver() -> MemResolver {
    let mut r = MemResolver::default();
    for link in [
        "file://demo-api.yaml",
        "demo-api.yaml",
        "file:///portcullis/policies/demo/demo-api.yaml",
    ] {
        r.0.insert(link.to_string(), OPENAPI_YAML.as_bytes().to_vec());
    }
    for link in [
        "file://demo.proto",
        "demo.proto",
        "file:///portcullis/policies/demo/demo.proto",
    ] {
        r.0.insert(link.to_string(), DEMO_PROTO.as_bytes().to_vec());
    }
    r
}

/// Why the demo cannot start; `Display` is what `portcullis demo` prints before it exits.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// The address of the WAF proxy is taken, or its listener did not start.
    #[error("WAF proxy {addr}: {reason}")]
    Proxy { addr: SocketAddr, reason: String },
    #[error("demo upstream: {0}")]
    Upstream(#[source] std::io::Error),
    #[error(transparent)]
    Shared(#[from] DataplaneSharedError),
    #[error(transparent)]
    Admin(#[from] ServeError),
    #[error("event consumers: {0}")]
    Events(#[source] std::io::Error),
    #[error("demo policy: {0}")]
    Policy(#[from] PolicyError),
    #[error("demo policy: {0}")]
    PolicyJson(#[from] serde_json::Error),
    /// Creating the demo objects through the admin API failed (its message).
    #[error("{0}")]
    Configure(String),
    #[error("the demo virtual server {VIRTUAL} did not start")]
    NotStarted,
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

/// Compiles the embedded demo policy.
pub fn load_policy() -> Result<CompiledPolicy, DemoError> {
    let loaded = policy::load(POLICY_JSON.as_bytes(), POLICY_LINK, &resolver())?;
    for w in &loaded.warnings {
        tracing::warn!("demo policy: {w}");
    }
    Ok(loaded.policy)
}

/// A running demo. [`Demo::shutdown`] stops it and removes its temporary directory (dropping
/// it removes the directory too).
pub struct Demo {
    pub upstream: SocketAddr,
    /// The WAF proxy: the bound address of the demo virtual server.
    pub proxy: SocketAddr,
    /// The admin API.
    pub admin: SocketAddr,
    /// The password of the controller's `admin` user (generated at each start).
    pub password: String,
    pub state: Arc<MgmtState>,
    pub dataplane: Arc<Dataplane>,
    stop: tokio::sync::watch::Sender<bool>,
    admin_task: tokio::task::JoinHandle<()>,
    /// Held for its removal on drop.
    _data_dir: tempfile::TempDir,
}

impl Demo {
    /// Stops the admin API and the data plane; the temporary directory goes with `self`.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.admin_task.await;
        self.dataplane.shutdown().await;
    }
}

/// Starts the demo: the controller over a fresh temporary directory, its admin API, the demo
/// upstream, and the demo objects (policy, pool, virtual server) created through it. Fails,
/// leaving nothing behind, when an address is taken or the policy does not compile.
pub async fn start(opts: &DemoOptions) -> Result<Demo, DemoError> {
    let data_dir = tempfile::Builder::new()
        .prefix("portcullis-demo-")
        .tempdir()
        .map_err(DemoError::TempDir)?;
    if opts.listen.port() != 0 {
        // The controller would report a taken address only in the virtual server's status;
        // say it plainly, once, before anything starts.
        std::net::TcpListener::bind(opts.listen).map_err(|e| DemoError::Proxy {
            addr: opts.listen,
            reason: e.to_string(),
        })?;
    }
    let upstream = upstream::start(([127, 0, 0, 1], 0).into())
        .await
        .map_err(DemoError::Upstream)?;
    let shared = DataplaneShared::with_defaults(opts.event_log.as_deref())?;
    let dataplane = Arc::new(Dataplane::new(shared.clone()));
    let password = crate::admin::random_password();
    let args = ServeArgs {
        admin_listen: opts.admin_listen,
        dns_listen: None,
        tls_cert: None,
        tls_key: None,
        mgmt: MgmtConfig {
            data_dir: data_dir.path().to_path_buf(),
            ..MgmtConfig::default()
        },
    };
    let server = AdminServer::start(&args, dataplane.clone(), Some(password.clone())).await?;
    let state = server.state.clone();
    crate::mgmt::events::install(&state, &shared.events).map_err(DemoError::Events)?;
    let (st, listen) = (state.clone(), opts.listen);
    tokio::task::spawn_blocking(move || configure(&st, listen, upstream)).await??;
    let proxy = dataplane.local_addr(VIRTUAL).ok_or(DemoError::NotStarted)?;
    let admin = server.local;
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let admin_task = crate::support::task::spawn(server.serve(axum::Router::new(), async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    Ok(Demo {
        upstream,
        proxy,
        admin,
        password,
        state,
        dataplane,
        stop,
        admin_task,
        _data_dir: data_dir,
    })
}

/// Creates the demo objects as an administrator would: the policy and its files uploaded to
/// the downloads directory, imported and applied; the pool; the virtual server with the policy.
fn configure(st: &MgmtState, listen: SocketAddr, upstream: SocketAddr) -> Result<(), DemoError> {
    let downloads = st.downloads_dir();
    for (name, text) in [
        ("demo-policy.json", POLICY_JSON),
        ("demo-api.yaml", OPENAPI_YAML),
        ("demo.proto", DEMO_PROTO),
    ] {
        crate::mgmt::write_durably(&downloads.join(name), text.as_bytes())
            .map_err(|e| DemoError::Configure(e.message))?;
    }
    let doc: serde_json::Value = serde_json::from_str(POLICY_JSON)?;
    let base = format!("file://{DOWNLOADS}demo-policy.json");
    put_policy_linked(st, POLICY, &doc, &base).map_err(|e| DemoError::Configure(e.message))?;
    apply_policy(st, POLICY).map_err(|e| DemoError::Configure(e.message))?;
    let admin = User {
        name: "admin".into(),
        role: Role::Admin,
    };
    let member = format!("{}:{}", upstream.ip(), upstream.port());
    let post = |path: &str, body: serde_json::Value| {
        call_as(st, &admin, http::Method::POST, path, &body)
            .map_err(|e| DemoError::Configure(e.message))
    };
    post(
        "/mgmt/tm/ltm/pool",
        json!({"name": POOL, "description": "the demo API",
               "members": [{"name": member, "address": upstream.ip().to_string()}]}),
    )?;
    post(
        "/mgmt/tm/ltm/virtual",
        json!({"name": VIRTUAL, "description": "the demo WAF proxy", "destination": listen.to_string(),
               "pool": POOL, "profiles": [{"name": "/Common/tcp"}, {"name": "/Common/http"}]}),
    )?;
    attach_policy(st, POLICY, &[VIRTUAL.to_string()])
        .map_err(|e| DemoError::Configure(e.message))?;
    match crate::mgmt::PlaneState::of(st)
        .listener_errors
        .read()
        .get(VIRTUAL)
    {
        Some(e) => Err(DemoError::Proxy {
            addr: listen,
            reason: e.to_string(),
        }),
        None => Ok(()),
    }
}

/// What the demo prints once it runs: every command a new user can paste, the admin API's
/// included (`tests/it/cli/demo_walkthrough.rs` runs each of them).
pub fn banner(d: &Demo) -> String {
    let p = d.proxy;
    let a = d.admin;
    let creds = format!("admin:{}", d.password);
    format!(
        "Portcullis demo\n\
         \x20 demo API (upstream)   http://{up}  (GET /api/users, GET /api/users/{{id}}, POST /api/orders)\n\
         \x20 WAF proxy             http://{p}  virtual server {VIRTUAL}, policy {POLICY} (API security, blocking)\n\
         \x20 admin API             https://{a}/mgmt  user admin, password {pw}  (self-signed certificate)\n\
         \x20 web console           https://{a}/ui/  (log in as admin: overview, request log, suggestions, policies)\n\
         \x20 security events       stdout, one JSON line each (logs: stderr); stored at /mgmt/tm/asm/events/requests\n\n\
         A request the policy allows:\n\
         \x20 curl -i http://{p}/api/users/1\n\
         A request it blocks (the URL is not in the API spec) -> 403 {{\"supportID\":\"...\"}}:\n\
         \x20 curl -i http://{p}/api/admin\n\
         A body that breaks the spec's schema:\n\
         \x20 curl -i -X POST http://{p}/api/orders -H 'content-type: application/json' -d '{{\"userId\":\"x\"}}'\n\n\
         The admin API: the virtual server, then the event of a blocked request, found by its support ID:\n\
         \x20 curl -sk -u '{creds}' https://{a}/mgmt/tm/ltm/virtual/~Common~demo_vs\n\
         \x20 id=$(curl -s http://{p}/api/admin | grep -oE '[0-9]+')\n\
         \x20 curl -sk -u '{creds}' https://{a}/mgmt/tm/asm/events/requests/$id\n\
         The same in the web console: Events, search the support ID, open the request to see why it\n\
         was blocked, \"Accept this request\" and Apply; the request then passes.\n\n\
         gRPC (demo.proto: demo.v1.Greeter, demo.v1.Inventory), inspected message by message:\n\
         \x20 grpcurl -plaintext -proto policies/demo/demo.proto -d '{{\"name\":\"ada\"}}' {p} demo.v1.Greeter/SayHello\n\
         Without grpcurl: an unknown method is blocked with grpc-status 3 (trailers-only reply):\n\
         \x20 curl -si --http2-prior-knowledge -X POST http://{p}/demo.v1.Greeter/Nope -H 'content-type: application/grpc' --data-binary ''\n\n\
         Ctrl-C stops the demo (its state, in a temporary directory, goes with it).\n",
        up = d.upstream,
        pw = d.password,
    )
}

/// Runs `portcullis demo` until Ctrl-C or SIGTERM.
pub fn run(opts: DemoOptions) -> ExitCode {
    let rt = match crate::proxy::worker_runtime(None) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("portcullis demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async {
        let demo = match start(&opts).await {
            Ok(d) => d,
            Err(e) => {
                eprintln!("portcullis demo: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("{}", banner(&demo));
        shutdown_signal().await;
        demo.shutdown().await;
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_policy_loads() {
        let p = load_policy().expect("demo policy");
        assert_eq!(p.name(), "demo_api_policy");
    }

    #[test]
    fn the_resolver_serves_the_spec_the_policy_links() {
        use crate::waf::Resolver;
        let v: serde_json::Value = serde_json::from_str(POLICY_JSON).expect("json");
        let link = v["policy"]["open-api-files"][0]["link"]
            .as_str()
            .expect("link");
        let spec = resolver().fetch(POLICY_LINK, link).expect("spec");
        assert!(String::from_utf8_lossy(&spec).contains("/api/orders"));
    }
}
