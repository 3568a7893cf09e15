//! `portcullis demo`: the embedded default. No arguments, no configuration, no network: a
//! built-in demo JSON API on loopback, the data plane on 127.0.0.1:8080 protected by the demo
//! policy of `policies/demo/` (embedded in the binary), and curl commands that show a pass and a
//! block. Later parts (the gRPC demo service, the admin API) plug into [`Demo`].
//!
//! Imports: `proxy`, `waf`.

pub mod grpc;
pub mod upstream;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use crate::proxy::Dataplane;
use crate::proxy::handler::Shared;
use crate::proxy::topology::{ListenerSpec, Topology, UpstreamSpec};
use crate::waf::resolver::MemResolver;
use crate::waf::{CompiledPolicy, Engine, policy};

/// The demo policy, as shipped in `policies/demo/policy.json`.
pub const POLICY_JSON: &str = include_str!("../../policies/demo/policy.json");
/// The OpenAPI spec of the demo API the policy links to.
pub const OPENAPI_YAML: &str = include_str!("../../policies/demo/demo-api.yaml");
/// The IDL of the demo gRPC service (the policy's gRPC profile links to it).
pub const DEMO_PROTO: &str = include_str!("../../policies/demo/demo.proto");
/// The base link the embedded policy is loaded with.
pub const POLICY_LINK: &str = "file:///portcullis/policies/demo/policy.json";

/// The data plane address of the demo.
pub const LISTEN: &str = "127.0.0.1:8080";

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

/// Compiles the embedded demo policy.
pub fn load_policy() -> Result<CompiledPolicy, String> {
    let loaded = policy::load(POLICY_JSON.as_bytes(), POLICY_LINK, &resolver())
        .map_err(|e| format!("demo policy: {e}"))?;
    for w in &loaded.warnings {
        tracing::warn!("demo policy: {w}");
    }
    Ok(loaded.policy)
}

/// A running demo.
pub struct Demo {
    pub upstream: SocketAddr,
    pub proxy: SocketAddr,
    pub engine: Arc<Engine>,
    pub dataplane: Dataplane,
}

/// Starts the demo upstream and the data plane on `listen`.
pub async fn start(listen: SocketAddr) -> Result<Demo, String> {
    let engine = Arc::new(Engine::new(load_policy()?));
    let upstream = upstream::start(([127, 0, 0, 1], 0).into())
        .await
        .map_err(|e| format!("demo upstream: {e}"))?;
    let shared = Shared::with_defaults(None)?;
    let dataplane = Dataplane::new(shared);
    let spec = ListenerSpec {
        name: "demo".into(),
        bind: listen,
        tls: None,
        upstreams: vec![UpstreamSpec {
            url: format!("http://{upstream}"),
            healthy: true,
        }],
        engine: engine.clone(),
        x_forwarded_for: true,
        redirect_to_https: false,
        access: None,
    };
    if let Some(e) = dataplane
        .apply(vec![spec])
        .into_iter()
        .find_map(|s| s.error)
    {
        return Err(e);
    }
    let proxy = dataplane.local_addr("demo").unwrap_or(listen);
    Ok(Demo {
        upstream,
        proxy,
        engine,
        dataplane,
    })
}

/// What the demo prints once it runs.
pub fn banner(d: &Demo) -> String {
    let p = d.proxy;
    format!(
        "Portcullis demo\n\
         \x20 demo API (upstream)   http://{up}  (GET /api/users, GET /api/users/{{id}}, POST /api/orders)\n\
         \x20 WAF proxy             http://{p}  policy: demo_api_policy (API security, blocking)\n\
         \x20 security events       stderr, one JSON line each\n\n\
         A request the policy allows:\n\
         \x20 curl -i http://{p}/api/users/1\n\
         A request it blocks (the URL is not in the API spec) -> 403 {{\"supportID\":\"...\"}}:\n\
         \x20 curl -i http://{p}/api/admin\n\
         A body that breaks the spec's schema:\n\
         \x20 curl -i -X POST http://{p}/api/orders -H 'content-type: application/json' -d '{{\"userId\":\"x\"}}'\n\n\
         gRPC (demo.proto: demo.v1.Greeter, demo.v1.Inventory), inspected message by message:\n\
         \x20 grpcurl -plaintext -proto policies/demo/demo.proto -d '{{\"name\":\"ada\"}}' {p} demo.v1.Greeter/SayHello\n\
         Without grpcurl: an unknown method is blocked with grpc-status 3 (trailers-only reply):\n\
         \x20 curl -si --http2-prior-knowledge -X POST http://{p}/demo.v1.Greeter/Nope -H 'content-type: application/grpc' --data-binary ''\n\n\
         Ctrl-C stops the demo.\n",
        up = d.upstream,
    )
}

/// Runs `portcullis demo` until Ctrl-C or SIGTERM.
pub fn run() -> ExitCode {
    let rt = match crate::proxy::run::runtime(None) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("portcullis demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async {
        let listen: SocketAddr = LISTEN
            .parse()
            .unwrap_or_else(|_| ([127, 0, 0, 1], 8080).into());
        let demo = match start(listen).await {
            Ok(d) => d,
            Err(e) => {
                eprintln!("portcullis demo: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!("{}", banner(&demo));
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("portcullis demo: {e}");
                    return ExitCode::FAILURE;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        demo.dataplane.shutdown().await;
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
