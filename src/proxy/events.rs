//! The security event log: one JSON line per blocked or alarmed request, written by a dedicated
//! thread so the request path never waits on the disk. Imports: `waf::SecurityEvent`.

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;

use crate::waf::SecurityEvent;

/// Where events go; cloning shares the writer.
#[derive(Clone)]
pub struct EventSink {
    tx: mpsc::Sender<String>,
}

impl EventSink {
    /// Appends to `path` (created if missing), or writes to stderr when `path` is `None`.
    pub fn open(path: Option<&Path>) -> std::io::Result<EventSink> {
        let mut out: Box<dyn Write + Send> = match path {
            Some(p) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            ),
            None => Box::new(std::io::stderr()),
        };
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::Builder::new()
            .name("event-log".into())
            .spawn(move || {
                while let Ok(line) = rx.recv() {
                    if out.write_all(line.as_bytes()).is_ok() {
                        let _ = out.flush();
                    }
                }
                let _ = out.flush();
            })?;
        Ok(EventSink { tx })
    }

    /// Queues one event as a JSON line.
    pub fn write(&self, event: &SecurityEvent) {
        match serde_json::to_string(event) {
            Ok(mut line) => {
                line.push('\n');
                let _ = self.tx.send(line);
            }
            Err(e) => tracing::error!("cannot serialise a security event: {e}"),
        }
    }
}
