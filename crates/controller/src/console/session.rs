//! Console sessions on the REST API's own tokens: logging in is `POST /mgmt/shared/authn/login`
//! (same password check, lockout and token lifetime), the token goes into a cookie
//! (`__Host-` prefixed: `Secure`, `Path=/`, no `Domain`; `HttpOnly`; `SameSite=Strict`), and every
//! page authenticates it as an `X-F5-Auth-Token` would be. Logging out deletes the token.
//!
//! CSRF: every POST carries a `csrf` field, a keyed SHA-256 of the session token (the key is
//! random per data directory, kept in the store's meta table, so forms survive a restart), and a
//! request whose `Origin` or `Sec-Fetch-Site` names another site is refused. The login form, which
//! has no session yet, is protected by a double-submit cookie.

use std::sync::Arc;

use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderValue, Method, StatusCode, header};
use rand::RngExt as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::{Req, html, see_other, view};
use portcullis_admin::MgmtState;
use portcullis_admin::User;
use portcullis_store::{StoreError, Table};

pub const COOKIE: &str = "__Host-portcullis-session";
const LOGIN_COOKIE: &str = "__Host-portcullis-login";
const KEY_META: &str = "consoleCsrfKey";

/// A logged-in user.
pub struct Session {
    pub user: User,
    pub token: String,
    /// The CSRF token of this session's forms.
    pub csrf: String,
}

/// The CSRF key of this data directory, created on first use.
struct CsrfKey([u8; 32]);

fn csrf_key(st: &MgmtState) -> [u8; 32] {
    if let Some(k) = st.attached::<CsrfKey>() {
        return k.0;
    }
    let fresh: [u8; 32] = rand::rng().random();
    let stored = st.store.write(|tx| {
        if let Some(Value::String(k)) = tx.get(Table::Meta, KEY_META)?
            && let Ok(bytes) = URL_SAFE_NO_PAD.decode(k)
            && let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice())
        {
            return Ok::<_, StoreError>(key);
        }
        tx.put(Table::Meta, KEY_META, &json!(URL_SAFE_NO_PAD.encode(fresh)))?;
        Ok(fresh)
    });
    // Without a store, a key for this process still protects the forms.
    let key = stored.unwrap_or(fresh);
    st.attach(Arc::new(CsrfKey(key)));
    key
}

fn csrf_of(st: &MgmtState, token: &str) -> String {
    let mut h = Sha256::new();
    h.update(csrf_key(st));
    h.update(b"csrf\0");
    h.update(token.as_bytes());
    URL_SAFE_NO_PAD.encode(h.finalize())
}

fn cookie(parts: &http::request::Parts, name: &str) -> Option<String> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|p| p.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_string())
}

fn set_cookie(res: &mut Response, name: &str, value: &str, max_age: u64) {
    let c = format!("{name}={value}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age={max_age}");
    if let Ok(v) = HeaderValue::from_str(&c) {
        res.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// Equal in constant time (the bytes compared never decide how long it takes).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A `next` target after login: a console page, never another site.
fn next_of(r: &Req<'_>) -> String {
    r.f("next")
        .or_else(|| r.q("next"))
        .filter(|n| n.starts_with("/ui/") && !n.starts_with("/ui//") && !n.contains('\\'))
        .unwrap_or("/ui/overview")
        .to_string()
}

/// Whether a state-changing request comes from this site: `Origin` (when sent) is this host,
/// `Sec-Fetch-Site` (when sent) is `same-origin`.
fn same_site(r: &Req<'_>) -> bool {
    let h = &r.parts.headers;
    let host = h
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| r.parts.uri.authority().map(|a| a.as_str()));
    let origin_ok = match h.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(o) => host.is_some_and(|host| o == format!("https://{host}")),
    };
    let fetch_ok = h
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_none_or(|s| s == "same-origin");
    origin_ok && fetch_ok
}

