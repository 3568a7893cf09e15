//! One resource record and its zone-file text form `<name> <ttl> IN <type> <data>`.
//!
//! [`parse_record`] reads one line of zone-file text (the SOAP `add_zone_text` records and what
//! the store keeps), and `Display` writes it back in the same canonical form, so text round-trips.
//! Supported types: SOA, NS, A, AAAA, CNAME, PTR, MX, TXT, SRV. This is the parser the
//! `zone_record` fuzz target drives.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use super::name::{self, NameError};

/// Largest TTL a record may carry (RFC 2181 §8).
pub const MAX_TTL: u32 = 2_147_483_647;
/// TTL given to records whose text has none.
pub const DEFAULT_TTL: u32 = 3600;

/// A resource record of class IN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Owner name, fully qualified, lower case.
    pub name: String,
    pub ttl: u32,
    pub data: RData,
}

/// The start-of-authority data of a zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Soa {
    pub mname: String,
    pub rname: String,
    pub serial: u32,
    pub refresh: u32,
    pub retry: u32,
    pub expire: u32,
    pub minimum: u32,
}

/// Record data by type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RData {
    Soa(Soa),
    Ns(String),
    A(Ipv4Addr),
    Aaaa(Ipv6Addr),
    Cname(String),
    Ptr(String),
    Mx {
        preference: u16,
        exchange: String,
    },
    Txt(Vec<String>),
    Srv {
        priority: u16,
        weight: u16,
        port: u16,
        target: String,
    },
}

impl RData {
    /// The type mnemonic (`A`, `SOA`, ...).
    pub fn rtype(&self) -> &'static str {
        match self {
            RData::Soa(_) => "SOA",
            RData::Ns(_) => "NS",
            RData::A(_) => "A",
            RData::Aaaa(_) => "AAAA",
            RData::Cname(_) => "CNAME",
            RData::Ptr(_) => "PTR",
            RData::Mx { .. } => "MX",
            RData::Txt(_) => "TXT",
            RData::Srv { .. } => "SRV",
        }
    }
}

/// Why a record's text was rejected; the text is shown to API users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("record \"{text}\": {reason}")]
    Syntax { text: String, reason: String },
    #[error("record \"{text}\": {source}")]
    Name { text: String, source: NameError },
}

