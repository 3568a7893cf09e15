//! The firewall-policy lifecycle on the real `portcullis serve` binary, over real sockets:
//! chunked upload → import task → attach to a virtual server → apply → traffic blocked with the
//! 403 JSON; re-import without apply keeps the running policy; apply switches; a restart keeps
//! the applied policy. Import from a loopback HTTP server (form 3, with a linked OpenAPI file),
//! the failure cases (rule 1, bad JSON, a policy that does not compile), and the pull limits
//! (metadata address, redirect to it, `file:` outside the data directory, oversize).

use std::collections::HashMap;

use base64::Engine as _;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::asm::*;
use crate::support::mgmt::{Api, configured, http_table, start, virtual_server};

#[tokio::test]
async fn upload_import_attach_apply_blocks_and_changes_wait_for_apply() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path(), None);
    let api = Api::new(&server);
    let port = virtual_server(&api).await;
    assert_eq!(
        status(port, "/other").await,
        200,
        "no policy: all traffic passes"
    );

    // Upload in chunks, import (form 1), check the import task's fields.
    let v1 = serde_json::to_vec_pretty(&policy("p1", false)).unwrap();
    upload(&api, "p1.json", &v1, 100).await;
    let t = import(
        &api,
        json!({"filename": "p1.json", "policy": {"fullPath": "/Common/p1"}}),
    )
    .await;
    assert_eq!(t["status"], "COMPLETED", "{t}");
    assert_eq!(
        t["kind"],
        "tm:asm:tasks:import-policy:import-policy-taskstate"
    );
    assert_eq!(t["filename"], "p1.json");
    assert_eq!(t["isBase64"], false);
    assert_eq!(t["getPolicyAttributesOnly"], false);
    assert_eq!(t["retainInheritanceSettings"], false);
    assert!(t["lastUpdateMicros"].is_f64(), "{t}");
    for k in ["startTime", "executionStartTime", "endTime"] {
        assert!(t[k].as_str().is_some_and(|s| s.ends_with('Z')), "{k}: {t}");
    }
    let id = md5_id("/Common/p1");
    let link = t["result"]["policyReference"]["link"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        link.contains(&format!("/mgmt/tm/asm/policies/{id}?ver=")),
        "{link}"
    );
    assert_eq!(t["policyReference"]["link"], link.as_str());
    let msg = t["result"]["message"].as_str().unwrap();
    assert!(
        msg.contains("'/Common/p1'") && msg.contains("API Security"),
        "{msg}"
    );

    // The policy as clients read it.
    let list = api
        .ok(
            Method::GET,
            "/mgmt/tm/asm/policies?$filter=name+eq+'p1'&$select=name,id,fullPath,kind",
            None,
        )
        .await;
    assert_eq!(
        list["items"],
        json!([{"name": "p1", "id": id, "fullPath": "/Common/p1", "kind": "tm:asm:policies:policystate"}])
    );
    let p = api
        .ok(Method::GET, &format!("/mgmt/tm/asm/policies/{id}/"), None)
        .await;
    assert_eq!(p["enforcementMode"], "blocking");
    assert_eq!(p["active"], false);
    assert_eq!(p["templateReference"]["title"], "API Security");
    assert!(
        p.get("generation").is_none(),
        "ASM policies carry no generation"
    );

    // Attach; nothing changes before the apply.
    let p = api
        .ok(
            Method::PATCH,
            &format!("/mgmt/tm/asm/policies/{id}"),
            Some(json!({"virtualServers": ["/Common/vs"]})),
        )
        .await;
    assert_eq!(p["virtualServers"], json!(["/Common/vs"]));
    assert_eq!(
        status(port, "/other").await,
        200,
        "attached but never applied"
    );

    let t = apply(&api, &link).await;
    assert_eq!(
        t["kind"],
        "tm:asm:tasks:apply-policy:apply-policy-taskstate"
    );
    assert_blocked(&hit(port, "/other").await.unwrap());
    assert_eq!(status(port, "/allowed").await, 200);

    // Re-import a changed document (f5-ansible form: full path in `name`) without applying.
    let v2 = serde_json::to_vec(&policy("p1", true)).unwrap();
    upload(&api, "p1v2.json", &v2, 64).await;
    let t = import(&api, json!({"name": "/Common/p1", "filename": "p1v2.json"})).await;
    assert_eq!(t["status"], "COMPLETED", "{t}");
    let (_, p) = api
        .req(Method::GET, &format!("/mgmt/tm/asm/policies/{id}"), None)
        .await;
    assert_eq!(p["isModified"], true, "{p}");
    assert_blocked(&hit(port, "/open").await.unwrap());
    apply(&api, &link).await;
    assert_eq!(
        status(port, "/open").await,
        200,
        "applied: /open is allowed now"
    );
    assert_blocked(&hit(port, "/nope").await.unwrap());

    // An apply of an unknown policy is refused before any task exists.
    let (s, e) = api
        .req(
            Method::POST,
            "/mgmt/tm/asm/tasks/apply-policy",
            Some(json!({"policy": {"fullPath": "/Common/absent"}})),
        )
        .await;
    assert_eq!(s, 404, "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("/Common/absent"),
        "{e}"
    );

    // Failures leave the running policy alone.
    let base = format!("/mgmt/tm/asm/policies/{id}");
    let bad_json = import(
        &api,
        json!({"file": "{\"policy\": {\"name\": \"p1\",", "policy": {"fullPath": "/Common/p1"}}),
    )
    .await;
    let m = message_of(&bad_json, "FAILURE");
    assert!(
        m.contains("not a valid policy document") && m.contains("line 1"),
        "{m}"
    );
    let broken = json!({"policy": {"name": "p1", "enforcementMode": "sometimes"}}).to_string();
    let t = import(
        &api,
        json!({"file": base64::engine::general_purpose::STANDARD.encode(broken), "isBase64": true,
               "policyReference": {"link": format!("https://localhost{base}?ver=15.1.10")}}),
    )
    .await;
    let m = message_of(&t, "FAILURE");
    assert!(
        m.contains("cannot be compiled") && m.contains("enforcementMode"),
        "{m}"
    );
    assert_eq!(status(port, "/open").await, 200);
    assert_blocked(&hit(port, "/nope").await.unwrap());

    // Export returns the declarative document, inline and as a download.
    let t = run_task(
        &api,
        "/mgmt/tm/asm/tasks/export-policy",
        json!({"policyReference": {"link": link}, "inline": true}),
        "application/json",
    )
    .await;
    assert_eq!(t["status"], "COMPLETED", "{t}");
    let doc: Value = serde_json::from_str(t["result"]["file"].as_str().unwrap()).unwrap();
    assert_eq!(doc["policy"]["urls"].as_array().unwrap().len(), 3, "{doc}");
    assert_eq!(doc["policy"]["fullPath"], "/Common/p1");
    // The exported document imports back as the same policy (named by its fullPath).
    let back = import(&api, json!({"file": t["result"]["file"]})).await;
    assert_eq!(back["status"], "COMPLETED", "{back}");
    assert_eq!(back["policyReference"]["fullPath"], "/Common/p1");
    let t = run_task(
        &api,
        "/mgmt/tm/asm/tasks/export-policy",
        json!({"policy": {"fullPath": "/Common/p1"}, "filename": "p1-export.json"}),
        "application/json",
    )
    .await;
    assert_eq!(t["status"], "COMPLETED", "{t}");
    let file = api
        .ok(
            Method::GET,
            "/mgmt/tm/asm/file-transfer/downloads/p1-export.json",
            None,
        )
        .await;
    assert_eq!(file["policy"]["name"], "p1");

    // A restart brings the virtual back with its applied policy.
    drop(api);
    let _ = server.child.kill();
    let _ = server.child.wait();
    server = start(dir.path(), None);
    let api = Api::new(&server);
    assert_eq!(status(port, "/open").await, 200);
    assert_blocked(&hit(port, "/nope").await.unwrap());

    // Delete: the virtual allows all again; the id is gone.
    let _ = api.ok(Method::DELETE, &format!("{base}/"), None).await;
    let (s, _) = api.req(Method::GET, &base, None).await;
    assert_eq!(s, 404);
    assert_eq!(status(port, "/nope").await, 200);
    let list = api
        .ok(Method::GET, "/mgmt/tm/asm/tasks/import-policy", None)
        .await;
    assert_eq!(
        list["kind"],
        "tm:asm:tasks:import-policy:import-policy-taskcollectionstate"
    );
    assert_eq!(list["items"].as_array().unwrap().len(), 5, "{list}");
}

