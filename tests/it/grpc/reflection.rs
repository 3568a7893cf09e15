//! gRPC server reflection through the real `portcullis proxy`: it passes through when the policy
//! allows its URL. Reflection is a bidirectional stream whose messages
//! are not in the service's IDL: a policy that lists its URL lets it through message by message
//! (each reply arrives before the client sends the next request: nothing waits for the end of
//! the stream), each message still scanned by the signatures; a policy that does not list it
//! refuses it, as any path that is not one of its gRPC URLs.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::uri::PathAndQuery;
use tonic::transport::Endpoint;
use tonic::{Status, Streaming};

use crate::support::grpc::client::{frame, raw_call};
use crate::support::grpc::codec::BytesCodec;
use crate::support::grpc::proxy::{Proxy, has_support_id, policy};
use crate::support::grpc::upstream::serve_tonic;

const REFLECTION: &str = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";

/// A stand-in reflection service: answers each request message with `reply:` and the message.
async fn reflection(
    _: (),
    req: http::Request<tonic::body::Body>,
) -> http::Response<tonic::body::Body> {
    let echo = tower::service_fn(|r: tonic::Request<Streaming<Bytes>>| async move {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, Status>>(4);
        let mut incoming = r.into_inner();
        tokio::spawn(async move {
            while let Ok(Some(m)) = incoming.message().await {
                let reply = [b"reply:".as_slice(), &m].concat();
                if tx.send(Ok(Bytes::from(reply))).await.is_err() {
                    return;
                }
            }
        });
        Ok::<_, Status>(tonic::Response::new(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
    });
    tonic::server::Grpc::new(BytesCodec)
        .streaming(echo, req)
        .await
}

named_service!(
    Reflection(()),
    "grpc.reflection.v1.ServerReflection",
    reflection
);

async fn reflection_upstream() -> SocketAddr {
    serve_tonic(tonic::transport::Server::builder().add_service(Reflection(()))).await
}

/// The gRPC test policy plus the reflection service's URL.
fn policy_with_reflection(idl_link: &str) -> serde_json::Value {
    let mut p = policy(idl_link);
    p["policy"]["urls"]
        .as_array_mut()
        .expect("urls")
        .push(serde_json::json!({
            "name": "/grpc.reflection.v1.ServerReflection/*",
            "type": "wildcard",
            "method": "POST",
        }));
    p
}

#[tokio::test]
async fn reflection_streams_through_when_its_url_is_allowed() {
    let upstream = reflection_upstream().await;
    let proxy =
        Proxy::start_with_policy(&format!("h2c://{upstream}"), &[], policy_with_reflection).await;
    let channel = Endpoint::from_shared(format!("http://{}", proxy.addr))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("ready");
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let requests = tokio_stream::wrappers::ReceiverStream::new(rx);
    tx.send(Bytes::from_static(b"list services"))
        .await
        .expect("send");
    let call = grpc.streaming(
        tonic::Request::new(requests),
        PathAndQuery::from_static(REFLECTION),
        BytesCodec,
    );
    let mut replies = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the response starts while the request stream is open")
        .expect("call accepted")
        .into_inner();
    for ask in ["list services", "file containing demo.v1.Greeter"] {
        if ask != "list services" {
            tx.send(Bytes::from(ask)).await.expect("send");
        }
        let reply = tokio::time::timeout(Duration::from_secs(5), replies.message())
            .await
            .expect("each reply arrives before the stream ends")
            .expect("a message")
            .expect("not the end");
        assert_eq!(reply, Bytes::from(format!("reply:{ask}")));
    }
    drop(tx);
    let end = tokio::time::timeout(Duration::from_secs(5), replies.message())
        .await
        .expect("the stream ends");
    assert!(matches!(end, Ok(None)), "{end:?}");
}

#[tokio::test]
async fn an_attack_inside_an_undescribed_message_is_still_blocked() {
    let upstream = reflection_upstream().await;
    let proxy =
        Proxy::start_with_policy(&format!("h2c://{upstream}"), &[], policy_with_reflection).await;
    let attack = frame(b"\x0a\x20<script>alert(document.cookie)</script>");
    let r = raw_call(proxy.addr, REFLECTION, attack, &[]).await;
    assert_eq!(r.grpc_status(), Some(3), "{r:?}");
    assert!(
        r.grpc_message().is_some_and(|m| has_support_id(&m)),
        "{r:?}"
    );
}

#[tokio::test]
async fn reflection_is_refused_when_its_url_is_not_allowed() {
    let upstream = reflection_upstream().await;
    let proxy = Proxy::start_url(&format!("h2c://{upstream}"), &[]).await;
    let r = raw_call(proxy.addr, REFLECTION, frame(b"list services"), &[]).await;
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("text/html")),
        "{r:?}"
    );
    assert!(String::from_utf8_lossy(&r.body).contains("Request Rejected"));
}
