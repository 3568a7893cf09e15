//! The firewall-policy side of the tests: policies, chunked uploads, tasks polled to the end,
//! attaching and applying a policy, and data-plane probes.

use std::time::{Duration, Instant};

use base64::Engine as _;
use md5::{Digest as _, Md5};
use reqwest::Method;
use serde_json::{Value, json};

use super::mgmt::Api;

/// Allows GET /allowed only (`/open` too when `open`): other URLs are VIOL_URL, blocked.
pub fn policy(name: &str, open: bool) -> Value {
    let mut urls = vec![
        json!({"name": "*", "type": "wildcard", "method": "*", "$action": "delete"}),
        json!({"name": "/allowed", "method": "GET"}),
    ];
    if open {
        urls.push(json!({"name": "/open", "method": "GET"}));
    }
    json!({"policy": {
        "name": name,
        "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
        "enforcementMode": "blocking",
        "urls": urls,
        "blocking-settings": {"violations": [{"name": "VIOL_URL", "alarm": true, "block": true}]}
    }})
}

pub fn md5_id(full_path: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Md5::digest(full_path.as_bytes()))
}

pub async fn upload(api: &Api, name: &str, bytes: &[u8], chunk: usize) {
    let total = bytes.len();
    for (i, part) in bytes.chunks(chunk).enumerate() {
        let first = i * chunk;
        let res = api
            .c
            .post(format!(
                "{}/mgmt/tm/asm/file-transfer/uploads/{name}",
                api.base
            ))
            .basic_auth(&api.user, Some(&api.pass))
            .header("content-type", "application/octet-stream")
            .header(
                "content-range",
                format!("{first}-{}/{total}", first + part.len() - 1),
            )
            .body(part.to_vec())
            .send()
            .await
            .expect("upload");
        assert_eq!(res.status(), 200, "chunk {i}");
    }
}

/// POSTs a task (with `content_type`) and polls its selfLink until it finishes.
pub async fn run_task(api: &Api, path: &str, body: Value, content_type: &str) -> Value {
    let res = api
        .c
        .post(format!("{}{path}/", api.base))
        .basic_auth(&api.user, Some(&api.pass))
        .header("content-type", content_type)
        .body(body.to_string())
        .send()
        .await
        .expect("post task");
    assert_eq!(res.status(), 200);
    let task: Value = res.json().await.expect("task json");
    assert_eq!(task["status"], "NEW", "{task}");
    wait_task(api, &task).await
}

/// Polls the task `task` (as a POST answered it) through its selfLink until it finishes.
pub async fn wait_task(api: &Api, task: &Value) -> Value {
    let link = task["selfLink"].as_str().expect("selfLink");
    assert!(
        link.starts_with("https://localhost/mgmt/tm/asm/tasks/"),
        "{link}"
    );
    let path = link
        .trim_start_matches("https://localhost")
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (s, t) = api.req(Method::GET, &format!("{path}/"), None).await;
        assert_eq!(s, 200, "{t}");
        if t["status"] == "COMPLETED" || t["status"] == "FAILURE" {
            return t;
        }
        assert!(Instant::now() < deadline, "task never finished: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The result message of a task that ended with `status` (`COMPLETED`, `FAILURE`).
pub fn message_of<'a>(t: &'a Value, status: &str) -> &'a str {
    assert_eq!(t["status"], status, "{t}");
    t["result"]["message"].as_str().expect("a result message")
}

pub async fn import(api: &Api, body: Value) -> Value {
    run_task(
        api,
        "/mgmt/tm/asm/tasks/import-policy",
        body,
        "application/json",
    )
    .await
}

/// The link of the policy a finished import task created (the task must have completed).
pub fn policy_link(t: &Value) -> String {
    assert_eq!(t["status"], "COMPLETED", "{t}");
    t["result"]["policyReference"]["link"]
        .as_str()
        .expect("policyReference")
        .to_string()
}

/// Attaches the policy `id` to the virtual server `/Common/vs` (not applied yet).
pub async fn attach(api: &Api, id: &str) {
    let (s, b) = api
        .req(
            Method::PATCH,
            &format!("/mgmt/tm/asm/policies/{id}"),
            Some(json!({"virtualServers": ["/Common/vs"]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
}

pub async fn apply(api: &Api, link: &str) -> Value {
    let t = run_task(
        api,
        "/mgmt/tm/asm/tasks/apply-policy",
        json!({"policyReference": {"link": link}}),
        "application/json",
    )
    .await;
    assert_eq!(t["status"], "COMPLETED", "{t}");
    t
}

/// One request to the data plane: status, content type and body.
pub async fn hit(port: u16, path: &str) -> Option<(u16, String, String)> {
    let r = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?
        .get(format!("http://127.0.0.1:{port}{path}"))
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    Some((status, ct, r.text().await.ok()?))
}

/// Waits until the listener answers, then returns the status of `path`.
pub async fn status(port: u16, path: &str) -> u16 {
    for _ in 0..100 {
        if let Some((s, _, _)) = hit(port, path).await {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the virtual server on port {port} never answered");
}

pub fn assert_blocked(r: &(u16, String, String)) {
    assert_eq!(r.0, 403, "{r:?}");
    assert_eq!(r.1, "application/json; charset=utf-8");
    let v: Value = serde_json::from_str(&r.2).expect("403 body is JSON");
    let id = v["supportID"].as_str().expect("supportID");
    assert!(
        id.len() >= 19 && id.bytes().all(|b| b.is_ascii_digit()),
        "{id}"
    );
}

/// Imports the policy document `doc` as `full_path`, attaches it to `/Common/vs` and applies it;
/// returns the policy's id.
pub async fn protect(api: &Api, full_path: &str, doc: &Value) -> String {
    let t = import(
        api,
        json!({"file": doc.to_string(), "policy": {"fullPath": full_path}}),
    )
    .await;
    let link = policy_link(&t);
    let id = link
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    attach(api, &id).await;
    apply(api, &link).await;
    id
}
