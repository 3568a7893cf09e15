//! Shared pieces of the proxy integration tests: a real upstream on loopback that records what
//! reaches it, the real `portcullis proxy` binary started on a free port, and raw/hyper clients.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, Request, Response};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub type Body = BoxBody<Bytes, Infallible>;

/// 1 MiB of deterministic, non-repeating-looking bytes.
pub fn mib() -> Vec<u8> {
    (0..(1u32 << 20))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed()
}

/// A test upstream: answers on HTTP/1.1 and h2c, counts every request that reaches it.
pub struct Upstream {
    pub addr: SocketAddr,
    pub hits: Arc<AtomicUsize>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let addr = super::upstream::serve_fn(move |req| {
            h.fetch_add(1, Ordering::SeqCst);
            async move { answer(req).await.unwrap_or_else(|never| match never {}) }
        })
        .await;
        Upstream { addr, hits }
    }

    /// The same upstream behind TLS (HTTP/1.1) with a fresh self-signed certificate for
    /// `localhost`, and that certificate in a file for `--upstream-ca` (in the returned
    /// directory, removed when it drops).
    pub async fn start_tls() -> (Upstream, tempfile::TempDir, std::path::PathBuf) {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("rcgen");
        let (cert_pem, key_pem) = (ck.cert.pem(), ck.signing_key.serialize_pem());
        let dir = tempfile::tempdir().expect("tmp");
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, &cert_pem).expect("ca");
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let addr = super::tls::tls_listener(&cert_pem, &key_pem, &[], move |tls| {
            let h = h.clone();
            async move {
                let svc = hyper::service::service_fn(move |req| {
                    h.fetch_add(1, Ordering::SeqCst);
                    answer(req)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            }
        })
        .await;
        (Upstream { addr, hits }, dir, ca)
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn answer(req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let seen = |name: &str| -> String {
        parts
            .headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap_or("?").to_string())
            .collect::<Vec<_>>()
            .join("|")
    };
    let mut res = Response::builder()
        .header("x-seen-host", seen("host"))
        .header("x-seen-xff", seen("x-forwarded-for"))
        .header("x-seen-te", seen("te"))
        .header("x-seen-names", {
            let mut names: Vec<&str> = parts.headers.keys().map(|k| k.as_str()).collect();
            names.sort();
            names.join(",")
        })
        .header("x-seen-version", format!("{:?}", parts.version))
        .header("x-seen-target", parts.uri.to_string())
        .header("keep-alive", "timeout=5");
    let path = parts.uri.path().to_string();
    let out = match path.as_str() {
        "/big" => full(mib()),
        "/slow" => {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            full("slow")
        }
        "/trailers" => {
            let collected = body
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            let mut t = HeaderMap::new();
            t.insert("grpc-status", "0".parse().expect("hv"));
            t.insert("x-trailer", "yes".parse().expect("hv"));
            res = res
                .header("content-type", "application/grpc")
                .header("trailer", "grpc-status, x-trailer");
            TrailerBody {
                data: Some(collected),
                trailers: Some(t),
            }
            .boxed()
        }
        _ => {
            let collected = body
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            full(collected)
        }
    };
    Ok(res.body(out).expect("response"))
}

/// A body of one data frame then trailers.
pub struct TrailerBody {
    pub data: Option<Bytes>,
    pub trailers: Option<HeaderMap>,
}

impl http_body::Body for TrailerBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(d) = this.data.take() {
            return std::task::Poll::Ready(Some(Ok(Frame::data(d))));
        }
        std::task::Poll::Ready(this.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }
}

/// A policy the scaffold and the real engine both load and that passes ordinary traffic.
pub const PASS_POLICY: &str = r#"{"policy":{"name":"pass_all","template":{"name":"POLICY_TEMPLATE_NGINX_BASE"},"enforcementMode":"transparent"}}"#;

/// The generic blocking policy of the detection evaluation (`shared/corpus/eval-policy.json`):
/// rapid deployment, blocking, signatures out of staging, a generic web stack.
pub const GENERIC_POLICY: &str = r#"{"policy": {
  "name": "eval_generic",
  "template": {"name": "POLICY_TEMPLATE_RAPID_DEPLOYMENT"},
  "enforcementMode": "blocking",
  "signature-settings": {"signatureStaging": false},
  "server-technologies": [
    {"serverTechnologyName": "Unix/Linux"}, {"serverTechnologyName": "Microsoft Windows"},
    {"serverTechnologyName": "Apache/NCSA HTTP Server"}, {"serverTechnologyName": "Nginx"},
    {"serverTechnologyName": "PHP"}, {"serverTechnologyName": "Java Servlets/JSP"},
    {"serverTechnologyName": "Node.js"}, {"serverTechnologyName": "MySQL"},
    {"serverTechnologyName": "MongoDB"}, {"serverTechnologyName": "XML"}
  ]
}}"#;

/// The real `portcullis proxy` process.
pub struct Proxy {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: tempfile::TempDir,
}

impl Proxy {
    /// Starts the binary with `--listen`, `--upstream` for each of `upstreams`, the policy
    /// `policy` written to a temp dir, plus `extra` arguments; waits until it accepts.
    pub fn start(upstreams: &[String], policy: &str, extra: &[&str]) -> Proxy {
        let dir = tempfile::tempdir().expect("tmp");
        let policy_path = dir.path().join("policy.json");
        std::fs::write(&policy_path, policy).expect("policy");
        Self::start_in(dir, &policy_path, upstreams, extra, None)
    }

    /// [`Proxy::start`] with the policy file at `policy_path` (its links resolved beside it).
    pub fn start_with_file(
        upstreams: &[String],
        policy_path: &std::path::Path,
        extra: &[&str],
    ) -> Proxy {
        let dir = tempfile::tempdir().expect("tmp");
        Self::start_in(dir, policy_path, upstreams, extra, None)
    }

