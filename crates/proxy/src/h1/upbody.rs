//! An upstream HTTP/1.1 response body as an `http_body::Body`, for the hyper front-end (an
//! HTTP/2 client's request answered by an HTTP/1.1 member): read off the connection as hyper
//! polls it, `Content-Length`, chunked (trailers become a trailers frame) or until the upstream
//! closes; at a clean end the connection goes back to its host's pool.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use http_body::{Body, Frame, SizeHint};

use super::chunked::{Decoder, Piece};
use super::response::BodyFraming;
use super::upconn::UpConn;
use crate::body::FramePoll;
use crate::conns::HostConns;
use crate::upstream::BoxError;

enum Left {
    Length(u64),
    Chunked(Box<Decoder>),
    Eof,
    Done,
}

/// See the module documentation.
pub struct UpConnBody {
    conn: Option<UpConn>,
    left: Left,
    host: Arc<HostConns>,
    /// The connection may serve another request after this body.
    reusable: bool,
    started: Instant,
}

impl UpConnBody {
    pub fn new(
        conn: UpConn,
        framing: BodyFraming,
        host: Arc<HostConns>,
        reusable: bool,
        started: Instant,
    ) -> UpConnBody {
        let left = match framing {
            BodyFraming::Empty => Left::Done,
            BodyFraming::Length(n) => Left::Length(n),
            BodyFraming::Chunked => Left::Chunked(Box::default()),
            BodyFraming::Eof => Left::Eof,
        };
        let mut body = UpConnBody {
            conn: Some(conn),
            left,
            host,
            reusable,
            started,
        };
        if matches!(body.left, Left::Done) {
            body.finish(true);
        }
        body
    }

    /// The body ended: a clean connection goes back to the pool, any other is closed.
    fn finish(&mut self, clean: bool) {
        self.left = Left::Done;
        if let Some(c) = self.conn.take()
            && clean
            && self.reusable
            && c.buf.is_empty()
        {
            self.host.raw_checkin(c, self.started);
        }
    }

    fn fail(&mut self, why: &str) -> FramePoll {
        self.finish(false);
        Poll::Ready(Some(Err(format!("upstream response body: {why}").into())))
    }
}

impl Body for UpConnBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> FramePoll {
        let this = self.get_mut();
        loop {
            let Some(conn) = this.conn.as_mut() else {
                return Poll::Ready(None);
            };
            match &mut this.left {
                Left::Done => return Poll::Ready(None),
                Left::Length(left) => {
                    if !conn.buf.is_empty() {
                        let n = (conn.buf.len() as u64).min(*left) as usize;
                        let data = conn.buf.split_to(n).freeze();
                        *left -= n as u64;
                        if *left == 0 {
                            this.finish(true);
                        }
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                }
                Left::Chunked(dec) => match dec.next(&mut conn.buf) {
                    Err(why) => return this.fail(why),
                    Ok(Some(Piece::Data(d))) => {
                        return Poll::Ready(Some(Ok(Frame::data(d.freeze()))));
                    }
                    Ok(Some(Piece::End)) => {
                        let trailers = dec.trailers();
                        this.finish(true);
                        if trailers.is_empty() {
                            return Poll::Ready(None);
                        }
                        let mut map = HeaderMap::with_capacity(trailers.len());
                        for (name, value) in trailers {
                            if let Ok(v) = HeaderValue::from_bytes(&value) {
                                map.append(name, v);
                            }
                        }
                        return Poll::Ready(Some(Ok(Frame::trailers(map))));
                    }
                    Ok(None) => {}
                },
                Left::Eof => {
                    if !conn.buf.is_empty() {
                        let data = conn.buf.split().freeze();
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                }
            }
            match conn.poll_read_more(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(0)) if matches!(this.left, Left::Eof) => {
                    this.finish(false);
                    return Poll::Ready(None);
                }
                Poll::Ready(Ok(0)) => return this.fail("the upstream closed mid-body"),
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => return this.fail(&e.to_string()),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.left, Left::Done)
    }

    fn size_hint(&self) -> SizeHint {
        match self.left {
            Left::Length(n) => SizeHint::with_exact(n),
            Left::Done => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}
