//! The admin API over real HTTPS against the real `portcullis serve` binary: authentication and
//! tokens, the role matrix, every part-7 error, object CRUD rules, uploads/ifiles/certificates,
//! and kill -9 during a burst of writes (every acknowledged write survives a restart).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};

const PASS: &str = "Adm1n-pass-for-tests";

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &std::path::Path, config: Option<&std::path::Path>) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    cmd.arg("serve")
        .arg("--admin-listen")
        .arg("127.0.0.1:0")
        .arg("--data-dir")
        .arg(dir);
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    let mut child = cmd
        .env("PORTCULLIS_ADMIN_PASSWORD", PASS)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn portcullis");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let deadline = Instant::now() + Duration::from_secs(60);
    let base = loop {
        assert!(Instant::now() < deadline, "server did not start");
        let line = lines.next().expect("server exited").expect("read line");
        if let Some(rest) = line.strip_prefix("portcullis: admin API listening on ") {
            break rest.trim_end_matches("/mgmt").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server { child, base }
}

fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

struct Api {
    c: Client,
    base: String,
    user: String,
    pass: String,
}

impl Api {
    fn new(s: &Server) -> Api {
        Api {
            c: client(),
            base: s.base.clone(),
            user: "admin".into(),
            pass: PASS.into(),
        }
    }
    fn as_user(&self, user: &str, pass: &str) -> Api {
        Api {
            c: self.c.clone(),
            base: self.base.clone(),
            user: user.into(),
            pass: pass.into(),
        }
    }
    async fn req(&self, m: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let mut r = self
            .c
            .request(m, format!("{}{path}", self.base))
            .basic_auth(&self.user, Some(&self.pass));
        if let Some(b) = body {
            r = r.json(&b);
        }
        let res = r.send().await.expect("request");
        let st = res.status();
        let text = res.text().await.expect("body");
        (
            st,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
    async fn raw(&self, m: Method, path: &str, body: &'static str) -> (StatusCode, Value) {
        let res = self
            .c
            .request(m, format!("{}{path}", self.base))
            .basic_auth(&self.user, Some(&self.pass))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let st = res.status();
        (st, res.json().await.unwrap_or(Value::Null))
    }
}

fn assert_error(body: &Value, code: u16) {
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["kind"], ":resterrorresponse", "{body}");
    assert!(
        body["errorStack"].is_array()
            && body["restOperationId"].is_u64()
            && body["referer"].is_string(),
        "{body}"
    );
}

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

#[tokio::test]
async fn uploads_ifiles_and_certificate_install() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let up = |name: &str, range: &str, body: Vec<u8>| {
        api.c
            .post(format!(
                "{}/mgmt/shared/file-transfer/uploads/{name}",
                s.base
            ))
            .basic_auth("admin", Some(PASS))
            .header("content-type", "application/octet-stream")
            .header("content-range", range.to_string())
            .body(body)
            .send()
    };
    let data: Vec<u8> = (0..1500u32).map(|i| (i % 251) as u8).collect();
    let r = up("data.bin", "0-999/1500", data[..1000].to_vec())
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["remainingByteCount"], 500);
    let r = up("data.bin", "1000-1499/1500", data[1000..].to_vec())
        .await
        .unwrap();
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["remainingByteCount"], 0);
    assert_eq!(b["localFilePath"], "/var/config/rest/downloads/data.bin");
    assert_eq!(
        std::fs::read(dir.path().join("downloads/data.bin")).unwrap(),
        data
    );
    assert_eq!(up("...", "0-0/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("a%2fb", "0-0/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("a..b", "0-0/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("x", "0-5/1", vec![1]).await.unwrap().status(), 400);
    assert_eq!(up("x", "0-1/2", vec![1]).await.unwrap().status(), 400);
    // iFile from the upload: checksum SHA1:<size>:<hash>.
    let (st, f) = api
        .req(
            Method::POST,
            "/mgmt/tm/sys/file/ifile",
            Some(json!({"name": "if1", "sourcePath": "file:/var/config/rest/downloads/data.bin"})),
        )
        .await;
    assert_eq!(st, 200, "{f}");
    use sha1::Digest;
    let hex: String = sha1::Sha1::digest(&data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(f["checksum"], format!("SHA1:1500:{hex}"));
    assert_eq!(f["size"], 1500);
    let (st, _) = api
        .req(
            Method::POST,
            "/mgmt/tm/sys/file/ifile",
            Some(json!({"name": "if2", "sourcePath": "file:/etc/passwd"})),
        )
        .await;
    assert_eq!(st, 400);
    // PUT points the iFile at a new upload.
    let r = up("data2.bin", "0-2/3", b"abc".to_vec()).await.unwrap();
    assert_eq!(r.status(), 200);
    let (st, f2) = api
        .req(
            Method::PUT,
            "/mgmt/tm/sys/file/ifile/~Common~if1",
            Some(json!({"sourcePath": "file:/var/config/rest/downloads/data2.bin"})),
        )
        .await;
    assert_eq!(st, 200, "{f2}");
    assert_eq!(f2["size"], 3);
    assert_eq!(f2["revision"], 2);
    assert_eq!(f2["createTime"], f["createTime"]);
    assert_eq!(
        f2["checksum"],
        "SHA1:3:a9993e364706816aba3e25717850c26c9cd0d89d"
    );
    // ASM upload path works the same way.
    let r = api
        .c
        .post(format!(
            "{}/mgmt/tm/asm/file-transfer/uploads/pol.json",
            s.base
        ))
        .basic_auth("admin", Some(PASS))
        .header("content-range", "0-1/2")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Certificate install: a real certificate, then something that is not one.
    let ck = rcgen::generate_simple_self_signed(vec!["site.test".into()]).unwrap();
    let pem = ck.cert.pem().into_bytes();
    let n = pem.len();
    assert_eq!(
        up("site.crt", &format!("0-{}/{n}", n - 1), pem)
            .await
            .unwrap()
            .status(),
        200
    );
    let (st, b) = api
        .req(Method::POST, "/mgmt/tm/sys/crypto/cert", Some(json!({"command": "install", "name": "site.crt", "from-local-file": "/var/config/rest/downloads/site.crt"})))
        .await;
    assert_eq!(st, 200, "{b}");
    let (st, c) = api
        .req(
            Method::GET,
            "/mgmt/tm/sys/file/ssl-cert/~Common~site.crt",
            None,
        )
        .await;
    assert_eq!(st, 200);
    assert!(c["subject"].as_str().unwrap().contains("rcgen"), "{c}");
    let (st, b) = api
        .req(Method::POST, "/mgmt/tm/sys/crypto/cert", Some(json!({"command": "install", "name": "bad.crt", "from-local-file": "/var/config/rest/downloads/data.bin"})))
        .await;
    assert_eq!(st, 400);
    assert_error(&b, 400);
    assert_eq!(
        b["message"],
        "Key management library returned bad status: -4, Invalid Parameter"
    );
}

#[tokio::test]
async fn upload_size_limit_is_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg.json");
    std::fs::write(
        &cfg,
        r#"{"mgmt": {"max_upload_bytes": 1000, "data_dir": "unused"}}"#,
    )
    .unwrap();
    let s = start(&dir.path().join("data"), Some(&cfg));
    let api = Api::new(&s);
    let r = api
        .c
        .post(format!("{}/mgmt/shared/file-transfer/uploads/big", s.base))
        .basic_auth("admin", Some(PASS))
        .header("content-range", "0-9/1001")
        .body(vec![0u8; 10])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
}

#[tokio::test]
async fn kill_9_during_a_burst_of_writes_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path(), None);
    let api = Api::new(&s);
    let acked = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for w in 0..4 {
        let (c, base, acked) = (api.c.clone(), s.base.clone(), acked.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..10_000 {
                let name = format!("p{w}_{i}");
                let r = c
                    .post(format!("{base}/mgmt/tm/ltm/pool"))
                    .basic_auth("admin", Some(PASS))
                    .json(&json!({"name": name, "description": "burst"}))
                    .send()
                    .await;
                match r {
                    Ok(r) if r.status() == 200 => acked.lock().push(name),
                    _ => return,
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    s.child.kill().expect("kill -9");
    let _ = s.child.wait();
    for t in tasks {
        let _ = t.await;
    }
    let acked = acked.lock().clone();
    assert!(acked.len() > 10, "only {} writes acknowledged", acked.len());
    drop(s);
    let s2 = start(dir.path(), None);
    let api2 = Api::new(&s2);
    let (_, b) = api2
        .req(Method::GET, "/mgmt/tm/ltm/pool?$select=name", None)
        .await;
    let names: std::collections::HashSet<String> = b["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect();
    for n in &acked {
        assert!(
            names.contains(n),
            "acknowledged pool {n} lost after kill -9"
        );
    }
}

/// Benchmark (run explicitly): durable creations per second with 8 concurrent clients, then
/// GET latency percentiles of one object. `cargo test --release --test mgmt_api -- --ignored --nocapture bench_`
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore]
async fn bench_durable_creates_and_get_latency() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), None);
    let api = Api::new(&s);
    let (st, _) = api.req(Method::GET, "/mgmt/tm/sys", None).await;
    assert_eq!(st, 200);
    let t0 = Instant::now();
    let per = 250;
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (c, base) = (api.c.clone(), s.base.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..per {
                let r = c
                    .post(format!("{base}/mgmt/tm/ltm/pool"))
                    .basic_auth("admin", Some(PASS))
                    .json(
                        &json!({"name": format!("b{w}_{i}"), "members": [{"name": "10.0.0.1:80"}]}),
                    )
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "durable creates: {} in {secs:.2} s = {:.0}/s (8 clients, pool + 1 member each)",
        8 * per,
        f64::from(8 * per) / secs
    );
    let mut lat = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        let r = api
            .c
            .get(format!("{}/mgmt/tm/ltm/pool/~Common~b0_1", s.base))
            .basic_auth("admin", Some(PASS))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let _ = r.bytes().await.unwrap();
        lat.push(t.elapsed().as_micros());
    }
    lat.sort_unstable();
    println!(
        "GET object latency (sequential, keep-alive): p50 {} us, p99 {} us, max {} us",
        lat[lat.len() / 2],
        lat[lat.len() * 99 / 100],
        lat[lat.len() - 1]
    );
}