    /// [`Proxy::start`] for a process allowed at most `nofile` open file descriptors.
    pub fn start_with_nofile(
        upstreams: &[String],
        policy: &str,
        extra: &[&str],
        nofile: u32,
    ) -> Proxy {
        let dir = tempfile::tempdir().expect("tmp");
        let policy_path = dir.path().join("policy.json");
        std::fs::write(&policy_path, policy).expect("policy");
        Self::start_in(dir, &policy_path, upstreams, extra, Some(nofile))
    }

    fn start_in(
        dir: tempfile::TempDir,
        policy_path: &std::path::Path,
        upstreams: &[String],
        extra: &[&str],
        nofile: Option<u32>,
    ) -> Proxy {
        let addr = super::free_addr();
        let bin = env!("CARGO_BIN_EXE_portcullis");
        let mut cmd = match nofile {
            // util-linux's prlimit sets the limit for the program it runs.
            Some(n) => {
                let mut c = Command::new("prlimit");
                c.arg(format!("--nofile={n}:{n}")).arg("--").arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.arg("proxy")
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--policy")
            .arg(policy_path)
            .arg("--event-log")
            .arg(dir.path().join("events.log"));
        for u in upstreams {
            cmd.arg("--upstream").arg(u);
        }
        cmd.args(extra).stdout(Stdio::null()).stderr(Stdio::from(
            std::fs::File::create(dir.path().join("stderr.log")).expect("log"),
        ));
        let child = cmd.spawn().expect("spawn portcullis");
        let mut p = Proxy { child, addr, dir };
        p.wait_ready();
        p
    }

    /// Waits for the listener. A debug build compiling its policy beside a full parallel test run
    /// can take well over ten seconds on a loaded machine, so the bound is generous; a proxy that
    /// exits fails the test at once, with its stderr.
    fn wait_ready(&mut self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(90) {
            if std::net::TcpStream::connect(self.addr).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "proxy exited ({status}) before listening: {}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("proxy did not start: {}", self.stderr());
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }

    pub fn events(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("events.log")).unwrap_or_default()
    }

    /// The event log once it contains `needle` (events are written off the request path, so a test
    /// waits for them), or as it is after 5 s.
    pub fn events_containing(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let events = self.events();
            if events.contains(needle) || Instant::now() >= deadline {
                return events;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The event of the request with support id `id`, waited for as [`Proxy::events_containing`]
    /// does; panics with the log when there is none.
    pub fn event_of(&self, id: &str) -> serde_json::Value {
        let events = self.events_containing(id);
        let line = events
            .lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("no event for {id}: {events}"));
        serde_json::from_str(line).expect("an event is a JSON line")
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill")
            .success();
        assert!(ok, "kill -{sig} failed");
    }

    pub fn policy_path(&self) -> std::path::PathBuf {
        self.dir.path().join("policy.json")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `portcullis proxy` serving HTTPS with a fresh self-signed certificate for `localhost`.
pub struct TlsProxy {
    pub proxy: Proxy,
    roots: rustls::RootCertStore,
    _certs: tempfile::TempDir,
}

impl TlsProxy {
    /// [`Proxy::start`] with `--tls-cert` and `--tls-key` (and `extra`).
    pub fn start(upstreams: &[String], policy: &str, extra: &[&str]) -> TlsProxy {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("rcgen");
        let dir = tempfile::tempdir().expect("tmp");
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert, ck.cert.pem()).expect("cert");
        std::fs::write(&key, ck.signing_key.serialize_pem()).expect("key");
        let mut args = vec![
            "--tls-cert",
            cert.to_str().expect("path"),
            "--tls-key",
            key.to_str().expect("path"),
        ];
        args.extend_from_slice(extra);
        let proxy = Proxy::start(upstreams, policy, &args);
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ck.cert.der().clone()).expect("root");
        TlsProxy {
            proxy,
            roots,
            _certs: dir,
        }
    }

    /// A TLS connection to the proxy offering the ALPN protocols `alpn` (none: no ALPN).
    pub async fn connect(
        &self,
        alpn: &[&[u8]],
    ) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        let mut cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_root_certificates(self.roots.clone())
        .with_no_client_auth();
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let tcp = tokio::net::TcpStream::connect(self.proxy.addr)
            .await
            .expect("tcp");
        tokio_rustls::TlsConnector::from(Arc::new(cfg))
            .connect("localhost".try_into().expect("name"), tcp)
            .await
            .expect("tls")
    }
}

/// Sends raw bytes on a fresh connection and returns everything read until the peer closes
/// (or `wait` passes).
/// The support id a block page or a refusal shows (`Your support ID is: N`), if it shows one.
pub fn support_id(page: &str) -> Option<String> {
    page.split("Your support ID is: ")
        .nth(1)
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect())
}

pub async fn raw(addr: SocketAddr, bytes: &[u8], wait: Duration) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    s.write_all(bytes).await.expect("write");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(wait, s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// An HTTP/1.1 client (pooled, keep-alive).
pub fn h1_client() -> hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
> {
    hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build_http()
}

/// An h2c (HTTP/2 prior knowledge) client.
pub fn h2c_client() -> hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
> {
    hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

/// Collects a response into status, headers and body bytes.
pub async fn collect(res: Response<Incoming>) -> (u16, HeaderMap, Bytes, Option<HeaderMap>) {
    let (parts, body) = res.into_parts();
    let c = body.collect().await.expect("body");
    let trailers = c.trailers().cloned();
    (parts.status.as_u16(), parts.headers, c.to_bytes(), trailers)
}

/// The value of header `name` (any case) in a raw HTTP/1.1 head, trimmed.
pub fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}