/// Parses `<name> [<ttl>] [IN] <type> <data>` (TTL and class in either order) relative to
/// `origin` (fully qualified). Parentheses and `;` comments are accepted as in zone files.
pub fn parse_record(text: &str, origin: &str) -> Result<Record, RecordError> {
    let syntax = |reason: String| RecordError::Syntax {
        text: text.to_string(),
        reason,
    };
    let toks = tokenize(text).map_err(|r| syntax(r.to_string()))?;
    let mut it = toks.iter().map(String::as_str).peekable();
    let owner = it
        .next()
        .ok_or_else(|| syntax("empty record; expected `<name> <ttl> IN <type> <data>`".into()))?;
    let mut ttl = None;
    let mut class_seen = false;
    let rtype = loop {
        let tok = it
            .next()
            .ok_or_else(|| syntax("missing record type".into()))?;
        if tok.eq_ignore_ascii_case("IN") && !class_seen {
            class_seen = true;
        } else if tok.bytes().all(|b| b.is_ascii_digit()) && ttl.is_none() {
            ttl = Some(parse_ttl(tok).map_err(syntax)?);
        } else if tok.starts_with('-') && tok[1..].bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax(format!("TTL {tok} is negative")));
        } else {
            break tok.to_ascii_uppercase();
        }
    };
    let args: Vec<&str> = it.collect();
    let nm = |raw: &str| {
        name::normalize(raw, Some(origin)).map_err(|source| RecordError::Name {
            text: text.to_string(),
            source,
        })
    };
    let want = |n: usize| -> Result<(), RecordError> {
        if args.len() == n {
            Ok(())
        } else {
            Err(syntax(format!(
                "{rtype} takes {n} data field(s), got {}",
                args.len()
            )))
        }
    };
    let data = match rtype.as_str() {
        "A" => {
            want(1)?;
            RData::A(
                args[0]
                    .parse()
                    .map_err(|_| syntax(format!("\"{}\" is not an IPv4 address", args[0])))?,
            )
        }
        "AAAA" => {
            want(1)?;
            RData::Aaaa(
                args[0]
                    .parse()
                    .map_err(|_| syntax(format!("\"{}\" is not an IPv6 address", args[0])))?,
            )
        }
        "NS" => {
            want(1)?;
            RData::Ns(nm(args[0])?)
        }
        "CNAME" => {
            want(1)?;
            RData::Cname(nm(args[0])?)
        }
        "PTR" => {
            want(1)?;
            RData::Ptr(nm(args[0])?)
        }
        "MX" => {
            want(2)?;
            RData::Mx {
                preference: parse_u16(args[0], "MX preference").map_err(syntax)?,
                exchange: nm(args[1])?,
            }
        }
        "TXT" => {
            if args.is_empty() {
                return Err(syntax("TXT needs at least one string".into()));
            }
            if let Some(long) = args.iter().find(|s| s.len() > 255) {
                return Err(syntax(format!(
                    "TXT string of {} bytes is longer than 255",
                    long.len()
                )));
            }
            RData::Txt(args.iter().map(|s| s.to_string()).collect())
        }
        "SRV" => {
            want(4)?;
            RData::Srv {
                priority: parse_u16(args[0], "SRV priority").map_err(syntax)?,
                weight: parse_u16(args[1], "SRV weight").map_err(syntax)?,
                port: parse_u16(args[2], "SRV port").map_err(syntax)?,
                target: nm(args[3])?,
            }
        }
        "SOA" => {
            want(7)?;
            let n = |i: usize, what: &str| parse_u32(args[i], what).map_err(syntax);
            RData::Soa(Soa {
                mname: nm(args[0])?,
                rname: nm(args[1])?,
                serial: n(2, "SOA serial")?,
                refresh: n(3, "SOA refresh")?,
                retry: n(4, "SOA retry")?,
                expire: n(5, "SOA expire")?,
                minimum: n(6, "SOA minimum")?,
            })
        }
        other => return Err(syntax(format!("unsupported record type \"{other}\""))),
    };
    Ok(Record {
        name: nm(owner)?,
        ttl: ttl.unwrap_or(DEFAULT_TTL),
        data,
    })
}

/// Parses a TTL in seconds, 0..=2147483647.
fn parse_ttl(tok: &str) -> Result<u32, String> {
    match tok.parse::<u64>() {
        Ok(v) if v <= u64::from(MAX_TTL) => Ok(v as u32),
        Ok(_) => Err(format!("TTL {tok} is larger than {MAX_TTL}")),
        Err(_) => Err(format!("TTL \"{tok}\" is not a number of seconds")),
    }
}

fn parse_u16(tok: &str, what: &str) -> Result<u16, String> {
    tok.parse()
        .map_err(|_| format!("{what} \"{tok}\" is not a number from 0 to 65535"))
}

fn parse_u32(tok: &str, what: &str) -> Result<u32, String> {
    tok.parse()
        .map_err(|_| format!("{what} \"{tok}\" is not a number from 0 to 4294967295"))
}

/// Splits on whitespace, keeping `"quoted strings"` (with `\"` and `\\` escapes) as one token,
/// dropping `(`, `)` and `;` comments.
fn tokenize(text: &str) -> Result<Vec<String>, &'static str> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || c == '(' || c == ')' {
            chars.next();
        } else if c == ';' {
            break;
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted string"),
                    Some('"') => break,
                    Some('\\') => s.push(chars.next().ok_or("unterminated quoted string")?),
                    Some(ch) => s.push(ch),
                }
            }
            out.push(s);
        } else {
            let mut s = String::new();
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() || matches!(ch, '(' | ')' | ';' | '"') {
                    break;
                }
                s.push(ch);
                chars.next();
            }
            out.push(s);
        }
    }
    Ok(out)
}

