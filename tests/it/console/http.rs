//! The web console over real HTTPS on the real `portcullis serve` binary, checked as a browser
//! would meet it (the Selenium test in tests/browser drives a real one): login with the REST
//! users, lockout and tokens; cookie flags; the Content-Security-Policy and other headers;
//! CSRF and origin checks on every change; role checks (a guest sees no accept button and cannot
//! accept); escaping of request data; logout revoking the token.

use std::time::Duration;

use reqwest::header::{HeaderMap, LOCATION, SET_COOKIE};
use reqwest::{Method, StatusCode, redirect};
use serde_json::json;

use crate::support::asm::protect;
use crate::support::mgmt::{Api, PASS, start, virtual_server};
use crate::support::upstream::text_of;

fn browser() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .redirect(redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The value of cookie `name` set by a response, with its attributes.
fn set_cookie(h: &HeaderMap, name: &str) -> Option<String> {
    h.get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(str::to_string)
}

/// A form body.
fn encode(pairs: &[(&str, &str)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

fn value(cookie: &str) -> String {
    cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_string()
}

/// The value of hidden field `name` in a page.
fn field(page: &str, name: &str) -> String {
    let at = page.find(&format!("name=\"{name}\" value=\"")).expect(name) + name.len() + 15;
    page[at..].split('"').next().unwrap().to_string()
}

struct Console {
    c: reqwest::Client,
    base: String,
    session: String,
    csrf: String,
}

async fn login_form(c: &reqwest::Client, base: &str) -> (String, String) {
    let res = c.get(format!("{base}/ui/login")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let cookie = set_cookie(res.headers(), "__Host-portcullis-login").expect("login cookie");
    let page = res.text().await.unwrap();
    (value(&cookie), field(&page, "csrf"))
}

async fn try_login(c: &reqwest::Client, base: &str, user: &str, pass: &str) -> reqwest::Response {
    let (cookie, csrf) = login_form(c, base).await;
    c.post(format!("{base}/ui/login"))
        .header("cookie", format!("__Host-portcullis-login={cookie}"))
        .header("origin", base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode(&[
            ("username", user),
            ("password", pass),
            ("csrf", &csrf),
            ("next", "/ui/events"),
        ]))
        .send()
        .await
        .unwrap()
}

async fn login(base: &str, user: &str, pass: &str) -> Console {
    let c = browser();
    let res = try_login(&c, base, user, pass).await;
    assert_eq!(res.status(), StatusCode::SEE_OTHER, "{user} logs in");
    assert_eq!(res.headers()[LOCATION], "/ui/events");
    let cookie = set_cookie(res.headers(), "__Host-portcullis-session").expect("session cookie");
    for attr in [
        "Path=/",
        "Secure",
        "HttpOnly",
        "SameSite=Strict",
        "Max-Age=1200",
    ] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    assert!(!cookie.contains("Domain"), "{cookie}");
    let mut con = Console {
        c,
        base: base.to_string(),
        session: value(&cookie),
        csrf: String::new(),
    };
    let page = con.get("/ui/overview").await.1;
    con.csrf = field(&page, "csrf");
    con
}

impl Console {
    async fn get(&self, path: &str) -> (StatusCode, String, HeaderMap) {
        let res = self
            .c
            .get(format!("{}{path}", self.base))
            .header(
                "cookie",
                format!("__Host-portcullis-session={}", self.session),
            )
            .send()
            .await
            .unwrap();
        let (s, h) = (res.status(), res.headers().clone());
        (s, res.text().await.unwrap(), h)
    }

    async fn post(
        &self,
        path: &str,
        form: &[(&str, &str)],
        origin: Option<&str>,
    ) -> (StatusCode, String, HeaderMap) {
        let mut r = self
            .c
            .post(format!("{}{path}", self.base))
            .header(
                "cookie",
                format!("__Host-portcullis-session={}", self.session),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .body(encode(form));
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        let res = r.send().await.unwrap();
        let (s, h) = (res.status(), res.headers().clone());
        (s, res.text().await.unwrap(), h)
    }
}

const BROWSER_UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_keeps_the_rest_apis_rules() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), None);
    let base = srv.base.clone();
    let api = Api::new(&srv);
    let anon = browser();

    // Not logged in: to the login page, remembering where to go.
    let res = anon
        .get(format!("{base}/ui/policies"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(res.headers()[LOCATION], "/ui/login?next=%2Fui%2Fpolicies");
    let res = anon.get(format!("{base}/ui/login")).send().await.unwrap();
    let h = res.headers();
    assert_eq!(
        h["content-security-policy"],
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["cache-control"], "no-store");
    let js = anon
        .get(format!("{base}/ui/static/console.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );

    // The login form needs its double-submit token; a bad password is refused.
    let (_, csrf) = login_form(&anon, &base).await;
    let res = anon
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encode(&[
            ("username", "admin"),
            ("password", PASS),
            ("csrf", csrf.as_str()),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        StatusCode::UNAUTHORIZED,
        "no login cookie: refused"
    );
    assert!(set_cookie(res.headers(), "__Host-portcullis-session").is_none());
    let res = try_login(&anon, &base, "admin", "wrong").await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.text().await.unwrap().contains("Login failed"));

    // Users and lockout are the REST API's.
    for (name, role) in [("viewer", "guest"), ("locky", "guest")] {
        let (s, b) = api
            .req(
                Method::POST,
                "/mgmt/tm/auth/user",
                Some(json!({"name": name, "password": "Guest-pass-1", "role": role})),
            )
            .await;
        assert_eq!(s, 200, "{b}");
    }
    for _ in 0..5 {
        try_login(&anon, &base, "locky", "nope").await;
    }
    let res = try_login(&anon, &base, "locky", "Guest-pass-1").await;
    assert_eq!(
        res.status(),
        StatusCode::UNAUTHORIZED,
        "locked out through the console"
    );
    let (s, _) = api
        .as_user("locky", "Guest-pass-1")
        .req(Method::GET, "/mgmt/tm/sys", None)
        .await;
    assert_eq!(s, 401, "and on REST: one lockout");

    // A protected virtual server, a blocked request with markup in it.
    let port = virtual_server(&api).await;
    let doc = json!({"policy": {"name": "ui", "template": {"name": "POLICY_TEMPLATE_NGINX_BASE"},
        "enforcementMode": "blocking", "signature-settings": {"signatureStaging": false}}});
    let pid = protect(&api, "/Common/ui", &doc).await;
    let attack = reqwest::Client::new()
        .get(format!(
            "http://127.0.0.1:{port}/go?next=http://127.0.0.1/x&m=%3Cscript%3Ealert(1)%3C/script%3E"
        ))
        .header("user-agent", BROWSER_UA)
        .header("authorization", "Bearer super-secret-token");
    let body = text_of(attack).await;
    let sid: String = body
        .split("support ID is: ")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();

    // The administrator: pages render, request data is escaped, credentials masked.
    let admin = login(&base, "admin", PASS).await;
    let (s, _) = api.req(Method::GET, "/mgmt/tm/sys", None).await;
    assert_eq!(s, 200);
    let mut event = String::new();
    for _ in 0..100 {
        let (s, page, _) = admin.get(&format!("/ui/events?support_id={sid}")).await;
        assert_eq!(s, 200);
        if page.contains(&sid) {
            event = page;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        event.contains("/go?next=http://127.0.0.1/x&#38;m=%3Cscript%3E"),
        "the request in the list: {event}"
    );
    let (s, detail, h) = admin.get(&format!("/ui/events/{sid}")).await;
    assert_eq!(s, 200);
    assert!(
        h["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'none'")
    );
    assert!(
        detail.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "the matched text, escaped"
    );
    assert!(!detail.contains("<script>alert"), "never raw");
    assert!(detail.contains("authorization: Bearer ********"), "masked");
    assert!(!detail.contains("super-secret-token"));
    assert!(detail.contains("id=\"accept-button\""));
    assert!(
        !detail.contains("<script>") && detail.matches("<script").count() == 1,
        "one script, from a file"
    );
    for p in [
        "/ui/overview",
        "/ui/overview?span=day",
        "/ui/events",
        "/ui/policies",
        &format!("/ui/policies/{pid}"),
        &format!("/ui/policies/{pid}/suggestions"),
        "/ui/virtuals",
    ] {
        let (s, page, _) = admin.get(p).await;
        assert_eq!(s, 200, "{p}");
        assert!(
            page.contains("<title>") && !page.contains(" style="),
            "{p}: no inline style"
        );
    }
    // An id never changes the shape of the REST path it goes into.
    for p in [
        format!("/ui/events/{sid}%2F..%2F..%2F..%2Fshared%2Fauthz%2Ftokens"),
        format!("/ui/policies/{pid}%3F%24select=id/suggestions"),
    ] {
        let (s, page, _) = admin.get(&p).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{p}: {page}");
    }
    let (s, export, h) = admin.get(&format!("/ui/policies/{pid}/export")).await;
    assert_eq!(s, 200);
    assert_eq!(h["content-disposition"], "attachment; filename=\"ui.json\"");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&export).unwrap()["policy"]["fullPath"],
        "/Common/ui"
    );

    // Every change needs the session's CSRF token and this site as its origin.
    let apply_path = format!("/ui/policies/{pid}/apply");
    let (s, _, _) = admin.post(&apply_path, &[], Some(&base)).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "no CSRF token");
    let (s, _, _) = admin
        .post(&apply_path, &[("csrf", "forged")], Some(&base))
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "a wrong one");
    let (s, _, _) = admin
        .post(
            &apply_path,
            &[("csrf", &admin.csrf)],
            Some("https://evil.example"),
        )
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "another site");
    let (s, _, h) = admin
        .post(&apply_path, &[("csrf", &admin.csrf)], Some(&base))
        .await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    assert!(
        h[LOCATION]
            .to_str()
            .unwrap()
            .starts_with(&format!("/ui/policies/{pid}?done=applied&task="))
    );

    // A guest: reads, sees no accept button, and cannot accept (the REST role check answers).
    let viewer = login(&base, "viewer", "Guest-pass-1").await;
    let (s, page, _) = viewer.get(&format!("/ui/events/{sid}")).await;
    assert_eq!(s, 200);
    assert!(!page.contains("accept-button") && page.contains("accept-denied"));
    let (s, page, _) = viewer
        .post(
            &format!("/ui/events/{sid}/accept"),
            &[("csrf", &viewer.csrf)],
            Some(&base),
        )
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{page}");
    assert!(
        page.contains(
            "Authorization failed: user=https://localhost/mgmt/shared/authz/users/viewer"
        )
    );
    // Every change the console offers: refused without the CSRF token, and for a guest with it.
    let suggestions = format!("/ui/policies/{pid}/suggestions");
    for (path, form) in [
        (format!("/ui/events/{sid}/accept"), vec![("force", "yes")]),
        (apply_path.clone(), vec![]),
        (format!("/ui/policies/{pid}/blocking"), vec![]),
        (format!("{suggestions}/accept"), vec![("min_score", "0")]),
        (format!("{suggestions}/AAAAAAAAAAAAAAAA/accept"), vec![]),
        (format!("{suggestions}/AAAAAAAAAAAAAAAA/dismiss"), vec![]),
    ] {
        let (s, _, _) = viewer.post(&path, &form, Some(&base)).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{path} without a CSRF token");
        let with_csrf: Vec<(&str, &str)> = form
            .iter()
            .copied()
            .chain([("csrf", viewer.csrf.as_str())])
            .collect();
        let (s, page, _) = viewer.post(&path, &with_csrf, Some(&base)).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{path} by a guest: {page}");
        assert!(page.contains("Authorization failed"), "{path}: {page}");
    }
    let (_, page, _) = viewer.get(&format!("/ui/policies/{pid}")).await;
    assert!(
        !page.contains("id=\"apply\""),
        "no apply button for a guest"
    );
    // Exporting is a task a guest may not start over REST: no link, and no download.
    assert!(
        !page.contains("id=\"export\""),
        "no export link for a guest"
    );
    let (s, page, _) = viewer.get(&format!("/ui/policies/{pid}/export")).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{page}");

    // The session is a REST token; logging out revokes it.
    let token_ok = |tok: String| {
        let c = browser();
        let base = base.clone();
        async move {
            c.get(format!("{base}/mgmt/tm/sys"))
                .header("x-f5-auth-token", tok)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(token_ok(admin.session.clone()).await, 200);
    let (s, _, h) = admin
        .post("/ui/logout", &[("csrf", &admin.csrf)], Some(&base))
        .await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    assert!(
        set_cookie(&h, "__Host-portcullis-session")
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(token_ok(admin.session.clone()).await, 401);
    let (s, _, h) = admin.get("/ui/overview").await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    assert!(h[LOCATION].to_str().unwrap().starts_with("/ui/login"));
}

/// The console is a client of the REST login, not a second one: an administrator's password
/// reset ends a user's console session, and a spray of failed console logins from one address is
/// throttled as on REST (while credentials verified before still log in).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_logins_are_throttled_and_a_password_reset_ends_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let srv = start(dir.path(), None);
    let base = srv.base.clone();
    let api = Api::new(&srv);
    let (s, b) = api
        .req(
            Method::POST,
            "/mgmt/tm/auth/user",
            Some(json!({"name": "ops", "password": "Old-pass-1", "role": "manager"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    // A password reset by an administrator revokes the user's console session.
    let ops = login(&base, "ops", "Old-pass-1").await;
    assert_eq!(ops.get("/ui/events").await.0, StatusCode::OK);
    let (s, b) = api
        .req(
            Method::PATCH,
            "/mgmt/tm/auth/user/ops",
            Some(json!({"password": "New-pass-2"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, _, h) = ops.get("/ui/events").await;
    assert_eq!(
        s,
        StatusCode::SEE_OTHER,
        "the old session outlived the reset"
    );
    assert!(h[LOCATION].to_str().unwrap().starts_with("/ui/login"));
    let (s, page, _) = ops
        .post("/ui/logout", &[("csrf", &ops.csrf)], Some(&base))
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{page}");

    // Ten failed logins a minute from one address, then not even a right password is checked.
    let anon = browser();
    for i in 0..10 {
        let res = try_login(&anon, &base, &format!("nobody{i}"), "guess").await;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        let page = res.text().await.unwrap();
        assert!(
            page.contains("Login failed: invalid username or password."),
            "{page}"
        );
    }
    let res = try_login(&anon, &base, "ops", "New-pass-2").await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    let page = res.text().await.unwrap();
    assert!(
        page.contains("Login failed: too many failed logins; try again in"),
        "{page}"
    );
    // The administrator's credentials, verified before the spray, still open a session.
    let admin = login(&base, "admin", PASS).await;
    assert_eq!(admin.get("/ui/overview").await.0, StatusCode::OK);
}
