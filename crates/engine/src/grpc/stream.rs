//! [`GrpcStream`]: the inspector of one call's request body. The policy's body phase feeds it each
//! chunk as it arrives; it parses frames across chunk boundaries, inflates compressed messages under
//! a cap, decodes and walks each message, and says how many body bytes (whole inspected messages)
//! may go upstream. It holds at most the message being inspected.
//!
//! Violations: `VIOL_GRPC_MALFORMED` (broken framing, a message that does not decode, compression
//! that is absent, unsupported or broken, a message over the inspection cap, a second message on a
//! unary call, a body ending inside a frame), `VIOL_GRPC_FORMAT` (a message longer than
//! `maximumDataLength`, unknown fields when not allowed). After a MALFORMED the stream cannot be
//! re-synchronised: it stops inspecting and [`FeedResult::passthrough`] is set.

use std::io::Read as _;

use super::compile::GrpcMethod;
use super::frame::{FrameError, FrameEvent, FrameParser};
use super::walk::{self, StringCheck, WalkOptions};
use crate::violation::{Context, Violation, ViolationKind};

/// Default cap on one message as held for inspection (compressed or not) and once inflated: 10 MiB.
/// Beyond it a message is `VIOL_GRPC_MALFORMED` (the systems we stand in for do the same at 10 MB).
pub const DEFAULT_INSPECT_CAP: u32 = 10 * 1024 * 1024;

/// Per-message limits of a profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcLimits {
    /// `maximumDataLength`: bytes per (decompressed) message; `None` for `"any"`.
    pub maximum_data_length: Option<u64>,
    pub allow_unknown_fields: bool,
    pub decode_base64: bool,
    /// Largest message held for inspection, on the wire and once inflated (memory bound).
    pub inspect_cap: u32,
}

impl Default for GrpcLimits {
    fn default() -> Self {
        GrpcLimits {
            maximum_data_length: Some(super::spec::DEFAULT_MAXIMUM_DATA_LENGTH),
            allow_unknown_fields: true,
            decode_base64: false,
            inspect_cap: DEFAULT_INSPECT_CAP,
        }
    }
}

/// The call's `grpc-encoding` request header: how compressed-flag=1 messages are compressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// No header (or `identity`): a compressed message is a protocol error.
    Identity,
    Gzip,
    /// `deflate`: zlib-wrapped deflate, as gRPC defines it.
    Deflate,
    /// Any other codec (`snappy`, `zstd`...): compressed messages cannot be inspected.
    Unsupported(String),
}

impl Encoding {
    /// Reads the `grpc-encoding` header value.
    pub fn from_header(value: Option<&str>) -> Self {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("identity") => Encoding::Identity,
            Some("gzip") => Encoding::Gzip,
            Some("deflate") => Encoding::Deflate,
            Some(other) => Encoding::Unsupported(other.to_string()),
        }
    }
}

/// What one [`GrpcStream::feed`] allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeedResult {
    /// Body bytes, counted from the start of the body, that are whole inspected messages: they may
    /// go upstream (`Step::Release(release)`) unless the verdict blocks.
    pub release: u64,
    /// Messages completed during this call.
    pub messages: u32,
    /// Inspection stopped (the body could not be parsed): forward the rest uninspected if the
    /// verdict does not block (`Step::PassRest`).
    pub passthrough: bool,
}

/// What both message inspectors ([`GrpcStream`], [`super::OpaqueCall`]) keep of one call: the
/// frames, how far the body was inspected, whether inspection stopped, and the buffer messages are
/// inflated into (reused across messages).
#[derive(Debug)]
pub(super) struct Framing {
    pub(super) encoding: Encoding,
    pub(super) frames: FrameParser,
    /// Messages seen so far.
    pub(super) count: u32,
    release: u64,
    pub(super) passthrough: bool,
    pub(super) inflated: Vec<u8>,
}

