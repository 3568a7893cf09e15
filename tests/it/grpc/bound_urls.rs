//! gRPC URLs bound to a profile other than by `associateUrls`, through the real
//! `portcullis proxy` binary between a real tonic client and a real tonic server:
//!
//! - URLs bound through their `urlContentProfiles` (`type: grpc`, `contentProfile.name`, as real
//!   policies write it) enforce the profile exactly like associated ones;
//! - bound gRPC URLs get the URL-level checks of every URL (meta-characters on the URL, its
//!   `metacharsOnUrlCheck` switch), whichever way they are bound.

use serde_json::{Value, json};

use crate::support::grpc::client::{TonicClient, frame, raw_call};
use crate::support::grpc::messages::*;
use crate::support::grpc::proxy::{Proxy, has_support_id};
use crate::support::grpc::scenarios::{
    assert_blocked, assert_blocked_on_the_wire, assert_call_blocked,
};
use crate::support::grpc::upstream::start_tonic;

fn blocking(names: &[&str]) -> Value {
    let list: Vec<Value> = names
        .iter()
        .map(|n| json!({"name": n, "alarm": true, "block": true}))
        .collect();
    json!({ "violations": list })
}

fn grpc_content_profile(profile: &str) -> Value {
    json!([{"contentProfile": {"name": profile}, "headerName": "*", "headerOrder": "default",
            "headerValue": "*", "type": "grpc"}])
}

/// `associateUrls: false`: the Greeter's one method bound by an explicit URL, the Inventory by a
/// wildcard URL, both through their content profiles; nothing else is a URL of the policy.
fn bound_policy(idl: &str) -> Value {
    json!({"policy": {
        "name": "grpc_bound",
        "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "enforcementMode": "blocking",
        "grpc-profiles": [{
            "name": "demo_profile",
            "associateUrls": false,
            "defenseAttributes": {"allowUnknownFields": false, "maximumDataLength": 1024},
            "idlFiles": [{"idlFile": {"$ref": idl}, "isPrimary": true}]
        }],
        "urls": [
            {"name": "/demo.v1.Greeter/SayHello", "method": "POST",
             "urlContentProfiles": grpc_content_profile("demo_profile")},
            {"name": "/demo.v1.Inventory/*", "type": "wildcard", "method": "*",
             "urlContentProfiles": grpc_content_profile("demo_profile")},
            {"name": "*", "type": "wildcard", "method": "*", "$action": "delete"}
        ],
        "blocking-settings": blocking(&["VIOL_GRPC_MALFORMED", "VIOL_GRPC_FORMAT",
            "VIOL_GRPC_METHOD", "VIOL_URL", "VIOL_METHOD"])
    }})
}

#[tokio::test]
async fn urls_bound_through_url_content_profiles_enforce_the_profile() {
    let upstream = format!("http://{}", start_tonic().await);
    let proxy = Proxy::start_with_policy(&upstream, &[], bound_policy).await;
    let mut c = TonicClient::connect(proxy.addr).await;
    // The explicit URL: valid calls reach the server.
    let reply = c.unary(SAY_HELLO, hello("alice")).await.expect("passes");
    assert_eq!(hello_reply(&reply), "Hello, alice!");
    // The wildcard URL: unary and streaming calls inspected message by message.
    let item = c.unary(GET_ITEM, get_item("SKU-1")).await.expect("GetItem");
    assert!(!item.is_empty());
    // Bad messages to either are blocked.
    for (path, msg, why) in [
        (SAY_HELLO, hello_with_unknown_field("eve"), "unknown field"),
        (
            SAY_HELLO,
            hello("<script>alert(document.cookie)</script>"),
            "xss in a string field",
        ),
        (
            SAY_HELLO,
            hello(&"a".repeat(1200)),
            "over maximumDataLength",
        ),
        (
            GET_ITEM,
            get_item("1' UNION SELECT password FROM users--"),
            "sqli",
        ),
        (
            "/demo.v1.Inventory/Nope",
            get_item("SKU-1"),
            "unknown method under the bound wildcard",
        ),
    ] {
        assert_call_blocked(&mut c, path, msg, why).await;
    }
    let (replies, end) = c
        .bidi(
            LOOKUP,
            vec![get_item("SKU-1"), get_item("<script>alert(1)</script>")],
        )
        .await;
    assert_blocked(&end.expect_err("stream ended at the bad message"));
    assert!(replies.len() <= 1, "{replies:?}");
    // The same connection still serves.
    let reply = c.unary(SAY_HELLO, hello("again")).await.expect("passes");
    assert_eq!(hello_reply(&reply), "Hello, again!");
    // A method of the IDL that no URL binds is an illegal URL: the HTML page, not gRPC.
    let r = raw_call(
        proxy.addr,
        "/demo.v1.Greeter/SayGoodbye",
        frame(&hello("x")),
        &[],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.grpc_status(), None, "{r:?}");
    let page = String::from_utf8_lossy(&r.body);
    assert!(
        page.contains("Request Rejected") && has_support_id(&page),
        "{page}"
    );
}

