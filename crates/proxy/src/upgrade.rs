//! WebSocket tunnels. Only WebSocket is ever upgraded (the head validator lets no other protocol
//! through as an upgrade, and a member's `101` to anything else is refused with 502): the upgrade
//! request is inspected like any other (head checks, the WAF's request-header phase), sent to a
//! member on a fresh HTTP/1.1 connection ([`super::driver::forward`]), and when the member answers
//! `101 Switching Protocols` the two connections are joined into a tunnel whose bytes are not
//! inspected ([`super::h1::front`]). The tunnel is closed after `tunnel_idle_timeout` without a
//! byte in either direction; at most `max_tunnels` are open (503 beyond). An upgrade that does
//! not happen closes the client connection after its answer, so what the client sent after the
//! upgrade head is never read as HTTP/1.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Copies bytes both ways until both sides have ended (a side's EOF is passed on as a shutdown of
/// the other's write half), an error, or `idle` without a byte in either direction.
pub async fn tunnel<A, B>(a: A, b: B, idle: Duration)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let (mut ar, mut aw) = tokio::io::split(a);
    let (mut br, mut bw) = tokio::io::split(b);
    let (mut abuf, mut bbuf) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut a_open, mut b_open) = (true, true);
    while a_open || b_open {
        let step = async {
            tokio::select! {
                r = ar.read(&mut abuf), if a_open => match r {
                    Ok(0) => { a_open = false; bw.shutdown().await }
                    Ok(n) => bw.write_all(&abuf[..n]).await,
                    Err(e) => Err(e),
                },
                r = br.read(&mut bbuf), if b_open => match r {
                    Ok(0) => { b_open = false; aw.shutdown().await }
                    Ok(n) => aw.write_all(&bbuf[..n]).await,
                    Err(e) => Err(e),
                },
            }
        };
        match tokio::time::timeout(idle, step).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return tracing::debug!("tunnel ended: {e}"),
            Err(_) => return tracing::debug!("tunnel idle for {idle:?}: closed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tunnel_copies_both_ways_and_closes_when_idle() {
        let (mut client, a) = tokio::io::duplex(64);
        let (b, mut server) = tokio::io::duplex(64);
        let t = tokio::spawn(tunnel(a, b, Duration::from_millis(200)));
        client.write_all(b"ping").await.expect("write");
        let mut got = [0u8; 4];
        server.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"ping");
        server.write_all(b"pong").await.expect("write");
        client.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"pong");
        // No byte for the idle timeout: the tunnel ends and both sides see EOF.
        tokio::time::timeout(Duration::from_secs(2), t)
            .await
            .expect("closed when idle")
            .expect("task");
        let mut rest = Vec::new();
        assert_eq!(client.read_to_end(&mut rest).await.expect("eof"), 0);
    }
}
