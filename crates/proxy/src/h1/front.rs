//! The HTTP/1.1 front-end of the phase driver: one request of a connection, its body read from
//! the connection ([`super::reqbody`]), the proxy's answers and the upstream's responses written
//! exactly as hyper's server would write them ([`super::encode`]), the response body relayed in
//! the connection's task ([`super::relay`]), and WebSocket tunnels joined here.
//!
//! A response that goes out while the request body is still unread (an early block, an upstream
//! that answered first) either keeps the connection, after the rest of a small body is read and
//! discarded, or says `connection: close`, and the connection then lingers (see
//! [`super::conn`]) so that a client still sending receives the answer instead of a reset.

use bytes::{Bytes, BytesMut};
use http::header::{CONNECTION, UPGRADE};
use http::{HeaderValue, Method, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::encode::{self, Answering, BodyLen, Fields, Head};
use super::relay::{self, Relayed};
use super::reqbody::ReqBody;
use super::response::{BodyFraming, ResponseHead};
use super::timer::Timer;
use super::upconn::UpConn;
use crate::driver::answer::{Answer, AnswerFields};
use crate::driver::forward::UpResponse;
use crate::driver::{BodyError, Front};
use crate::metrics::TunnelSlot;
use crate::response::strip_hop_by_hop;
use crate::upstream::ProxyBody;

/// The most of an unread request body read and discarded to keep a connection after an early
/// answer; a longer (or unbounded) rest closes the connection instead.
const DRAIN_MAX: u64 = 64 * 1024;

/// How the connection goes on after a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// It may carry the next request.
    KeepAlive,
    /// It ends now; nothing unread is pending.
    Close,
    /// It ends, but the client may still be sending: read and discard for a while first.
    Linger,
}

