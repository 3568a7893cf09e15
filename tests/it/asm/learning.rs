//! The tuning loop over REST, on a controller wired as `portcullis serve` wires it (admin API over
//! HTTPS, data plane, event store, learner), through real sockets: a false positive blocked with
//! a support id is accepted (preview, then the changes appended and applied by an apply-policy
//! task), the same request then passes and attacks are still blocked; suggestions aggregate
//! evidence from several sources (trusted ones too), one-source and attack-tainted ones score low,
//! bots teach nothing, suggestions are accepted and dismissed; readiness of a transparent policy.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::asm::{protect, wait_task};
use crate::support::events::{Controller, controller, event_by_support_id};
use crate::support::mgmt::{Api, assert_error, virtual_server};
use crate::support::proxy::support_id;

const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

/// A blocking NGINX-base policy that trusts X-Forwarded-For (so tests can speak for many
/// sources), blocks disallowed metacharacters in parameter values, and learns from 3 sources.
fn tuning_policy(mode: &str, learning: &str) -> Value {
    json!({"policy": {
        "name": "tuning",
        "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "enforcementMode": mode,
        "signature-settings": {"signatureStaging": false},
        "general": {"trustXff": true},
        "blocking-settings": {"violations": [
            {"name": "VIOL_PARAMETER_VALUE_METACHAR", "alarm": true, "block": true}]},
        "policy-builder": {"learningMode": learning,
            "untrustedTrafficLoosen": {"differentSources": 3, "minHoursBetweenSamples": 0}},
        "whitelist-ips": [{"ipAddress": "10.9.0.0", "ipMask": "255.255.0.0", "trustedByPolicyBuilder": true}]
    }})
}

/// Imports the policy, attaches it to a new virtual server and applies it; returns the
/// virtual's port and the policy's link.
async fn protected(api: &Api, mode: &str) -> (u16, String) {
    protected_learning(api, mode, "manual").await
}

async fn protected_learning(api: &Api, mode: &str, learning: &str) -> (u16, String) {
    let port = virtual_server(api).await;
    let id = protect(api, "/Common/tuning", &tuning_policy(mode, learning)).await;
    (port, id)
}

/// One request to the virtual server: the status and, for a block page, its support id.
async fn send(port: u16, path: &str, source: &str, ua: Option<&str>) -> (u16, Option<String>) {
    let mut r = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}{path}"))
        .header("x-forwarded-for", source)
        .timeout(Duration::from_secs(5));
    if let Some(ua) = ua {
        r = r.header("user-agent", ua);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let res = loop {
        match r.try_clone().unwrap().send().await {
            Ok(res) => break res,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("{path}: {e}"),
        }
    };
    let status = res.status().as_u16();
    let body = res.text().await.unwrap();
    (status, support_id(&body))
}

async fn blocked(port: u16, path: &str, source: &str) -> String {
    let (status, id) = send(port, path, source, Some(BROWSER)).await;
    let id = id.unwrap_or_else(|| panic!("{path} was not blocked (status {status})"));
    assert_eq!(status, 200, "the default block page");
    id
}

async fn passes(port: u16, path: &str) -> bool {
    let (status, id) = send(port, path, "192.0.2.1", Some(BROWSER)).await;
    id.is_none() && status == 200
}

