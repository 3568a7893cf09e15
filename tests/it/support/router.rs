//! The admin router driven in process, without sockets: requests go through `oneshot` on the
//! `axum::Router` that `portcullis::admin::router` builds, authenticated as `admin` with
//! [`ROUTER_PASS`] (the password the test opens the state with).

use axum::body::Body;
use base64::Engine as _;
use http::{Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt as _;

/// The admin password of the in-process router tests.
pub const ROUTER_PASS: &str = "pw-apply-test";

/// Sends `body` as JSON; the status and the JSON answer (`Null` when the answer is not JSON).
pub async fn call(
    app: &axum::Router,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    call_raw(app, method, path, body.map(|b| b.to_string())).await
}

/// Like [`call`], with the body sent as it is (malformed JSON included).
pub async fn call_raw(
    app: &axum::Router,
    method: &str,
    path: &str,
    body: Option<String>,
) -> (StatusCode, Value) {
    let auth = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("admin:{ROUTER_PASS}"))
    );
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", auth)
        .header("content-type", "application/json")
        .body(body.map_or_else(Body::empty, Body::from))
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let st = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    (st, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}
