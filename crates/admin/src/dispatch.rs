//! The admin API's single entry point. In this order: normalises the path (percent-decoding,
//! trailing slash), authenticates from the headers alone, refuses a declared length over the
//! limit, reads the body under the admin port's bounds (`support::body`), authorizes, then hands
//! the request to a special route or to the generic engine. A request refused before its body
//! is read gets its answer through `body::answer_early`. Store work runs on the blocking pool.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;

use super::auth::User;
use super::error::{MgmtError, MgmtResult};
use super::query::Query;
use super::reply::Reply;
use super::state::{Ctx, MgmtState};
use super::{engine, kinds, roles};
pub use portcullis_support::Peer;
use portcullis_support::body::{self, BodyError};

/// The client address of a request (loopback when the server did not say).
pub fn peer_of(parts: &http::request::Parts) -> String {
    parts
        .extensions
        .get::<Peer>()
        .map(|p| p.0.ip().to_string())
        .unwrap_or_else(|| "127.0.0.1".to_string())
}

/// A fixed route outside the generic engine.
pub struct Route {
    pub path: &'static str,
    /// Also matches everything below `path`.
    pub prefix: bool,
    pub handler: fn(&Ctx<'_>, &[u8]) -> MgmtResult<Reply>,
}

/// Bodies of upload chunks may be this large; JSON bodies are limited by `max_json_bytes`.
const MAX_CHUNK: u64 = 64 * 1024 * 1024;
/// The login body: a user name and a password.
const MAX_LOGIN: u64 = 64 * 1024;

/// Who sent a request: the user and the token used, if any. `None` for the login route, whose
/// body carries the credentials.
pub type Identity = Option<(User, Option<String>)>;

/// The `/mgmt` router.
pub fn router(st: Arc<MgmtState>) -> Router {
    Router::new().fallback(handle).with_state(st)
}

/// `path` without a trailing slash, percent-decoded, and its segments.
fn target(path: &str) -> MgmtResult<(Vec<String>, String)> {
    let segs = segments(path)?;
    let path = format!("/{}", segs.join("/"));
    Ok((segs, path))
}

fn is_login(parts: &http::request::Parts, path: &str) -> bool {
    path == "/mgmt/shared/authn/login" && parts.method == http::Method::POST
}

/// Authenticates a request from its headers (not the login route: see [`Identity`]).
pub fn identify(st: &MgmtState, parts: &http::request::Parts, peer: &str) -> MgmtResult<Identity> {
    let (segs, path) = target(parts.uri.path())?;
    if segs.first().map(String::as_str) != Some("mgmt") {
        return Err(MgmtError::no_such_uri(&path));
    }
    if is_login(parts, &path) {
        return Ok(None);
    }
    st.authenticate(&parts.headers, &path, peer).map(Some)
}

async fn handle(State(st): State<Arc<MgmtState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let peer = peer_of(&parts);
    let fail = |mut e: MgmtError| {
        e.referer = peer.clone();
        e.into_response()
    };
    let path = parts.uri.path();
    let max = if path.contains("/file-transfer/") {
        MAX_CHUNK
    } else if path.trim_end_matches('/') == "/mgmt/shared/authn/login" {
        MAX_LOGIN
    } else {
        st.cfg.max_json_bytes as u64
    };
    let limits = st.cfg.body_limits(max);
    let too_large = || {
        MgmtError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body exceeds the limit of {max} bytes."),
        )
    };
    // Credentials are checked before a byte of the body is read, then the declared length.
    let (st2, parts2, peer2) = (st.clone(), parts.clone(), peer.clone());
    let refusal = match tokio::task::spawn_blocking(move || identify(&st2, &parts2, &peer2)).await {
        Ok(Ok(_)) if body::declared_length(&parts.headers).is_some_and(|n| n > max) => {
            Err(too_large())
        }
        Ok(r) => r,
        Err(_) => Err(MgmtError::internal("request handler failed")),
    };
    let who = match refusal {
        Ok(who) => who,
        Err(e) => {
            return body::answer_early(body, &parts.headers, parts.version, &limits, fail(e)).await;
        }
    };
    let bytes = match body::read(body, &limits).await {
        Ok(b) => b,
        Err(e) => {
            let error = match e {
                BodyError::TooLarge => too_large(),
                BodyError::TimedOut => {
                    MgmtError::new(e.status(), "The request body did not arrive in time.")
                }
                BodyError::Broken(why) => MgmtError::bad_request(why),
            };
            return body::closing(fail(error));
        }
    };
    let peer2 = peer.clone();
    let res = tokio::task::spawn_blocking(move || route(&st, &parts, &bytes, &peer2, who)).await;
    match res {
        Ok(Ok(r)) => r.into_response(),
        Ok(Err(e)) => fail(e),
        Err(_) => fail(MgmtError::internal("request handler failed")),
    }
}

