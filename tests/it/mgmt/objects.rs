//! The object model over real HTTPS: addressing, trailing slashes, PATCH/PUT/DELETE rules,
//! queries, and every part-7 error of the object endpoints.

use reqwest::Method;
use serde_json::json;

use crate::support::mgmt::{Api, assert_error, start};

#[tokio::test]
async fn objects_follow_the_icontrol_rules_and_every_error_is_part7() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let (st, b) = api.req(Method::GET, "/mgmt/tm/sys/", None).await;
    assert_eq!(st, 200);
    assert!(
        b["selfLink"]
            .as_str()
            .unwrap()
            .ends_with("/mgmt/tm/sys?ver=15.1.10")
    );
    let (_, b) = api.req(Method::GET, "/mgmt/tm/sys/provision", None).await;
    assert!(
        b["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == "asm" && i["level"] == "nominal")
    );
    let (_, a) = api
        .req(
            Method::GET,
            "/mgmt/shared/identified-devices/config/device-info",
            None,
        )
        .await;
    let (_, b) = api
        .req(
            Method::GET,
            "/mgmt/shared/identified-devices/config/device-info",
            None,
        )
        .await;
    assert_eq!(a["machineId"], b["machineId"]);
    // Pool CRUD, trailing slashes, addressing.
    let (st, p) = api.req(Method::POST, "/mgmt/tm/ltm/pool/", Some(json!({"name": "web", "monitor": "http", "members": [{"name": "10.0.0.1:80"}, {"name": "10.0.0.2:80"}]}))).await;
    assert_eq!(st, 200, "{p}");
    assert_eq!(p["kind"], "tm:ltm:pool:poolstate");
    assert_eq!(p["fullPath"], "/Common/web");
    assert_eq!(p["monitor"], "/Common/http");
    assert!(
        p["selfLink"]
            .as_str()
            .unwrap()
            .starts_with("https://localhost/mgmt/tm/ltm/pool/~Common~web?ver=")
    );
    let (st, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "web"})),
        )
        .await;
    assert_eq!(st, 409);
    assert_error(&b, 409);
    assert_eq!(
        b["message"],
        "01020066:3: The requested Pool (/Common/web) already exists in partition Common."
    );
    let (st, b) = api
        .req(Method::GET, "/mgmt/tm/ltm/pool/~Common~nope", None)
        .await;
    assert_eq!(st, 404);
    assert_error(&b, 404);
    assert_eq!(
        b["message"],
        "01020036:3: The requested Pool (/Common/nope) was not found."
    );
    let (st, _) = api.req(Method::GET, "/mgmt/tm/ltm/pool/web/", None).await;
    assert_eq!(st, 200);
    let (st, b) = api
        .req(Method::GET, "/mgmt/tm/ltm/pool/~Common~web/members", None)
        .await;
    assert_eq!(st, 200);
    assert_eq!(b["kind"], "tm:ltm:pool:members:memberscollectionstate");
    assert_eq!(b["items"].as_array().unwrap().len(), 2);
    // PATCH answers the full object; PUT ignores read-only keys as f5-sdk sends them.
    let (st, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/pool/~Common~web/",
            Some(json!({"description": "d1"})),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(b["description"], "d1");
    assert_eq!(b["monitor"], "/Common/http");
    let mut put = b.clone();
    put["description"] = json!("d2");
    put["generation"] = json!(1);
    let (st, b) = api
        .req(Method::PUT, "/mgmt/tm/ltm/pool/~Common~web/", Some(put))
        .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["description"], "d2");
    assert!(b["generation"].as_u64().unwrap() > 1);
    // Queries.
    api.req(
        Method::POST,
        "/mgmt/tm/ltm/pool",
        Some(json!({"name": "api", "partition": "DMZ"})),
    )
    .await;
    let (_, b) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/pool?$filter=partition+eq+'DMZ'&$select=name,fullPath",
            None,
        )
        .await;
    assert_eq!(b["items"], json!([{"name": "api", "fullPath": "/DMZ/api"}]));
    let (_, b) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/pool?$filter=startswith(name,'w')%20or%20name%20eq%20'a*'&$top=1&$skip=1",
            None,
        )
        .await;
    assert_eq!(b["items"].as_array().unwrap().len(), 1);
    let (st, b) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/pool?$filter=name%20like%20'x'",
            None,
        )
        .await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    // Rule: a body that is not JSON.
    let (st, b) = api
        .raw(
            Method::POST,
            "/mgmt/tm/ltm/rule",
            "{name: r1, apiAnonymous: when}",
        )
        .await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    assert_eq!(b["message"], "Found invalid JSON body in the request.");
    assert_eq!(b["apiError"], 1);
    let (st, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/rule",
            Some(json!({"name": "r1", "apiAnonymous": "when HTTP_REQUEST { }"})),
        )
        .await;
    assert_eq!(st, 200);
    // Virtual: destination normalised, pool as full path, the transport-profile rule.
    let (st, v) = api
        .req(Method::POST, "/mgmt/tm/ltm/virtual", Some(json!({"name": "vs", "destination": "10.1.1.1:80", "pool": "web", "rules": ["r1"], "profiles": [{"name": "http"}, {"name": "tcp", "context": "all"}]})))
        .await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["destination"], "/Common/10.1.1.1:80");
    assert_eq!(v["pool"], "/Common/web");
    assert_eq!(v["rules"], json!(["/Common/r1"]));
    assert_eq!(
        v["status"]["availabilityState"], "offline",
        "no data plane is attached in this binary"
    );
    let (st, b) = api.req(Method::PATCH, "/mgmt/tm/ltm/virtual/~Common~vs", Some(json!({"ipProtocol": "tcp", "profilesReference": {"items": [{"name": "tcp", "context": "clientside"}]}}))).await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("exactly one serverside UDP, TCP or SCTP profile"),
        "{b}"
    );
    let (_, b) = api
        .req(
            Method::GET,
            "/mgmt/tm/ltm/virtual/~Common~vs?expandSubcollections=true",
            None,
        )
        .await;
    assert_eq!(b["profilesReference"]["items"].as_array().unwrap().len(), 2);
    let (st, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/virtual/vs",
            Some(json!({"metadata": [{"name": "a", "value": "1"}]})),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    let (_, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/virtual/vs",
            Some(json!({"metadata": [{"name": "b", "value": "2"}]})),
        )
        .await;
    assert_eq!(
        b["metadata"],
        json!([{"name": "b", "value": "2"}]),
        "metadata PATCH replaces all"
    );
    let (st, b) = api.req(Method::DELETE, "/mgmt/tm/ltm/pool/web", None).await;
    assert_eq!(st, 400);
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("in use by a Virtual Server (/Common/vs)")
    );
    let (st, b) = api
        .req(Method::DELETE, "/mgmt/tm/ltm/virtual/~Common~vs/", None)
        .await;
    assert_eq!(st, 200, "{b}");
    let (st, _) = api.req(Method::GET, "/mgmt/tm/ltm/virtual/vs", None).await;
    assert_eq!(st, 404);
    // Data group: options add/delete in %20 and + encodings, quoted keys, empty PATCH.
    let (st, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/data-group/internal",
            Some(
                json!({"name": "dg", "type": "string", "records": [{"name": "k1", "data": "v1"}]}),
            ),
        )
        .await;
    assert_eq!(st, 200);
    let (st, b) = api
        .req(Method::PATCH, "/mgmt/tm/ltm/data-group/internal/~Common~dg?options=records%20add%20%7B%20k2%20%7B%20data%20v2%20%7D%20%7D", Some(json!({})))
        .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(
        b["records"],
        json!([{"name": "k1", "data": "v1"}, {"name": "k2", "data": "v2"}])
    );
    let (st, b) = api
        .req(Method::PATCH, "/mgmt/tm/ltm/data-group/internal/dg?options=records+add+%7B%22k3%22%7Bdata+%22/Common/vs%22%7D%7D", Some(json!({"name": "dg"})))
        .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["records"][2], json!({"name": "k3", "data": "/Common/vs"}));
    let (_, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/data-group/internal/dg?options=records%20delete%20%7B%20k1%20k3%20%7D",
            Some(json!({"name": "dg"})),
        )
        .await;
    assert_eq!(b["records"], json!([{"name": "k2", "data": "v2"}]));
    let (st, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/data-group/internal/dg",
            Some(json!({"name": "dg"})),
        )
        .await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    assert_eq!(b["message"], "one or more properties must be specified");
    assert_eq!(b["apiError"], 26214401);
    // client-ssl collection writes and bash.
    for m in [Method::PATCH, Method::PUT] {
        let (st, b) = api
            .req(
                m,
                "/mgmt/tm/ltm/profile/client-ssl/",
                Some(json!({"name": "x", "certKeyChain": []})),
            )
            .await;
        assert_eq!(st, 403);
        assert_error(&b, 403);
        assert_eq!(
            b["message"],
            "Operation is not supported on component /ltm/profile/client-ssl."
        );
        assert_eq!(b["apiError"], 1);
    }
    let (st, b) = api.req(Method::GET, "/mgmt/tm/util/bash", None).await;
    assert_eq!(st, 403);
    assert_error(&b, 403);
    assert_eq!(
        b["message"],
        "Operation is not allowed on component /util/bash."
    );
    let (st, b) = api.req(Method::POST, "/mgmt/tm/util/bash", Some(json!({"command": "run", "utilCmdArgs": "-c 'touch /tmp/portcullis-should-not-exist'"}))).await;
    assert_eq!(st, 403, "{b}");
    assert!(!std::path::Path::new("/tmp/portcullis-should-not-exist").exists());
    // Device group with expanded sub-collections; distributed apps.
    let (st, b) = api
        .req(
            Method::GET,
            "/mgmt/tm/cm/device-group/~Common~device_trust_group?expandSubcollections=true",
            None,
        )
        .await;
    assert_eq!(st, 200);
    assert!(b["devicesReference"]["items"].is_array());
    let (st, b) = api
        .req(Method::GET, "/mgmt/tm/gtm/distributed-app", None)
        .await;
    assert_eq!(st, 200);
    assert_eq!(
        b["kind"],
        "tm:gtm:distributed-app:distributed-appcollectionstate"
    );
    // Hostile names and unknown paths.
    let (st, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "../etc"})),
        )
        .await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    let (st, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "x".repeat(300)})),
        )
        .await;
    assert_eq!(st, 400);
    let (st, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "caf\u{e9}"})),
        )
        .await;
    assert_eq!(st, 200);
    let (st, b) = api.req(Method::GET, "/mgmt/tm/nothing/here", None).await;
    assert_eq!(st, 404);
    assert_error(&b, 404);
}
