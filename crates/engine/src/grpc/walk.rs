//! One decoded gRPC message: decodes it against its descriptor (prost-reflect), reports unknown
//! fields anywhere in the tree (prost-reflect only lists them per level, so nested, repeated and map
//! messages are walked), and hands every string value to the policy's check with its field path.
//!
//! Field paths: `name`, `user.name`, `user.tags[2]`, `items[0].sku`, map values `attrs["k"]` (string
//! keys quoted, integer and bool keys bare), map keys themselves are reported with the path of the
//! map field (`attrs`), unknown fields as `#<number>` under their parent (`user.#99`).

use std::fmt::Write as _;

use base64::Engine as _;
use portcullis_support::{DECIMAL_MAX, decimal};
#[cfg(any(test, fuzzing))]
use prost_reflect::{DynamicMessage, MapKey, MessageDescriptor, ReflectMessage, Value};

use super::schema::Schema;
use crate::violation::{Context, Violation, ViolationKind};

/// The policy's check of one string value: `(field path, value)` → a violation naming the field.
pub type StringCheck<'a> = dyn FnMut(&str, &str) -> Option<Violation> + 'a;

/// Longest map key written into a field path; longer keys are cut (the value is still checked whole).
pub const MAX_KEY_IN_PATH: usize = 64;

/// Most violations one message may add (a message with thousands of unknown fields stays one event).
pub const MAX_VIOLATIONS_PER_MESSAGE: usize = 32;

/// A message that does not decode as its type; the text is the violation's detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("message type missing from the schema")]
    UnknownMessage,
    /// The wire format is malformed: prost's message for it, which the in-place walk reproduces
    /// (it is built by the walk's private decoder, which works with text on its hot path).
    #[error("{0}")]
    Wire(String),
}

/// What the walk checks besides decoding.
#[derive(Clone, Copy, Debug)]
pub struct WalkOptions {
    pub allow_unknown_fields: bool,
    /// Also check the decoded text of string values that are valid base64.
    pub decode_base64: bool,
}

/// Decodes `payload` as message `message` of `schema` and walks it with `w`. `Err` is the decode
/// error text (the caller raises `VIOL_GRPC_MALFORMED`).
///
/// This is the hot path: it walks the wire format in place guided by the descriptors
/// ([`super::wire`]), accepting and refusing exactly what prost-reflect's `DynamicMessage::decode`
/// does, without building the message tree. [`inspect_reflect`] is the same check through
/// prost-reflect, kept as the reference the fuzz target compares against.
pub(super) fn inspect(
    schema: &Schema,
    message: usize,
    payload: &[u8],
    mut w: Walker<'_, '_>,
) -> Result<(), DecodeError> {
    let table = schema.table(message).ok_or(DecodeError::UnknownMessage)?;
    w.wire_message(schema, table, payload, super::wire::RECURSION_LIMIT)
        .map_err(DecodeError::Wire)
}

/// [`inspect`] through prost-reflect's `DynamicMessage` (decode, then walk the tree): the
/// reference the fuzz target compares [`inspect`] with.
#[cfg(any(test, fuzzing))]
pub(super) fn inspect_reflect(
    desc: &MessageDescriptor,
    payload: &[u8],
    mut w: Walker<'_, '_>,
) -> Result<(), prost::DecodeError> {
    let msg = DynamicMessage::decode(desc.clone(), payload)?;
    w.message(&msg);
    Ok(())
}

/// The state of the walk of one message, given to [`inspect`] or [`inspect_reflect`].
pub(super) struct Walker<'w, 'c> {
    pub(super) opts: WalkOptions,
    pub(super) path: &'w mut String,
    pub(super) check: &'w mut StringCheck<'c>,
    pub(super) out: &'w mut Vec<Violation>,
    pub(super) budget: usize,
}

impl<'w, 'c> Walker<'w, 'c> {
    /// A walk of one message: `path` (scratch space reused across messages) cleared, the
    /// violation budget whole.
    pub(super) fn new(
        opts: WalkOptions,
        path: &'w mut String,
        check: &'w mut StringCheck<'c>,
        out: &'w mut Vec<Violation>,
    ) -> Self {
        path.clear();
        Walker {
            opts,
            path,
            check,
            out,
            budget: MAX_VIOLATIONS_PER_MESSAGE,
        }
    }

    pub(super) fn push(&mut self, v: Violation) {
        if self.budget > 0 {
            self.budget -= 1;
            self.out.push(v);
        }
    }

    #[cfg(any(test, fuzzing))]
    fn message(&mut self, msg: &DynamicMessage) {
        if !self.opts.allow_unknown_fields {
            let name = msg.descriptor().full_name().to_string();
            for uf in msg.unknown_fields() {
                self.unknown(uf.number(), uf.wire_type(), &name);
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

    #[cfg(any(test, fuzzing))]
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
                    let _ = match key {
                        MapKey::String(k) => {
                            self.push_str_key(k);
                            Ok(())
                        }
                        MapKey::Bool(b) => write!(self.path, "[{b}]"),
                        MapKey::I32(n) => write!(self.path, "[{n}]"),
                        MapKey::I64(n) => write!(self.path, "[{n}]"),
                        MapKey::U32(n) => write!(self.path, "[{n}]"),
                        MapKey::U64(n) => write!(self.path, "[{n}]"),
                    };
                    self.value(item);
                    self.path.truncate(mark);
                }
            }
            // Numbers, bools, enums and bytes carry no text to check.
            _ => {}
        }
    }

    /// Reports unknown field `number` of a `type_name` message at the current path.
    pub(super) fn unknown(
        &mut self,
        number: u32,
        wire: prost::encoding::WireType,
        type_name: &str,
    ) {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        let _ = write!(self.path, "#{number}");
        let v = Violation::new(ViolationKind::GrpcFormat, Context::Grpc)
            .named(self.path.as_str())
            .detail(format!(
                "unknown field number {number} ({wire:?}) in {type_name}"
            ));
        self.path.truncate(mark);
        self.push(v);
    }

    /// Appends `["key"]` to the path: the key quoted with Rust escapes, cut at [`MAX_KEY_IN_PATH`].
    pub(super) fn push_str_key(&mut self, k: &str) {
        let mut end = k.len().min(MAX_KEY_IN_PATH);
        while !k.is_char_boundary(end) {
            end -= 1;
        }
        let k = &k[..end];
        if k.bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
        {
            // Nothing to escape: the common case, without the formatter.
            self.path.push_str("[\"");
            self.path.push_str(k);
            self.path.push_str("\"]");
        } else {
            let _ = write!(self.path, "[{k:?}]");
        }
    }

    /// Appends `[n]` to the path.
    pub(super) fn push_index(&mut self, n: u64) {
        let mut digits = [0u8; DECIMAL_MAX];
        self.path.push('[');
        self.path.push_str(decimal(n, false, &mut digits));
        self.path.push(']');
    }

    pub(super) fn string(&mut self, s: &str) {
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
