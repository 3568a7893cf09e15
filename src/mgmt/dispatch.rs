//! The admin API's single entry point: reads the body under a limit, normalises the path
//! (percent-decoding, trailing slash), authenticates, authorizes, then hands the request to a
//! special route or to the generic engine. Store work runs on the blocking pool.
//! Imports: `mgmt::*`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;

use super::error::{MgmtError, MgmtResult};
use super::query::Query;
use super::reply::Reply;
use super::state::{Ctx, MgmtState};
use super::{engine, kinds, objects, roles};

/// The client address of a connection, inserted into request extensions by the server.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

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
const MAX_CHUNK: usize = 64 * 1024 * 1024;

/// The `/mgmt` router.
pub fn router(st: Arc<MgmtState>) -> Router {
    Router::new().fallback(handle).with_state(st)
}

async fn handle(State(st): State<Arc<MgmtState>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let peer = peer_of(&parts);
    let limit = if parts.uri.path().contains("/file-transfer/") {
        MAX_CHUNK
    } else {
        st.cfg.max_json_bytes
    };
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => {
            let mut e = MgmtError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Request body exceeds the limit of {limit} bytes."),
            );
            e.referer = peer;
            return e.into_response();
        }
    };
    let peer2 = peer.clone();
    let res = tokio::task::spawn_blocking(move || dispatch(&st, &parts, &bytes, &peer2)).await;
    match res {
        Ok(Ok(r)) => r.into_response(),
        Ok(Err(mut e)) => {
            e.referer = peer;
            e.into_response()
        }
        Err(_) => MgmtError::internal("request handler failed").into_response(),
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

/// Handles one request synchronously (called on the blocking pool, and by the fuzz target).
pub fn dispatch(
    st: &MgmtState,
    parts: &http::request::Parts,
    body: &[u8],
    peer: &str,
) -> MgmtResult<Reply> {
    let segs = segments(parts.uri.path())?;
    let path = format!("/{}", segs.join("/"));
    if segs.first().map(String::as_str) != Some("mgmt") {
        return Err(MgmtError::no_such_uri(&path));
    }
    if path == "/mgmt/shared/authn/login" && parts.method == http::Method::POST {
        return objects::tokens::login(st, &parts.headers, body, peer);
    }
    let (user, token) = st.authenticate(&parts.headers, &path, peer)?;
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
        return objects::transaction::enqueue(&ctx, id.trim(), parts.uri.query(), body);
    }
    let extra = st.extensions.read().routes.clone();
    for r in extra.iter().copied().chain(objects::ROUTES.iter()) {
        if ctx.path == r.path || (r.prefix && ctx.path.starts_with(&format!("{}/", r.path))) {
            return (r.handler)(&ctx, body);
        }
    }
    match kinds::resolve(st, &segs[..])? {
        Some(t) => engine::handle(&ctx, t, body),
        None => Err(MgmtError::no_such_uri(&ctx.path)),
    }
}
