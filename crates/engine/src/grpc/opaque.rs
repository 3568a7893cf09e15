//! [`OpaqueCall`]: the request messages of a gRPC call on a URL that no gRPC profile describes
//! (server reflection, a service the policy allows by URL but has no IDL for). The messages
//! cannot be decoded, but they are still framed, inflated under the cap and handed out whole,
//! one at a time, to be inspected as raw bytes and released as they arrive, so a stream flows
//! message by message instead of waiting for the end of the body.
//!
//! Violations: `VIOL_GRPC_MALFORMED` for broken framing, compression that is absent, unsupported
//! or broken, a message over the inspection cap, a body ending inside a frame; after one the
//! call is passed through uninspected ([`FeedResult::passthrough`]), as [`super::GrpcStream`] does.

use super::frame::FrameEvent;
use super::stream::{DEFAULT_INSPECT_CAP, Encoding, FeedResult, Framing, inflate};
use crate::violation::{Context, Violation, ViolationKind};

/// The inspector of one undescribed call's request messages.
#[derive(Debug)]
pub struct OpaqueCall {
    framing: Framing,
}

impl OpaqueCall {
    pub fn new(encoding: Encoding) -> Self {
        OpaqueCall {
            framing: Framing::new(encoding, DEFAULT_INSPECT_CAP),
        }
    }

    fn malformed(&mut self, detail: String, out: &mut Vec<Violation>) {
        out.push(Violation::new(ViolationKind::GrpcMalformed, Context::Grpc).detail(detail));
        self.framing.passthrough = true;
    }

    /// Takes the next body chunk; each complete message (inflated) goes to `message`.
    pub fn feed(
        &mut self,
        chunk: &[u8],
        message: &mut dyn FnMut(&[u8]),
        out: &mut Vec<Violation>,
    ) -> FeedResult {
        let mut input = chunk;
        let mut done = 0;
        while !self.framing.passthrough {
            match self.framing.frames.next(&mut input) {
                Ok(None) => break,
                Err(e) => self.malformed(e.to_string(), out),
                Ok(Some(FrameEvent::Header { .. })) => self.framing.count += 1,
                Ok(Some(FrameEvent::Message {
                    compressed,
                    payload,
                })) => {
                    done += 1;
                    if !compressed {
                        message(payload);
                    } else {
                        let (encoding, buf) = (&self.framing.encoding, &mut self.framing.inflated);
                        match inflate(encoding, payload, DEFAULT_INSPECT_CAP, buf) {
                            Ok(inflated) => message(inflated),
                            Err(why) => {
                                let n = self.framing.count;
                                self.malformed(format!("message {n}: {why}"), out);
                                break;
                            }
                        }
                    }
                    self.framing.inspected();
                }
            }
        }
        self.framing.end_feed(done)
    }

    /// The body ended: a body cut inside a frame is malformed.
    pub fn finish(&mut self, out: &mut Vec<Violation>) -> FeedResult {
        if let Some(cut) = self.framing.finish() {
            self.malformed(cut, out);
        }
        self.framing.result(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::frame::encode_frame;

    #[test]
    fn messages_come_out_whole_across_chunks_and_are_released_one_by_one() {
        let mut body = Vec::new();
        encode_frame(false, b"first message", &mut body);
        let first_end = body.len() as u64;
        encode_frame(false, b"second", &mut body);
        let mut call = OpaqueCall::new(Encoding::Identity);
        let mut seen: Vec<Vec<u8>> = Vec::new();
        let mut out = Vec::new();
        let (a, b) = body.split_at(first_end as usize + 3);
        let r = call.feed(a, &mut |m| seen.push(m.to_vec()), &mut out);
        assert_eq!(
            (r.release, r.messages, r.passthrough),
            (first_end, 1, false)
        );
        let r = call.feed(b, &mut |m| seen.push(m.to_vec()), &mut out);
        assert_eq!(r.release, body.len() as u64);
        assert_eq!(seen, [b"first message".to_vec(), b"second".to_vec()]);
        assert!(call.finish(&mut out).release == body.len() as u64 && out.is_empty());
    }

    #[test]
    fn broken_framing_and_compression_are_malformed_and_stop_inspection() {
        let mut call = OpaqueCall::new(Encoding::Identity);
        let mut out = Vec::new();
        let mut compressed = Vec::new();
        encode_frame(true, b"not gzip", &mut compressed);
        let r = call.feed(&compressed, &mut |_| panic!("not handed out"), &mut out);
        assert!(r.passthrough);
        assert_eq!(out[0].kind, ViolationKind::GrpcMalformed);

        let mut call = OpaqueCall::new(Encoding::Identity);
        let mut out = Vec::new();
        call.feed(&[0, 0, 0, 0, 9, 1, 2], &mut |_| {}, &mut out);
        call.finish(&mut out);
        assert_eq!(out.len(), 1, "a body cut inside a frame");
    }
}
