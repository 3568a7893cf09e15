//! Request-body inspection as the body streams, without IO: the driver feeds each chunk as it
//! arrives and takes back the bytes that may go upstream. Bytes the engine has not released are
//! held (at most `inspection_bytes` of them); past that the engine judges what it saw
//! (VIOL_REQUEST_MAX_LENGTH) and, if it lets the request go, the rest streams uninspected. A body
//! the policy does not inspect is only counted against `max_body_bytes` and released as it comes.
//!
//! Every body path uses it: the HTTP/1.1 connection code and the hyper front-end feeding an
//! upstream connection in place, and the pump of streams handed to hyper's HTTP/2 client.

use std::collections::VecDeque;

use bytes::Bytes;

use portcullis_engine::{Step, Transaction};

/// The body phase of the WAF, as the inspection sees it.
pub trait Inspector {
    /// One chunk of the body, in order.
    fn body(&mut self, chunk: &[u8]) -> Step;
    /// The end of the body.
    fn end(&mut self) -> Step;
    /// The body is longer than the `limit` bytes the proxy holds for inspection.
    fn overflow(&mut self, limit: u64) -> Step;
}

impl Inspector for Transaction {
    fn body(&mut self, chunk: &[u8]) -> Step {
        self.on_request_body(chunk)
    }

    fn end(&mut self) -> Step {
        self.on_request_end()
    }

    fn overflow(&mut self, limit: u64) -> Step {
        self.on_request_overflow(limit)
    }
}

/// Why a body stops: nothing more of it goes upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The engine blocked the request.
    Blocked,
    /// The body is longer than `max_body_bytes`.
    TooLarge,
}

/// The inspection state of one request body; see the module documentation.
#[derive(Debug)]
pub struct Inspection {
    held: VecDeque<Bytes>,
    held_bytes: usize,
    /// Bytes released so far (the offset of the first held byte).
    sent: u64,
    /// Bytes the engine allows upstream so far.
    allowed: u64,
    /// Chunks still go to the engine.
    inspecting: bool,
    /// Bytes fed so far.
    total: u64,
    max_body: u64,
    limit: usize,
    /// The upstream request may start: bytes were released, or the body ended unblocked.
    go: bool,
    /// The body ended (and passed).
    ended: bool,
}

impl Inspection {
    /// `inspect`: the engine asked for the body (`Step::InspectBody`); otherwise it is only counted.
    pub fn new(inspect: bool, max_body: u64, limit: usize) -> Inspection {
        Inspection {
            held: VecDeque::new(),
            held_bytes: 0,
            sent: 0,
            allowed: 0,
            inspecting: inspect,
            total: 0,
            max_body,
            limit,
            go: !inspect,
            ended: false,
        }
    }

    /// One chunk of the body arrived.
    pub fn feed(&mut self, tx: &mut impl Inspector, data: Bytes) -> Result<(), Stop> {
        self.total += data.len() as u64;
        if self.total > self.max_body {
            return Err(Stop::TooLarge);
        }
        if data.is_empty() {
            return Ok(());
        }
        let step = if self.inspecting {
            Some(tx.body(&data))
        } else {
            None
        };
        self.held_bytes += data.len();
        self.held.push_back(data);
        match step {
            None => return Ok(()),
            Some(Step::Block) => return Err(Stop::Blocked),
            Some(Step::Release(n)) => {
                self.allowed = self.allowed.max(n);
                self.go |= n > 0;
            }
            Some(Step::PassRest) => self.pass(),
            Some(Step::Forward | Step::InspectBody) => {}
        }
        // Bytes the engine already released are on their way, not held for inspection (a body the
        // engine only counts is released chunk by chunk).
        let unreleased =
            (self.held_bytes as u64).saturating_sub(self.allowed.saturating_sub(self.sent));
        if self.inspecting && unreleased > self.limit as u64 {
            // Past the inspection limit: the engine decides on what it saw (the overflow is a
            // violation, blocking by default); if it lets the request go, the rest streams
            // uninspected.
            if tx.overflow(self.limit as u64) == Step::Block {
                return Err(Stop::Blocked);
            }
            self.pass();
        }
        Ok(())
    }

    /// The body ended (or its trailers came).
    pub fn end(&mut self, tx: &mut impl Inspector) -> Result<(), Stop> {
        if self.inspecting && tx.end() == Step::Block {
            return Err(Stop::Blocked);
        }
        self.pass();
        self.ended = true;
        Ok(())
    }

    fn pass(&mut self) {
        self.inspecting = false;
        self.go = true;
    }

    /// True once the upstream request may start (see [`Inspection::go`]'s field).
    pub fn go(&self) -> bool {
        self.go
    }