async fn guest(c: &Controller) -> Api {
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/auth/user",
            Some(json!({"name": "viewer", "password": "Guest-pass-1", "role": "guest"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    c.api.as_user("viewer", "Guest-pass-1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_request_is_accepted_by_its_support_id_and_attacks_stay_blocked() {
    let c = controller(|_| {}).await;
    let (port, _) = protected(&c.api, "blocking").await;
    let false_positive = "/redirect?next=http://127.0.0.1/home";
    let id = blocked(port, false_positive, "192.0.2.1").await;
    event_by_support_id(&c.api, &id).await;

    let path = format!("/mgmt/tm/asm/events/requests/{id}/accept");
    let (s, preview) = c.api.req(Method::GET, &path, None).await;
    assert_eq!(s, 200, "{preview}");
    assert_eq!(preview["wouldPass"], true, "{preview}");
    assert_eq!(preview["attack"], false, "{preview}");
    assert_eq!(
        preview["modifications"],
        json!([{"entityType": "parameter", "action": "add-or-update",
                "entity": {"name": "next", "type": "explicit", "level": "global", "valueType": "auto-detect",
                           "dataType": "alpha-numeric", "allowEmptyValue": true, "allowRepeatedParameterName": true,
                           "attackSignaturesCheck": true, "metacharsOnParameterValueCheck": true, "checkMetachars": true},
                "entityChanges": {"signatureOverrides": [{"signatureId": 300006001, "enabled": false}]}}]),
        "the smallest change: the one signature, on the one parameter (an explicit copy of the wildcard)"
    );

    // A guest sees the preview but cannot accept.
    let viewer = guest(&c).await;
    let (s, _) = viewer.req(Method::GET, &path, None).await;
    assert_eq!(s, 200);
    let (s, err) = viewer.req(Method::POST, &path, Some(json!({}))).await;
    assert_eq!(s, 401, "{err}");
    assert_error(&err, 401);
    assert!(passes(port, "/").await);
    assert!(
        !passes(port, false_positive).await,
        "nothing changed for the guest"
    );

    let (s, done) = c.api.req(Method::POST, &path, Some(json!({}))).await;
    assert_eq!(s, 200, "{done}");
    assert_eq!(done["modifications"], preview["modifications"]);
    let task = wait_task(&c.api, &done["applyTask"]).await;
    assert_eq!(task["status"], "COMPLETED", "{task}");
    assert!(
        task["selfLink"]
            .as_str()
            .unwrap()
            .contains("/mgmt/tm/asm/tasks/apply-policy/")
    );

    assert!(
        passes(port, false_positive).await,
        "the accepted request passes"
    );
    assert!(
        !passes(port, "/redirect?to=http://127.0.0.1/home").await,
        "the same signature on another parameter is still blocked"
    );
    let attack = blocked(port, "/redirect?next=1%27%20or%20%271%27=%271", "192.0.2.9").await;
    event_by_support_id(&c.api, &attack).await;

    // An attack is accepted only when the caller insists.
    let apath = format!("/mgmt/tm/asm/events/requests/{attack}/accept");
    let (s, p) = c.api.req(Method::GET, &apath, None).await;
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["attack"], true, "{p}");
    assert!(
        p["warnings"][0].as_str().unwrap().contains("high-accuracy"),
        "{p}"
    );
    let (s, err) = c.api.req(Method::POST, &apath, Some(json!({}))).await;
    assert_eq!(s, 409, "{err}");
    assert_error(&err, 409);
    let (s, err) = c
        .api
        .req(Method::POST, &apath, Some(json!({"force": "yes"})))
        .await;
    assert_eq!(s, 400, "{err}");
    let (s, err) = c
        .api
        .req(
            Method::GET,
            "/mgmt/tm/asm/events/requests/12345/accept",
            None,
        )
        .await;
    assert_eq!(s, 404, "{err}");
    assert_error(&err, 404);
    assert!(!passes(port, "/redirect?next=1%27%20or%20%271%27=%271").await);
}

async fn suggestions(api: &Api, id: &str) -> Vec<Value> {
    let (s, b) = api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions"),
            None,
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["kind"],
        "tm:asm:policies:suggestions:suggestioncollectionstate"
    );
    b["items"].as_array().unwrap().clone()
}

fn find<'a>(items: &'a [Value], description: &str) -> Option<&'a Value> {
    items.iter().find(|i| i["description"] == description)
}