/// `associateUrls: true`, URL meta-characters blocking, unknown methods only alarmed (so what
/// blocks is the URL check); the Inventory's URL declared by the policy with
/// `metacharsOnUrlCheck: false`.
fn url_checks_policy(idl: &str) -> Value {
    json!({"policy": {
        "name": "grpc_url_checks",
        "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "enforcementMode": "blocking",
        "grpc-profiles": [{
            "name": "demo_profile",
            "associateUrls": true,
            "idlFiles": [{"idlFile": {"$ref": idl}, "isPrimary": true}]
        }],
        "urls": [
            {"name": "/demo.v1.Inventory/*", "type": "wildcard", "metacharsOnUrlCheck": false},
            {"name": "*", "type": "wildcard", "method": "*", "$action": "delete"}
        ],
        "blocking-settings": {"violations": [
            {"name": "VIOL_URL_METACHAR", "alarm": true, "block": true},
            {"name": "VIOL_GRPC_METHOD", "alarm": true, "block": false},
            {"name": "VIOL_RATING_THREAT", "alarm": false, "block": false}
        ]}
    }})
}

#[tokio::test]
async fn bound_grpc_urls_get_the_url_level_checks() {
    let upstream = format!("http://{}", start_tonic().await);
    let proxy = Proxy::start_with_policy(&upstream, &[], url_checks_policy).await;
    // `|` is a URL meta-character: the associated Greeter URL blocks it with the gRPC reply.
    let r = raw_call(
        proxy.addr,
        "/demo.v1.Greeter/Say%7CHello",
        frame(&hello("x")),
        &[],
    )
    .await;
    assert_blocked_on_the_wire(&r);
    // The policy's own Inventory URL switches the check off: the call goes through (only the
    // unknown method is alarmed) and the server answers it is unimplemented.
    let r = raw_call(
        proxy.addr,
        "/demo.v1.Inventory/Get%7CItem",
        frame(&get_item("S")),
        &[],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.grpc_status(),
        Some(12),
        "the upstream's UNIMPLEMENTED: {r:?}"
    );
    // Valid calls on both services pass.
    let mut c = TonicClient::connect(proxy.addr).await;
    let reply = c.unary(SAY_HELLO, hello("bob")).await.expect("passes");
    assert_eq!(hello_reply(&reply), "Hello, bob!");
    c.unary(GET_ITEM, get_item("SKU-1"))
        .await
        .expect("GetItem passes");
}

/// The API-security template answers blocks with JSON, but a gRPC call to a service no URL of the
/// policy knows is a plain illegal URL and gets the HTML "Request Rejected" page (docs/grpc.md),
/// while a blocked call on a gRPC URL still gets the gRPC reply.
#[tokio::test]
async fn an_unknown_grpc_service_gets_the_html_page_under_the_api_security_template() {
    let upstream = format!("http://{}", start_tonic().await);
    let api_security = |idl: &str| {
        let mut p = bound_policy(idl);
        p["policy"]["template"]["name"] = json!("POLICY_TEMPLATE_API_SECURITY");
        p
    };
    let proxy = Proxy::start_with_policy(&upstream, &[], api_security).await;
    let r = raw_call(proxy.addr, "/demo.v1.Nowhere/Call", frame(&hello("x")), &[]).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.grpc_status(), None, "{r:?}");
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("text/html")),
        "{r:?}"
    );
    let page = String::from_utf8_lossy(&r.body);
    assert!(
        page.contains("Request Rejected") && has_support_id(&page),
        "{page}"
    );
}
