//! Authentication and authorization over real HTTPS: login and tokens (the exact token object,
//! PATCH limits, expiry by DELETE), the login-failure array, other auth sources, lockout, and the
//! role matrix with the exact part-7 401.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::mgmt::{Api, PASS, assert_error, configured, start};

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
    let sys = "/mgmt/tm/sys/";
    assert_eq!(with_token(&api, &tok, Method::GET, sys, None).await.0, 200);
    // Token resource: PATCH within and beyond 36000 s.
    let p = format!("/mgmt/shared/authz/tokens/{tok}");
    let (st, b) = with_token(
        &api,
        &tok,
        Method::PATCH,
        &p,
        Some(json!({"timeout": 36000})),
    )
    .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["timeout"], 36000);
    let (st, _) = with_token(
        &api,
        &tok,
        Method::PATCH,
        &p,
        Some(json!({"timeout": 36001})),
    )
    .await;
    assert_eq!(st, 400);
    assert_eq!(
        with_token(&api, &tok, Method::DELETE, &p, None).await.0,
        200
    );
    let (st, b) = with_token(&api, &tok, Method::GET, sys, None).await;
    assert_eq!(st, 401);
    assert_eq!(b["message"], "X-F5-Auth-Token does not exist.");
    // A failed login is the error object inside a one-element array.
    let (st, b) = login(&api, "admin", "wrong").await;
    assert_eq!(st, 401);
    assert_error(&b[0], 401);
    // Another authentication source: the part-7 "service unavailable" 401, in an array.
    let (st, b) = login_via(&api, "admin", PASS, "ldap").await;
    assert_eq!(st, 401);
    assert_error(&b[0], 401);
    assert_eq!(
        b[0]["message"],
        "Unable to process request /tm/auth/source. Service is unavailable."
    );
    assert!(b[0].get("apiError").is_none());
    // Lockout of a separate user after 5 failures: even the right password is refused.
    let locked = api.add_user("lock", "Right-pass1", "guest").await;
    for _ in 0..5 {
        let (st, _) = api
            .as_user("lock", "bad")
            .req(Method::GET, "/mgmt/tm/sys", None)
            .await;
        assert_eq!(st, 401);
    }
    let (st, b) = locked.req(Method::GET, "/mgmt/tm/sys", None).await;
    assert_eq!(st, 401);
    assert!(b["message"].as_str().unwrap().contains("locked"), "{b}");
    // An administrator resetting the password unlocks.
    let new_password = Some(json!({"password": "New-pass-2"}));
    api.ok(Method::PATCH, "/mgmt/tm/auth/user/lock", new_password)
        .await;
    let unlocked = api.as_user("lock", "New-pass-2");
    unlocked.ok(Method::GET, "/mgmt/tm/sys", None).await;
}

#[tokio::test]
async fn roles_are_enforced_with_the_part7_message() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    for role in ["resource-admin", "manager", "operator", "guest"] {
        api.add_user(role, "Pw-12345", role).await;
        let b = api
            .ok(Method::GET, &format!("/mgmt/tm/auth/user/{role}"), None)
            .await;
        assert_eq!(b["partitionAccess"][0]["role"], role);
        assert!(b.get("password").is_none() && b.get("passwordHash").is_none());
    }
    let guest = api.as_user("guest", "Pw-12345");
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
    // A resource administrator is refused on /mgmt/tm commands.
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
    // What each role may do, in order: the manager's pool is the one the operator works on;
    // operators only enable and disable; everyone may change their own password.
    let member = "/mgmt/tm/ltm/pool/~Common~p/members/~Common~10.0.0.1:80";
    let steps = [
        ("guest", Method::GET, "/mgmt/tm/ltm/pool", None, 200),
        (
            "resource-admin",
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "ra_pool"})),
            200,
        ),
        (
            "manager",
            Method::POST,
            "/mgmt/tm/ltm/pool",
            Some(json!({"name": "p", "members": ["10.0.0.1:80"]})),
            200,
        ),
        (
            "manager",
            Method::POST,
            "/mgmt/tm/auth/user",
            Some(json!({"name": "x", "password": "Pw-12345"})),
            401,
        ),
        (
            "operator",
            Method::PATCH,
            member,
            Some(json!({"session": "user-disabled"})),
            200,
        ),
        (
            "operator",
            Method::PATCH,
            member,
            Some(json!({"address": "10.9.9.9"})),
            401,
        ),
        ("operator", Method::DELETE, "/mgmt/tm/ltm/pool/p", None, 401),
        (
            "guest",
            Method::PATCH,
            "/mgmt/tm/auth/user/guest",
            Some(json!({"password": "Pw-99999"})),
            200,
        ),
    ];
    for (user, m, path, body, want) in steps {
        let who = api.as_user(user, "Pw-12345");
        let (st, b) = who.req(m.clone(), path, body).await;
        assert_eq!(st, want, "{user} {m} {path}: {b}");
    }
    assert_eq!(
        api.ok(Method::GET, member, None).await["session"],
        "user-disabled"
    );
    // ... but nobody changes their own role.
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

