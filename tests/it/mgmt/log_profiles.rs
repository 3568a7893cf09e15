//! Security log profiles through the admin API: bad entries and references are refused with the
//! error object and change nothing; entries live in the real `application` sub-collection; a
//! profile in use cannot be deleted; `localStorage: disabled` keeps a virtual's events out of the
//! store while its syslog server still gets them. In this process, through real sockets.

use reqwest::Method;
use serde_json::json;

use crate::support::events::{attack, controller, datagram};
use crate::support::free_port;
use crate::support::mgmt::assert_error;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_storage_disabled_keeps_a_virtuals_events_out_of_the_store() {
    let c = controller(|_| {}).await;
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(
                json!({"name": "remote_only", "application": {"remote_only": {
                "localStorage": "disabled", "remoteStorage": "remote",
                "servers": [{"name": udp.local_addr().unwrap().to_string()}]}}}),
            ),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let quiet = c
        .protected("quiet", json!({"securityLogProfiles": ["remote_only"]}))
        .await;
    let loud = c.protected("loud", json!({})).await;
    let hidden = attack(quiet).await;
    let m = datagram(&udp, "the remote destination still gets the event").await;
    assert!(m.contains(&hidden));
    // Events are stored in order: once the later one is there, the earlier was skipped.
    let seen = attack(loud).await;
    let b = c.event_by_support_id(&seen).await;
    assert_eq!(b["items"][0]["virtualServerName"], "/Common/loud");
    let b = c
        .events(&format!("?$filter=supportId%20eq%20'{hidden}'"))
        .await;
    assert_eq!(b["totalItems"], 0, "{b}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_log_profiles_and_references_are_refused() {
    let c = controller(|_| {}).await;
    for (body, needle) in [
        (
            json!({"name": "p1", "application": [{"remoteStorage": "remote"}]}),
            "at least one server",
        ),
        (
            json!({"name": "p2", "application": [{"remoteStorage": "remote", "servers": [{"name": "nowhere:514"}]}]}),
            "invalid syslog server address 'nowhere:514'",
        ),
        (
            json!({"name": "p3", "application": [{"remoteStorage": "remote", "protocol": "sctp", "servers": [{"name": "127.0.0.1:514"}]}]}),
            "unsupported protocol 'sctp'",
        ),
        (
            json!({"name": "p4", "application": [{"remoteStorage": "file", "file": "../../etc/passwd"}]}),
            "invalid log file name",
        ),
    ] {
        let (s, b) = c
            .api
            .req(Method::POST, "/mgmt/tm/security/log/profile", Some(body))
            .await;
        assert_eq!(s, 400, "{b}");
        assert_error(&b, 400);
        assert!(b["message"].as_str().unwrap().contains(needle), "{b}");
    }
    let (s, b) = c
        .api
        .req(Method::GET, "/mgmt/tm/security/log/profile", None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(b["items"], json!([]), "nothing half-created");

    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/virtual",
            Some(
                json!({"name": "v", "destination": "127.0.0.1:1", "securityLogProfiles": ["nope"]}),
            ),
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert!(
        b["message"].as_str().unwrap().contains("/Common/nope"),
        "{b}"
    );

    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/security/log/profile",
            Some(json!({"name": "keep", "application": [{"localStorage": "enabled"}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["kind"], "tm:security:log:profile:profilestate");
    assert_eq!(b["applicationReference"]["isSubcollection"], true, "{b}");
    let sub = "/mgmt/tm/security/log/profile/~Common~keep/application";
    let (s, b) = c.api.req(Method::GET, sub, None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["items"][0]["fullPath"], "/Common/keep", "{b}");
    assert_eq!(
        b["items"][0]["kind"],
        "tm:security:log:profile:application:applicationstate"
    );
    // f5-sdk creates entries in the sub-collection directly, named by full path.
    let (s, b) = c
        .api
        .req(
            Method::POST,
            sub,
            Some(json!({"name": "/Common/remote", "remoteStorage": "remote", "protocol": "udp"})),
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("at least one server"),
        "{b}"
    );
    let (s, b) = c
        .api
        .req(
            Method::POST,
            sub,
            Some(json!({"name": "/Common/remote", "remoteStorage": "remote",
                "servers": [{"name": "127.0.0.1:5514"}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (_, b) = c
        .api
        .req(
            Method::GET,
            "/mgmt/tm/security/log/profile/~Common~keep?expandSubcollections=true",
            None,
        )
        .await;
    assert_eq!(
        b["applicationReference"]["items"].as_array().map(Vec::len),
        Some(2),
        "{b}"
    );
    let (s, b) = c
        .api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/virtual",
            Some(
                json!({"name": "v", "destination": format!("127.0.0.1:{}", free_port()),
                "securityLogProfiles": ["keep", "\"/Common/Log illegal requests\""]}),
            ),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["securityLogProfiles"],
        json!(["/Common/keep", "/Common/Log illegal requests"])
    );
    let (s, b) = c
        .api
        .req(
            Method::DELETE,
            "/mgmt/tm/security/log/profile/~Common~keep",
            None,
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("in use by virtual server (/Common/v)"),
        "{b}"
    );
    let (s, _) = c
        .api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/virtual/~Common~v",
            Some(json!({"securityLogProfiles": []})),
        )
        .await;
    assert_eq!(s, 200);
    let (s, b) = c
        .api
        .req(
            Method::DELETE,
            "/mgmt/tm/security/log/profile/~Common~keep",
            None,
        )
        .await;
    assert_eq!(s, 200, "{b}");
}