impl Session {
    /// The session of a request; else the answer that sends the browser to the login page.
    pub fn of(r: &Req<'_>) -> Result<Session, Box<Response>> {
        let token = cookie(r.parts, COOKIE);
        let user = token.as_deref().map(|t| r.st.user_of_token(t));
        match (token, user) {
            (Some(token), Some(Ok(user))) => Ok(Session {
                csrf: csrf_of(r.st, &token),
                user,
                token,
            }),
            _ => {
                let here = r
                    .parts
                    .uri
                    .path_and_query()
                    .map_or("/ui/overview", |p| p.as_str());
                let next: String = form_urlencoded::byte_serialize(here.as_bytes()).collect();
                let mut res = if r.parts.method == Method::GET {
                    see_other(&format!("/ui/login?next={next}"))
                } else {
                    view::error_page(
                        StatusCode::UNAUTHORIZED,
                        "Your session has ended; log in again.",
                    )
                };
                set_cookie(&mut res, COOKIE, "", 0);
                Err(Box::new(res))
            }
        }
    }

    /// Checks a POST: the CSRF field and the origin.
    pub fn check_post(&self, r: &Req<'_>) -> Result<(), Box<Response>> {
        let ok = r.f("csrf").is_some_and(|c| same(c, &self.csrf)) && same_site(r);
        if ok {
            Ok(())
        } else {
            Err(Box::new(view::error_page(
                StatusCode::FORBIDDEN,
                "The form was not sent from this console (or it expired): reload the page and try again.",
            )))
        }
    }

    /// Whether the role table lets this user send `method` to the REST `path`.
    pub fn can(&self, method: &Method, path: &str) -> bool {
        portcullis_admin::allowed(self.user.role, &self.user.name, method, path)
    }
}

/// The login page (with a fresh double-submit token).
pub fn login_page(r: &Req<'_>, error: Option<&str>) -> Response {
    let token: [u8; 16] = rand::rng().random();
    let token = URL_SAFE_NO_PAD.encode(token);
    let page = view::Login {
        next: next_of(r),
        csrf: token.clone(),
        error: error.map(str::to_string),
    };
    let status = if error.is_some() {
        StatusCode::UNAUTHORIZED
    } else {
        StatusCode::OK
    };
    let mut res = html(status, view::render(&page));
    set_cookie(&mut res, LOGIN_COOKIE, &token, 600);
    res
}

/// `POST /ui/login`: the REST login with the form's credentials.
pub fn login(r: &Req<'_>) -> Response {
    let double = cookie(r.parts, LOGIN_COOKIE);
    let sent = r.f("csrf").unwrap_or_default();
    if !double.is_some_and(|d| same(&d, sent)) || !same_site(r) {
        return login_page(r, Some("The login form expired; try again."));
    }
    let body = json!({
        "username": r.f("username").unwrap_or_default(),
        "password": r.f("password").unwrap_or_default(),
        "loginProviderName": "tmos",
    });
    // The REST login itself: its password check, lockout and throttling of failed logins per
    // source address are the console's too.
    let answer = crate::objects::tokens::login(
        r.st,
        &http::HeaderMap::new(),
        body.to_string().as_bytes(),
        r.peer,
    );
    let token = answer.map(|reply| {
        let b = reply.body.unwrap_or_default();
        (
            b["token"]["token"].as_str().unwrap_or_default().to_string(),
            b["token"]["timeout"].as_u64().unwrap_or(1200),
        )
    });
    match token {
        Ok((token, timeout)) if !token.is_empty() => {
            let mut res = see_other(&next_of(r));
            set_cookie(&mut res, COOKIE, &token, timeout);
            set_cookie(&mut res, LOGIN_COOKIE, "", 0);
            res
        }
        // The REST answer's reason (wrong credentials, locked out, throttled), no more: which of
        // user or password was wrong stays unknown, as on the REST API.
        Err(e) => {
            let why = e
                .message
                .strip_prefix("Authentication failed: ")
                .unwrap_or("wrong user name or password.");
            login_page(r, Some(&format!("Login failed: {why}")))
        }
        Ok(_) => login_page(r, Some("Login failed: the login answered no token.")),
    }
}

/// `POST /ui/logout`: the session's token is deleted.
pub fn logout(r: &Req<'_>, s: &Session) -> Response {
    let _ = super::rest::call(
        r,
        s,
        Method::DELETE,
        &format!("/mgmt/shared/authz/tokens/{}", s.token),
        None,
    );
    let mut res = see_other("/ui/login");
    set_cookie(&mut res, COOKIE, "", 0);
    res
}
