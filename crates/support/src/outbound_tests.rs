//! What the callers of [`Outbound`] rely on: the size cut, the time bound, the guard refusing
//! for a guarded caller and allowing a private address for an operator-configured one.

use std::io::{Read, Write};
use std::net::TcpListener;

use super::*;

/// A server on loopback answering each of `answers` connections with the bytes given.
fn serve(answers: Vec<&'static [u8]>) -> (SocketAddr, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = std::thread::spawn(move || {
        for answer in answers {
            let (mut s, _) = listener.accept().expect("accept");
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(answer);
        }
    });
    (addr, server)
}

fn client(guard: Guard, max_bytes: usize, timeout: Duration) -> Outbound {
    Outbound {
        bounds: Bounds { max_bytes, timeout },
        guard,
        tls: public_roots().expect("tls"),
    }
}

#[tokio::test]
async fn answers_larger_than_the_bound_are_cut() {
    let (addr, server) = serve(vec![
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n6\r\n012345\r\n6\r\n6789ab\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\n01234567",
    ]);
    let c = client(Guard::open(), 8, Duration::from_secs(5));
    let url = format!("http://{addr}/x");
    // Announced too large, then streamed too large (no length announced), then just fitting.
    for _ in 0..2 {
        let e = c.send(Call::get(&url)).await.expect_err("too large");
        assert_eq!(e, OutboundError::TooLarge(8));
        assert_eq!(e.to_string(), "larger than the limit of 8 bytes");
    }
    let a = c.send(Call::get(&url)).await.expect("fits");
    assert_eq!((a.status.as_u16(), &a.body[..]), (200, &b"01234567"[..]));
    server.join().expect("server");
}

#[tokio::test]
async fn a_silent_server_times_out_within_the_bound() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let keep = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let c = client(Guard::open(), 1024, Duration::from_millis(300));
    let t = std::time::Instant::now();
    let e = c
        .send(Call::get(&format!("http://{addr}/")))
        .await
        .expect_err("silent");
    assert_eq!(e, OutboundError::Timeout(Duration::from_millis(300)));
    assert_eq!(e.to_string(), "timed out after 300 ms");
    assert!(t.elapsed() < Duration::from_secs(2));
    keep.abort();
}

#[tokio::test]
async fn the_guard_refuses_for_guarded_callers_and_allows_private_addresses_for_open_ones() {
    // A guarded caller (a controller's pull) never connects to a metadata address.
    let guarded = client(Guard::default(), 1024, Duration::from_secs(2));
    let e = guarded
        .send(Call::get("http://169.254.169.254/latest/meta-data/"))
        .await
        .expect_err("refused");
    assert!(matches!(e, OutboundError::Refused(_)), "{e:?}");
    assert!(e.to_string().contains("169.254.169.254 is refused"), "{e}");
    assert!(e.nothing_sent());
    // Nor to a loopback server when the allow list names other networks only.
    let (addr, server) = serve(vec![
        b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
    ]);
    let allow_only = Guard {
        allow: vec!["10.0.0.0/8".parse().expect("cidr")],
        ..Guard::default()
    };
    let url = format!("http://{addr}/report");
    let e = client(allow_only, 1024, Duration::from_secs(2))
        .send(Call::get(&url))
        .await
        .expect_err("not allowed");
    assert!(e.to_string().contains("not in the allow list"), "{e}");
    // An operator-configured endpoint (billing, a controller) may be a private address.
    let open = client(Guard::open(), 1024, Duration::from_secs(2));
    let call = Call {
        method: Method::POST,
        url: &url,
        headers: &[("content-type", "application/json".into())],
        body: Some(Bytes::from_static(b"{}")),
    };
    let a = open.send(call).await.expect("private address allowed");
    assert_eq!(a.status, StatusCode::NO_CONTENT);
    server.join().expect("server");
}

#[tokio::test]
async fn a_closed_port_is_a_connect_error_with_nothing_sent() {
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let e = client(Guard::open(), 1024, Duration::from_secs(2))
        .send(Call::get(&format!("http://127.0.0.1:{port}/")))
        .await
        .expect_err("closed");
    assert!(matches!(e, OutboundError::Connect { .. }), "{e:?}");
    assert!(e.nothing_sent());
}

#[tokio::test]
async fn redirects_are_followed_up_to_their_bound() {
    let (addr, server) = serve(vec![
        b"HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"HTTP/1.1 302 Found\r\nLocation: /b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"HTTP/1.1 302 Found\r\nLocation: c\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    ]);
    let c = client(Guard::open(), 1024, Duration::from_secs(5));
    let url = format!("http://{addr}/a");
    let e = c.get_following(&url, 1).await.expect_err("404");
    let status = StatusCode::NOT_FOUND;
    let followed = format!("http://{addr}/b");
    assert_eq!(
        e,
        PullError::Status {
            status,
            url: followed.clone()
        }
    );
    assert_eq!(
        e.to_string(),
        format!("HTTP status 404 Not Found from {followed}")
    );
    let e = c.get_following(&url, 1).await.expect_err("loop");
    assert_eq!(e, PullError::TooManyRedirects(1));
    assert_eq!(e.to_string(), "too many redirects (more than 1)");
    server.join().expect("server");
}