/// Polls until a suggestion with `description` has `requests` requests.
async fn wait_suggestion(api: &Api, id: &str, description: &str, requests: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let items = suggestions(api, id).await;
        if let Some(s) = find(&items, description)
            && s["evidence"]["requests"] == requests
        {
            return s.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no suggestion {description:?} with {requests} requests: {items:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suggestions_learn_from_sources_and_are_accepted_or_dismissed() {
    let c = controller(|_| {}).await;
    let (port, id) = protected(&c.api, "blocking").await;
    // A benign apostrophe from three sources: ripe.
    for ip in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
        blocked(port, "/people?name=O%27Brien", ip).await;
    }
    // The same from one source only, on another parameter.
    blocked(port, "/people?nick=D%27Arcy", "198.51.100.1").await;
    blocked(port, "/people?nick=D%27Arcy", "198.51.100.1").await;
    // Benign on `comment` from three sources, and once an attack on it.
    for ip in ["198.51.100.4", "198.51.100.5", "198.51.100.6"] {
        blocked(port, "/people?comment=it%27s%20fine", ip).await;
    }
    blocked(
        port,
        "/people?comment=1%27%20or%20%271%27=%271",
        "203.0.113.7",
    )
    .await;
    // Attacks alone teach nothing: many sources, a high-accuracy signature.
    for ip in ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"] {
        blocked(port, "/people?q=1%27%20or%20%271%27=%271", ip).await;
    }
    // A bot teaches nothing either.
    for ip in ["198.51.100.7", "198.51.100.8", "198.51.100.9"] {
        let (_, id) = send(port, "/people?botty=x%27y", ip, Some("curl/8.5.0")).await;
        assert!(id.is_some());
    }
    // Trusted sources: two are enough.
    for ip in ["10.9.0.1", "10.9.4.2"] {
        blocked(port, "/people?title=Ma%27am", ip).await;
    }

    let name = wait_suggestion(&c.api, &id, "Allow metacharacter 0x27 in parameter name", 3).await;
    assert_eq!(name["learningScore"], 100, "{name:#}");
    assert_eq!(name["autoApplicable"], true);
    assert_eq!(name["status"], "pending");
    assert_eq!(name["evidence"]["distinctSources"], 3);
    assert_eq!(name["evidence"]["events"].as_array().unwrap().len(), 3);
    assert!(
        name["evidence"]["firstSeen"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(
        name["modification"]["entityChanges"],
        json!({"valueMetacharOverrides": [{"metachar": "0x27", "isAllowed": true}]})
    );
    let nick = wait_suggestion(&c.api, &id, "Allow metacharacter 0x27 in parameter nick", 2).await;
    assert_eq!(nick["learningScore"], 20, "one source: low");
    assert_eq!(nick["autoApplicable"], false);
    let comment = wait_suggestion(
        &c.api,
        &id,
        "Allow metacharacter 0x27 in parameter comment",
        4,
    )
    .await;
    assert_eq!(comment["evidence"]["attackRequests"], 1);
    assert_eq!(
        comment["learningScore"], 5,
        "attack evidence: low, {comment:#}"
    );
    assert_eq!(comment["autoApplicable"], false);
    let title = wait_suggestion(
        &c.api,
        &id,
        "Allow metacharacter 0x27 in parameter title",
        2,
    )
    .await;
    assert_eq!(title["evidence"]["trustedSources"], 2);
    assert_eq!(title["learningScore"], 100);

    let items = suggestions(&c.api, &id).await;
    assert!(
        items.iter().all(
            |i| !i["description"].as_str().unwrap().contains("parameter q")
                && !i["description"].as_str().unwrap().contains("botty")
        ),
        "attack-only evidence and bots propose nothing: {items:#?}"
    );
    assert!(items.iter().all(|i| {
        i["signatureId"].is_null()
            || portcullis::waf::signatures::SignatureDb::builtin()
                .get(i["signatureId"].as_u64().unwrap() as u32)
                .unwrap()
                .accuracy
                != portcullis::waf::signatures::Level::High
    }));
    let scores: Vec<u64> = items
        .iter()
        .map(|i| i["learningScore"].as_u64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "highest first: {scores:?}"
    );

    // $filter / $select work as on every collection; one by id; unknown id.
    let (s, b) = c
        .api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions?$filter=learningScore%20eq%20100&$select=id,description"),
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(b["totalItems"], 2, "{b}");
    let sid = name["id"].as_str().unwrap();
    let (s, one) = c
        .api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions/{sid}"),
            None,
        )
        .await;
    assert_eq!((s, &one["id"]), (reqwest::StatusCode::OK, &name["id"]));
    let (s, err) = c
        .api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions/nope"),
            None,
        )
        .await;
    assert_eq!(s, 404);
    assert_error(&err, 404);

    // Dismiss one; a guest can do neither.
    let viewer = guest(&c).await;
    let nid = nick["id"].as_str().unwrap();
    let (s, _) = viewer
        .req(
            Method::POST,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions/{nid}/dismiss"),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 401);
    let (s, d) = c
        .api
        .req(
            Method::POST,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions/{nid}/dismiss"),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 200, "{d}");
    assert_eq!(d["status"], "dismissed");
    assert_eq!(d["stateChangedBy"], "admin");

    // Accept everything at 100 and above: one apply; the benign requests now pass.
    let (s, err) = c
        .api
        .req(
            Method::POST,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions/accept"),
            Some(json!({"minScore": 101})),
        )
        .await;
    assert_eq!(s, 400, "{err}");
    let (s, acc) = c
        .api
        .req(
            Method::POST,
            &format!("/mgmt/tm/asm/policies/{id}/suggestions/accept"),
            Some(json!({"minScore": 100})),
        )
        .await;
    assert_eq!(s, 200, "{acc}");
    assert_eq!(acc["accepted"].as_array().unwrap().len(), 2, "{acc}");
    assert_eq!(
        wait_task(&c.api, &acc["applyTask"]).await["status"],
        "COMPLETED"
    );
    assert!(passes(port, "/people?name=O%27Brien").await);
    assert!(passes(port, "/people?title=Ma%27am").await);
    assert!(
        !passes(port, "/people?nick=D%27Arcy").await,
        "dismissed: still blocked"
    );
    assert!(
        !passes(port, "/people?name=1%27%20or%20%271%27=%271").await,
        "the attack on name is still blocked"
    );
    let items = suggestions(&c.api, &id).await;
    assert_eq!(
        find(&items, "Allow metacharacter 0x27 in parameter name").unwrap()["status"],
        "accepted"
    );

    // The policy's document now carries the changes (export shows them).
    let (s, obj) = c
        .api
        .req(Method::GET, &format!("/mgmt/tm/asm/policies/{id}"), None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(obj["isModified"], false, "applied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_of_a_transparent_policy() {
    let c = controller(|_| {}).await;
    let (port, id) = protected(&c.api, "transparent").await;
    for i in 0..6 {
        let (s, sid) = send(port, "/ok", &format!("198.51.100.{i}"), Some(BROWSER)).await;
        assert_eq!((s, sid), (200, None));
    }
    // Transparent: passed, but blocking mode would block these.
    for i in 0..3 {
        let (s, sid) = send(
            port,
            "/p?q=1%27%20or%20%271%27=%271",
            &format!("203.0.113.{i}"),
            Some(BROWSER),
        )
        .await;
        assert_eq!((s, sid), (200, None), "transparent never blocks");
    }
    let (s, _) = send(port, "/p?name=O%27Brien", "198.51.100.20", Some(BROWSER)).await;
    assert_eq!(s, 200);
    let deadline = Instant::now() + Duration::from_secs(20);
    let r = loop {
        let (s, r) = c
            .api
            .req(
                Method::GET,
                &format!("/mgmt/tm/asm/policies/{id}/readiness?hours=1"),
                None,
            )
            .await;
        assert_eq!(s, 200, "{r}");
        // The request counters are sampled every few seconds.
        if r["requests"] == 10 && r["events"] == 4 {
            break r;
        }
        assert!(Instant::now() < deadline, "{r}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(r["enforcementMode"], "transparent");
    assert_eq!(r["wouldBlock"], 4, "{r}");
    assert_eq!(r["wouldBlockShare"], 0.4);
    let reasons = r["topReasons"].as_array().unwrap();
    assert_eq!(
        reasons[0],
        json!({"violation": "VIOL_PARAMETER_VALUE_METACHAR", "requests": 4}),
        "{r}"
    );
    assert!(
        reasons
            .iter()
            .any(|x| x["violation"] == "VIOL_ATTACK_SIGNATURE" && x["requests"] == 3),
        "{r}"
    );
    let (s, err) = c
        .api
        .req(
            Method::GET,
            &format!("/mgmt/tm/asm/policies/{id}/readiness?hours=0"),
            None,
        )
        .await;
    assert_eq!(s, 400);
    assert_error(&err, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automatic_learning_applies_ripe_suggestions_only() {
    let c = controller(|_| {}).await;
    let (port, id) = protected_learning(&c.api, "blocking", "automatic").await;
    blocked(port, "/people?nick=D%27Arcy", "198.51.100.9").await;
    blocked(port, "/people?nick=D%27Arcy", "198.51.100.9").await;
    for ip in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
        blocked(port, "/people?name=O%27Brien", ip).await;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !passes(port, "/people?name=O%27Brien").await {
        assert!(
            Instant::now() < deadline,
            "the ripe suggestion was never applied"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let items = suggestions(&c.api, &id).await;
    let name = find(&items, "Allow metacharacter 0x27 in parameter name").unwrap();
    assert_eq!(
        (&name["status"], &name["stateChangedBy"]),
        (&json!("accepted"), &json!("policy-builder"))
    );
    let nick = find(&items, "Allow metacharacter 0x27 in parameter nick").unwrap();
    assert_eq!(
        nick["status"], "pending",
        "one source: never applied automatically"
    );
    assert!(!passes(port, "/people?nick=D%27Arcy").await);
    assert!(
        !passes(port, "/people?name=1%27%20or%20%271%27=%271").await,
        "attacks stay blocked"
    );
}
