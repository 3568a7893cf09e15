//! gRPC to a TLS upstream (h2 with TLS on both sides): the proxy offers ALPN `h2` and
//! `http/1.1` to `https://` members and speaks HTTP/2 when the member picks `h2`. The gRPC
//! scenarios run through the real `portcullis proxy` in front of the demo gRPC service served over
//! TLS (ALPN h2 only, a self-signed certificate trusted with `--upstream-ca`); a TLS member that
//! only speaks HTTP/1.1 fails a gRPC call with 502 instead of receiving it in a form it cannot read.

use std::convert::Infallible;
use std::net::SocketAddr;

use crate::support::grpc::client::{frame, raw_call};
use crate::support::grpc::messages::{demo, hello};
use crate::support::grpc::proxy::Proxy;
use crate::support::tls::tls_listener;

/// A TLS listener with a fresh self-signed certificate for `localhost` and the given ALPN
/// protocols: its address and the certificate (PEM), for `--upstream-ca`.
async fn tls_upstream<F, Fut>(alpn: &[&[u8]], serve: F) -> (SocketAddr, String)
where
    F: Fn(tokio_rustls::server::TlsStream<tokio::net::TcpStream>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("rcgen");
    let cert = ck.cert.pem();
    let addr = tls_listener(&cert, &ck.signing_key.serialize_pem(), alpn, serve).await;
    (addr, cert)
}

/// The demo gRPC service over TLS, HTTP/2 only (ALPN `h2`).
async fn tls_grpc_upstream() -> (SocketAddr, String) {
    let d = demo();
    tls_upstream(&[b"h2"], move |tls| {
        let d = d.clone();
        async move {
            let svc =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let d = d.clone();
                    async move { Ok::<_, Infallible>(portcullis::demo::handle_grpc(d, req).await) }
                });
            let _ = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                .await;
        }
    })
    .await
}

/// The proxy in front of `https://localhost:<port>`, trusting `ca_pem`.
async fn proxy_to_tls(port: u16, ca_pem: &str) -> (Proxy, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tmp");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, ca_pem).expect("ca");
    let url = format!("https://localhost:{port}");
    let proxy = Proxy::start_url(&url, &["--upstream-ca", ca.to_str().expect("path")]).await;
    (proxy, dir)
}

async fn front() -> ((Proxy, tempfile::TempDir), SocketAddr) {
    let (up, ca) = tls_grpc_upstream().await;
    let (proxy, dir) = proxy_to_tls(up.port(), &ca).await;
    let addr = proxy.addr;
    ((proxy, dir), addr)
}

all_grpc_scenarios!(front);

#[tokio::test]
async fn a_grpc_call_to_an_http1_only_tls_member_gets_502() {
    let (up, ca) = tls_upstream(&[b"http/1.1"], |tls| async move {
        let svc = hyper::service::service_fn(|_req: http::Request<hyper::body::Incoming>| async {
            Ok::<_, Infallible>(http::Response::new(http_body_util::Full::new(
                bytes::Bytes::from_static(b"http/1.1 only"),
            )))
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
            .await;
    })
    .await;
    let (proxy, _dir) = proxy_to_tls(up.port(), &ca).await;
    let res = raw_call(
        proxy.addr,
        "/demo.v1.Greeter/SayHello",
        frame(&hello("Ada")),
        &[],
    )
    .await;
    assert_eq!(res.status, 502, "{res:?}");
    assert_ne!(res.grpc_status(), Some(0));
}
