//! The pace of a request body: [`Paced`] fails a body whose client stops sending (no bytes for
//! `body_read_timeout`) or trickles it (less than `min_body_rate` bytes per second once that same
//! time has passed), so that slow or stalled uploads cannot hold connections and descriptors.
//!
//! [`Pace`] is the accounting, [`Paced`] applies it to a body hyper reads; the HTTP/1.1 connection
//! code applies it to the bodies it reads itself.
//!
//! Only time spent waiting for the client counts: the clock runs from the moment a read of the
//! body has to wait until bytes arrive, so a body held back by a slow upstream (nobody reads it)
//! is never the client's fault.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::{Instant, Sleep};

use super::body::{FramePoll, Watch, Watched};
use super::limits::Limits;

/// The error of a body cut for its pace.
#[derive(Debug, thiserror::Error)]
#[error("request body too slow")]
pub struct TooSlow;

/// The pace accounting of one body, whoever reads it: how long the next wait for the client may
/// last.
#[derive(Debug)]
pub struct Pace {
    timeout: Duration,
    min_rate: u64,
    received: u64,
    /// Time spent waiting for the client so far (finished waits).
    waited: Duration,
    /// The wait under way, if any.
    since: Option<Instant>,
}

impl Pace {
    pub fn new(lim: &Limits) -> Pace {
        Pace {
            timeout: lim.body_read_timeout,
            min_rate: lim.min_body_rate,
            received: 0,
            waited: Duration::ZERO,
            since: None,
        }
    }

    /// A read has to wait: when the wait must end (the clock starts at the first call).
    pub fn waiting(&mut self) -> Instant {
        let since = *self.since.get_or_insert_with(Instant::now);
        self.due(since)
    }

    /// A read ended with `n` body bytes.
    pub fn got(&mut self, n: usize) {
        if let Some(since) = self.since.take() {
            self.waited += since.elapsed();
        }
        self.received += n as u64;
    }

    /// When the wait that started at `since` must end: after the read timeout, or earlier when
    /// the bytes received so far would fall under the minimum rate (after the same grace period).
    fn due(&self, since: Instant) -> Instant {
        let mut allowed = self.timeout;
        if self.min_rate > 0 {
            let earned = Duration::from_secs_f64(self.received as f64 / self.min_rate as f64);
            let budget = (self.timeout + earned).saturating_sub(self.waited);
            allowed = allowed.min(budget);
        }
        since + allowed
    }
}

/// A request body under the pace limits; sets `slow` when it cuts the body.
pub type Paced<B> = Watched<B, Pacer>;

/// The clock of [`Paced`].
pub struct Pacer {
    pace: Pace,
    sleep: Option<Pin<Box<Sleep>>>,
    slow: Arc<AtomicBool>,
}

impl<B> Paced<B> {
    pub fn new(inner: B, lim: &Limits, slow: Arc<AtomicBool>) -> Paced<B> {
        let pacer = Pacer {
            pace: Pace::new(lim),
            sleep: None,
            slow,
        };
        Watched::wrap(inner, pacer)
    }
}

impl Watch for Pacer {
    fn watch(&mut self, polled: FramePoll, cx: &mut Context<'_>) -> FramePoll {
        match polled {
            Poll::Ready(frame) => {
                let n = match &frame {
                    Some(Ok(f)) => f.data_ref().map_or(0, Bytes::len),
                    _ => 0,
                };
                self.pace.got(n);
                Poll::Ready(frame)
            }
            Poll::Pending => {
                let due = self.pace.waiting();
                let sleep = self
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
                if sleep.deadline() != due {
                    sleep.as_mut().reset(due);
                }
                if sleep.as_mut().poll(cx).is_ready() {
                    self.slow.store(true, Ordering::Relaxed);
                    return Poll::Ready(Some(Err(Box::new(TooSlow))));
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::BoxError;
    use http_body::{Body, Frame};
    use http_body_util::BodyExt;

    /// A body that yields one byte every `every`, `n` times.
    struct Trickle {
        left: u32,
        every: Duration,
        next: Pin<Box<Sleep>>,
    }

    impl Body for Trickle {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            let this = self.get_mut();
            if this.left == 0 {
                return Poll::Ready(None);
            }
            if this.next.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.left -= 1;
            let at = Instant::now() + this.every;
            this.next.as_mut().reset(at);
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))))
        }
    }

    fn trickle(n: u32, every: Duration) -> Trickle {
        Trickle {
            left: n,
            every,
            next: Box::pin(tokio::time::sleep(every)),
        }
    }

    fn limits(timeout: u64, rate: u64) -> Limits {
        Limits {
            body_read_timeout: Duration::from_secs(timeout),
            min_body_rate: rate,
            ..Limits::default()
        }
    }

    async fn read_all<B: Body<Data = Bytes, Error = BoxError> + Unpin>(mut b: B) -> (u64, bool) {
        let mut n = 0;
        while let Some(f) = b.frame().await {
            match f {
                Ok(f) => n += f.data_ref().map_or(0, |d| d.len() as u64),
                Err(e) => return (n, e.is::<TooSlow>()),
            }
        }
        (n, false)
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_is_cut_at_the_read_timeout() {
        let slow = Arc::new(AtomicBool::new(false));
        let body = Paced::new(
            trickle(1, Duration::from_secs(30)),
            &limits(10, 0),
            slow.clone(),
        );
        let started = Instant::now();
        assert_eq!(read_all(body).await, (0, true));
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        assert!(slow.load(Ordering::Relaxed));
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_is_cut_by_the_minimum_rate() {
        let slow = Arc::new(AtomicBool::new(false));
        // One byte every 3 s never hits the 10 s read timeout, but falls under 500 B/s.
        let body = Paced::new(trickle(100, Duration::from_secs(3)), &limits(10, 500), slow);
        let started = Instant::now();
        let (got, too_slow) = read_all(body).await;
        assert!(too_slow);
        assert_eq!(got, 3);
        assert!(
            started.elapsed() < Duration::from_secs(11),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_steady_body_passes() {
        let slow = Arc::new(AtomicBool::new(false));
        // 10 bytes per second for 30 s: over 5 B/s, never idle for 10 s.
        let body = Paced::new(
            trickle(300, Duration::from_millis(100)),
            &limits(10, 5),
            slow,
        );
        assert_eq!(read_all(body).await, (300, false));
    }
}
