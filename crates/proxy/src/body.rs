//! Request bodies on their way upstream: [`Watched`] is a body wrapped by a [`Watch`] that looks at
//! each poll, such as [`Capped`], which counts an uninspected body against the body limit; [`inspect`] feeds a body to the WAF transaction, holding only the bytes not yet released
//! (at most the inspection limit), and streams released bytes upstream through a [`channel`].
//! [`poll_inner`] is the first step of every body here that wraps another.

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

use super::driver::inspect::{Inspection, Inspector, Stop};
use super::limits::Limits;
use super::pace::Paced;
use super::upstream::{BoxError, ProxyBody};
use portcullis_engine::{Step, Transaction};

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

/// One poll of a body as the data plane's bodies answer it.
pub type FramePoll = Poll<Option<Result<Frame<Bytes>, BoxError>>>;

/// Polls `inner` for its next frame, its error boxed: the first step of every body that wraps
/// another ([`Capped`], [`Paced`], the pooled upstream response), each of which then looks at what
/// came. Generic and inlined, so the per-frame path stays free of boxing and dynamic dispatch.
#[inline]
pub fn poll_inner<B>(inner: &mut B, cx: &mut Context<'_>) -> FramePoll
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    Pin::new(inner)
        .poll_frame(cx)
        .map(|frame| frame.map(|r| r.map_err(Into::into)))
}

/// What a body that wraps another adds to each poll of it ([`Capped`] counts the bytes,
/// [`Paced`] times the waits for the client); [`Watched`] is the one body around them.
pub trait Watch {
    /// `polled` is the inner body's answer to this poll; returns the wrapping body's.
    fn watch(&mut self, polled: FramePoll, cx: &mut Context<'_>) -> FramePoll;
}

/// A body `inner` under a [`Watch`]: it ends when `inner` ends and has its size, and answers each
/// poll as the watch decides. Generic, so a watched body costs no boxing or dynamic dispatch.
pub struct Watched<B, W> {
    inner: B,
    watch: W,
}

impl<B, W> Body for Watched<B, W>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
    W: Watch + Unpin,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> FramePoll {
        let this = self.get_mut();
        let polled = poll_inner(&mut this.inner, cx);
        this.watch.watch(polled, cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A body that fails (and sets `over`) once more than `max` bytes have passed.
pub type Capped<B> = Watched<B, Cap>;

/// The count of [`Capped`].
pub struct Cap {
    seen: u64,
    max: u64,
    over: Arc<AtomicBool>,
}

impl<B, W> Watched<B, W> {
    pub fn wrap(inner: B, watch: W) -> Watched<B, W> {
        Watched { inner, watch }
    }
}

impl<B> Capped<B> {
    pub fn new(inner: B, max: u64, over: Arc<AtomicBool>) -> Capped<B> {
        let cap = Cap { seen: 0, max, over };
        Watched::wrap(inner, cap)
    }
}

impl Watch for Cap {
    fn watch(&mut self, polled: FramePoll, _: &mut Context<'_>) -> FramePoll {
        let frame = std::task::ready!(polled);
        if let Some(Ok(f)) = &frame
            && let Some(d) = f.data_ref()
        {
            self.seen += d.len() as u64;
            if self.seen > self.max {
                self.over.store(true, Ordering::Relaxed);
                return Poll::Ready(Some(Err(Box::new(Stopped("body too large")))));
            }
        }
        Poll::Ready(frame)
    }
}

/// Reads and discards the rest of an HTTP/2 request body that was answered before it was read (a
/// block at the headers, a refusal), so that the client's stream ends with its own END_STREAM.
/// Dropping the body would reset the stream instead, and some clients (curl 7.88) then drop the
/// answer they were sent, even for a reset with `NO_ERROR`. Bounded by the body limit and the pace
/// limits, like any body.
pub fn discard(mut body: Paced<Incoming>, lim: &Limits) {
    let max = lim.max_body_bytes;
    tokio::spawn(async move {
        let mut seen = 0u64;
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, |d| d.len() as u64);
            if seen > max {
                return;
            }
        }
    });
}

/// A request body pushed to hyper piece by piece: the sending half of [`channel`]. Its end must be
/// said with [`BodySender::finish`]: a sender dropped before that fails the body (hyper resets the
/// stream) instead of ending it short, so a member never takes a cut body for a whole one. The end
/// travels as a message of its own, so the two halves share nothing but the channel.
pub struct BodySender(mpsc::Sender<Option<Result<Frame<Bytes>, BoxError>>>);

impl BodySender {
    /// Sends one frame (or the error that fails the body); false when hyper dropped the body.
    pub async fn send(&self, frame: Result<Frame<Bytes>, BoxError>) -> bool {
        self.0.send(Some(frame)).await.is_ok()
    }

