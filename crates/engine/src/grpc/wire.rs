//! The hot path of message inspection: walks a message's wire format in place, guided by its
//! descriptor, without building a `DynamicMessage`. It accepts and refuses exactly what
//! prost-reflect's decoder does (same recursion limit, wire-type checks, packed fields, UTF-8
//! checks, map entries read as prost reads them, unknown fields and groups skipped as prost-reflect
//! keeps them); the `grpc_message` fuzz target compares the two. Varints, keys and field skipping
//! are prost's own functions.
//!
//! Every occurrence of a field is visited: a singular field sent twice has both values checked
//! (the receiver keeps the last one), so nothing the upstream may read escapes the checks.

use std::fmt::Write as _;

use prost::encoding::{WireType, decode_key, decode_varint};
use prost_reflect::Kind;

use super::schema::{FieldEntry, MessageTable, Schema};
use super::walk::Walker;

/// prost's recursion limit: nested messages (and unknown groups) deeper than this do not decode.
pub const RECURSION_LIMIT: u32 = 100;

type Res = Result<(), String>;

fn err(e: prost::DecodeError) -> String {
    e.to_string()
}

fn underflow() -> String {
    "failed to decode Protobuf message: buffer underflow".into()
}

fn recursion() -> String {
    "failed to decode Protobuf message: recursion limit reached".into()
}

fn expect(expected: WireType, actual: WireType) -> Res {
    prost::encoding::check_wire_type(expected, actual).map_err(err)
}

/// Takes `n` bytes.
fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if buf.len() < n {
        return Err(underflow());
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

/// Takes a varint length and that many bytes.
fn take_len<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let len = decode_varint(buf).map_err(err)?;
    let len = usize::try_from(len).map_err(|_| underflow())?;
    take(buf, len)
}

/// Skips one field value. `always_check` mirrors `prost::encoding::skip_field` (the recursion
/// limit is checked for every field); otherwise prost-reflect's `UnknownField::decode_value`
/// (checked for groups only).
fn skip(number: u32, wt: WireType, buf: &mut &[u8], ctx: u32, always_check: bool) -> Res {
    if always_check && ctx == 0 {
        return Err(recursion());
    }
    match wt {
        WireType::Varint => decode_varint(buf).map(|_| ()).map_err(err),
        WireType::SixtyFourBit => take(buf, 8).map(|_| ()),
        WireType::ThirtyTwoBit => take(buf, 4).map(|_| ()),
        WireType::LengthDelimited => take_len(buf).map(|_| ()),
        WireType::StartGroup => {
            if ctx == 0 {
                return Err(recursion());
            }
            loop {
                let (inner, iwt) = decode_key(buf).map_err(err)?;
                if iwt == WireType::EndGroup {
                    if inner != number {
                        return Err(
                            "failed to decode Protobuf message: unexpected end group tag".into(),
                        );
                    }
                    return Ok(());
                }
                skip(inner, iwt, buf, ctx - 1, always_check)?;
            }
        }
        WireType::EndGroup => expect(WireType::StartGroup, wt),
    }
}

/// Reads one scalar (non-string, non-message) value of `kind` sent with `wt`.
fn scalar(kind: &Kind, wt: WireType, buf: &mut &[u8]) -> Result<u64, String> {
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => {
            expect(WireType::SixtyFourBit, wt)?;
            let b = take(buf, 8)?;
            Ok(u64::from_le_bytes([
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
            ]))
        }
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => {
            expect(WireType::ThirtyTwoBit, wt)?;
            let b = take(buf, 4)?;
            Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        Kind::Bytes => {
            expect(WireType::LengthDelimited, wt)?;
            take_len(buf).map(|_| 0)
        }
        Kind::String | Kind::Message(_) => Err(format!("{kind:?} is not a scalar")),
        _ => {
            expect(WireType::Varint, wt)?;
            decode_varint(buf).map_err(err)
        }
    }
}

/// Bumps and returns the occurrence index of repeated field `number` in one message instance.
fn occurrence(counts: &mut Vec<(u32, u32)>, number: u32) -> u32 {
    if let Some(c) = counts.iter_mut().find(|(n, _)| *n == number) {
        c.1 += 1;
        return c.1;
    }
    counts.push((number, 0));
    0
}

fn table(schema: &Schema, index: Option<usize>) -> Result<&MessageTable, String> {
    index
        .and_then(|i| schema.table(i))
        .ok_or_else(|| "message type missing from the schema".to_string())
}

impl Walker<'_, '_> {
    /// Walks the message of table `msg` encoded in `buf`, `ctx` levels of nesting still allowed.
    pub(super) fn wire_message(
        &mut self,
        schema: &Schema,
        msg: &MessageTable,
        mut buf: &[u8],
        ctx: u32,
    ) -> Res {
        let mut counts = Vec::new();
        while !buf.is_empty() {
            let (number, wt) = decode_key(&mut buf).map_err(err)?;
            match msg.field(number) {
                Some(fd) => self.wire_field(schema, fd, wt, &mut buf, ctx, &mut counts)?,
                None => {
                    skip(number, wt, &mut buf, ctx, false)?;
                    if !self.opts.allow_unknown_fields {
                        self.unknown(number, wt, &msg.full_name);
                    }
                }
            }
        }
        Ok(())
    }

