//! Reading typed properties out of a declaration's JSON objects while collecting every error
//! with its JSON path (`/Tenant/App/item/property: message`, AS3's error form), so one answer
//! lists all that is wrong. Pure: no IO, no store.

use serde_json::{Map, Value};

/// The errors found so far; each is `"<path>: <message>"`.
#[derive(Default, Debug)]
pub struct Errors(pub Vec<String>);

/// Most errors one answer lists (a hostile declaration cannot make the answer huge).
pub const MAX_ERRORS: usize = 100;

impl Errors {
    pub fn push(&mut self, path: &str, msg: impl AsRef<str>) {
        if self.0.len() < MAX_ERRORS {
            self.0.push(format!("{path}: {}", msg.as_ref()));
        }
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One JSON object being read at `path`; remembers unknown keys.
pub struct Props<'a> {
    pub path: String,
    pub map: &'a Map<String, Value>,
}

impl<'a> Props<'a> {
    pub fn new(path: impl Into<String>, map: &'a Map<String, Value>) -> Self {
        Props {
            path: path.into(),
            map,
        }
    }

    pub fn at(&self, key: &str) -> String {
        format!("{}/{key}", self.path)
    }

    /// Reports every key not in `allowed` (AS3: "should NOT have additional properties").
    pub fn only(&self, allowed: &[&str], errs: &mut Errors) {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) && !matches!(k.as_str(), "class" | "label" | "remark")
            {
                errs.push(
                    &self.at(k),
                    "property is not supported (should NOT have additional properties)",
                );
            }
        }
    }

    pub fn bool(&self, key: &str, default: bool, errs: &mut Errors) -> bool {
        match self.map.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                errs.push(&self.at(key), "should be boolean");
                default
            }
        }
    }

    /// An integer in `min..=max`.
    pub fn int(&self, key: &str, default: i64, min: i64, max: i64, errs: &mut Errors) -> i64 {
        match self.map.get(key) {
            None => default,
            Some(v) => match v.as_i64() {
                Some(n) if (min..=max).contains(&n) => n,
                Some(_) => {
                    errs.push(&self.at(key), format!("should be >= {min} and <= {max}"));
                    default
                }
                None => {
                    errs.push(&self.at(key), "should be integer");
                    default
                }
            },
        }
    }

    pub fn str(&self, key: &str, errs: &mut Errors) -> Option<&'a str> {
        match self.map.get(key) {
            None => None,
            Some(Value::String(s)) => Some(s),
            Some(_) => {
                errs.push(&self.at(key), "should be string");
                None
            }
        }
    }

    /// A string that must be one of `allowed`.
    pub fn choice(
        &self,
        key: &str,
        default: &'static str,
        allowed: &[&'static str],
        errs: &mut Errors,
    ) -> &'static str {
        match self.str(key, errs) {
            None => default,
            Some(s) => match allowed.iter().find(|a| **a == s) {
                Some(a) => a,
                None => {
                    errs.push(
                        &self.at(key),
                        format!("should be equal to one of the allowed values {allowed:?}"),
                    );
                    default
                }
            },
        }
    }

    pub fn array(&self, key: &str, errs: &mut Errors) -> Option<&'a Vec<Value>> {
        match self.map.get(key) {
            None => None,
            Some(Value::Array(a)) => Some(a),
            Some(_) => {
                errs.push(&self.at(key), "should be array");
                None
            }
        }
    }
}

/// AS3's name format: a letter, then letters, digits, `_`, `.`, `-`; at most 190 characters.
pub fn valid_name(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= 190
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !s.contains("..")
}

/// A `bigip` reference: an absolute path `/Partition/name` or `/Partition/folder/name`.
pub fn valid_bigip_path(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('/') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    (2..=3).contains(&parts.len())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 255
                && *p != "."
                && !p.contains("..")
                && p.chars().all(|c| {
                    !c.is_control() && !matches!(c, '~' | '\\' | '"' | '\'' | '{' | '}' | '?' | '#')
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert!(valid_name("Sample_01"));
        assert!(valid_name("web-pool.v2"));
        assert!(!valid_name("1abc"));
        assert!(!valid_name("a b"));
        assert!(!valid_name(""));
        assert!(!valid_name("a/b"));
        assert!(valid_bigip_path("/Common/clientssl"));
        assert!(valid_bigip_path("/Common/Shared/pol"));
        assert!(valid_bigip_path("/Common/Log all requests"));
        assert!(!valid_bigip_path("Common/x"));
        assert!(!valid_bigip_path("/Common/../x"));
        assert!(!valid_bigip_path("/a/b/c/d"));
    }
}
