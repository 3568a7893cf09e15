//! The gRPC length-prefixed message framing (gRPC over HTTP/2, "Length-Prefixed-Message"):
//! `compressed-flag (1 byte, 0 or 1) | message-length (4 bytes, big-endian) | message`.
//!
//! [`FrameParser`] is incremental: it takes the request body in chunks cut anywhere (inside the
//! 5-byte prefix included) and reports each prefix as soon as it is complete (so a limit can fire
//! before the payload arrives), then each complete message. A message wholly inside one chunk is
//! lent straight from that chunk; otherwise it is gathered into one buffer that never holds more
//! than the message being assembled, and never more than the parser's cap.

/// The prefix length: 1 flag byte + 4 length bytes.
pub const PREFIX_LEN: usize = 5;

/// The largest message length the wire format can express (`u32::MAX`); callers cap lower.
pub const MAX_FRAME_LEN: u32 = u32::MAX;

/// Why the framing is broken. Every variant is `VIOL_GRPC_MALFORMED` for the caller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame at byte {offset}: compressed-flag is {flag:#04x}, expected 0 or 1")]
    BadFlag { offset: u64, flag: u8 },
    #[error(
        "frame at byte {offset}: message of {len} bytes exceeds the inspection cap of {cap} bytes"
    )]
    TooLarge { offset: u64, len: u32, cap: u32 },
    #[error("body ended inside a frame: {have} of {want} bytes")]
    Truncated { have: u64, want: u64 },
}

/// What [`FrameParser::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameEvent<'a> {
    /// A prefix is complete: a message of `len` bytes follows.
    Header { compressed: bool, len: u32 },
    /// A message is complete; it ends at [`FrameParser::consumed`].
    Message { compressed: bool, payload: &'a [u8] },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Gathering the prefix; `have` bytes of it so far.
    Prefix { have: usize },
    /// The prefix is complete, its header not yet reported.
    Announce { compressed: bool, len: u32 },
    /// Gathering a payload of `len` bytes.
    Payload { compressed: bool, len: u32 },
}

/// Incremental frame parser for one direction of one call.
#[derive(Debug)]
pub struct FrameParser {
    cap: u32,
    state: State,
    prefix: [u8; PREFIX_LEN],
    /// The part of the current payload that arrived in earlier chunks.
    buf: Vec<u8>,
    /// Bytes taken from the input so far.
    consumed: u64,
    /// Where the current frame started.
    frame_start: u64,
    /// `buf` holds a message already lent out by `next`.
    handed_out: bool,
}

impl FrameParser {
    /// A parser that refuses messages longer than `cap` bytes (its memory bound).
    pub fn new(cap: u32) -> Self {
        FrameParser {
            cap,
            state: State::Prefix { have: 0 },
            prefix: [0; PREFIX_LEN],
            buf: Vec::new(),
            consumed: 0,
            frame_start: 0,
            handed_out: false,
        }
    }

    /// Body bytes taken so far (the end of the last complete message once one is returned).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Body offset where the frame being parsed (or the next one) starts.
    pub fn frame_start(&self) -> u64 {
        self.frame_start
    }

    /// True when no partial frame is pending: the body may end here.
    pub fn at_boundary(&self) -> bool {
        self.state == State::Prefix { have: 0 }
    }

    /// Takes bytes from the front of `input` until an event is complete; `Ok(None)` once `input`
    /// is exhausted. After an error the parser is not meant to be fed again.
    pub fn next<'s: 'a, 'i: 'a, 'a>(
        &'s mut self,
        input: &mut &'i [u8],
    ) -> Result<Option<FrameEvent<'a>>, FrameError> {
        self.release_buffer();
        loop {
            match self.state {
                State::Prefix { have } => {
                    if input.is_empty() {
                        return Ok(None);
                    }
                    if have == 0 {
                        self.frame_start = self.consumed;
                    }
                    let take = (PREFIX_LEN - have).min(input.len());
                    self.prefix[have..have + take].copy_from_slice(&input[..take]);
                    self.advance(input, take);
                    if have + take < PREFIX_LEN {
                        self.state = State::Prefix { have: have + take };
                        return Ok(None);
                    }
                    let flag = self.prefix[0];
                    if flag > 1 {
                        return Err(FrameError::BadFlag {
                            offset: self.frame_start,
                            flag,
                        });
                    }
                    let len = u32::from_be_bytes([
                        self.prefix[1],
                        self.prefix[2],
                        self.prefix[3],
                        self.prefix[4],
                    ]);
                    if len > self.cap {
                        return Err(FrameError::TooLarge {
                            offset: self.frame_start,
                            len,
                            cap: self.cap,
                        });
                    }
                    self.state = State::Announce {
                        compressed: flag == 1,
                        len,
                    };
                }
                State::Announce { compressed, len } => {
                    self.state = State::Payload { compressed, len };
                    return Ok(Some(FrameEvent::Header { compressed, len }));
                }
                State::Payload { compressed, len } => {
                    let want = len as usize - self.buf.len();
                    if self.buf.is_empty() && input.len() >= want {
                        // Fast path: the whole payload is in this chunk; lend it.
                        let (payload, rest) = input.split_at(want);
                        *input = rest;
                        self.consumed += want as u64;
                        self.state = State::Prefix { have: 0 };
                        return Ok(Some(FrameEvent::Message {
                            compressed,
                            payload,
                        }));
                    }
                    if input.is_empty() {
                        return Ok(None);
                    }
                    let take = want.min(input.len());
                    if self.buf.is_empty() {
                        self.buf.reserve_exact(len as usize);
                    }
                    self.buf.extend_from_slice(&input[..take]);
                    self.advance(input, take);
                    if take < want {
                        return Ok(None);
                    }
                    self.state = State::Prefix { have: 0 };
                    // Lend the gathered payload; it is cleared on the next call.
                    self.handed_out = true;
                    return Ok(Some(FrameEvent::Message {
                        compressed,
                        payload: &self.buf,
                    }));
                }
            }
        }
    }

    /// Frees the gathered payload of the last message once it has been inspected (also done at
    /// the start of the next [`FrameParser::next`]). Large buffers are given back to the allocator
    /// so an idle stream holds no more than a small message's worth.
    pub fn release_buffer(&mut self) {
        if self.handed_out {
            self.handed_out = false;
            self.buf.clear();
            if self.buf.capacity() > 64 * 1024 {
                self.buf = Vec::new();
            }
        }
    }

    /// The body ended: an error when it ended inside a frame.
    pub fn finish(&self) -> Result<(), FrameError> {
        match self.state {
            State::Prefix { have: 0 } => Ok(()),
            State::Prefix { have } => Err(FrameError::Truncated {
                have: have as u64,
                want: PREFIX_LEN as u64,
            }),
            State::Announce { len, .. } => Err(FrameError::Truncated {
                have: PREFIX_LEN as u64,
                want: PREFIX_LEN as u64 + u64::from(len),
            }),
            State::Payload { len, .. } => Err(FrameError::Truncated {
                have: (PREFIX_LEN + self.buf.len()) as u64,
                want: PREFIX_LEN as u64 + u64::from(len),
            }),
        }
    }

    fn advance(&mut self, input: &mut &[u8], n: usize) {
        *input = &input[n..];
        self.consumed += n as u64;
    }
}

/// Encodes one frame (for clients, tests and the demo service).
pub fn encode_frame(compressed: bool, payload: &[u8], out: &mut Vec<u8>) {
    out.push(u8::from(compressed));
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
}