/// One request of an HTTP/1.1 connection, as the driver drives it.
pub struct H1Front<'a, S> {
    pub io: &'a mut S,
    /// Bytes read after the request head (its body, pipelined requests).
    pub buf: &'a mut BytesMut,
    /// The connection's output buffer.
    pub out: &'a mut Vec<u8>,
    /// The client side's timer (the body's pace).
    pub timer: &'a mut Timer,
    pub body: ReqBody,
    /// The `Content-Length` of the body, if it has one.
    pub body_len: Option<u64>,
    pub has_body: bool,
    pub method: Method,
    /// The connection ends after this exchange.
    pub close: bool,
    pub http10: bool,
    /// `TE: trailers`: the client accepts trailer fields.
    pub te_trailers: bool,
    /// The idle timeout of a WebSocket tunnel.
    pub tunnel_idle: std::time::Duration,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> H1Front<'_, S> {
    /// Whether the connection must close after this response: asked for, or the request body is
    /// unread and too long (or unbounded) to discard.
    fn closing(&self) -> bool {
        self.close
            || (!self.body.done()
                && (self.body.awaiting_continue()
                    || self.body.left().is_none_or(|n| n > DRAIN_MAX)))
    }

    /// Writes a response head into the output buffer, as hyper's server writes it for this
    /// request (its method, its HTTP version, whether the connection closes after it).
    fn encode_head(&mut self, head: &Head<'_>, len: BodyLen, close: bool) -> encode::Encoded {
        let req = Answering {
            method: &self.method,
            close,
            http10: self.http10,
        };
        encode::encode(self.out, head, len, req)
    }

    /// After a response was written: keep the connection (discarding what is left of the body)
    /// or end it.
    async fn after(&mut self, last: bool) -> After {
        if last {
            return if self.body.done() && self.buf.is_empty() {
                After::Close
            } else {
                After::Linger
            };
        }
        if !self.body.done()
            && !self
                .body
                .discard(self.io, self.buf, self.timer, DRAIN_MAX)
                .await
        {
            return After::Linger;
        }
        After::KeepAlive
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Front for H1Front<'_, S> {
    type Done = After;

    fn h2(&self) -> bool {
        false
    }

    fn has_body(&self) -> bool {
        self.has_body
    }

    fn body_len(&self) -> Option<u64> {
        self.body_len
    }

    async fn body_chunk(&mut self) -> Result<Option<Bytes>, BodyError> {
        self.body.next(self.io, self.buf, self.timer).await
    }

    fn take_stream(&mut self) -> Option<ProxyBody> {
        None
    }

    fn stream_error(&self) -> Option<BodyError> {
        None
    }

    async fn answer(&mut self, a: Answer) -> After {
        let close = self.closing();
        let (status, fields, body) = a.into_wire();
        self.out.clear();
        let len = if body.is_empty() {
            BodyLen::Empty
        } else {
            BodyLen::Known(body.len() as u64)
        };
        let head = Head {
            status,
            version: http::Version::HTTP_11,
            headers: match &fields {
                AnswerFields::Map(h) => Fields::Map(h),
                AnswerFields::Plain(pairs) => Fields::Plain(pairs),
            },
            strip: false,
        };
        let req = Answering {
            method: &self.method,
            close,
            http10: self.http10,
        };
        let as_is = match &fields {
            AnswerFields::Plain(pairs) => {
                encode::encode_as_is(self.out, status, pairs, body.len() as u64, req)
            }
            AnswerFields::Map(_) => None,
        };
        let enc = match as_is {
            Some(enc) => enc,
            None => self.encode_head(&head, len, close),
        };
        if enc.body != encode::BodyOut::Length(0) {
            self.out.extend_from_slice(&body);
        }
        if self.io.write_all(self.out).await.is_err() {
            return After::Close;
        }
        self.after(enc.last).await
    }

    async fn relay(&mut self, r: UpResponse) -> After {
        let close = self.closing();
        self.out.clear();
        match r {
            UpResponse::H1 {
                head,
                mut conn,
                host,
                started,
                complete,
            } => {
                let len = match head.framing {
                    BodyFraming::Empty => BodyLen::Empty,
                    BodyFraming::Length(n) => BodyLen::Known(n),
                    BodyFraming::Chunked | BodyFraming::Eof => BodyLen::Unknown,
                };
                let h = Head {
                    status: head.status,
                    version: head.version,
                    headers: Fields::Raw(&head.headers),
                    strip: true,
                };
                let enc = self.encode_head(&h, len, close);
                let relayed = relay::body(
                    self.io,
                    self.out,
                    &mut conn,
                    head.framing,
                    &enc,
                    self.te_trailers,
                );
                match relayed.await {
                    Ok(Relayed::Reusable) if head.reusable && complete => {
                        host.raw_checkin(conn, started)
                    }
                    Ok(Relayed::Broken) | Err(_) => return After::Close,
                    Ok(Relayed::Reusable | Relayed::Done) => {}
                }
                self.after(enc.last).await
            }
            UpResponse::Hyper(res) => {
                let (mut parts, body) = res.into_parts();
                strip_hop_by_hop(&mut parts.headers, false);
                let len = if http_body::Body::is_end_stream(&body) {
                    BodyLen::Empty
                } else {
                    match http_body::Body::size_hint(&body).exact() {
                        Some(n) => BodyLen::Known(n),
                        None => BodyLen::Unknown,
                    }
                };
                let h = Head {
                    status: parts.status,
                    version: http::Version::HTTP_11,
                    headers: Fields::Map(&parts.headers),
                    strip: false,
                };
                let enc = self.encode_head(&h, len, close);
                let relayed = relay::stream(self.io, self.out, body, &enc, self.te_trailers);
                match relayed.await {
                    Ok(Relayed::Broken) | Err(_) => return After::Close,
                    Ok(_) => {}
                }
                self.after(enc.last).await
            }
        }
    }

    async fn tunnel(&mut self, head: ResponseHead, up: UpConn, slot: TunnelSlot) -> After {
        let mut fields = head.headers.to_map();
        let protocol = fields
            .get(UPGRADE)
            .cloned()
            .unwrap_or(HeaderValue::from_static("websocket"));
        strip_hop_by_hop(&mut fields, false);
        fields.insert(CONNECTION, HeaderValue::from_static("upgrade"));
        fields.insert(UPGRADE, protocol);
        self.out.clear();
        let h = Head {
            status: StatusCode::SWITCHING_PROTOCOLS,
            version: http::Version::HTTP_11,
            headers: Fields::Map(&fields),
            strip: false,
        };
        self.encode_head(&h, BodyLen::Empty, false);
        let (mut upstream, early) = up.into_parts();
        // What each side sent past the handshake belongs to the tunnel.
        self.out.extend_from_slice(&early);
        if self.io.write_all(self.out).await.is_err()
            || (!self.buf.is_empty() && upstream.write_all(self.buf).await.is_err())
        {
            return After::Close;
        }
        self.buf.clear();
        let _slot = slot;
        crate::upgrade::tunnel(&mut *self.io, upstream, self.tunnel_idle).await;
        After::Close
    }
}