/// A server whose lockout and throttles are out of the way, for tests about something else.
fn lenient() -> (tempfile::TempDir, crate::support::mgmt::Server, Api) {
    configured(
        r#"{"mgmt": {"lockout_attempts": 1000, "login_source_attempts": 1000, "login_global_rate": 0}}"#,
    )
}

/// A login (no other credentials) of `user` against the local (`tmos`) source.
async fn login(api: &Api, user: &str, pass: &str) -> (reqwest::StatusCode, Value) {
    login_via(api, user, pass, "tmos").await
}

/// A login of `user` against the authentication source `provider`.
async fn login_via(
    api: &Api,
    user: &str,
    pass: &str,
    provider: &str,
) -> (reqwest::StatusCode, Value) {
    let r = api
        .c
        .post(format!("{}/mgmt/shared/authn/login", api.base))
        .json(&json!({"username": user, "password": pass, "loginProviderName": provider}))
        .send()
        .await
        .unwrap();
    (r.status(), r.json().await.unwrap_or(Value::Null))
}

/// A request authenticated by the token `tok` alone.
async fn with_token(
    api: &Api,
    tok: &str,
    m: Method,
    path: &str,
    body: Option<Value>,
) -> (reqwest::StatusCode, Value) {
    let mut r = api
        .c
        .request(m, format!("{}{path}", api.base))
        .header("X-F5-Auth-Token", tok);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let r = r.send().await.unwrap();
    (r.status(), r.json().await.unwrap_or(Value::Null))
}

/// The token of a successful login.
async fn token(api: &Api, user: &str, pass: &str) -> String {
    let (st, b) = login(api, user, pass).await;
    assert_eq!(st, 200, "{b}");
    b["token"]["token"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_login_spray_from_one_source_is_throttled() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    // A working token, taken before the spray, and a user whose password was never checked.
    let tok = token(&api, "admin", PASS).await;
    api.add_user("fresh", "Fresh-pass-1", "guest").await;
    // Ten failures per minute are allowed from one address, then nothing is even checked.
    let mut throttled = 0;
    for i in 0..30 {
        let (st, b) = login(&api, &format!("nobody{i}"), "guess").await;
        assert_eq!(st, 401);
        if b[0]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("too many failed logins")
        {
            throttled += 1;
        }
    }
    assert_eq!(throttled, 20, "the 11th attempt on is refused");
    // Even a right password is not checked for that source now...
    let (st, b) = login(&api, "fresh", "Fresh-pass-1").await;
    assert_eq!(st, 401, "{b}");
    // ...but the token and credentials verified before keep working.
    let (st, _) = with_token(&api, &tok, Method::GET, "/mgmt/tm/sys", None).await;
    assert_eq!(st, 200);
}

#[tokio::test]
async fn failed_logins_of_unknown_names_take_as_long_as_those_of_real_users() {
    let (_dir, _server, api) = lenient();
    let median = |mut v: Vec<std::time::Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for i in 0..9 {
        // Interleaved, so both see the same load.
        for (user, times) in [("admin", &mut known), ("no-such-user", &mut unknown)] {
            let t0 = std::time::Instant::now();
            let (st, _) = login(&api, user, &format!("wrong-{i}")).await;
            times.push(t0.elapsed());
            assert_eq!(st, 401);
        }
    }
    let (k, u) = (median(known), median(unknown));
    // Both pay one argon2 verification; without it an unknown name fails ~10x faster.
    assert!(
        u.as_secs_f64() > 0.6 * k.as_secs_f64(),
        "unknown {u:?} against known {k:?}: user names can be told apart by timing"
    );
}

#[tokio::test]
async fn a_copy_of_the_store_holds_no_token_and_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let tok = token(&api, "admin", PASS).await;
    let store = dir.path().join("portcullis.redb");
    let bytes = std::fs::read(&store).unwrap();
    assert!(
        !bytes.windows(tok.len()).any(|w| w == tok.as_bytes()),
        "the token is in the store file"
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    // The token still works, and can be read back by its owner.
    let (st, b) = api
        .req(
            Method::GET,
            &format!("/mgmt/shared/authz/tokens/{tok}"),
            None,
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(b["token"], tok.as_str());
}

#[tokio::test]
async fn a_password_reset_by_an_administrator_revokes_the_users_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    api.add_user("ops", "Old-pass-1", "manager").await;
    let stolen = token(&api, "ops", "Old-pass-1").await;
    let new_password = Some(json!({"password": "New-pass-2"}));
    api.ok(Method::PATCH, "/mgmt/tm/auth/user/ops", new_password)
        .await;
    let pools = "/mgmt/tm/ltm/pool";
    let (st, _) = with_token(&api, &stolen, Method::GET, pools, None).await;
    assert_eq!(st, 401, "the old session outlived the reset");
    // A user changing their own password keeps the session they are using.
    let own = token(&api, "ops", "New-pass-2").await;
    let newer = Some(json!({"password": "Newer-pass-3"}));
    let (st, b) = with_token(&api, &own, Method::PATCH, "/mgmt/tm/auth/user/ops", newer).await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(
        with_token(&api, &own, Method::GET, pools, None).await.0,
        200
    );
}
