//! Shared helpers of the `mgmt_*` integration tests: spawn the real `portcullis serve` binary
//! on a loopback port with a temporary data directory, and talk to it over HTTPS.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

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

pub fn start(dir: &std::path::Path, config: Option<&std::path::Path>) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    cmd.arg("serve")
        .arg("--admin-listen")
        .arg("127.0.0.1:0")
        .arg("--data-dir")
        .arg(dir);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    let mut child = cmd
        .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn portcullis");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let base = loop {
        assert!(Instant::now() < deadline, "server did not start");
        let line = lines.next().expect("server exited").expect("read line");
        if let Some(rest) = line.strip_prefix("portcullis: admin API listening on ") {
            break rest.trim_end_matches("/mgmt").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server { child, base }
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