    /// Body bytes fed so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The engine still reads the body.
    pub fn inspecting(&self) -> bool {
        self.inspecting
    }

    /// The body ended and passed (what is held may all go).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Bytes are held (released or not).
    pub fn has_held(&self) -> bool {
        !self.held.is_empty()
    }

    /// [`Inspection::release`] would give bytes now.
    pub fn releasable(&self) -> bool {
        !self.held.is_empty() && (!self.inspecting || self.sent < self.allowed)
    }

    /// The next bytes the engine lets go upstream, if any.
    pub fn release(&mut self) -> Option<Bytes> {
        let limit = if self.inspecting {
            self.allowed
        } else {
            u64::MAX
        };
        let front = self.held.front_mut()?;
        if self.sent >= limit {
            return None;
        }
        let room = limit - self.sent;
        let chunk = if (front.len() as u64) <= room {
            self.held.pop_front()?
        } else {
            front.split_to(room as usize)
        };
        self.sent += chunk.len() as u64;
        self.held_bytes -= chunk.len();
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers scripted steps, one per chunk, and `end_step` at the end and on overflow.
    struct Script {
        steps: VecDeque<Step>,
        end_step: Step,
        fed: Vec<u8>,
    }

    impl Inspector for Script {
        fn body(&mut self, chunk: &[u8]) -> Step {
            self.fed.extend_from_slice(chunk);
            self.steps.pop_front().unwrap_or(Step::InspectBody)
        }
        fn end(&mut self) -> Step {
            self.end_step
        }
        fn overflow(&mut self, _limit: u64) -> Step {
            self.end_step
        }
    }

    fn script(steps: &[Step], end_step: Step) -> Script {
        Script {
            steps: steps.iter().copied().collect(),
            end_step,
            fed: Vec::new(),
        }
    }

    fn released(i: &mut Inspection) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(b) = i.release() {
            out.extend_from_slice(&b);
        }
        out
    }

    #[test]
    fn release_lets_exactly_n_bytes_go_and_the_end_the_rest() {
        let mut tx = script(&[Step::Release(3)], Step::Forward);
        let mut i = Inspection::new(true, 100, 100);
        i.feed(&mut tx, Bytes::from_static(b"abcdef")).expect("fed");
        assert!(i.go());
        assert_eq!(released(&mut i), b"abc");
        i.feed(&mut tx, Bytes::from_static(b"gh")).expect("fed");
        assert_eq!(released(&mut i), b"");
        i.end(&mut tx).expect("end");
        assert_eq!(released(&mut i), b"defgh");
        assert_eq!(tx.fed, b"abcdefgh");
    }

    #[test]
    fn nothing_goes_before_the_engine_says_so_and_a_block_stops() {
        let mut tx = script(&[Step::InspectBody, Step::Block], Step::Forward);
        let mut i = Inspection::new(true, 100, 100);
        i.feed(&mut tx, Bytes::from_static(b"ab")).expect("fed");
        assert!(!i.go());
        assert_eq!(released(&mut i), b"");
        assert_eq!(
            i.feed(&mut tx, Bytes::from_static(b"cd")),
            Err(Stop::Blocked)
        );
    }

    #[test]
    fn past_the_inspection_limit_the_engine_judges_and_the_rest_streams() {
        let mut tx = script(&[], Step::Forward);
        let mut i = Inspection::new(true, 100, 6);
        for part in [&b"abcd"[..], b"efgh", b"ijkl"] {
            i.feed(&mut tx, Bytes::from_static(part)).expect("fed");
        }
        assert_eq!(released(&mut i), b"abcdefghijkl");
        assert_eq!(tx.fed, b"abcdefgh", "inspection stops past the limit");
        let mut blocking = script(&[], Step::Block);
        let mut i = Inspection::new(true, 100, 6);
        i.feed(&mut blocking, Bytes::from_static(b"abcd"))
            .expect("fed");
        assert_eq!(
            i.feed(&mut blocking, Bytes::from_static(b"efgh")),
            Err(Stop::Blocked)
        );
    }

    #[test]
    fn an_uninspected_body_is_counted_and_released_as_it_comes() {
        let mut tx = script(&[], Step::Block);
        let mut i = Inspection::new(false, 6, 100);
        assert!(i.go());
        i.feed(&mut tx, Bytes::from_static(b"abcd")).expect("fed");
        assert_eq!(released(&mut i), b"abcd");
        assert_eq!(
            i.feed(&mut tx, Bytes::from_static(b"efg")),
            Err(Stop::TooLarge)
        );
        assert!(tx.fed.is_empty());
    }
}
