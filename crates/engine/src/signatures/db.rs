//! The signature database text format: parsing `policies/signatures/*.sig` into [`SigDef`]s.
//!
//! One record per blank-line separated block of `key: value` lines (`#` starts a comment line):
//!
//! ```text
//! id: 300001001
//! name: SQL injection: UNION SELECT
//! type: SQL-Injection
//! accuracy: high
//! risk: high
//! systems: MySQL, Microsoft SQL Server        (optional; empty = general)
//! sets: Generic Detection Signatures         (optional, added to the derived sets)
//! targets: @values, url                       (see [`parse_targets`])
//! unless: url, binary                         (optional: value shapes it does not apply to, see `shape`)
//! headers: accept, range                      (optional: only these header names, for `header`)
//! literal: union                              (repeatable; any literal hit triggers the regex; escapes: [`unescape`])
//! regex: \bunion\b[\s\S]{0,100}?\bselect\b     (case-insensitive; omitted = literal hit is the match)
//! engine: sqli                                (instead of literal/regex: a tokenizer from waf::injection)
//! test: 1 union select password from users    (repeatable positive example, checked by unit tests)
//! pass: the union of two sets                 (repeatable negative example)
//! ```

use super::{Level, SignatureInfo, Target};

/// How a signature matches once selected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Literal prefilter plus optional confirming regex.
    Pattern,
    /// The SQL injection tokenizer.
    Sqli,
    /// The XSS tokenizer.
    Xss,
}

/// One signature as written in the database file.
#[derive(Clone, Debug)]
pub struct SigDef {
    /// What a policy selects it by, its sets as the file lists them (the database adds the
    /// derived ones, [`super::derived_sets`]).
    pub info: SignatureInfo,
    /// The value shapes ([`super::shape::Shape`] bits) in which a match does not count.
    pub unless: u8,
    /// Byte strings (see [`unescape`]), matched ASCII case-insensitively.
    pub literals: Vec<Vec<u8>>,
    pub regex: Option<String>,
    pub engine: Engine,
    pub tests: Vec<Vec<u8>>,
    pub passes: Vec<Vec<u8>>,
}

/// A database file error, naming the file line.
#[derive(Debug, thiserror::Error)]
#[error("signature database line {line}: {message}")]
pub struct DbError {
    pub line: usize,
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> DbError {
    DbError {
        line,
        message: message.into(),
    }
}

fn parse_level(line: usize, v: &str) -> Result<Level, DbError> {
    match v.to_ascii_lowercase().as_str() {
        "low" => Ok(Level::Low),
        "medium" => Ok(Level::Medium),
        "high" => Ok(Level::High),
        other => Err(err(
            line,
            format!("unknown level {other:?} (expected low, medium or high)"),
        )),
    }
}

fn list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Every target a "value" signature applies to: everything a client controls as data.
pub const VALUES: &[Target] = &[
    Target::QueryString,
    Target::ParamValue,
    Target::Cookie,
    Target::Body,
    Target::Json,
    Target::Xml,
    Target::Grpc,
];

/// A target name the signature database does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown target {name:?}")]
pub struct UnknownTarget {
    pub name: String,
}

/// Parses a comma list of targets: `url`, `query`, `param-name`, `param-value`, `header`, `cookie`,
/// `body`, `json`, `xml`, `grpc`, `filename`, `key-path`, `cookie-name`, or the groups `@values`
/// ([`VALUES`]) and `@all`. `param-name` also names `cookie-name` (an application reads a cookie's
/// name as a parameter's); a name after `-` is taken out of what the names before it added.
pub fn parse_targets(v: &str) -> Result<Vec<Target>, UnknownTarget> {
    let mut out = Vec::new();
    for name in list(v) {
        let (remove, name) = match name.strip_prefix('-') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, name.as_str()),
        };
        let add: &[Target] = match name {
            "url" => &[Target::Url],
            "query" => &[Target::QueryString],
            "param-name" => &[Target::ParamName, Target::CookieName],
            "param-value" => &[Target::ParamValue],
            "header" => &[Target::Header],
            "cookie" => &[Target::Cookie],
            "body" => &[Target::Body],
            "json" => &[Target::Json],
            "xml" => &[Target::Xml],
            "grpc" => &[Target::Grpc],
            "filename" => &[Target::Filename],
            "key-path" => &[Target::KeyPath],
            "cookie-name" => &[Target::CookieName],
            "@values" => VALUES,
            "@all" => Target::ALL,
            other => {
                return Err(UnknownTarget {
                    name: other.to_string(),
                });
            }
        };
        if remove {
            out.retain(|t| !add.contains(t));
            continue;
        }
        for t in add {
            if !out.contains(t) {
                out.push(*t);
            }
        }
    }
    Ok(out)
}

