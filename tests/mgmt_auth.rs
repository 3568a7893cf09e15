//! Authentication and authorization over real HTTPS: login and tokens (the exact token object,
//! PATCH limits, expiry by DELETE), the login-failure array, other auth sources, lockout, and the
//! role matrix with the exact part-7 401.

mod mgmt_common;

use mgmt_common::{Api, PASS, assert_error, start};
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn login_tokens_and_lockout() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let c = &api.c;
    // No credentials.
    let r = c
        .get(format!("{}/mgmt/tm/ltm/pool", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let b: Value = r.json().await.unwrap();
    assert_error(&b, 401);
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .starts_with("Authorization failed: no user authentication header or token detected.")
    );
    // Login exactly as f5-icontrol-rest sends it (Basic + body).
    let r = c
        .post(format!("{}/mgmt/shared/authn/login", s.base))
        .basic_auth("admin", Some(PASS))
        .json(&json!({"username": "admin", "password": PASS, "loginProviderName": "tmos"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let b: Value = r.json().await.unwrap();
    let tok = b["token"]["token"].as_str().unwrap().to_string();
    assert_eq!(b["token"]["timeout"], 1200);
    assert!(
        b["token"]["expirationMicros"].as_u64().unwrap()
            > b["token"]["lastUpdateMicros"].as_u64().unwrap()
    );
    assert_eq!(b["token"]["kind"], "shared:authz:tokens:authtokenitemstate");
    let with_tok = |m: Method, p: &str| {
        c.request(m, format!("{}{p}", s.base))
            .header("X-F5-Auth-Token", &tok)
    };
    assert_eq!(
        with_tok(Method::GET, "/mgmt/tm/sys/")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Token resource: PATCH within and beyond 36000 s.
    let p = format!("/mgmt/shared/authz/tokens/{tok}");
    let r = with_tok(Method::PATCH, &p)
        .json(&json!({"timeout": 36000}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["timeout"], 36000);
    let r = with_tok(Method::PATCH, &p)
        .json(&json!({"timeout": 36001}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        with_tok(Method::DELETE, &p).send().await.unwrap().status(),
        200
    );
    let r = with_tok(Method::GET, "/mgmt/tm/sys/").send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        r.json::<Value>().await.unwrap()["message"],
        "X-F5-Auth-Token does not exist."
    );
    // A failed login is the error object inside a one-element array.
    let r = c
        .post(format!("{}/mgmt/shared/authn/login", s.base))
        .json(&json!({"username": "admin", "password": "wrong", "loginProviderName": "tmos"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let b: Value = r.json().await.unwrap();
    assert_error(&b[0], 401);
    // Another authentication source: the part-7 "service unavailable" 401, in an array.
    let r = c
        .post(format!("{}/mgmt/shared/authn/login", s.base))
        .json(&json!({"username": "admin", "password": PASS, "loginProviderName": "ldap"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let b: Value = r.json().await.unwrap();
    assert_error(&b[0], 401);
    assert_eq!(
        b[0]["message"],
        "Unable to process request /tm/auth/source. Service is unavailable."
    );
    assert!(b[0].get("apiError").is_none());
    // Lockout of a separate user after 5 failures: even the right password is refused.
    let (st, _) = api.req(Method::POST, "/mgmt/tm/auth/user", Some(json!({"name": "lock", "password": "Right-pass1", "partitionAccess": [{"name": "all-partitions", "role": "guest"}]}))).await;
    assert_eq!(st, 200);
    for _ in 0..5 {
        let (st, _) = api
            .as_user("lock", "bad")
            .req(Method::GET, "/mgmt/tm/sys", None)
            .await;
        assert_eq!(st, 401);
    }
    let (st, b) = api
        .as_user("lock", "Right-pass1")
        .req(Method::GET, "/mgmt/tm/sys", None)
        .await;
    assert_eq!(st, 401);
    assert!(b["message"].as_str().unwrap().contains("locked"), "{b}");
    // An administrator resetting the password unlocks.
    let (st, _) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/auth/user/lock",
            Some(json!({"password": "New-pass-2"})),
        )
        .await;
    assert_eq!(st, 200);
    let (st, _) = api
        .as_user("lock", "New-pass-2")
        .req(Method::GET, "/mgmt/tm/sys", None)
        .await;
    assert_eq!(st, 200);
}

#[tokio::test]
async fn roles_are_enforced_with_the_part7_message() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    for role in ["resource-admin", "manager", "operator", "guest"] {
        let (st, b) = api
            .req(Method::POST, "/mgmt/tm/auth/user", Some(json!({"name": role, "password": "Pw-12345", "partitionAccess": [{"name": "all-partitions", "role": role}]})))
            .await;
        assert_eq!(st, 200, "{b}");
        assert_eq!(b["partitionAccess"][0]["role"], role);
        assert!(b.get("password").is_none() && b.get("passwordHash").is_none());
    }
    let guest = api.as_user("guest", "Pw-12345");
    let (st, _) = guest.req(Method::GET, "/mgmt/tm/ltm/pool", None).await;
    assert_eq!(st, 200);
    let (st, b) = guest
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "p"})),
        )
        .await;
    assert_eq!(st, 401);
    assert_error(&b, 401);
    assert_eq!(
        b["message"],
        "Authorization failed: user=https://localhost/mgmt/shared/authz/users/guest resource=/tm/ltm/pool verb=POST uri:http://localhost:8100/mgmt/tm/ltm/pool referrer:127.0.0.1 sender:127.0.0.1"
    );
    // Spec 5 rule 3: a resource administrator is refused on /mgmt/tm commands.
    let ra = api.as_user("resource-admin", "Pw-12345");
    let (st, b) = ra
        .req(
            Method::POST,
            "/mgmt/tm",
            Some(json!({"command": "show", "utilCmdArgs": "sys version"})),
        )
        .await;
    assert_eq!(st, 401);
    assert!(b["message"].as_str().unwrap().starts_with("Authorization failed: user=https://localhost/mgmt/shared/authz/users/resource-admin resource=/tm verb=POST"));
    let (st, _) = ra
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "ra_pool"})),
        )
        .await;
    assert_eq!(st, 200);
    let mgr = api.as_user("manager", "Pw-12345");
    let (st, _) = mgr
        .req(
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "p", "members": ["10.0.0.1:80"]})),
        )
        .await;
    assert_eq!(st, 200);
    let (st, _) = mgr
        .req(
            Method::POST,
            "/mgmt/tm/auth/user",
            Some(json!({"name": "x", "password": "Pw-12345"})),
        )
        .await;
    assert_eq!(st, 401);
    let op = api.as_user("operator", "Pw-12345");
    let (st, b) = op
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/pool/~Common~p/members/~Common~10.0.0.1:80",
            Some(json!({"session": "user-disabled"})),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["session"], "user-disabled");
    let (st, _) = op
        .req(
            Method::PATCH,
            "/mgmt/tm/ltm/pool/~Common~p/members/~Common~10.0.0.1:80",
            Some(json!({"address": "10.9.9.9"})),
        )
        .await;
    assert_eq!(st, 401, "operators only enable/disable");
    let (st, _) = op.req(Method::DELETE, "/mgmt/tm/ltm/pool/p", None).await;
    assert_eq!(st, 401);
    // Everyone may change their own password, nobody else's role.
    let (st, _) = guest
        .req(
            Method::PATCH,
            "/mgmt/tm/auth/user/guest",
            Some(json!({"password": "Pw-99999"})),
        )
        .await;
    assert_eq!(st, 200);
    let guest = api.as_user("guest", "Pw-99999");
    let (st, _) = guest
        .req(
            Method::PATCH,
            "/mgmt/tm/auth/user/guest",
            Some(json!({"partitionAccess": [{"name": "all-partitions", "role": "admin"}]})),
        )
        .await;
    assert_eq!(st, 401);
    // The administrator runs commands.
    let (st, b) = api
        .req(
            Method::POST,
            "/mgmt/tm",
            Some(json!({"command": "run", "utilCmdArgs": "-c 'list ltm pool'"})),
        )
        .await;
    assert_eq!(st, 200, "{b}");
    assert!(
        b["commandResult"]
            .as_str()
            .unwrap()
            .contains("ltm pool /Common/p {")
    );
}