const SPEC: &str = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /items:\n    get:\n      responses: {'200': {description: ok}}\n";

#[tokio::test]
async fn import_from_a_url_and_the_pull_limits() {
    let (_dir, server, api) =
        configured(r#"{"mgmt": {"fetch": {"max_bytes": 4096, "timeout_secs": 2}}}"#);
    let mut doc = json!({"policy": {
        "name": "api1", "template": {"name": "POLICY_TEMPLATE_API_SECURITY"},
        "enforcementMode": "blocking", "open-api-files": [{"link": "spec.yaml"}]
    }});
    let mut files = HashMap::new();
    files.insert(
        "/p/api1.json".to_string(),
        (200, String::new(), doc.to_string().into_bytes()),
    );
    files.insert(
        "/p/spec.yaml".to_string(),
        (200, String::new(), SPEC.as_bytes().to_vec()),
    );
    files.insert("/big".to_string(), (200, String::new(), vec![b' '; 5000]));
    files.insert(
        "/to-metadata".to_string(),
        (
            302,
            "location: http://169.254.169.254/latest/meta-data/\r\n".into(),
            Vec::new(),
        ),
    );
    files.insert(
        "/loop".to_string(),
        (302, "location: /loop\r\n".into(), Vec::new()),
    );
    doc["policy"]["name"] = json!("other");
    files.insert(
        "/p/other.json".to_string(),
        (200, String::new(), doc.to_string().into_bytes()),
    );
    let srv = http_table(files, (404, String::new(), b"missing".to_vec())).await;
    // Accepts and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });

    // Form 3, sent as application/javascript like some clients do; the relative OpenAPI link
    // is pulled from the same server.
    let t = run_task(
        &api,
        "/mgmt/tm/asm/tasks/import-policy",
        json!({"fileReference": {"link": format!("http://{srv}/p/api1.json")}, "policy": {"fullPath": "/Common/api1"}}),
        "application/javascript",
    )
    .await;
    assert_eq!(t["status"], "COMPLETED", "{t}");
    assert_eq!(
        t["fileReference"]["link"],
        format!("http://{srv}/p/api1.json")
    );
    assert_eq!(t["filename"], "");

    // Form 2: the name comes from the document.
    let t = import(
        &api,
        json!({"fileReference": {"link": format!("http://{srv}/p/other.json")}}),
    )
    .await;
    assert!(
        message_of(&t, "COMPLETED").contains("'/Common/other'"),
        "{t}"
    );

    // Rule 1: the name in the pulled file differs from the fullPath's.
    let t = import(
        &api,
        json!({"fileReference": {"link": format!("http://{srv}/p/other.json")}, "policy": {"fullPath": "/Common/api1"}}),
    )
    .await;
    let m = message_of(&t, "FAILURE");
    assert!(
        m.contains("The policy name 'other' in the pulled file does not match the name 'api1' of fullPath '/Common/api1'."),
        "{m}"
    );
    // Links the pull refuses, with what the failure says.
    let refused_links = [
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "169.254.169.254 is refused",
        ),
        (
            format!("http://{srv}/to-metadata"),
            "169.254.169.254 is refused",
        ),
        ("http://[fe80::1]/x".to_string(), "fe80::1 is refused"),
        // The metadata address inside IPv6 forms: NAT64 and IPv4-compatible.
        (
            "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/".to_string(),
            "(it carries 169.254.169.254) is refused",
        ),
        (
            "http://[::169.254.169.254]/latest/meta-data/".to_string(),
            "(it carries 169.254.169.254) is refused",
        ),
        (
            "file:///etc/passwd".to_string(),
            "inside the data directory",
        ),
        (
            "file://../../serve.json".to_string(),
            "inside the data directory",
        ),
        (
            format!("http://{srv}/big"),
            "larger than the limit of 4096 bytes",
        ),
        (
            format!("http://{srv}/loop"),
            "too many redirects (more than 5)",
        ),
        ("gopher://x/y".to_string(), "unsupported scheme"),
        (format!("http://{srv}/absent"), "HTTP status 404"),
        (
            format!("http://{silent_addr}/p.json"),
            "timed out after 2 s",
        ),
        // https with the webpki roots: the admin API's self-signed certificate is refused.
        (format!("{}/mgmt/tm/sys", server.base), "TLS with 127.0.0.1"),
    ];
    for (link, want) in refused_links {
        let body = json!({"fileReference": {"link": link}});
        let t = import(&api, body.clone()).await;
        let m = message_of(&t, "FAILURE");
        assert!(m.contains(want), "{body}: {m}");
    }

    // Templates: listed, usable by a policy create and by an import.
    let tl = api
        .ok(
            Method::GET,
            "/mgmt/tm/asm/policy-templates?$filter=name+eq+'POLICY_TEMPLATE_FUNDAMENTAL'",
            None,
        )
        .await;
    assert_eq!(tl["items"].as_array().unwrap().len(), 1, "{tl}");
    let tlink = tl["items"][0]["selfLink"].as_str().unwrap().to_string();
    let p = api.ok(Method::POST,
            "/mgmt/tm/asm/policies",
            Some(json!({"name": "fromtpl", "partition": "Common", "templateReference": {"link": tlink}}))).await;
    assert_eq!(
        p["templateReference"]["name"],
        "POLICY_TEMPLATE_FUNDAMENTAL"
    );
    assert_eq!(p["templateReference"]["link"], tlink.as_str());
    let (s, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/asm/policies",
            Some(json!({"name": "fromtpl"})),
        )
        .await;
    assert_eq!(s, 409);
    let t = import(
        &api,
        json!({"name": "/Common/tpl2", "policyTemplateReference": {"link": tlink}}),
    )
    .await;
    assert!(
        message_of(&t, "COMPLETED").ends_with("Policy Template set to Fundamental."),
        "{t}"
    );

    // Bad request bodies are refused before any task exists.
    for body in [
        json!({"policy": {"fullPath": "/Common/x"}}),
        json!({"filename": "a.json", "file": "{}"}),
        json!({"filename": "../etc/passwd"}),
        json!({"filename": "a.json", "isBase64": 3}),
    ] {
        let (s, e) = api
            .req(
                Method::POST,
                "/mgmt/tm/asm/tasks/import-policy",
                Some(body.clone()),
            )
            .await;
        assert_eq!(s, 400, "{body}: {e}");
        crate::support::mgmt::assert_error(&e, 400);
    }
}
