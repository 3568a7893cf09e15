//! AS3 request forms against the real `portcullis serve`: `/info`, `dry-run`, `?async=true`
//! with its task record, the Common/Shared application used by other tenants, `updateMode:
//! complete`, and a body that is not JSON.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::as3::{DECLARE, as3, body_of, http_app};
use crate::support::free_port;
use crate::support::mgmt::{Api, start};
use crate::support::upstream::{gone, http_server};

#[tokio::test]
async fn info_async_tasks_and_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let (s, info) = api
        .req(Method::GET, "/mgmt/shared/appsvcs/info", None)
        .await;
    assert_eq!(s, 200);
    let v: Vec<u32> = info["version"]
        .as_str()
        .unwrap()
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(v[0] == 3 && v[1] >= 18, "{info}");
    assert!(info["schemaMinimum"].is_string() && info["schemaCurrent"].is_string());

    let member = http_server("x".into()).await;
    let port = free_port();
    let mut decl = as3(json!({"T1": {"class": "Tenant", "A1": http_app(port, member)}}));
    decl["action"] = json!("dry-run");
    let (s, b) = api.req(Method::POST, DECLARE, Some(decl.clone())).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["results"][0]["dryRun"], true);
    let (_, got) = api.req(Method::GET, DECLARE, None).await;
    assert!(got.get("T1").is_none(), "a dry run deployed: {got}");

    decl["action"] = json!("deploy");
    let (s, b) = api
        .req(Method::POST, &format!("{DECLARE}?async=true"), Some(decl))
        .await;
    assert_eq!(s, 202, "{b}");
    let id = b["id"].as_str().unwrap().to_string();
    let mut task = Value::Null;
    for _ in 0..100 {
        let (s, t) = api
            .req(
                Method::GET,
                &format!("/mgmt/shared/appsvcs/task/{id}"),
                None,
            )
            .await;
        assert_eq!(s, 200, "{t}");
        task = t;
        if task["results"][0]["message"] != "in progress" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(task["results"][0]["message"], "success", "{task}");
    assert_eq!(task["results"][0]["tenant"], "T1");
    let (_, all) = api
        .req(Method::GET, "/mgmt/shared/appsvcs/task", None)
        .await;
    assert!(
        all["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == id.as_str())
    );
}

#[tokio::test]
async fn shared_objects_and_update_mode_complete() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), None);
    let api = Api::new(&server);
    let member = http_server("shared pool".into()).await;
    let (p1, p2) = (free_port(), free_port());
    let shared = json!({"class": "Tenant", "Shared": {"class": "Application", "template": "shared",
        "pool": {"class": "Pool", "monitors": [{"use": "health"}],
                 "members": [{"servicePort": member.port(), "serverAddresses": ["127.0.0.1"]}]},
        "health": {"class": "Monitor", "monitorType": "http", "send": "GET /health HTTP/1.0\r\n\r\n",
                   "receive": "shared pool", "interval": 1, "timeout": 3}}});
    let svc = |port: u16| {
        json!({"class": "Application",
        "svc": {"class": "Service_HTTP", "virtualAddresses": ["127.0.0.1"], "virtualPort": port,
                "pool": {"use": "/Common/Shared/pool"}}})
    };
    // Common is deployed first wherever it stands in the declaration.
    let decl = as3(
        json!({"T1": {"class": "Tenant", "A": svc(p1)}, "Common": shared, "T2": {"class": "Tenant", "A": svc(p2)}}),
    );
    let (s, b) = api.req(Method::POST, DECLARE, Some(decl)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["results"].as_array().unwrap().len(), 3, "{b}");
    let (_, vs) = api
        .req(Method::GET, "/mgmt/tm/ltm/virtual/~T2~A~svc", None)
        .await;
    assert_eq!(vs["pool"], "/Common/Shared/pool");
    // The declared monitor probes the member for real and finds it up.
    let mut state = Value::Null;
    for _ in 0..50 {
        let (_, m) = api
            .req(
                Method::GET,
                "/mgmt/tm/ltm/pool/~Common~Shared~pool/members",
                None,
            )
            .await;
        state = m["items"][0]["state"].clone();
        if state == "up" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(state, "up");
    assert_eq!(
        body_of(&format!("http://127.0.0.1:{p1}/")).await.1,
        "shared pool"
    );

    // `complete`: tenants the declaration does not name are removed.
    let mut only_t2 = as3(json!({"Common": shared, "T2": {"class": "Tenant", "A": svc(p2)}}));
    only_t2["declaration"]["updateMode"] = json!("complete");
    let (s, b) = api.req(Method::POST, DECLARE, Some(only_t2)).await;
    assert_eq!(s, 200, "{b}");
    let removed = b["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["tenant"] == "T1")
        .cloned();
    assert_eq!(
        removed.map(|r| r["message"].clone()),
        Some(json!("success")),
        "{b}"
    );
    assert!(gone(&format!("http://127.0.0.1:{p1}/")).await);
    assert_eq!(
        body_of(&format!("http://127.0.0.1:{p2}/")).await.1,
        "shared pool"
    );
    let (_, got) = api.req(Method::GET, DECLARE, None).await;
    assert!(
        got.get("T1").is_none() && got.get("T2").is_some() && got.get("Common").is_some(),
        "{got}"
    );

    // A body that is not JSON is a 422 as well.
    let (s, b) = api.raw(Method::POST, DECLARE, "{not json").await;
    assert_eq!(s, 422, "{b}");
    assert!(
        b["errors"][0].as_str().unwrap().starts_with("invalid JSON"),
        "{b}"
    );
}
