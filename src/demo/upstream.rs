//! The built-in demo upstream: a small JSON API (users and orders) on loopback, matching
//! `policies/demo/demo-api.yaml`, and the demo gRPC service of `policies/demo/demo.proto` on the
//! same port (HTTP/2 prior knowledge).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

const USERS: [(u64, &str, &str); 3] = [
    (1, "Ada Lovelace", "ada@example.com"),
    (2, "Alan Turing", "alan@example.com"),
    (3, "Grace Hopper", "grace@example.com"),
];

fn user(u: &(u64, &str, &str)) -> Value {
    json!({ "id": u.0, "name": u.1, "email": u.2 })
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<usize>,
}

async fn list_users(Query(q): Query<ListQuery>) -> Json<Value> {
    let n = q.limit.unwrap_or(USERS.len());
    Json(Value::Array(USERS.iter().take(n).map(user).collect()))
}

async fn get_user(Path(id): Path<u64>) -> Result<Json<Value>, (StatusCode, Json<Value>)> {
    USERS
        .iter()
        .find(|u| u.0 == id)
        .map(|u| Json(user(u)))
        .ok_or((
            StatusCode::NOT_FOUND,
            Json(json!({ "error": "no such user" })),
        ))
}

#[derive(Deserialize)]
struct OrderRequest {
    #[serde(rename = "userId")]
    user_id: u64,
    item: String,
    quantity: u32,
}

async fn create_order(
    State(next): State<Arc<AtomicU64>>,
    Json(o): Json<OrderRequest>,
) -> (StatusCode, Json<Value>) {
    let id = next.fetch_add(1, Ordering::Relaxed);
    (
        StatusCode::CREATED,
        Json(json!({ "id": id, "userId": o.user_id, "item": o.item, "quantity": o.quantity })),
    )
}

/// The demo API's routes, with the gRPC services of `demo` under `/demo.v1.<Service>/<Method>`.
pub fn router(demo: Arc<super::grpc::DemoGrpc>) -> Router {
    let call = move |req: axum::extract::Request| {
        let demo = demo.clone();
        async move {
            super::grpc::server::handle(demo, req)
                .await
                .map(axum::body::Body::new)
        }
    };
    Router::new()
        .route("/api/users", get(list_users))
        .route("/api/users/{id}", get(get_user))
        .route("/api/orders", post(create_order))
        .route("/demo.v1.Greeter/{method}", post(call.clone()))
        .route("/demo.v1.Inventory/{method}", post(call))
        .with_state(Arc::new(AtomicU64::new(1001)))
}

/// Binds `addr` and serves the demo API in the background; returns the bound address.
pub async fn start(addr: SocketAddr) -> std::io::Result<SocketAddr> {
    let demo = super::grpc::DemoGrpc::new().map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    crate::support::task::spawn(async move {
        if let Err(e) = axum::serve(listener, router(demo)).await {
            tracing::error!("demo upstream stopped: {e}");
        }
    });
    Ok(bound)
}
