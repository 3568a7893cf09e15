//! The web console at `https://<admin address>/ui/`: server-rendered HTML (askama templates
//! compiled into the binary), a little JavaScript and CSS shipped inside it, SVG charts drawn on
//! the server. Same users, roles, lockout and token lifetime as the REST API: a session *is* a
//! REST token (`session`), every change is the REST request it stands for, dispatched with that
//! token (`rest`), so the role matrix and error objects are the API's own.
//!
//! Every answer carries a strict Content-Security-Policy (scripts and styles from this origin
//! only, no inline script or style, no framing) and `Cache-Control: no-store`; every change is a
//! POST checked for its CSRF token and origin. See docs/console.md.
//!
//! - [`session`]: login, logout, cookies, CSRF;
//! - [`rest`]: a REST request on behalf of a session;
//! - [`view`]: the templates' data and shared formatting;
//! - [`chart`]: SVG line and bar charts; [`diff`]: the pending-changes diff;
//! - [`pages`]: one file per page.

mod chart;
mod diff;
mod pages;
mod rest;
mod session;
mod view;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};

use portcullis_admin::MgmtState;
use portcullis_support::body::{self, BodyError};
use session::Session;

/// Largest form body accepted.
const MAX_FORM: u64 = 64 * 1024;

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const CONSOLE_JS: &str = include_str!("static/console.js");
const CONSOLE_CSS: &str = include_str!("static/console.css");
const FAVICON: &str = include_str!("static/favicon.svg");

/// The `/ui` router (merged in front of the `/mgmt` one by `portcullis serve`).
pub fn router(st: Arc<MgmtState>) -> Router {
    Router::new()
        .route("/ui", axum::routing::any(handle))
        .route("/ui/", axum::routing::any(handle))
        .route("/ui/{*rest}", axum::routing::any(handle))
        .with_state(st)
}

async fn handle(State(st): State<Arc<MgmtState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let peer = portcullis_admin::peer_of(&parts);
    // The admin port's body bounds: a declared length over the limit is refused before it is
    // read, and a form must keep coming (no slow sender holds the connection).
    let limits = st.cfg.body_limits(MAX_FORM);
    let too_large = || {
        secure(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The form is too large.",
        ))
    };
    if body::declared_length(&parts.headers).is_some_and(|n| n > MAX_FORM) {
        return body::answer_early(body, &parts.headers, parts.version, &limits, too_large()).await;
    }
    let bytes = match body::read(body, &limits).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => return body::closing(too_large()),
        Err(e) => {
            let text = match e {
                BodyError::TimedOut => "The form did not arrive in time.",
                _ => "The form could not be read.",
            };
            return body::closing(secure(plain(e.status(), text)));
        }
    };
    let res = tokio::task::spawn_blocking(move || route(&st, &parts, &bytes, &peer)).await;
    secure(res.unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "The page failed.")))
}

/// The request as the pages see it.
pub struct Req<'a> {
    pub st: &'a MgmtState,
    pub parts: &'a http::request::Parts,
    pub peer: &'a str,
    /// Query-string pairs.
    pub query: Vec<(String, String)>,
    /// Form pairs of a POST.
    pub form: Vec<(String, String)>,
}

impl Req<'_> {
    pub fn q(&self, k: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
    pub fn f(&self, k: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }
}

