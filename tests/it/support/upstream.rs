//! Loopback helpers for tests that send traffic through listeners the management plane
//! creates: a hyper server (HTTP/1.1 and h2c) answering with a function, HTTP/1.1 servers
//! answering every request with one body, and polling a URL until its listener answers (or until
//! it is gone).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::mgmt::{http_fn, http_table};

/// Serves HTTP/1.1 and h2c on 127.0.0.1 (ephemeral port) for the rest of the test: every request
/// of every connection is answered by `handler(request).await`.
pub async fn serve_fn<H, Fut, B>(handler: H) -> SocketAddr
where
    H: Fn(http::Request<hyper::body::Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = http::Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            let h = handler.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |r| {
                    let answer = h(r);
                    async move { Ok::<_, Infallible>(answer.await) }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), svc)
                .await;
            });
        }
    });
    addr
}

/// The `Authorization` header of a request (empty when there is none) and its whole body.
pub async fn authorization_and_body(
    r: http::Request<hyper::body::Incoming>,
) -> (String, bytes::Bytes) {
    let auth = r
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = http_body_util::BodyExt::collect(r.into_body())
        .await
        .expect("body")
        .to_bytes();
    (auth, body)
}

/// An HTTP/1.1 server on 127.0.0.1 answering every request with 200 and `body` (JSON).
pub async fn http_server(body: String) -> SocketAddr {
    http_table(
        Default::default(),
        (200, JSON.to_string(), body.into_bytes()),
    )
    .await
}

/// The header line of a JSON answer.
const JSON: &str = "content-type: application/json\r\n";

/// Like [`http_server`], answering with whatever `body` holds at the time of the request
/// (a policy repository whose document changes between deploys).
pub async fn http_server_shared(body: Arc<Mutex<String>>) -> SocketAddr {
    http_fn(move |_| (200, JSON.to_string(), body.lock().clone().into_bytes())).await
}

/// A plain client that neither follows redirects nor verifies certificates.
pub fn plain_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .tls_danger_accept_invalid_certs(true)
        .tls_info(true)
        .build()
        .unwrap()
}

/// Sends `request` and returns the body of the answer as text, whatever its status.
pub async fn text_of(request: reqwest::RequestBuilder) -> String {
    let res = request.send().await.expect("an answer");
    res.text().await.expect("a text body")
}

/// GETs `url` until a listener answers (up to ~10 s); the response, or `None`.
pub async fn get_when_up(url: &str) -> Option<reqwest::Response> {
    let c = plain_client();
    for _ in 0..100 {
        if let Ok(r) = c.get(url).send().await {
            return Some(r);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Waits until nothing listens at `url` any more (up to ~10 s); whether it went away.
pub async fn gone(url: &str) -> bool {
    let c = plain_client();
    for _ in 0..100 {
        if c.get(url).send().await.is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}
