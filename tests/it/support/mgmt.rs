//! The admin API side of the tests: the real `portcullis serve` and `portcullis central`
//! binaries on a loopback port with a data directory of the test, a client that talks to them over
//! HTTPS, the error object, loopback HTTP upstreams, and a virtual server in front of one.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const PASS: &str = "Adm1n-pass-for-tests";

pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `portcullis serve` on any loopback admin port with `dir` as its data directory.
pub fn start(dir: &Path, config: Option<&Path>) -> Server {
    spawn("serve", dir, 0, config)
}

/// A `portcullis serve` configured by `config` (the JSON text of its `serve.json`) and an admin
/// client of it, in a temporary directory that must outlive the server (bind it first, so that it
/// drops last).
pub fn configured(config: &str) -> (tempfile::TempDir, Server, Api) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("serve.json");
    std::fs::write(&path, config).expect("write serve.json");
    let server = start(&dir.path().join("data"), Some(&path));
    let api = Api::new(&server);
    (dir, server, api)
}

/// Starts `portcullis <role>` with `--admin-listen 127.0.0.1:<port>` (0 = any; a given port
/// restarts a device in place).
pub fn spawn(role: &str, dir: &Path, port: u16, config: Option<&Path>) -> Server {
    launch(command(role, dir, port, config), role, dir)
}

/// The command line of [`spawn`], for a test that adds its own arguments before [`launch`].
pub fn command(role: &str, dir: &Path, port: u16, config: Option<&Path>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    cmd.arg(role)
        .arg("--admin-listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data-dir")
        .arg(dir);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    cmd
}

/// Runs `cmd` (a `portcullis <role>` with its data directory `dir`) with the admin password of
/// the tests and waits until it serves: its admin API listens and, for `central`, the central
/// manager says it is ready. Its stderr goes to [`log_file`].
pub fn launch(mut cmd: Command, role: &str, dir: &Path) -> Server {
    let mut child = cmd
        .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(log_file(dir))
        .spawn()
        .expect("spawn portcullis");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut base = None;
    loop {
        assert!(Instant::now() < deadline, "portcullis {role} did not start");
        let Some(line) = lines.next() else {
            panic!("portcullis {role} exited: {}", server_log(dir));
        };
        let line = line.expect("read line");
        if let Some(rest) = line.strip_prefix("portcullis: admin API listening on ") {
            base = Some(rest.trim_end_matches("/mgmt").to_string());
            if role != "central" {
                break;
            }
        }
        if line == "portcullis: central manager ready" {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        base: base.expect("listening line"),
    }
}

/// Where a spawned server's diagnostics go: a file in its data directory, so that test output
/// stays quiet and a failing test can still show them ([`server_log`]).
pub fn log_file(dir: &Path) -> Stdio {
    std::fs::create_dir_all(dir).expect("data dir");
    Stdio::from(std::fs::File::create(dir.join("stderr.log")).expect("log file"))
}

/// What a server started with [`log_file`] wrote to stderr so far.
pub fn server_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default()
}

pub fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

pub struct Api {
    pub c: Client,
    pub base: String,
    pub user: String,
    pub pass: String,
}

impl Api {
    pub fn new(s: &Server) -> Api {
        Api {
            c: client(),
            base: s.base.clone(),
            user: "admin".into(),
            pass: PASS.into(),
        }
    }
    pub fn as_user(&self, user: &str, pass: &str) -> Api {
        Api {
            c: self.c.clone(),
            base: self.base.clone(),
            user: user.into(),
            pass: pass.into(),
        }
    }
    pub async fn req(&self, m: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut r = self
            .c
            .request(m, format!("{}{path}", self.base))
            .basic_auth(&self.user, Some(&self.pass));
        if let Some(b) = body {
            r = r.json(&b);
        }
        let res = r.send().await.expect("request");
        let st = res.status();
        let text = res.text().await.expect("body");
        (
            st,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
    /// [`Api::req`] for a request that must succeed: asserts 200 and returns the body.
    pub async fn ok(&self, m: Method, path: &str, body: Option<Value>) -> Value {
        let (st, v) = self.req(m.clone(), path, body).await;
        assert_eq!(st, 200, "{m} {path}: {v}");
        v
    }
    /// [`Api::req`] for a request that must be refused: asserts `status` and that the error's
    /// message names `why`; returns the error.
    pub async fn refused(
        &self,
        m: Method,
        path: &str,
        body: Option<Value>,
        status: u16,
        why: &str,
    ) -> Value {
        let (st, e) = self.req(m.clone(), path, body).await;
        assert_eq!(st, status, "{m} {path}: {e}");
        let message = e["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{m} {path}: {e}");
        e
    }
    /// Creates the user `name` with `role` on all partitions; returns a client signed in as them.
    pub async fn add_user(&self, name: &str, password: &str, role: &str) -> Api {
        let access = json!([{"name": "all-partitions", "role": role}]);
        let user = json!({"name": name, "password": password, "partitionAccess": access});
        self.ok(Method::POST, "/mgmt/tm/auth/user", Some(user))
            .await;
        self.as_user(name, password)
    }
    pub async fn raw(&self, m: Method, path: &str, body: &'static str) -> (StatusCode, Value) {
        let res = self
            .c
            .request(m, format!("{}{path}", self.base))
            .basic_auth(&self.user, Some(&self.pass))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let st = res.status();
        (st, res.json().await.unwrap_or(Value::Null))
    }
}

pub fn assert_error(body: &Value, code: u16) {
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["kind"], ":resterrorresponse", "{body}");
    assert!(
        body["errorStack"].is_array()
            && body["restOperationId"].is_u64()
            && body["referer"].is_string(),
        "{body}"
    );
}

/// An HTTP answer of [`http_table`]: status, extra header lines (each ending in `\r\n`), body.
pub type Canned = (u16, String, Vec<u8>);

/// A tiny HTTP/1.1 server on loopback answering each request path from `table` (else `default`),
/// one request per connection.
pub async fn http_table(
    table: std::collections::HashMap<String, Canned>,
    default: Canned,
) -> std::net::SocketAddr {
    http_fn(move |path| table.get(path).unwrap_or(&default).clone()).await
}

/// A tiny HTTP/1.1 server on loopback answering each request with what `answer` returns for its
/// path, one request per connection.
pub async fn http_fn(
    answer: impl Fn(&str) -> Canned + Send + Sync + 'static,
) -> std::net::SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let answer = std::sync::Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&seen).to_string();
                let path = head.split(' ').nth(1).unwrap_or("/");
                let (status, extra, body) = answer(path);
                let resp = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.write_all(&body).await;
            });
        }
    });
    addr
}

/// A tiny HTTP/1.1 upstream answering every request with `hello from upstream`.
pub async fn upstream() -> std::net::SocketAddr {
    let hello = (200, String::new(), b"hello from upstream".to_vec());
    http_table(Default::default(), hello).await
}

pub async fn get(url: &str) -> Result<(u16, String), reqwest::Error> {
    let r = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()?
        .get(url)
        .send()
        .await?;
    let status = r.status().as_u16();
    Ok((status, r.text().await?))
}

/// A virtual server on a free port with a pool whose member is a loopback upstream.
pub async fn virtual_server(api: &Api) -> u16 {
    let member = upstream().await;
    let port = super::free_port();
    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "web", "members": [{"name": member.to_string()}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/virtual",
            Some(json!({"name": "vs", "destination": format!("127.0.0.1:{port}"), "pool": "/Common/web"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    port
}
