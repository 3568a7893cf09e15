//! Scans one value with the signature database and prints the hits and the inspection views the
//! scan matched against, to tell which view and signature a finding comes from.
//!
//! `cargo run --example scan_value -- TARGET VALUE` (TARGET: url, query, param-name, param-value,
//! header, cookie, body, json, xml, grpc, filename; `\xNN` escapes are read in VALUE).

use portcullis::waf::injection::{Sqli, Tokenizer};
use portcullis::waf::normalize::{ByteSet, inspection_views};
use portcullis::waf::signatures::{SignatureDb, Target, parse_targets};

fn unescape(v: &str) -> Vec<u8> {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && let Some(n) = b
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
        {
            out.push(n);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(t), Some(v)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: scan_value TARGET VALUE");
        std::process::exit(2);
    };
    let target = match parse_targets(t).as_deref() {
        Ok([t]) => *t,
        _ => {
            eprintln!("unknown target {t:?}");
            std::process::exit(2);
        }
    };
    let value = unescape(v);
    let db = SignatureDb::builtin();
    let mut hits = Vec::new();
    db.scan(target, &value, &mut hits);
    println!("hits: {hits:?}");
    for id in &hits {
        if let Some(s) = db.get(*id) {
            println!("  {id} {}", s.name);
        }
    }
    if let Some(f) = Sqli.fingerprint(&value) {
        println!("SQL fingerprint {f}");
    }
    let views = inspection_views(&value, &ByteSet::of(&value), target == Target::Url);
    for view in views {
        let mut h = Vec::new();
        db.scan(target, &view, &mut h);
        println!("view {:?} -> {h:?}", String::from_utf8_lossy(&view));
    }
}