/// Literal and example escapes: `\n`, `\r`, `\t`, `\0`, `\xNN`, `\\`; the text around them is
/// UTF-8. `\xNN` is the byte NN, whatever its value: `\xac\xed` is the two bytes a serialized Java
/// object starts with, not the UTF-8 of `¬í` (non-ASCII text is written as the text itself). A
/// backslash before anything else, and `\0` before a digit, are refused as ambiguous: `\00` could
/// be NUL and `0` or the three characters of an LDAP escape, `\u560a` a character or six bytes.
fn unescape(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(v.len());
    let mut rest = v.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some((&e, tail)) = rest.split_first() else {
            return Err(format!("lone backslash at the end of {v:?} (write \\\\)"));
        };
        rest = tail;
        out.push(match e {
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'\\' => b'\\',
            b'0' if rest.first().is_some_and(u8::is_ascii_digit) => {
                return Err(format!(
                    "ambiguous \\0 before a digit in {v:?} (write \\x00 for NUL, \\\\0 for a backslash)"
                ));
            }
            b'0' => 0,
            b'x' => {
                let hex = rest.get(..2).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                let byte = hex.and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
                let Some(byte) = byte else {
                    return Err(format!("bad \\x escape in {v:?} (two hex digits)"));
                };
                rest = &rest[2..];
                byte
            }
            other => {
                return Err(format!(
                    "unknown escape \\{} in {v:?} (write \\\\ for a backslash)",
                    char::from(other)
                ));
            }
        });
    }
    if out.is_empty() {
        return Err("empty literal".into());
    }
    Ok(out)
}

#[derive(Default)]
struct Partial {
    start: usize,
    id: Option<u32>,
    name: Option<String>,
    attack_type: Option<String>,
    accuracy: Option<Level>,
    risk: Option<Level>,
    systems: Vec<String>,
    sets: Vec<String>,
    targets: Vec<Target>,
    unless: u8,
    headers: Vec<String>,
    literals: Vec<Vec<u8>>,
    regex: Option<String>,
    engine: Option<Engine>,
    tests: Vec<Vec<u8>>,
    passes: Vec<Vec<u8>>,
    touched: bool,
}

impl Partial {
    fn finish(self) -> Result<SigDef, DbError> {
        let line = self.start;
        let need = |what: &str| err(line, format!("record is missing `{what}`"));
        let engine = self.engine.unwrap_or(Engine::Pattern);
        if engine == Engine::Pattern && self.literals.is_empty() && self.regex.is_none() {
            return Err(err(line, "a pattern signature needs `literal` or `regex`"));
        }
        if self.targets.is_empty() {
            return Err(need("targets"));
        }
        let info = SignatureInfo {
            id: self.id.ok_or_else(|| need("id"))?,
            name: self.name.ok_or_else(|| need("name"))?,
            attack_type: self.attack_type.ok_or_else(|| need("type"))?,
            accuracy: self.accuracy.ok_or_else(|| need("accuracy"))?,
            risk: self.risk.ok_or_else(|| need("risk"))?,
            systems: self.systems,
            sets: self.sets,
            targets: self.targets,
            headers: self.headers,
        };
        Ok(SigDef {
            info,
            unless: self.unless,
            literals: self.literals,
            regex: self.regex,
            engine,
            tests: self.tests,
            passes: self.passes,
        })
    }
}

