//! Lenient scalar deserialisers for the quirks of real policy documents: numbers written as strings
//! (`"signatureId": "200001834"`, YAML-born `"maxDecodingPasses": "3"`), limits written as `"any"`,
//! booleans written as strings.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// A size limit: a number, or `"any"` (no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Any,
    Max(u64),
}

impl Limit {
    /// True when `n` exceeds the limit. Inlined: the engine asks it on every request, and this
    /// crate is built for load time, not for the request path.
    #[inline]
    pub fn exceeded(self, n: u64) -> bool {
        matches!(self, Limit::Max(m) if n > m)
    }
}

struct LimitVisitor;

impl<'de> Visitor<'de> for LimitVisitor {
    type Value = Limit;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a non-negative integer or \"any\"")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Limit, E> {
        Ok(Limit::Max(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Limit, E> {
        u64::try_from(v)
            .map(Limit::Max)
            .map_err(|_| E::custom(format!("negative limit {v}")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Limit, E> {
        if v >= 0.0 && v.fract() == 0.0 && v < 1e18 {
            Ok(Limit::Max(v as u64))
        } else {
            Err(E::custom(format!("invalid limit {v}")))
        }
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Limit, E> {
        let t = v.trim();
        if t.eq_ignore_ascii_case("any") {
            return Ok(Limit::Any);
        }
        t.parse::<u64>().map(Limit::Max).map_err(|_| {
            E::custom(format!(
                "invalid limit \"{v}\" (expected a number or \"any\")"
            ))
        })
    }
}

/// Runs `visitor` over the value, treating JSON `null` as absent.
fn nullable<'de, D: Deserializer<'de>, V: Visitor<'static>>(
    d: D,
    visitor: V,
) -> Result<Option<V::Value>, D::Error> {
    let v: serde_json::Value = serde::Deserialize::deserialize(d)?;
    if v.is_null() {
        return Ok(None);
    }
    v.deserialize_any(visitor)
        .map(Some)
        .map_err(de::Error::custom)
}

/// Read leniently by its own type rather than by a function named per field: one deserialiser for
/// every `Option<Limit>` field (an `Option` reads `null` as absent before asking it).
impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Limit, D::Error> {
        let v: serde_json::Value = Deserialize::deserialize(d)?;
        v.deserialize_any(LimitVisitor).map_err(de::Error::custom)
    }
}

struct NumVisitor;

impl<'de> Visitor<'de> for NumVisitor {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .ok_or_else(|| E::custom(format!("invalid number \"{v}\"")))
    }
}

/// A number that may be written as a string.
pub fn num<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    nullable(d, NumVisitor)
}

/// An unsigned integer that may be written as a string (`signatureId`, `maxDecodingPasses`).
pub fn uint<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let Some(n) = nullable(d, NumVisitor)? else {
        return Ok(None);
    };
    if n >= 0.0 && n.fract() == 0.0 && n < 1e18 {
        Ok(Some(n as u64))
    } else {
        Err(de::Error::custom(format!(
            "invalid value {n} (expected a non-negative integer)"
        )))
    }
}

struct BoolVisitor;

impl<'de> Visitor<'de> for BoolVisitor {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a boolean")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        match v.trim() {
            "true" | "True" | "TRUE" => Ok(true),
            "false" | "False" | "FALSE" => Ok(false),
            _ => Err(E::custom(format!(
                "invalid value \"{v}\" (expected true or false)"
            ))),
        }
    }
}

/// A boolean that may be written as `"true"`/`"false"` (YAML-born documents).
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    nullable(d, BoolVisitor)
}

/// A string, a number (rendered as text) or null: descriptions and names written loosely.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v: serde_json::Value = serde::Deserialize::deserialize(d)?;
    Ok(match v {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        other => {
            return Err(de::Error::custom(format!(
                "invalid value {other} (expected a string)"
            )));
        }
    })
}
