//! `portcullis replay --policy FILE CORPUS.jsonl[.gz]`: runs a corpus of recorded requests through
//! the engine in-process, the way the proxy would take them ([`super::replay_wire`]), and reports
//! block rates per source and per category, the false alarms with the violations and signature
//! ids that caused them, the missed attacks, and the time per request. Users test a policy change
//! against their own captured traffic with it before they deploy the change.
//!
//! The corpus format is JSON lines, one request a line: `raw_b64` (the exact bytes), or `method`,
//! `path` (the request target as sent), `headers` (an object, or a list of `[name, value]` pairs),
//! `body` and `version` (`HTTP/1.1` when absent, none when `null`); `expect` (`block` or `pass`),
//! `id`, `source` and `category` are optional labels.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;

use super::replay_report::{Expect, Report};
use super::replay_wire;
use crate::proxy::{LimitError, Limits, StartError};

/// The command line of `portcullis replay`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The declarative policy to judge the corpus with (JSON or YAML).
    #[arg(long)]
    pub policy: PathBuf,
    /// Corpus files: JSON lines, gzip-compressed when the name ends in `.gz`.
    #[arg(required = true)]
    pub corpus: Vec<PathBuf>,
    /// Print the report as one JSON document (every false alarm and missed attack listed).
    #[arg(long)]
    pub json: bool,
    /// Only requests of these sources (comma-separated).
    #[arg(long)]
    pub source: Option<String>,
    /// Only requests of these categories (comma-separated).
    #[arg(long)]
    pub category: Option<String>,
    /// False alarms and missed attacks listed in the text report.
    #[arg(long, default_value_t = 20)]
    pub list: usize,
    /// Write every request's outcome and violations here, one JSON object a line.
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Override one proxy limit, NAME=VALUE, as `portcullis proxy --limit` does.
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    pub limits: Vec<String>,
}

/// One corpus record, as far as the replay needs it.
pub struct Record {
    pub id: String,
    pub source: String,
    pub category: String,
    pub expect: Expect,
    pub raw: Vec<u8>,
    /// The record has a `body` but neither `Content-Length` nor `Transfer-Encoding`: on the wire
    /// those bytes follow a request that has no body, so no server reads them as its body (the
    /// proxy takes them for the next request). Replayed as sent, and counted in a warning.
    pub unframed_body: bool,
}

/// What is wrong with a corpus line.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("expect: {value:?} is neither block nor pass")]
    Expect { value: String },
    #[error("raw_b64: {0}")]
    RawB64(#[source] base64::DecodeError),
    #[error("neither raw_b64 nor method")]
    NoMethod,
    #[error("no path")]
    NoPath,
    #[error("headers: expected an object or a list of pairs")]
    Headers,
}

/// Why `replay` stops; `Display` is what it prints before it exits.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Limit(#[from] LimitError),
    #[error(transparent)]
    Policy(#[from] StartError),
    /// The results file or a corpus file cannot be opened or read.
    #[error("{}: {source}", .path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} line {line}: {source}", .path.display())]
    Record {
        path: PathBuf,
        line: usize,
        source: RecordError,
    },
    #[error("results: {0}")]
    Results(#[source] std::io::Error),
}

/// Reads one corpus line. `Err` names what is wrong with it.
pub fn parse_record(line: &str) -> Result<Record, RecordError> {
    let r: Value = serde_json::from_str(line).map_err(RecordError::NotJson)?;
    let text = |k: &str| match &r[k] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        v => v.to_string(),
    };
    let expect = match r["expect"].as_str() {
        Some("block") => Expect::Block,
        Some("pass") => Expect::Pass,
        None => Expect::Unlabelled,
        Some(other) => {
            return Err(RecordError::Expect {
                value: other.to_string(),
            });
        }
    };
    let raw = match r["raw_b64"].as_str() {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b.trim())
            .map_err(RecordError::RawB64)?,
        None => request_bytes(&r)?,
    };
    let unframed_body = r["raw_b64"].is_null()
        && r["body"].as_str().is_some_and(|b| !b.is_empty())
        && !has_framing_header(&r["headers"]);
    Ok(Record {
        id: text("id"),
        source: text("source"),
        category: text("category"),
        expect,
        raw,
        unframed_body,
    })
}

/// The bytes a record stands for, built as the corpus's own replay tool sends them.
fn request_bytes(r: &Value) -> Result<Vec<u8>, RecordError> {
    let method = r["method"].as_str().ok_or(RecordError::NoMethod)?;
    let path = r["path"].as_str().ok_or(RecordError::NoPath)?;
    let mut out = format!("{method} {path}");
    match r.get("version") {
        None => out.push_str(" HTTP/1.1"),
        Some(Value::String(v)) if !v.is_empty() => {
            out.push(' ');
            out.push_str(v);
        }
        Some(_) => {}
    }
    out.push_str("\r\n");
    let mut field = |k: &str, v: &str| out.push_str(&format!("{k}: {v}\r\n"));
    match &r["headers"] {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, v)| field(k, v.as_str().unwrap_or_default())),
        Value::Array(pairs) => pairs.iter().for_each(|p| {
            field(
                p[0].as_str().unwrap_or_default(),
                p[1].as_str().unwrap_or_default(),
            )
        }),
        Value::Null => {}
        _ => return Err(RecordError::Headers),
    }
    out.push_str("\r\n");
    if let Some(b) = r["body"].as_str() {
        out.push_str(b);
    }
    Ok(out.into_bytes())
}