fn route(st: &MgmtState, parts: &http::request::Parts, body: &[u8], peer: &str) -> Response {
    let path = parts.uri.path().trim_end_matches('/');
    let segs: Vec<String> = path
        .split('/')
        .skip(2)
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let pairs = |b: &[u8]| -> Vec<(String, String)> {
        form_urlencoded::parse(b)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    };
    let post = parts.method == Method::POST;
    let r = Req {
        st,
        parts,
        peer,
        query: pairs(parts.uri.query().unwrap_or("").as_bytes()),
        form: if post { pairs(body) } else { Vec::new() },
    };
    match (parts.method.clone(), segs.as_slice()) {
        (Method::GET, ["static", "console.js"]) => {
            asset(CONSOLE_JS, "text/javascript; charset=utf-8")
        }
        (Method::GET, ["static", "console.css"]) => asset(CONSOLE_CSS, "text/css; charset=utf-8"),
        (Method::GET, ["static", "favicon.svg"]) => asset(FAVICON, "image/svg+xml"),
        (Method::GET, ["login"]) => session::login_page(&r, None),
        (Method::POST, ["login"]) => session::login(&r),
        (m, _) if m != Method::GET && m != Method::POST => {
            plain(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed.")
        }
        _ => match Session::of(&r) {
            Err(to_login) => *to_login,
            Ok(s) if post => match s.check_post(&r) {
                Ok(()) => pages::post(&r, &s, &segs),
                Err(e) => *e,
            },
            Ok(s) => pages::get(&r, &s, &segs),
        },
    }
}

/// Drives the console with one request made from arbitrary bytes (the fuzz target): the first
/// line is `METHOD PATH`, the second a `Cookie` value, the rest the body. Every input gets an
/// answer, never a panic.
#[cfg(any(test, fuzzing))]
pub fn fuzz_request(st: &MgmtState, data: &[u8]) -> StatusCode {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(3, '\n');
    let first = lines.next().unwrap_or_default();
    let cookie = lines.next().unwrap_or_default();
    let body = lines.next().unwrap_or_default();
    let (method, path) = first.split_once(' ').unwrap_or(("GET", first));
    let Ok(method) = Method::from_bytes(method.as_bytes()) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut b = http::Request::builder().method(method).uri(path);
    if let Ok(v) = HeaderValue::from_str(cookie.trim()) {
        b = b.header(header::COOKIE, v);
    }
    let Ok(req) = b.body(()) else {
        return StatusCode::BAD_REQUEST;
    };
    let (parts, ()) = req.into_parts();
    route(st, &parts, body.as_bytes(), "127.0.0.1").status()
}

/// Adds the security headers every console answer carries.
fn secure(mut res: Response) -> Response {
    let h = res.headers_mut();
    let cached = h.contains_key(header::CACHE_CONTROL);
    let mut set = |k: header::HeaderName, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(header::CONTENT_SECURITY_POLICY, CSP);
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::X_FRAME_OPTIONS, "DENY");
    // Not `no-referrer`: that makes browsers send `Origin: null`, which the CSRF check refuses.
    set(header::REFERRER_POLICY, "same-origin");
    set(header::STRICT_TRANSPORT_SECURITY, "max-age=31536000");
    set(
        header::HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    if !cached {
        set(header::CACHE_CONTROL, "no-store");
    }
    res
}

fn asset(body: &'static str, ct: &'static str) -> Response {
    let mut res = Response::new(Body::from(body));
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=300"),
    );
    res
}

/// A plain-text answer.
pub fn plain(status: StatusCode, text: &str) -> Response {
    let mut res = Response::new(Body::from(text.to_string()));
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    res
}

/// An HTML page.
pub fn html(status: StatusCode, body: String) -> Response {
    let mut res = Response::new(Body::from(body));
    *res.status_mut() = status;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    res
}

/// `303 See Other` to `to` (a path under `/ui`), after a POST.
pub fn see_other(to: &str) -> Response {
    let mut res = Response::new(Body::empty());
    *res.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(to) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_seeds_get_answers() {
        let dir = tempfile::tempdir().expect("tmp");
        let cfg = portcullis_admin::MgmtConfig {
            data_dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let (st, _) = crate::open(
            cfg,
            Arc::new(crate::apply::DetachedTopology),
            Some("pw-console-1".into()),
        )
        .expect("open");
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds/console_request");
        let mut answers = std::collections::HashMap::new();
        for e in std::fs::read_dir(seeds).expect("seeds").flatten() {
            let data = std::fs::read(e.path()).expect("seed");
            answers.insert(
                e.file_name().to_string_lossy().into_owned(),
                fuzz_request(&st, &data),
            );
        }
        assert_eq!(answers.len(), 6, "{answers:?}");
        assert_eq!(
            answers["overview"],
            StatusCode::SEE_OTHER,
            "to the login page"
        );
        assert_eq!(
            answers["events_bad"],
            StatusCode::SEE_OTHER,
            "an unknown session logs in again"
        );
        assert_eq!(
            answers["login_next"],
            StatusCode::UNAUTHORIZED,
            "a bad password"
        );
        assert_eq!(
            answers["post_traversal"],
            StatusCode::UNAUTHORIZED,
            "no session"
        );
        assert_eq!(answers["method"], StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(answers["static_js"], StatusCode::OK);
    }
}
