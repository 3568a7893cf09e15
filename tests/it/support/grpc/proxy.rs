//! Runs the real `portcullis proxy` binary in front of an upstream with a policy that protects the
//! demo gRPC API, and stops it when dropped.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::free_addr;

/// `maximumDataLength` of the test policy (bytes per message).
pub const MAX_MESSAGE: usize = 1024;

/// The declarative policy: blocking, only the gRPC URLs of demo.proto allowed (the `*` URL of the
/// template deleted), unknown fields refused, messages capped at [`MAX_MESSAGE`] bytes.
pub fn policy(idl_link: &str) -> serde_json::Value {
    serde_json::json!({
        "policy": {
            "name": "grpc_demo",
            "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
            "applicationLanguage": "utf-8",
            "enforcementMode": "blocking",
            "grpc-profiles": [{
                "name": "demo_profile",
                "associateUrls": true,
                "defenseAttributes": {"allowUnknownFields": false, "maximumDataLength": MAX_MESSAGE},
                "attackSignaturesCheck": true,
                "metacharElementCheck": true,
                "idlFiles": [{"idlFile": {"$ref": idl_link}, "isPrimary": true}]
            }],
            "urls": [{"name": "*", "type": "wildcard", "method": "*", "$action": "delete"}],
            "blocking-settings": {"violations": [
                {"name": "VIOL_GRPC_MALFORMED", "alarm": true, "block": true},
                {"name": "VIOL_GRPC_FORMAT", "alarm": true, "block": true},
                {"name": "VIOL_GRPC_METHOD", "alarm": true, "block": true},
                {"name": "VIOL_URL", "alarm": true, "block": true},
                {"name": "VIOL_METHOD", "alarm": true, "block": true},
                {"name": "VIOL_ATTACK_SIGNATURE", "alarm": true, "block": true}
            ]}
        }
    })
}

/// The proxy process; killed on drop.
pub struct Proxy {
    child: Child,
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proxy {
    /// Writes the policy and demo.proto into a temporary directory and starts
    /// `portcullis proxy --listen <addr> --upstream http://<upstream> --policy <dir>/policy.json`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        Self::start_url(&format!("http://{upstream}"), &[]).await
    }

    /// [`Proxy::start`] with any upstream URL (`https://`, `h2c://`) and extra arguments.
    pub async fn start_url(upstream: &str, extra: &[&str]) -> Proxy {
        Self::start_with_policy(upstream, extra, policy).await
    }

    /// [`Proxy::start_url`] with the policy `make(idl_link)` instead of [`policy`].
    pub async fn start_with_policy(
        upstream: &str,
        extra: &[&str],
        make: impl FnOnce(&str) -> serde_json::Value,
    ) -> Proxy {
        let dir = tempfile::tempdir().expect("tempdir");
        let proto = dir.path().join("demo.proto");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/demo/demo.proto"),
            &proto,
        )
        .expect("copy demo.proto");
        let link = format!("file://{}", proto.display());
        let policy_path = dir.path().join("policy.json");
        std::fs::write(
            &policy_path,
            serde_json::to_vec_pretty(&make(&link)).expect("json"),
        )
        .expect("policy");
        let addr = free_addr();
        let child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .arg("proxy")
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--upstream")
            .arg(upstream)
            .arg("--policy")
            .arg(&policy_path)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("stderr.log")).expect("log"),
            ))
            .spawn()
            .expect("spawn portcullis proxy");
        let mut proxy = Proxy {
            child,
            addr,
            _dir: dir,
        };
        // As generous as the HTTP proxy's wait (a debug build compiling its policy beside a full
        // parallel run can take well over ten seconds); a proxy that exits fails at once.
        let deadline = Instant::now() + Duration::from_secs(90);
        let stderr = |p: &Proxy| {
            std::fs::read_to_string(p._dir.path().join("stderr.log")).unwrap_or_default()
        };
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            if let Ok(Some(status)) = proxy.child.try_wait() {
                panic!(
                    "portcullis proxy exited ({status}) before listening: {}",
                    stderr(&proxy)
                );
            }
            assert!(
                Instant::now() < deadline,
                "portcullis proxy did not listen on {addr} within 90 s: {}",
                stderr(&proxy)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        proxy
    }
}

/// True when `text` carries a support id (a decimal number of 15+ digits).
pub fn has_support_id(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_digit())
        .any(|run| run.len() >= 15)
}