impl Framing {
    pub(super) fn new(encoding: Encoding, cap: u32) -> Self {
        Framing {
            encoding,
            frames: FrameParser::new(cap),
            count: 0,
            release: 0,
            passthrough: false,
            inflated: Vec::new(),
        }
    }

    /// A message was inspected: the body up to its end may go upstream. An inflation buffer grown
    /// past 64 KiB is given back.
    pub(super) fn inspected(&mut self) {
        self.release = self.frames.consumed();
        if self.inflated.capacity() > 64 * 1024 {
            self.inflated = Vec::new();
        }
    }

    /// What a feed that completed `messages` allows.
    pub(super) fn result(&self, messages: u32) -> FeedResult {
        FeedResult {
            release: self.release,
            messages,
            passthrough: self.passthrough,
        }
    }

    /// The end of a feed: the parser gives back the buffer it no longer needs.
    pub(super) fn end_feed(&mut self, messages: u32) -> FeedResult {
        self.frames.release_buffer();
        self.result(messages)
    }

    /// The body ended: why the body is malformed when it was cut inside a frame (once; inspection
    /// stops then).
    pub(super) fn finish(&mut self) -> Option<String> {
        if self.passthrough {
            return None;
        }
        let cut = self.frames.finish().err()?;
        self.passthrough = true;
        Some(cut.to_string())
    }
}

/// The inspector of one call's request messages.
#[derive(Debug)]
pub struct GrpcStream {
    method: GrpcMethod,
    limits: GrpcLimits,
    framing: Framing,
    /// Scratch: the field path, reused across messages.
    path: String,
}

impl GrpcStream {
    pub fn new(method: GrpcMethod, limits: GrpcLimits) -> Self {
        let framing = Framing::new(Encoding::Identity, limits.inspect_cap);
        GrpcStream {
            method,
            limits,
            framing,
            path: String::new(),
        }
    }

    /// Sets the call's `grpc-encoding`.
    pub fn with_encoding(mut self, encoding: Encoding) -> Self {
        self.framing.encoding = encoding;
        self
    }

    pub fn method(&self) -> &GrpcMethod {
        &self.method
    }

    /// Messages inspected so far.
    pub fn messages(&self) -> u32 {
        self.framing.count
    }

    fn malformed(&self, detail: String) -> Violation {
        Violation::new(ViolationKind::GrpcMalformed, Context::Grpc)
            .named(self.method.path())
            .detail(detail)
    }

