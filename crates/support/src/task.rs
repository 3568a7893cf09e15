//! Background tasks off the request path (connection drivers of the admin servers and of
//! outbound clients, monitors, reapers, senders, recovery loops): spawned as one boxed future
//! type, so tokio's task machinery (its harness, vtable and join handle code) is compiled once,
//! here, instead of once per spawned future type in every crate. The box and the indirect poll cost
//! nothing next to a task that lives for a connection or for the process; a task spawned per
//! proxied request is spawned with `tokio::spawn` directly.

use std::future::Future;
use std::pin::Pin;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// The one future type every background task is spawned as.
type Background = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Spawns `task` on the current runtime (as `tokio::spawn`, which panics outside one).
pub fn spawn(task: impl Future<Output = ()> + Send + 'static) -> JoinHandle<()> {
    spawn_on(&Handle::current(), task)
}

/// Spawns `task` on `rt`.
pub fn spawn_on(rt: &Handle, task: impl Future<Output = ()> + Send + 'static) -> JoinHandle<()> {
    spawn_boxed(rt, Box::pin(task))
}

fn spawn_boxed(rt: &Handle, task: Background) -> JoinHandle<()> {
    rt.spawn(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_background_task_runs_and_can_be_awaited_or_aborted() {
        let (tx, rx) = tokio::sync::oneshot::channel();
        spawn(async move {
            let _ = tx.send(7);
        })
        .await
        .expect("task ran to completion");
        assert_eq!(rx.await.ok(), Some(7));

        let forever = spawn_on(&Handle::current(), std::future::pending());
        forever.abort();
        assert!(forever.await.expect_err("aborted").is_cancelled());
    }
}
