//! gRPC to a TLS upstream (issue 5, "h2 with TLS on both sides"): the proxy offers ALPN `h2` and
//! `http/1.1` to `https://` members and speaks HTTP/2 when the member picks `h2`. The gRPC
//! scenarios run through the real `portcullis proxy` in front of the demo gRPC service served over
//! TLS (ALPN h2 only, a self-signed certificate trusted with `--upstream-ca`); a TLS member that
//! only speaks HTTP/1.1 fails a gRPC call with 502 instead of receiving it in a form it cannot read.

mod grpc_support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use grpc_support::client::{frame, raw_call};
use grpc_support::messages::{demo, hello};
use grpc_support::proxy::Proxy;
use rustls_pki_types::pem::PemObject;

/// A TLS listener with the given ALPN protocols; every accepted connection is served by `serve`.
async fn tls_listener<F, Fut>(alpn: &[&[u8]], serve: F) -> (SocketAddr, String)
where
    F: Fn(tokio_rustls::server::TlsStream<tokio::net::TcpStream>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("rcgen");
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(ck.cert.pem().as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .expect("cert");
    let key =
        rustls_pki_types::PrivateKeyDer::from_pem_slice(ck.signing_key.serialize_pem().as_bytes())
            .expect("key");
    let mut cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("server config");
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, serve) = (acceptor.clone(), serve.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    serve(tls).await;
                }
            });
        }
    });
    (addr, ck.cert.pem())
}

/// The demo gRPC service over TLS, HTTP/2 only (ALPN `h2`).
async fn tls_grpc_upstream() -> (SocketAddr, String) {
    let d = demo();
    tls_listener(&[b"h2"], move |tls| {
        let d = d.clone();
        async move {
            let svc =
                hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let d = d.clone();
                    async move {
                        Ok::<_, Infallible>(portcullis::demo::grpc::server::handle(d, req).await)
                    }
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
    let (up, ca) = tls_listener(&[b"http/1.1"], |tls| async move {
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