    fn wire_field(
        &mut self,
        schema: &Schema,
        fd: &FieldEntry,
        wt: WireType,
        buf: &mut &[u8],
        ctx: u32,
        counts: &mut Vec<(u32, u32)>,
    ) -> Res {
        if fd.packable && wt == WireType::LengthDelimited {
            let mut packed = take_len(buf)?;
            let ewt = fd.kind.wire_type();
            while !packed.is_empty() {
                scalar(&fd.kind, ewt, &mut packed)?;
            }
            return Ok(());
        }
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(&fd.name);
        let result = if fd.map {
            // A map field is read as prost reads it: a length-delimited entry, whatever the wire type.
            table(schema, fd.message).and_then(|entry| {
                take_len(buf).and_then(|e| self.wire_map_entry(schema, entry, e, ctx))
            })
        } else {
            if fd.list {
                self.push_index(u64::from(occurrence(counts, fd.number)));
            }
            self.wire_value(schema, fd, wt, buf, ctx)
        };
        self.path.truncate(mark);
        result
    }

    fn wire_value(
        &mut self,
        schema: &Schema,
        fd: &FieldEntry,
        wt: WireType,
        buf: &mut &[u8],
        ctx: u32,
    ) -> Res {
        match fd.kind {
            Kind::String => {
                expect(WireType::LengthDelimited, wt)?;
                let bytes = take_len(buf)?;
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| "failed to decode Protobuf message: invalid string value: data is not UTF-8 encoded")?;
                if !text.is_empty() {
                    self.string(text);
                }
                Ok(())
            }
            Kind::Message(_) => {
                expect(WireType::LengthDelimited, wt)?;
                if ctx == 0 {
                    return Err(recursion());
                }
                let inner = take_len(buf)?;
                self.wire_message(schema, table(schema, fd.message)?, inner, ctx - 1)
            }
            _ => scalar(&fd.kind, wt, buf).map(|_| ()),
        }
    }

    /// One map entry (`key = 1`, `value = 2`); the path holds the map field's name.
    fn wire_map_entry(
        &mut self,
        schema: &Schema,
        entry: &MessageTable,
        bytes: &[u8],
        ctx: u32,
    ) -> Res {
        let (Some(key_fd), Some(value_fd)) = (entry.field(1), entry.field(2)) else {
            return Err(format!("{} is not a map entry", entry.full_name));
        };
        // Pass 1: the key (the last one wins, as in prost) and the validity of other fields.
        let mut key: Option<MapKeyText> = None;
        let mut data = bytes;
        while !data.is_empty() {
            let (number, wt) = decode_key(&mut data).map_err(err)?;
            match number {
                1 => key = Some(map_key(&key_fd.kind, wt, &mut data)?),
                2 => skip(number, wt, &mut data, ctx, false)?,
                _ => skip(number, wt, &mut data, ctx, true)?,
            }
        }
        let key = key.unwrap_or(match key_fd.kind {
            Kind::String => MapKeyText::Str(""),
            Kind::Bool => MapKeyText::Bool(false),
            _ => MapKeyText::Num(0),
        });
        if let MapKeyText::Str(k) = key
            && !k.is_empty()
        {
            self.string(k);
        }
        let mark = self.path.len();
        let _ = match key {
            MapKeyText::Str(k) => {
                self.push_str_key(k);
                Ok(())
            }
            MapKeyText::Num(n) => write!(self.path, "[{n}]"),
            MapKeyText::Bool(b) => write!(self.path, "[{b}]"),
        };
        // Pass 2: the values.
        let mut data = bytes;
        let mut result = Ok(());
        while !data.is_empty() && result.is_ok() {
            result = decode_key(&mut data).map_err(err).and_then(|(number, wt)| {
                if number == 2 {
                    self.wire_value(schema, value_fd, wt, &mut data, ctx)
                } else {
                    skip(number, wt, &mut data, ctx, false)
                }
            });
        }
        self.path.truncate(mark);
        result
    }
}

/// A decoded map key, for the field path.
#[derive(Clone, Copy)]
enum MapKeyText<'a> {
    Str(&'a str),
    Num(i128),
    Bool(bool),
}

fn map_key<'a>(kind: &Kind, wt: WireType, buf: &mut &'a [u8]) -> Result<MapKeyText<'a>, String> {
    if *kind == Kind::String {
        expect(WireType::LengthDelimited, wt)?;
        let bytes = take_len(buf)?;
        return std::str::from_utf8(bytes)
            .map(MapKeyText::Str)
            .map_err(|_| {
                "failed to decode Protobuf message: invalid string value: data is not UTF-8 encoded"
                    .into()
            });
    }
    let v = scalar(kind, wt, buf)?;
    Ok(match kind {
        Kind::Bool => MapKeyText::Bool(v != 0),
        Kind::Int32 | Kind::Sfixed32 => MapKeyText::Num(i128::from(v as i32)),
        Kind::Int64 | Kind::Sfixed64 => MapKeyText::Num(i128::from(v as i64)),
        Kind::Uint32 | Kind::Fixed32 => MapKeyText::Num(i128::from(v as u32)),
        Kind::Sint32 => MapKeyText::Num(i128::from(((v >> 1) as i32) ^ (-((v & 1) as i32)))),
        Kind::Sint64 => MapKeyText::Num(i128::from(((v >> 1) as i64) ^ (-((v & 1) as i64)))),
        _ => MapKeyText::Num(i128::from(v)),
    })
}