/// Parses a whole database file.
pub fn parse(text: &str) -> Result<Vec<SigDef>, DbError> {
    let mut out = Vec::new();
    let mut cur = Partial::default();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            if cur.touched {
                out.push(std::mem::take(&mut cur).finish()?);
            }
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            return Err(err(line, format!("expected `key: value`, got {trimmed:?}")));
        };
        if !cur.touched {
            cur.touched = true;
            cur.start = line;
        }
        let value = value.trim();
        match key.trim() {
            "id" => {
                cur.id = Some(
                    value
                        .parse()
                        .map_err(|_| err(line, format!("bad id {value:?}")))?,
                )
            }
            "name" => cur.name = Some(value.to_string()),
            "type" => cur.attack_type = Some(value.to_string()),
            "accuracy" => cur.accuracy = Some(parse_level(line, value)?),
            "risk" => cur.risk = Some(parse_level(line, value)?),
            "systems" => cur.systems.extend(list(value)),
            "sets" => cur.sets.extend(list(value)),
            "targets" => {
                cur.targets = parse_targets(value).map_err(|m| err(line, m.to_string()))?
            }
            "headers" => cur
                .headers
                .extend(list(value).into_iter().map(|h| h.to_ascii_lowercase())),
            "unless" => {
                for name in list(value) {
                    let shape = super::shape::Shape::parse(&name).ok_or_else(|| {
                        err(
                            line,
                            format!("unknown shape {name:?} (expected binary, url, sql-text, function, prose, search-query or document)"),
                        )
                    })?;
                    cur.unless |= shape as u8;
                }
            }
            "literal" => cur
                .literals
                .push(unescape(value).map_err(|m| err(line, m))?),
            "regex" => cur.regex = Some(value.to_string()),
            "engine" => {
                cur.engine = Some(match value {
                    "sqli" => Engine::Sqli,
                    "xss" => Engine::Xss,
                    other => return Err(err(line, format!("unknown engine {other:?}"))),
                })
            }
            "test" => cur.tests.push(unescape(value).map_err(|m| err(line, m))?),
            "pass" => cur.passes.push(unescape(value).map_err(|m| err(line, m))?),
            other => return Err(err(line, format!("unknown key {other:?}"))),
        }
    }
    if cur.touched {
        out.push(cur.finish()?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_record_and_names_bad_lines() {
        let defs = parse(
            "# c\nid: 1\nname: n\ntype: t\naccuracy: high\nrisk: low\ntargets: url, @values\nliteral: x\n",
        )
        .expect("valid");
        assert_eq!(defs.len(), 1);
        assert_eq!(defs[0].info.targets[0], Target::Url);
        assert_eq!(defs[0].info.targets.len(), 1 + VALUES.len());
        let e = parse("id: 1\nname: n\nbogus: 2\n").expect_err("unknown key");
        assert_eq!(e.line, 3);
        let e = parse("id: 1\nname: n\n").expect_err("incomplete");
        assert!(e.to_string().contains("literal"), "{e}");
    }

    #[test]
    fn parameter_names_include_cookie_names_unless_taken_out() {
        let t = |v: &str| parse_targets(v).expect("known targets");
        assert_eq!(t("param-name"), [Target::ParamName, Target::CookieName]);
        assert_eq!(t("param-name, -cookie-name"), [Target::ParamName]);
        assert_eq!(t("cookie-name, url"), [Target::CookieName, Target::Url]);
        assert!(t("@all, -cookie-name").len() == Target::ALL.len() - 1);
        assert!(parse_targets("param-name, -cookies").is_err());
    }

    #[test]
    fn byte_escapes_are_bytes_and_ambiguous_escapes_are_refused() {
        let lit = |v: &str| {
            let rec = format!(
                "id: 1\nname: n\ntype: t\naccuracy: high\nrisk: low\ntargets: body\nliteral: {v}\n"
            );
            parse(&rec).map(|d| d[0].literals[0].clone())
        };
        assert_eq!(lit(r"\xac\xed\x00\x05").expect("bytes"), [0xac, 0xed, 0, 5]);
        assert_eq!(lit(r"a\tb\\c\0").expect("escapes"), b"a\tb\\c\0");
        assert_eq!(lit("。").expect("text"), "。".as_bytes());
        for bad in [r"\00", r"\2a", r"\u560a", r"$\", r"\x4", r"\x+a", r"\xzz"] {
            let e = lit(bad).expect_err(bad);
            assert_eq!(e.line, 7, "{e}");
        }
    }

    #[test]
    fn cookie_names_are_judged_as_parameter_names_but_a_session_id_name_belongs_there() {
        use crate::signatures::SignatureDb;
        let scan = |t: Target, v: &str| {
            let mut hits = Vec::new();
            SignatureDb::builtin().scan(t, v.as_bytes(), &mut hits);
            hits
        };
        for name in ["PHPSESSID", "JSESSIONID", "laravel_session", "session-id"] {
            assert!(
                scan(Target::ParamName, name).contains(&300_006_017),
                "{name}"
            );
            assert!(scan(Target::CookieName, name).is_empty(), "{name}");
        }
        assert!(scan(Target::CookieName, "cart[1]x").contains(&300_006_019));
        let names = |t: Target| -> Vec<u32> {
            let defs = SignatureDb::builtin().definitions().iter();
            defs.filter(|d| d.info.targets.contains(&t))
                .map(|d| d.info.id)
                .collect()
        };
        let (params, cookies) = (names(Target::ParamName), names(Target::CookieName));
        assert_eq!(
            params
                .iter()
                .filter(|id| !cookies.contains(id))
                .collect::<Vec<_>>(),
            [&300_006_017],
            "only the session-id names are left out of the cookie names' signatures"
        );
        assert!(cookies.iter().all(|id| params.contains(id)));
    }
}