/// Quotes a TXT character-string for zone-file text.
fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

impl fmt::Display for RData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RData::Soa(s) => write!(
                f,
                "{} {} {} {} {} {} {}",
                s.mname, s.rname, s.serial, s.refresh, s.retry, s.expire, s.minimum
            ),
            RData::Ns(n) | RData::Cname(n) | RData::Ptr(n) => f.write_str(n),
            RData::A(ip) => write!(f, "{ip}"),
            RData::Aaaa(ip) => write!(f, "{ip}"),
            RData::Mx {
                preference,
                exchange,
            } => write!(f, "{preference} {exchange}"),
            RData::Txt(parts) => {
                let quoted: Vec<String> = parts.iter().map(|p| quote(p)).collect();
                f.write_str(&quoted.join(" "))
            }
            RData::Srv {
                priority,
                weight,
                port,
                target,
            } => write!(f, "{priority} {weight} {port} {target}"),
        }
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} IN {} {}",
            self.name,
            self.ttl,
            self.data.rtype(),
            self.data
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const O: &str = "example.com.";

    #[test]
    fn canonical_text_round_trips() {
        for line in [
            "example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 2024010101 10800 3600 604800 86400",
            "example.com. 3600 IN NS ns1.example.com.",
            "www.example.com. 300 IN A 10.0.0.1",
            "v6.example.com. 300 IN AAAA 2001:db8::1",
            "alias.example.com. 60 IN CNAME www.example.com.",
            "example.com. 300 IN MX 10 mail.example.com.",
            "example.com. 300 IN TXT \"v=spf1 -all\" \"a \\\"quoted\\\" part\"",
            "_sip._tcp.example.com. 300 IN SRV 10 5 5060 sip.example.com.",
            "1.0.0.10.in-addr.arpa. 300 IN PTR www.example.com.",
        ] {
            let r = parse_record(line, O).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(r.to_string(), line);
        }
    }

    #[test]
    fn lenient_forms_are_accepted() {
        let r = parse_record("www IN 60 a 10.0.0.2 ; comment", O).unwrap();
        assert_eq!(r.to_string(), "www.example.com. 60 IN A 10.0.0.2");
        let r = parse_record("@ NS ns1", O).unwrap();
        assert_eq!(r.to_string(), "example.com. 3600 IN NS ns1.example.com.");
        let soa = "@ 3600 IN SOA ns1 hostmaster ( 1 2 3 4 5 )";
        assert!(matches!(parse_record(soa, O).unwrap().data, RData::Soa(_)));
    }

    #[test]
    fn bad_records_are_rejected_with_a_reason() {
        for (line, needle) in [
            ("www 300 IN A 10.0.0.300", "not an IPv4 address"),
            ("www 300 IN A", "takes 1 data field"),
            ("www 3000000000 IN A 10.0.0.1", "larger than"),
            ("www -5 IN A 10.0.0.1", "negative"),
            ("www 300 IN HINFO a b", "unsupported record type"),
            ("www 300 IN TXT \"open", "unterminated"),
            ("bad!name 300 IN A 10.0.0.1", "invalid domain name"),
            ("", "empty record"),
            ("www 300 IN MX 70000 mail", "MX preference"),
        ] {
            let e = parse_record(line, O).unwrap_err().to_string();
            assert!(e.contains(needle), "{line}: {e}");
        }
    }

    /// Replays the `zone_record` fuzz seeds: parse, and canonical text parses back the same.
    #[test]
    fn fuzz_seeds_round_trip() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/zone_record");
        let mut ok = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            if let Ok(r) = parse_record(&text, O) {
                assert_eq!(parse_record(&r.to_string(), O), Ok(r));
                ok += 1;
            }
        }
        assert!(ok >= 10, "the valid seeds parse");
    }
}