/// Whether a record's headers (an object or a list of pairs) frame a body.
fn has_framing_header(headers: &Value) -> bool {
    let framing = |k: &str| {
        k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("transfer-encoding")
    };
    match headers {
        Value::Object(m) => m.keys().any(|k| framing(k)),
        Value::Array(pairs) => pairs.iter().any(|p| p[0].as_str().is_some_and(framing)),
        _ => false,
    }
}

fn open(path: &Path) -> Result<Box<dyn BufRead>, ReplayError> {
    let f = std::fs::File::open(path).map_err(|source| ReplayError::File {
        path: path.to_path_buf(),
        source,
    })?;
    let gz = path.extension().is_some_and(|e| e == "gz");
    let read: Box<dyn Read> = if gz {
        Box::new(flate2::read::MultiGzDecoder::new(f))
    } else {
        Box::new(f)
    };
    Ok(Box::new(BufReader::new(read)))
}

fn wanted(filter: &Option<String>, value: &str) -> bool {
    filter
        .as_deref()
        .is_none_or(|f| f.split(',').any(|x| x.trim() == value))
}

/// Runs the command; the report goes to stdout, `Err` is a usage or input error.
pub fn run(args: &ReplayArgs) -> Result<(), ReplayError> {
    let mut limits = Limits::default();
    for l in &args.limits {
        limits.set(l)?;
    }
    let policy = Arc::new(crate::proxy::load_policy(&args.policy)?);
    let mut results = match &args.results {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(
            |source| ReplayError::File {
                path: p.clone(),
                source,
            },
        )?)),
        None => None,
    };
    let names: Vec<String> = args
        .corpus
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut report = Report::new(names.join(" "), args.policy.display().to_string());
    let mut unframed: (usize, Option<String>) = (0, None);
    for path in &args.corpus {
        for (n, line) in open(path)?.lines().enumerate() {
            let line = line.map_err(|source| ReplayError::File {
                path: path.clone(),
                source,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let rec = parse_record(&line).map_err(|source| ReplayError::Record {
                path: path.clone(),
                line: n + 1,
                source,
            })?;
            if !wanted(&args.source, &rec.source) || !wanted(&args.category, &rec.category) {
                continue;
            }
            if rec.unframed_body {
                unframed.0 += 1;
                unframed.1.get_or_insert_with(|| rec.id.clone());
            }
            let done = replay_wire::replay(&policy, &limits, &rec.raw);
            if let Some(w) = results.as_mut() {
                use std::io::Write;
                let line = Report::result_line(&rec, &done);
                writeln!(w, "{line}").map_err(ReplayError::Results)?;
            }
            report.add(&rec, done);
        }
    }
    if let Some(mut w) = results {
        use std::io::Write;
        w.flush().map_err(ReplayError::Results)?;
    }
    if let (n, Some(first)) = unframed {
        eprintln!(
            "replay: warning: {n} record(s) have a body but no Content-Length or \
             Transfer-Encoding header (first: {first:?}); as on the wire, those bytes are not \
             read as the request's body"
        );
    }
    if args.json {
        println!("{:#}", report.json());
    } else {
        print!("{}", report.text(args.list));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_become_the_bytes_the_corpus_tool_sends() {
        let r = parse_record(
            r#"{"id":7,"method":"POST","path":"/a?b=1","headers":{"Host":"h","X":"é"},"body":"k=v","expect":"block"}"#,
        )
        .expect("record");
        assert_eq!(r.id, "7");
        assert_eq!(r.expect, Expect::Block);
        assert_eq!(
            r.raw,
            "POST /a?b=1 HTTP/1.1\r\nHost: h\r\nX: é\r\n\r\nk=v".as_bytes()
        );
        assert!(
            r.unframed_body,
            "a body with no Content-Length is not framed"
        );
        let r = parse_record(r#"{"method":"GET","path":"/","version":null,"headers":[["A","b"]]}"#)
            .expect("record");
        assert_eq!(r.raw, b"GET /\r\nA: b\r\n\r\n");
        assert_eq!(r.expect, Expect::Unlabelled);
        let r =
            parse_record(r#"{"raw_b64":"R0VUIC8gSFRUUC8xLjENCg0K","expect":"pass"}"#).expect("raw");
        assert_eq!(r.raw, b"GET / HTTP/1.1\r\n\r\n");
    }

    #[test]
    fn a_body_is_framed_by_content_length_or_transfer_encoding() {
        let framed = |line: &str| !parse_record(line).expect("record").unframed_body;
        assert!(framed(
            r#"{"method":"POST","path":"/","headers":{"content-length":"3"},"body":"k=v"}"#
        ));
        assert!(framed(
            r#"{"method":"POST","path":"/","headers":[["Transfer-Encoding","chunked"]],"body":"3\r\nk=v\r\n0\r\n\r\n"}"#
        ));
        assert!(framed(
            r#"{"method":"GET","path":"/","headers":{},"body":""}"#
        ));
        assert!(!framed(
            r#"{"method":"POST","path":"/","headers":[["A","b"]],"body":"x"}"#
        ));
        // The exact bytes are what the user captured: nothing to warn about.
        assert!(framed(r#"{"raw_b64":"R0VUIC8gSFRUUC8xLjENCg0KeA=="}"#));
    }

    #[test]
    fn bad_records_say_what_is_wrong() {
        for (line, want) in [
            ("{", "not JSON"),
            (r#"{"path":"/"}"#, "neither raw_b64 nor method"),
            (r#"{"raw_b64":"!!"}"#, "raw_b64"),
            (r#"{"method":"GET","path":"/","expect":"maybe"}"#, "expect"),
        ] {
            let err = parse_record(line).err().expect(line).to_string();
            assert!(err.contains(want), "{line}: {err}");
        }
    }
}