    /// The body is whole: it ends once the frames sent before are taken.
    pub async fn finish(&self) {
        let _ = self.0.send(None).await;
    }
}

/// The receiving half of [`channel`], as a body for the upstream request.
struct ChannelBody {
    frames: mpsc::Receiver<Option<Result<Frame<Bytes>, BoxError>>>,
    ended: bool,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> FramePoll {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        match std::task::ready!(this.frames.poll_recv(cx)) {
            Some(Some(frame)) => Poll::Ready(Some(frame)),
            Some(None) => {
                this.ended = true;
                Poll::Ready(None)
            }
            None => Poll::Ready(Some(Err(Box::new(Stopped("request body cut"))))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

/// A request body fed from this side: the sender, and the body to hand to hyper.
pub fn channel() -> (BodySender, ProxyBody) {
    let (frames, rx) = mpsc::channel(4);
    let body = ChannelBody {
        frames: rx,
        ended: false,
    };
    (BodySender(frames), body.boxed_unsync())
}

impl Inspector for SharedTx {
    fn body(&mut self, chunk: &[u8]) -> Step {
        match self.lock().as_mut() {
            Some(t) => t.on_request_body(chunk),
            // The handler already finished the transaction (the response came first).
            None => Step::PassRest,
        }
    }

    fn end(&mut self) -> Step {
        match self.lock().as_mut() {
            Some(t) => t.on_request_end(),
            None => Step::Forward,
        }
    }

    fn overflow(&mut self, limit: u64) -> Step {
        match self.lock().as_mut() {
            Some(t) => t.on_request_overflow(limit),
            None => Step::Forward,
        }
    }
}

/// Starts inspecting `body` with `tx` in a task of its own (a stream handed to hyper's HTTP/2
/// client, which pulls it from its connection task). Returns the upstream body and the signal the
/// handler waits on before it sends the request.
pub fn inspect<B, I>(
    body: B,
    tx: I,
    max_body: u64,
    inspect_max: usize,
) -> (ProxyBody, watch::Receiver<Signal>)
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Send,
    I: Inspector + Send + 'static,
{
    let (out, up_body) = channel();
    let (signal, signal_rx) = watch::channel(Signal::Pending);
    let pump = Pump {
        tx,
        out,
        signal,
        body: Inspection::new(true, max_body, inspect_max),
    };
    tokio::spawn(pump.run(body));
    (up_body, signal_rx)
}

struct Pump<I> {
    tx: I,
    out: BodySender,
    signal: watch::Sender<Signal>,
    body: Inspection,
}

impl<I: Inspector> Pump<I> {
    async fn run<B>(mut self, mut body: B)
    where
        B: Body<Data = Bytes> + Unpin,
    {
        loop {
            if !self.release().await {
                return;
            }
            let stopped = match body.frame().await {
                None => match self.body.end(&mut self.tx) {
                    Ok(()) => {
                        self.go();
                        if self.release().await {
                            self.out.finish().await;
                        }
                        return;
                    }
                    Err(s) => s,
                },
                Some(Err(_)) => return self.stop(Signal::ClientError).await,
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => match self.body.feed(&mut self.tx, data) {
                        Ok(()) => {
                            if self.body.go() {
                                self.go();
                            }
                            continue;
                        }
                        Err(s) => s,
                    },
                    Err(trailers) => match self.body.end(&mut self.tx) {
                        Ok(()) => {
                            self.go();
                            if self.release().await && self.out.send(Ok(trailers)).await {
                                self.out.finish().await;
                            }
                            return;
                        }
                        Err(s) => s,
                    },
                },
            };
            let why = match stopped {
                Stop::Blocked => Signal::Blocked,
                Stop::TooLarge => Signal::TooLarge,
            };
            return self.stop(why).await;
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
        while let Some(chunk) = self.body.release() {
            if !self.out.send(Ok(Frame::data(chunk))).await {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{chunks, chunks_then_stall};
    use std::collections::VecDeque;

    /// Answers scripted steps, one per chunk, and `end_step` at the end.
    struct Script {
        steps: VecDeque<Step>,
        end_step: Step,
        fed: Arc<Mutex<Vec<u8>>>,
    }

    impl Inspector for Script {
        fn body(&mut self, chunk: &[u8]) -> Step {
            self.fed.lock().extend_from_slice(chunk);
            self.steps.pop_front().unwrap_or(Step::InspectBody)
        }
        fn end(&mut self) -> Step {
            self.end_step
        }
        fn overflow(&mut self, _limit: u64) -> Step {
            self.end_step
        }
    }

    fn script(steps: &[Step], end_step: Step) -> (Script, Arc<Mutex<Vec<u8>>>) {
        let fed = Arc::new(Mutex::new(Vec::new()));
        let s = Script {
            steps: steps.iter().copied().collect(),
            end_step,
            fed: fed.clone(),
        };
        (s, fed)
    }

    async fn drain(body: ProxyBody) -> (Vec<u8>, bool) {
        let mut body = body;
        let mut out = Vec::new();
        while let Some(f) = body.frame().await {
            match f {
                Ok(f) => out.extend_from_slice(f.data_ref().map_or(&[][..], |d| &d[..])),
                Err(_) => return (out, true),
            }
        }
        (out, false)
    }

    #[tokio::test]
    async fn the_whole_body_is_held_until_the_end_then_forwarded() {
        let (s, fed) = script(&[], Step::Forward);
        let (body, mut sig) = inspect(chunks(&[b"ab", b"cd"]), s, 100, 100);
        let outcome = *sig
            .wait_for(|s| *s != Signal::Pending)
            .await
            .expect("signal");
        assert_eq!(outcome, Signal::Go);
        assert_eq!(drain(body).await, (b"abcd".to_vec(), false));
        assert_eq!(*fed.lock(), b"abcd");
    }

    #[tokio::test]
    async fn release_lets_exactly_n_bytes_go_then_pass_rest_streams() {
        let (s, fed) = script(&[Step::Release(3), Step::PassRest], Step::Forward);
        let (body, mut sig) = inspect(chunks(&[b"abcde", b"fg", b"hij"]), s, 100, 100);
        assert_eq!(
            *sig.wait_for(|s| *s != Signal::Pending).await.expect("sig"),
            Signal::Go
        );
        assert_eq!(drain(body).await, (b"abcdefghij".to_vec(), false));
        assert_eq!(*fed.lock(), b"abcdefg", "nothing is fed after PassRest");
    }

    #[tokio::test]
    async fn only_released_bytes_go_while_the_rest_is_held() {
        let (s, _) = script(&[Step::Release(3)], Step::Forward);
        let (mut body, _) = inspect(chunks_then_stall(&[b"abcdef"]), s, 100, 100);
        let mut got = Vec::new();
        while let Ok(Some(Ok(f))) =
            tokio::time::timeout(std::time::Duration::from_millis(100), body.frame()).await
        {
            got.extend_from_slice(f.data_ref().map_or(&[][..], |d| &d[..]));
        }
        assert_eq!(got, b"abc");
    }

    #[tokio::test]
    async fn a_block_stops_the_body_and_signals() {
        let (s, _) = script(&[Step::InspectBody, Step::Block], Step::Forward);
        let (body, mut sig) = inspect(chunks(&[b"ab", b"cd", b"ef"]), s, 100, 100);
        let outcome = *sig.wait_for(|s| *s != Signal::Pending).await.expect("sig");
        assert_eq!(outcome, Signal::Blocked);
        let (bytes, failed) = drain(body).await;
        assert!(
            bytes.is_empty() && failed,
            "no byte of a blocked body goes upstream"
        );
    }

    #[tokio::test]
    async fn past_the_inspection_limit_the_rest_streams_after_a_verdict() {
        let (s, fed) = script(&[], Step::Forward);
        let (body, _) = inspect(chunks(&[b"abcd", b"efgh", b"ijkl"]), s, 100, 6);
        assert_eq!(drain(body).await, (b"abcdefghijkl".to_vec(), false));
        assert_eq!(*fed.lock(), b"abcdefgh", "inspection stops past the limit");
    }

    #[tokio::test]
    async fn over_the_body_limit_is_too_large() {
        let (s, _) = script(&[Step::PassRest], Step::Forward);
        let (body, sig) = inspect(chunks(&[b"abcd", b"efgh"]), s, 6, 100);
        let (_, failed) = drain(body).await;
        assert!(failed);
        assert_eq!(*sig.borrow(), Signal::TooLarge);
    }
}
