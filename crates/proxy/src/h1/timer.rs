//! A connection's timeout on the fast path, re-armed lazily. Each request moves the deadline a
//! little later (now + the same duration), and moving a registered tokio timer costs a timer-wheel
//! removal and insertion; here a later deadline is only written down. The sleep stays where it was
//! armed; when it fires before the deadline in force, it is moved to that deadline once, so a busy
//! keep-alive connection touches the timer wheel about once per timeout period instead of twice
//! per request. A deadline earlier than the armed one moves the sleep at once.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::time::{Instant, Sleep};

/// One timeout, reused for every request of a connection. The sleep is made at the first wait
/// that needs it: a connection whose every read finds its bytes there and whose answer needs no
/// upstream (a blocked request, most `Connection: close` requests) allocates no sleep and never
/// touches the timer wheel.
pub struct Timer {
    sleep: Option<Pin<Box<Sleep>>>,
    /// When the sleep fires (once made).
    armed: Instant,
    /// The deadline in force.
    due: Instant,
}

impl Timer {
    pub fn new(due: Instant) -> Timer {
        Timer {
            sleep: None,
            armed: due,
            due,
        }
    }

    /// Sets the deadline; only one earlier than the armed sleep moves it.
    pub fn set(&mut self, due: Instant) {
        self.due = due;
        if due < self.armed {
            self.arm();
        }
    }

    fn arm(&mut self) {
        self.armed = self.due;
        if let Some(sleep) = &mut self.sleep {
            sleep.as_mut().reset(self.due);
        }
    }

    /// Ready once the deadline has passed (the task is woken then).
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let armed = self.armed;
            let sleep = self
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(armed)));
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if self.armed >= self.due {
                return Poll::Ready(());
            }
            // Fired for a deadline since moved later.
            self.arm();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::time::Duration;

    async fn expires(t: &mut Timer) {
        poll_fn(|cx| t.poll_expired(cx)).await
    }

    #[tokio::test(start_paused = true)]
    async fn fires_at_the_deadline_in_force() {
        let start = Instant::now();
        let mut t = Timer::new(start + Duration::from_secs(60));
        // Moved later twice without touching the sleep: fires at the last deadline, not the first.
        tokio::time::sleep(Duration::from_secs(30)).await;
        t.set(Instant::now() + Duration::from_secs(60));
        tokio::time::sleep(Duration::from_secs(40)).await;
        t.set(Instant::now() + Duration::from_secs(60));
        expires(&mut t).await;
        assert_eq!(Instant::now() - start, Duration::from_secs(130));
        // An earlier deadline moves the sleep at once.
        t.set(Instant::now() + Duration::from_secs(60));
        t.set(Instant::now() + Duration::from_secs(5));
        expires(&mut t).await;
        assert_eq!(Instant::now() - start, Duration::from_secs(135));
        // A deadline already past is expired at the first poll.
        t.set(Instant::now() - Duration::from_secs(1));
        assert!(
            poll_fn(|cx| Poll::Ready(t.poll_expired(cx)))
                .await
                .is_ready()
        );
    }
}