/// Splits and percent-decodes a path; empty segments (`//`, trailing `/`) are dropped.
pub fn segments(path: &str) -> MgmtResult<Vec<String>> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|c| c.into_owned())
                .map_err(|_| MgmtError::bad_request("The request path is not valid UTF-8."))
        })
        .collect()
}

/// Handles one request synchronously, authenticating it from its headers (the fuzz target's
/// and in-process callers' entry; the server identifies before reading the body).
pub fn dispatch(
    st: &MgmtState,
    parts: &http::request::Parts,
    body: &[u8],
    peer: &str,
) -> MgmtResult<Reply> {
    let who = identify(st, parts, peer)?;
    route(st, parts, body, peer, who)
}

/// Makes one request as `user` (the demo configures its controller so): the same role checks,
/// validation and engine as a request from a client.
pub fn call_as(
    st: &MgmtState,
    user: &User,
    method: http::Method,
    path: &str,
    body: &serde_json::Value,
) -> MgmtResult<Reply> {
    let (parts, ()) = http::Request::builder()
        .method(method)
        .uri(path)
        .body(())
        .map_err(|e| MgmtError::internal(e.to_string()))?
        .into_parts();
    let bytes = serde_json::to_vec(body).map_err(|e| MgmtError::internal(e.to_string()))?;
    route(st, &parts, &bytes, "127.0.0.1", Some((user.clone(), None)))
}

/// Authorizes and routes a request whose sender is known.
pub fn route(
    st: &MgmtState,
    parts: &http::request::Parts,
    body: &[u8],
    peer: &str,
    who: Identity,
) -> MgmtResult<Reply> {
    let (segs, path) = target(parts.uri.path())?;
    if segs.first().map(String::as_str) != Some("mgmt") {
        return Err(MgmtError::no_such_uri(&path));
    }
    let Some((user, token)) = who else {
        return if is_login(parts, &path) {
            (st.builtins.login)(st, &parts.headers, body, peer)
        } else {
            Err(MgmtError::no_such_uri(&path))
        };
    };
    if !roles::allowed(user.role, &user.name, &parts.method, &path)
        || !roles::operator_body_ok(user.role, &path, body)
    {
        return Err(roles::denied(&user.name, &parts.method, &path, peer));
    }
    let ctx = Ctx {
        st,
        user,
        method: parts.method.clone(),
        query: Query::parse(parts.uri.query())?,
        path,
        headers: &parts.headers,
        peer: peer.to_string(),
        token,
    };
    let coordination = parts
        .headers
        .get("x-f5-rest-coordination-id")
        .and_then(|v| v.to_str().ok());
    if let Some(id) = coordination
        && !ctx.path.starts_with("/mgmt/tm/transaction")
        && matches!(
            ctx.method,
            http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE
        )
    {
        return (st.builtins.coordinated)(&ctx, id.trim(), parts.uri.query(), body);
    }
    let extra = st.extensions.read().routes.clone();
    for r in extra.iter().copied().chain(st.builtins.routes.iter()) {
        if ctx.path == r.path || (r.prefix && ctx.path.starts_with(&format!("{}/", r.path))) {
            return (r.handler)(&ctx, body);
        }
    }
    match kinds::resolve(st, &segs[..])? {
        Some(t) => engine::handle(&ctx, t, body),
        None => Err(MgmtError::no_such_uri(&ctx.path)),
    }
}
