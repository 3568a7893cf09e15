//! Security log profiles through the admin API: bad entries and references are refused with the
//! error object and change nothing; entries live in the real `application` sub-collection; a
//! profile in use cannot be deleted; `localStorage: disabled` keeps a virtual's events out of the
//! store while its syslog server still gets them. In this process, through real sockets.

use reqwest::Method;
use serde_json::json;

use crate::support::events::{attack, controller, datagram};
use crate::support::free_port;
use crate::support::mgmt::assert_error;

const PROFILES: &str = "/mgmt/tm/security/log/profile";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_storage_disabled_keeps_a_virtuals_events_out_of_the_store() {
    let c = controller(|_| {}).await;
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    c.api
        .ok(
            Method::POST,
            PROFILES,
            Some(
                json!({"name": "remote_only", "application": {"remote_only": {
                "localStorage": "disabled", "remoteStorage": "remote",
                "servers": [{"name": udp.local_addr().unwrap().to_string()}]}}}),
            ),
        )
        .await;
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
        let e = c
            .api
            .refused(Method::POST, PROFILES, Some(body), 400, needle)
            .await;
        assert_error(&e, 400);
    }
    let b = c.api.ok(Method::GET, PROFILES, None).await;
    assert_eq!(b["items"], json!([]), "nothing half-created");

    let v = json!({"name": "v", "destination": "127.0.0.1:1", "securityLogProfiles": ["nope"]});
    c.api
        .refused(
            Method::POST,
            "/mgmt/tm/ltm/virtual",
            Some(v),
            400,
            "/Common/nope",
        )
        .await;

    let keep = json!({"name": "keep", "application": [{"localStorage": "enabled"}]});
    let b = c.api.ok(Method::POST, PROFILES, Some(keep)).await;
    assert_eq!(b["kind"], "tm:security:log:profile:profilestate");
    assert_eq!(b["applicationReference"]["isSubcollection"], true, "{b}");
    let sub = "/mgmt/tm/security/log/profile/~Common~keep/application";
    let b = c.api.ok(Method::GET, sub, None).await;
    assert_eq!(b["items"][0]["fullPath"], "/Common/keep", "{b}");
    assert_eq!(
        b["items"][0]["kind"],
        "tm:security:log:profile:application:applicationstate"
    );
    // f5-sdk creates entries in the sub-collection directly, named by full path.
    let serverless =
        json!({"name": "/Common/remote", "remoteStorage": "remote", "protocol": "udp"});
    c.api
        .refused(
            Method::POST,
            sub,
            Some(serverless),
            400,
            "at least one server",
        )
        .await;
    let remote = json!({"name": "/Common/remote", "remoteStorage": "remote",
        "servers": [{"name": "127.0.0.1:5514"}]});
    c.api.ok(Method::POST, sub, Some(remote)).await;
    let keep = "/mgmt/tm/security/log/profile/~Common~keep";
    let b = c
        .api
        .ok(
            Method::GET,
            &format!("{keep}?expandSubcollections=true"),
            None,
        )
        .await;
    assert_eq!(
        b["applicationReference"]["items"].as_array().map(Vec::len),
        Some(2),
        "{b}"
    );
    let b = c
        .api
        .ok(
            Method::POST,
            "/mgmt/tm/ltm/virtual",
            Some(
                json!({"name": "v", "destination": format!("127.0.0.1:{}", free_port()),
                "securityLogProfiles": ["keep", "\"/Common/Log illegal requests\""]}),
            ),
        )
        .await;
    assert_eq!(
        b["securityLogProfiles"],
        json!(["/Common/keep", "/Common/Log illegal requests"])
    );
    let in_use = "in use by virtual server (/Common/v)";
    c.api.refused(Method::DELETE, keep, None, 400, in_use).await;
    let unused = Some(json!({"securityLogProfiles": []}));
    c.api
        .ok(Method::PATCH, "/mgmt/tm/ltm/virtual/~Common~v", unused)
        .await;
    c.api.ok(Method::DELETE, keep, None).await;
}
