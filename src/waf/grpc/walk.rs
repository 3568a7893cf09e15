//! One decoded gRPC message: decodes it against its descriptor (prost-reflect), reports unknown
//! fields anywhere in the tree (prost-reflect only lists them per level, so nested, repeated and map
//! messages are walked), and hands every string value to the policy's check with its field path.
//!
//! Field paths: `name`, `user.name`, `user.tags[2]`, `items[0].sku`, map values `attrs["k"]` (string
//! keys quoted, integer and bool keys bare), map keys themselves are reported with the path of the
//! map field (`attrs`), unknown fields as `#<number>` under their parent (`user.#99`).
//!
//! Imports: `waf::violation`; prost-reflect, base64.

use std::fmt::Write as _;

use base64::Engine as _;
use prost_reflect::{DynamicMessage, MapKey, MessageDescriptor, ReflectMessage, Value};

use crate::waf::violation::{Context, Violation, ViolationKind};

/// The policy's check of one string value: `(field path, value)` → a violation naming the field.
pub type StringCheck<'a> = dyn FnMut(&str, &str) -> Option<Violation> + 'a;

/// Longest map key written into a field path; longer keys are cut (the value is still checked whole).
pub const MAX_KEY_IN_PATH: usize = 64;

/// Most violations one message may add (a message with thousands of unknown fields stays one event).
pub const MAX_VIOLATIONS_PER_MESSAGE: usize = 32;

/// What the walk checks besides decoding.
#[derive(Clone, Copy, Debug)]
pub struct WalkOptions {
    pub allow_unknown_fields: bool,
    /// Also check the decoded text of string values that are valid base64.
    pub decode_base64: bool,
}

/// Decodes `payload` as a `desc` message and walks it. `Err` is the decode error text (the caller
/// raises `VIOL_GRPC_MALFORMED`). `path` is scratch space reused across messages.
pub fn inspect(
    desc: &MessageDescriptor,
    payload: &[u8],
    opts: WalkOptions,
    path: &mut String,
    check: &mut StringCheck<'_>,
    out: &mut Vec<Violation>,
) -> Result<(), String> {
    let msg = DynamicMessage::decode(desc.clone(), payload).map_err(|e| e.to_string())?;
    path.clear();
    let mut w = Walker {
        opts,
        path,
        check,
        out,
        budget: MAX_VIOLATIONS_PER_MESSAGE,
    };
    w.message(&msg);
    Ok(())
}

struct Walker<'w, 'c> {
    opts: WalkOptions,
    path: &'w mut String,
    check: &'w mut StringCheck<'c>,
    out: &'w mut Vec<Violation>,
    budget: usize,
}

impl Walker<'_, '_> {
    fn push(&mut self, v: Violation) {
        if self.budget > 0 {
            self.budget -= 1;
            self.out.push(v);
        }
    }

    fn message(&mut self, msg: &DynamicMessage) {
        if !self.opts.allow_unknown_fields {
            for uf in msg.unknown_fields() {
                let mark = self.path.len();
                if !self.path.is_empty() {
                    self.path.push('.');
                }
                let _ = write!(self.path, "#{}", uf.number());
                let v = Violation::new(ViolationKind::GrpcFormat, Context::Grpc)
                    .named(self.path.as_str())
                    .detail(format!(
                        "unknown field number {} ({:?}) in {}",
                        uf.number(),
                        uf.wire_type(),
                        msg.descriptor().full_name()
                    ));
                self.path.truncate(mark);
                self.push(v);
            }
        }
        for (fd, value) in msg.fields() {
            let mark = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(fd.name());
            self.value(value);
            self.path.truncate(mark);
        }
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::String(s) => self.string(s),
            Value::Message(m) => self.message(m),
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mark = self.path.len();
                    let _ = write!(self.path, "[{i}]");
                    self.value(item);
                    self.path.truncate(mark);
                }
            }
            Value::Map(map) => {
                for (key, item) in map {
                    if let MapKey::String(k) = key {
                        self.string(k);
                    }
                    let mark = self.path.len();
                    self.path.push('[');
                    match key {
                        MapKey::String(k) => {
                            let mut end = k.len().min(MAX_KEY_IN_PATH);
                            while !k.is_char_boundary(end) {
                                end -= 1;
                            }
                            let _ = write!(self.path, "{:?}", &k[..end]);
                        }
                        MapKey::Bool(b) => {
                            let _ = write!(self.path, "{b}");
                        }
                        MapKey::I32(n) => {
                            let _ = write!(self.path, "{n}");
                        }
                        MapKey::I64(n) => {
                            let _ = write!(self.path, "{n}");
                        }
                        MapKey::U32(n) => {
                            let _ = write!(self.path, "{n}");
                        }
                        MapKey::U64(n) => {
                            let _ = write!(self.path, "{n}");
                        }
                    }
                    self.path.push(']');
                    self.value(item);
                    self.path.truncate(mark);
                }
            }
            // Numbers, bools, enums and bytes carry no text to check.
            _ => {}
        }
    }

    fn string(&mut self, s: &str) {
        if let Some(v) = (self.check)(self.path, s) {
            self.push(v);
        }
        if self.opts.decode_base64
            && let Some(decoded) = base64_text(s)
            && let Some(v) = (self.check)(self.path, &decoded)
        {
            self.push(v);
        }
    }
}

/// The text behind `s` when `s` is canonical padded base64 of UTF-8 text (at least 8 characters,
/// so short words like `test` are left alone).
fn base64_text(s: &str) -> Option<String> {
    if s.len() < 8 || !s.len().is_multiple_of(4) {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD.decode(s).ok()?;
    String::from_utf8(bytes).ok()
}
