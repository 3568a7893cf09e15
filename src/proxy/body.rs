//! Request bodies on their way upstream: [`Capped`] counts an uninspected body against the body
//! limit; [`inspect`] feeds a body to the WAF transaction, holding only the bytes not yet released
//! (at most the inspection limit), and streams released bytes upstream through a channel.
//!
//! Imports: hyper bodies, tokio channels, `waf::{Transaction, Step}`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};

use super::upstream::{BoxError, ProxyBody};
use crate::waf::{Step, Transaction};

/// The transaction of a request, shared between the handler and the body pump.
pub type SharedTx = Arc<Mutex<Option<Transaction>>>;

/// What the body pump tells the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Still inspecting; nothing may go upstream yet.
    Pending,
    /// Bytes were released: send the request upstream.
    Go,
    /// The engine blocked the request.
    Blocked,
    /// The body is larger than the body limit.
    TooLarge,
    /// The client's body broke off.
    ClientError,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Stopped(&'static str);

/// A body that fails (and sets `over`) once more than `max` bytes have passed.
pub struct Capped {
    inner: Incoming,
    seen: u64,
    max: u64,
    over: Arc<AtomicBool>,
}

impl Capped {
    pub fn new(inner: Incoming, max: u64, over: Arc<AtomicBool>) -> Capped {
        Capped {
            inner,
            seen: 0,
            max,
            over,
        }
    }
}

impl Body for Capped {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    this.seen += d.len() as u64;
                    if this.seen > this.max {
                        this.over.store(true, Ordering::Relaxed);
                        return Poll::Ready(Some(Err(Box::new(Stopped("body too large")))));
                    }
                }
                Poll::Ready(Some(Ok(f)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The receiving end of the pump, as a body for the upstream request.
struct ChannelBody(mpsc::Receiver<Result<Frame<Bytes>, BoxError>>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.get_mut().0.poll_recv(cx)
    }
}

/// Starts inspecting `body` with the shared transaction. Returns the upstream body and the
/// signal the handler waits on before it sends the request.
pub fn inspect(
    body: Incoming,
    tx: SharedTx,
    max_body: u64,
    inspect_max: usize,
) -> (ProxyBody, watch::Receiver<Signal>) {
    let (out, rx) = mpsc::channel(4);
    let (signal, signal_rx) = watch::channel(Signal::Pending);
    let pump = Pump {
        tx,
        out,
        signal,
        held: VecDeque::new(),
        held_bytes: 0,
        sent: 0,
        allowed: 0,
        inspecting: true,
    };
    tokio::spawn(pump.run(body, max_body, inspect_max));
    (ChannelBody(rx).boxed_unsync(), signal_rx)
}

struct Pump {
    tx: SharedTx,
    out: mpsc::Sender<Result<Frame<Bytes>, BoxError>>,
    signal: watch::Sender<Signal>,
    held: VecDeque<Bytes>,
    held_bytes: usize,
    /// Body bytes sent upstream so far (the offset of the first held byte).
    sent: u64,
    /// Body bytes the engine allows upstream so far.
    allowed: u64,
    inspecting: bool,
}

impl Pump {
    async fn run(mut self, mut body: Incoming, max_body: u64, inspect_max: usize) {
        let mut total: u64 = 0;
        loop {
            if !self.release().await {
                return;
            }
            match body.frame().await {
                None => {
                    if self.inspecting && self.phase(|t| t.on_request_end()) == Step::Block {
                        return self.stop(Signal::Blocked).await;
                    }
                    self.inspecting = false;
                    self.go();
                    let _ = self.release().await;
                    return;
                }
                Some(Err(_)) => return self.stop(Signal::ClientError).await,
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        total += data.len() as u64;
                        if total > max_body {
                            return self.stop(Signal::TooLarge).await;
                        }
                        if !self.inspecting {
                            if self.out.send(Ok(Frame::data(data))).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        self.held_bytes += data.len();
                        self.held.push_back(data.clone());
                        match self.phase(|t| t.on_request_body(&data)) {
                            Step::Block => return self.stop(Signal::Blocked).await,
                            Step::Release(n) => {
                                self.allowed = self.allowed.max(n);
                                if n > 0 {
                                    self.go();
                                }
                            }
                            Step::PassRest => {
                                self.inspecting = false;
                                self.go();
                            }
                            Step::Forward | Step::InspectBody => {}
                        }
                        if self.inspecting && self.held_bytes > inspect_max {
                            // Past the inspection limit: decide on what was seen, stream the rest.
                            if self.phase(|t| t.on_request_end()) == Step::Block {
                                return self.stop(Signal::Blocked).await;
                            }
                            self.inspecting = false;
                            self.go();
                        }
                    }
                    Err(frame) => {
                        if self.inspecting && self.phase(|t| t.on_request_end()) == Step::Block {
                            return self.stop(Signal::Blocked).await;
                        }
                        self.inspecting = false;
                        self.go();
                        if !self.release().await {
                            return;
                        }
                        let _ = self.out.send(Ok(frame)).await;
                    }
                },
            }
        }
    }

    /// Runs one phase on the shared transaction (PassRest when the handler already finished it).
    fn phase(&self, f: impl FnOnce(&mut Transaction) -> Step) -> Step {
        match self.tx.lock().as_mut() {
            Some(t) => f(t),
            None => Step::PassRest,
        }
    }

    fn go(&self) {
        self.signal.send_if_modified(|s| {
            let first = *s == Signal::Pending;
            if first {
                *s = Signal::Go;
            }
            first
        });
    }

    async fn stop(self, why: Signal) {
        self.signal.send_replace(why);
        let _ = self
            .out
            .send(Err(Box::new(Stopped("request stopped"))))
            .await;
    }

    /// Sends the held bytes the engine allows; false when the upstream side is gone.
    async fn release(&mut self) -> bool {
        let limit = if self.inspecting {
            self.allowed
        } else {
            u64::MAX
        };
        while let Some(front) = self.held.front_mut() {
            if self.sent >= limit {
                break;
            }
            let room = limit - self.sent;
            let chunk = if (front.len() as u64) <= room {
                self.held.pop_front().unwrap_or_default()
            } else {
                front.split_to(room as usize)
            };
            self.sent += chunk.len() as u64;
            self.held_bytes -= chunk.len();
            if self.out.send(Ok(Frame::data(chunk))).await.is_err() {
                return false;
            }
        }
        true
    }
}
