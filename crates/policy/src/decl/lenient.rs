//! Lenient scalars for the quirks of real policy documents: numbers written as strings
//! (`"signatureId": "200001834"`, YAML-born `"maxDecodingPasses": "3"`), limits written as `"any"`,
//! booleans written as strings, names written as numbers. Each kind of value is read by its type
//! ([`Lenient`], [`Limit`]), so a field of the declaration says what it holds and nothing more.

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

/// An optional field of the declaration whose value is read leniently: `Lenient<bool>` takes
/// `"true"`/`"false"` as well as booleans, `Lenient<u64>` and `Lenient<f64>` take numbers written as
/// strings, `Lenient<String>` takes numbers and booleans as their text. An absent member and `null`
/// are both `None`: the template's value applies during layering.
///
/// It holds the `Option` itself, unlike `Option<Limit>`, so that the engine asks
/// `url.perform_staging.or(true)` of a field rather than unwrapping a wrapper inside an option.
#[derive(Clone, Copy, Default, PartialEq)]
pub struct Lenient<T>(Option<T>);

impl<T> Lenient<T> {
    /// The value, when the document gives one.
    pub fn as_ref(&self) -> Option<&T> {
        self.0.as_ref()
    }

    pub fn into_option(self) -> Option<T> {
        self.0
    }

    /// A copy of the value, when the document gives one.
    pub fn cloned(&self) -> Option<T>
    where
        T: Clone,
    {
        self.0.clone()
    }

    pub fn is_some(&self) -> bool {
        self.0.is_some()
    }

    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }
}

impl<T: Copy> Lenient<T> {
    /// The value, when the document gives one.
    pub fn get(self) -> Option<T> {
        self.0
    }

    /// The value, or `default` when the document gives none.
    pub fn or(self, default: T) -> T {
        self.0.unwrap_or(default)
    }
}

impl Lenient<String> {
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<T> From<Option<T>> for Lenient<T> {
    fn from(v: Option<T>) -> Self {
        Lenient(v)
    }
}

impl<T> From<T> for Lenient<T> {
    fn from(v: T) -> Self {
        Lenient(Some(v))
    }
}

impl<T> From<Lenient<T>> for Option<T> {
    fn from(v: Lenient<T>) -> Self {
        v.0
    }
}

/// Shown as the `Option` it holds.
impl<T: fmt::Debug> fmt::Debug for Lenient<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Reads the member as JSON and hands a present, non-null value to `read`. It asks serde for an
/// `Option` first, because that is what makes serde take a missing member as `None` instead of
/// an error, without a `default` attribute on every field.
fn read_present<'de, D: Deserializer<'de>, T>(
    d: D,
    read: impl FnOnce(serde_json::Value) -> Result<T, serde_json::Error>,
) -> Result<Lenient<T>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(Lenient(None)),
        Some(v) => read(v).map(|t| Lenient(Some(t))).map_err(de::Error::custom),
    }
}

impl<'de> Deserialize<'de> for Lenient<bool> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_present(d, |v| v.deserialize_any(BoolVisitor))
    }
}

impl<'de> Deserialize<'de> for Lenient<f64> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_present(d, |v| v.deserialize_any(NumVisitor))
    }
}

impl<'de> Deserialize<'de> for Lenient<u64> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_present(d, |v| {
            let n = v.deserialize_any(NumVisitor)?;
            if n >= 0.0 && n.fract() == 0.0 && n < 1e18 {
                Ok(n as u64)
            } else {
                Err(de::Error::custom(format!(
                    "invalid value {n} (expected a non-negative integer)"
                )))
            }
        })
    }
}

impl<'de> Deserialize<'de> for Lenient<String> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_present(d, |v| match v {
            serde_json::Value::String(s) => Ok(s),
            serde_json::Value::Number(n) => Ok(n.to_string()),
            serde_json::Value::Bool(b) => Ok(b.to_string()),
            other => Err(de::Error::custom(format!(
                "invalid value {other} (expected a string)"
            ))),
        })
    }
}
