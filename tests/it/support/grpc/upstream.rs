//! The upstream gRPC servers the tests call: a real tonic server around the demo service logic
//! (raw-bytes codec, no codegen), and the hyper server of `portcullis::demo::serve_grpc`.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use portcullis::demo::{DemoGrpc, GrpcStatus};
use tonic::codec::CompressionEncoding;
use tonic::{Status, Streaming};

use super::codec::BytesCodec;
use super::messages::demo;

fn status(s: GrpcStatus) -> Status {
    Status::new(tonic::Code::from(s.code as i32), s.message)
}

/// Routes one HTTP request of either demo service through tonic's server-side gRPC machinery.
async fn route(
    demo: Arc<DemoGrpc>,
    req: http::Request<tonic::body::Body>,
) -> http::Response<tonic::body::Body> {
    let path = req.uri().path().to_string();
    let grpc = || tonic::server::Grpc::new(BytesCodec).accept_compressed(CompressionEncoding::Gzip);
    let call = match demo.start(&path) {
        Ok(c) => c,
        Err(e) => return status(e).into_http(),
    };
    let call = Arc::new(parking_lot::Mutex::new(call));
    match path.as_str() {
        "/demo.v1.Inventory/AddItems" => {
            let svc = tower::service_fn(move |r: tonic::Request<Streaming<Bytes>>| {
                let call = call.clone();
                async move {
                    let mut s = r.into_inner();
                    while let Some(m) = s.message().await? {
                        call.lock().on_message(&m).map_err(status)?;
                    }
                    let out = call.lock().on_end().map_err(status)?;
                    let first = out.into_iter().next().unwrap_or_default();
                    Ok::<_, Status>(tonic::Response::new(Bytes::from(first)))
                }
            });
            grpc().client_streaming(svc, req).await
        }
        "/demo.v1.Inventory/Lookup" => {
            let svc = tower::service_fn(move |r: tonic::Request<Streaming<Bytes>>| {
                let call = call.clone();
                async move {
                    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, Status>>(16);
                    let mut s = r.into_inner();
                    tokio::spawn(async move {
                        loop {
                            let next = match s.message().await {
                                Ok(Some(m)) => call.lock().on_message(&m).map_err(status),
                                Ok(None) => break,
                                Err(e) => Err(e),
                            };
                            match next {
                                Ok(out) => {
                                    for o in out {
                                        let _ = tx.send(Ok(Bytes::from(o))).await;
                                    }
                                }
                                Err(e) => {
                                    let _ = tx.send(Err(e)).await;
                                    return;
                                }
                            }
                        }
                    });
                    Ok::<_, Status>(tonic::Response::new(
                        tokio_stream::wrappers::ReceiverStream::new(rx),
                    ))
                }
            });
            grpc().streaming(svc, req).await
        }
        _ => {
            let svc = tower::service_fn(move |r: tonic::Request<Bytes>| {
                let call = call.clone();
                async move {
                    let mut c = call.lock();
                    let mut out = c.on_message(r.get_ref()).map_err(status)?;
                    out.extend(c.on_end().map_err(status)?);
                    let first = out.into_iter().next().unwrap_or_default();
                    Ok::<_, Status>(tonic::Response::new(Bytes::from(first)))
                }
            });
            grpc().unary(svc, req).await
        }
    }
}

/// A tonic service named `$name` (`package.Service`) that answers every request with
/// `$handler(state, request).await`, its state a `$state` in the tuple struct `$ty`.
macro_rules! named_service {
    ($ty:ident($state:ty), $name:literal, $handler:path) => {
        #[derive(Clone)]
        pub struct $ty(pub $state);

        impl tonic::server::NamedService for $ty {
            const NAME: &'static str = $name;
        }

        impl tower::Service<http::Request<tonic::body::Body>> for $ty {
            type Response = http::Response<tonic::body::Body>;
            type Error = std::convert::Infallible;
            type Future = std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
            >;

            fn poll_ready(
                &mut self,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), Self::Error>> {
                std::task::Poll::Ready(Ok(()))
            }

            fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
                let state = self.0.clone();
                Box::pin(async move { Ok($handler(state, req).await) })
            }
        }
    };
}

named_service!(GreeterService(Arc<DemoGrpc>), "demo.v1.Greeter", route);
named_service!(InventoryService(Arc<DemoGrpc>), "demo.v1.Inventory", route);

/// Starts the tonic upstream on 127.0.0.1 (ephemeral port).
pub async fn start_tonic() -> SocketAddr {
    let d = demo();
    serve_tonic(
        tonic::transport::Server::builder()
            .add_service(GreeterService(d.clone()))
            .add_service(InventoryService(d)),
    )
    .await
}

/// Serves a tonic router on 127.0.0.1 (ephemeral port) for the rest of the test.
pub async fn serve_tonic(router: tonic::transport::server::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(
        router.serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    addr
}

/// Starts the hyper server of `portcullis::demo::serve_grpc` on 127.0.0.1 (ephemeral port).
pub async fn start_demo() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(portcullis::demo::serve_grpc(listener, demo()));
    addr
}
