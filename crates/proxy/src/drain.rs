//! Graceful draining of one listener's connections: the listener holds a [`Drain`], every
//! connection a [`Watch`]. [`Drain::shutdown`] tells every connection to finish and waits until the
//! last one has ended. Connections served by hyper get its `graceful_shutdown` (HTTP/1: close after
//! the current response; HTTP/2: GOAWAY); the HTTP/1 fast path ([`super::h1`]) checks
//! [`Watch::draining`] between requests and waits on [`Watch::signaled`] while idle.
//!
//! (hyper-util's `GracefulShutdown` does the same for hyper connections only: its connection trait is
//! sealed, so a connection that is not a hyper connection cannot be watched by it.)

use tokio::sync::watch;

/// The listener's side: one per listener.
pub struct Drain {
    tx: watch::Sender<bool>,
}

/// A connection's side: alive while held.
#[derive(Clone)]
pub struct Watch {
    rx: watch::Receiver<bool>,
}

impl Default for Drain {
    fn default() -> Self {
        Drain {
            tx: watch::channel(false).0,
        }
    }
}

impl Drain {
    /// A watch for a new connection.
    pub fn watcher(&self) -> Watch {
        Watch {
            rx: self.tx.subscribe(),
        }
    }

    /// Signals every connection to finish and waits until all their watches are dropped.
    pub async fn shutdown(self) {
        self.tx.send_replace(true);
        self.tx.closed().await;
    }
}

impl Watch {
    /// True once the listener drains: finish the current request, then close.
    pub fn draining(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves when the listener starts draining (never, if the listener is dropped instead).
    pub async fn signaled(&mut self) {
        if self.rx.wait_for(|d| *d).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn shutdown_waits_for_every_watch() {
        let drain = Drain::default();
        let mut w = drain.watcher();
        assert!(!w.draining());
        let conn = tokio::spawn(async move {
            w.signaled().await;
            assert!(w.draining());
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(w);
        });
        let started = std::time::Instant::now();
        tokio::time::timeout(Duration::from_secs(2), drain.shutdown())
            .await
            .expect("drained");
        assert!(started.elapsed() >= Duration::from_millis(50));
        conn.await.expect("task");
    }
}