    /// Inspects the next body chunk. Violations go to `out`; string values go to `check`.
    pub fn feed(
        &mut self,
        chunk: &[u8],
        check: &mut StringCheck<'_>,
        out: &mut Vec<Violation>,
    ) -> FeedResult {
        let mut input = chunk;
        let mut done = 0;
        while !self.framing.passthrough {
            let event = match self.framing.frames.next(&mut input) {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(e) => {
                    if let FrameError::TooLarge { len, .. } = e {
                        let n = self.framing.count + 1;
                        if let Some(max) = self
                            .limits
                            .maximum_data_length
                            .filter(|&m| u64::from(len) > m)
                        {
                            out.push(too_long(&self.method, n, u64::from(len), max));
                        }
                        // Over the 10 MiB cap: also the request-length violation, as the
                        // systems we stand in for report such a message.
                        out.push(
                            Violation::new(ViolationKind::RequestMaxLength, Context::Grpc)
                                .named(self.method.path())
                                .detail(format!(
                                    "message {n} is {len} bytes, over the inspection cap of {} bytes",
                                    self.limits.inspect_cap
                                )),
                        );
                    }
                    out.push(self.malformed(e.to_string()));
                    self.framing.passthrough = true;
                    break;
                }
            };
            match event {
                FrameEvent::Header { compressed, len } => {
                    self.framing.count += 1;
                    let n = self.framing.count;
                    if n > 1 && !self.method.client_streaming() {
                        let v = Violation::new(ViolationKind::GrpcMalformed, Context::Grpc)
                            .named(self.method.path())
                            .detail(format!(
                                "message {n} on a unary call (one request message expected)"
                            ));
                        out.push(v);
                        self.framing.passthrough = true;
                        break;
                    }
                    if let Some(max) = self.limits.maximum_data_length
                        && !compressed
                        && u64::from(len) > max
                    {
                        out.push(too_long(&self.method, n, u64::from(len), max));
                    }
                }
                FrameEvent::Message {
                    compressed,
                    payload,
                } => {
                    done += 1;
                    let n = self.framing.count;
                    let (schema, input) = self.method.schema();
                    let opts = WalkOptions {
                        allow_unknown_fields: self.limits.allow_unknown_fields,
                        decode_base64: self.limits.decode_base64,
                    };
                    let message = if compressed {
                        let cap = self.limits.inspect_cap;
                        let (encoding, buf) = (&self.framing.encoding, &mut self.framing.inflated);
                        match inflate(encoding, payload, cap, buf) {
                            Ok(inflated) => {
                                let len = inflated.len() as u64;
                                if let Some(max) =
                                    self.limits.maximum_data_length.filter(|&m| len > m)
                                {
                                    out.push(too_long(&self.method, n, len, max));
                                }
                                inflated
                            }
                            Err(why) => {
                                let v = Violation::new(ViolationKind::GrpcMalformed, Context::Grpc)
                                    .named(self.method.path())
                                    .detail(format!("message {n}: {why}"));
                                out.push(v);
                                self.framing.passthrough = true;
                                break;
                            }
                        }
                    } else {
                        payload
                    };
                    let w = walk::Walker::new(opts, &mut self.path, check, out);
                    if let Err(why) = walk::inspect(schema, input, message, w) {
                        let v = Violation::new(ViolationKind::GrpcMalformed, Context::Grpc)
                            .named(self.method.path())
                            .detail(format!(
                                "message {n} is not a valid {}: {why}",
                                self.method.descriptor().input().full_name()
                            ))
                            .snippet(&message[..message.len().min(64)]);
                        out.push(v);
                        self.framing.passthrough = true;
                        break;
                    }
                    self.framing.inspected();
                }
            }
        }
        self.framing.end_feed(done)
    }

    /// The body ended: a body cut inside a frame is `VIOL_GRPC_MALFORMED`.
    pub fn finish(&mut self, out: &mut Vec<Violation>) -> FeedResult {
        if let Some(cut) = self.framing.finish() {
            out.push(self.malformed(cut));
        }
        self.framing.result(0)
    }
}

fn too_long(method: &GrpcMethod, n: u32, len: u64, max: u64) -> Violation {
    Violation::new(ViolationKind::GrpcFormat, Context::Grpc)
        .named(method.path())
        .detail(format!(
            "message {n} is {len} bytes, longer than maximumDataLength {max}"
        ))
}

/// Inflates `payload` into `out`, refusing more than `cap` bytes of output (decompression bombs);
/// the inflated message.
pub(super) fn inflate<'a>(
    encoding: &Encoding,
    payload: &[u8],
    cap: u32,
    out: &'a mut Vec<u8>,
) -> Result<&'a [u8], String> {
    out.clear();
    let limit = u64::from(cap) + 1;
    let read = match encoding {
        Encoding::Gzip => flate2::read::GzDecoder::new(payload)
            .take(limit)
            .read_to_end(out),
        Encoding::Deflate => flate2::read::ZlibDecoder::new(payload)
            .take(limit)
            .read_to_end(out),
        Encoding::Identity => {
            return Err("compressed-flag set but the call has no grpc-encoding".into());
        }
        Encoding::Unsupported(name) => {
            return Err(format!("compressed with {name:?}, which is not inspected"));
        }
    };
    match read {
        Ok(n) if n as u64 > u64::from(cap) => {
            Err(format!("inflates beyond the inspection cap of {cap} bytes"))
        }
        Ok(_) => Ok(out),
        Err(e) => Err(format!("bad compressed data: {e}")),
    }
}
