//! In-process detection-quality evaluation of the signature database over a JSONL corpus
//! (`/work/shared/corpus/dev.jsonl` format). Each request is taken apart the way the WAF does (path,
//! query parameters, headers, cookies, form/JSON/XML/multipart bodies), every value is decoded
//! (`waf::normalize`) and scanned; a request counts as blocked when any signature enabled by the
//! judged policy matches (rapid deployment: Generic Detection + High Accuracy sets, plus signatures of
//! the listed server technologies at medium accuracy or better; staging off).
//!
//! `cargo run --release --example detect_corpus -- CORPUS.jsonl [--misses N] [--fps N] [--category C]
//! [--dump FILE]` (`--dump` writes every scan's target and hits, request by request: diff two dumps to
//! check that a matcher change detects exactly the same)

use std::collections::BTreeMap;
use std::io::BufRead;

use portcullis::waf::normalize::{self, Evasions};
use portcullis::waf::signatures::{Level, MemoUse, SignatureDb, Target};

const TECHNOLOGIES: &[&str] = &[
    "Unix/Linux",
    "Microsoft Windows",
    "Apache/NCSA HTTP Server",
    "Nginx",
    "PHP",
    "Java Servlets/JSP",
    "Node.js",
    "MySQL",
    "MongoDB",
    "XML",
];
const MAX_PASSES: u32 = 3;
/// Headers not inspected by signatures: transport framing and browser-generated negotiation.
const SKIP_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "cookie",
    "accept-encoding",
    "content-type",
];

fn enabled(db: &SignatureDb) -> Vec<u32> {
    db.signatures()
        .iter()
        .filter(|s| {
            s.sets
                .iter()
                .any(|x| x == "Generic Detection Signatures" || x == "High Accuracy Signatures")
                || (s.accuracy >= Level::Medium
                    && s.systems.iter().any(|x| TECHNOLOGIES.contains(&x.as_str())))
        })
        .map(|s| s.id)
        .collect()
}

struct Scanner<'a> {
    db: &'a SignatureDb,
    hits: Vec<u32>,
    evasions: Evasions,
    /// With `--dump`: one line per scan (target and its hits), to prove two builds detect the same.
    dump: Option<&'a mut String>,
}

impl Scanner<'_> {
    fn scan(&mut self, t: Target, v: &[u8]) {
        if !v.is_empty() {
            let before = self.hits.len();
            self.db.scan(t, v, &mut self.hits);
            if let Some(d) = self.dump.as_deref_mut() {
                d.push_str(&format!("  {t:?} {:?}\n", &self.hits[before..]));
            }
        }
    }
    fn decode(&mut self, v: &[u8], plus: bool) -> Vec<u8> {
        let v: Vec<u8> = if plus {
            v.iter()
                .map(|&b| if b == b'+' { b' ' } else { b })
                .collect()
        } else {
            v.to_vec()
        };
        normalize::decode_percent(&v, MAX_PASSES, &mut self.evasions)
    }
    fn params(&mut self, s: &[u8]) {
        for pair in s.split(|&b| b == b'&') {
            let (k, v) = match pair.iter().position(|&b| b == b'=') {
                Some(p) => (&pair[..p], &pair[p + 1..]),
                None => (pair, &b""[..]),
            };
            let k = self.decode(k, true);
            let v = self.decode(v, true);
            self.scan(Target::ParamName, &k);
            self.scan(Target::ParamValue, &v);
        }
    }
    fn json(&mut self, v: &serde_json::Value) {
        match v {
            serde_json::Value::String(s) => self.scan(Target::Json, s.as_bytes()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| self.json(x)),
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    self.scan(Target::Json, k.as_bytes());
                    self.json(x);
                }
            }
            _ => {}
        }
    }
    fn multipart(&mut self, body: &[u8], boundary: &str) {
        let delim = format!("--{boundary}");
        let text = String::from_utf8_lossy(body);
        for part in text.split(delim.as_str()) {
            let Some((head, content)) = part.split_once("\r\n\r\n") else {
                continue;
            };
            let content = content.strip_suffix("\r\n").unwrap_or(content);
            if let Some(name) = head
                .split("name=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
            {
                self.scan(Target::ParamName, name.as_bytes());
            }
            self.scan(Target::ParamValue, content.as_bytes());
        }
    }
    fn body(&mut self, ctype: &str, body: &[u8]) {
        let ct = ctype.to_ascii_lowercase();
        if ct.contains("x-www-form-urlencoded") {
            self.params(body);
        } else if ct.contains("json") {
            match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(v) => self.json(&v),
                Err(_) => self.scan(Target::Body, body),
            }
        } else if ct.contains("multipart/form-data") {
            match ct.split("boundary=").nth(1) {
                Some(b) => {
                    let b = ctype[ctype.len() - b.len()..].trim_matches('"').to_string();
                    self.multipart(body, &b)
                }
                None => self.scan(Target::Body, body),
            }
        } else if ct.contains("xml") {
            self.xml(body);
        } else {
            // No usable content type: sniff like the engine does.
            let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
            match first {
                Some(b'<') => {
                    // Unknown markup: inspect the structure and the raw document.
                    self.xml(body);
                    self.scan(Target::Body, body);
                }
                Some(b'{' | b'[') => self.body("application/json", body),
                _ if body.contains(&b'=') && !body.contains(&b' ') => self.params(body),
                _ => self.scan(Target::Body, body),
            }
        }
    }
}

impl Scanner<'_> {
    /// XML: the prolog and doctype as one value, then every text node and attribute value.
    fn xml(&mut self, body: &[u8]) {
        let mut i = 0;
        let mut prolog_end = 0;
        while i < body.len() {
            if body[i] == b'<' && !matches!(body.get(i + 1), Some(b'?' | b'!')) {
                break;
            }
            i += 1;
            prolog_end = i;
        }
        self.scan(Target::Xml, &body[..prolog_end]);
        let mut in_tag = false;
        let mut start = prolog_end;
        let mut quote: Option<u8> = None;
        for (k, &b) in body.iter().enumerate().skip(prolog_end) {
            match (in_tag, quote, b) {
                (false, _, b'<') => {
                    let text = body[start..k].trim_ascii();
                    self.scan(Target::Xml, text);
                    in_tag = true;
                }
                (true, None, b'"' | b'\'') => {
                    quote = Some(b);
                    start = k + 1;
                }
                (true, Some(q), _) if b == q => {
                    self.scan(Target::Xml, &body[start..k]);
                    quote = None;
                }
                (true, None, b'>') => {
                    in_tag = false;
                    start = k + 1;
                }
                _ => {}
            }
        }
        if !in_tag {
            self.scan(Target::Xml, body[start.min(body.len())..].trim_ascii());
        }
    }
}

fn inspect(db: &SignatureDb, r: &serde_json::Value, dump: Option<&mut String>) -> Vec<u32> {
    let mut s = Scanner {
        db,
        hits: Vec::new(),
        evasions: Evasions::default(),
        dump,
    };
    let target = r["path"].as_str().unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let p = s.decode(path.as_bytes(), false);
    s.scan(Target::Url, &p);
    if !query.is_empty() {
        s.params(query.as_bytes());
    }
    let mut ctype = String::new();
    if let Some(h) = r["headers"].as_object() {
        for (k, v) in h {
            let v = v.as_str().unwrap_or("");
            let name = k.to_ascii_lowercase();
            if name == "content-type" {
                ctype = v.to_string();
            }
            if name == "cookie" {
                for c in v.split(';') {
                    let (_, cv) = c.split_once('=').unwrap_or(("", c));
                    let cv = s.decode(cv.trim().as_bytes(), false);
                    s.scan(Target::Cookie, &cv);
                }
            }
            if !SKIP_HEADERS.contains(&name.as_str()) && !v.is_empty() {
                // Scoped by name as the engine scans headers: some signatures take any value of
                // their own header (`Request-Range`).
                let before = s.hits.len();
                s.db.scan_header(&name, v.as_bytes(), &mut s.hits, MemoUse::Off);
                if let Some(d) = s.dump.as_deref_mut() {
                    d.push_str(&format!("  Header {:?}\n", &s.hits[before..]));
                }
            }
        }
    }
    if let Some(b) = r["body"].as_str().filter(|b| !b.is_empty()) {
        s.body(&ctype, b.as_bytes());
    }
    s.hits
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!(
            "usage: detect_corpus CORPUS.jsonl [--misses N] [--fps N] [--category C] [--dump FILE]"
        );
        std::process::exit(2);
    };
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let show_misses: usize = opt("--misses").and_then(|v| v.parse().ok()).unwrap_or(0);
    let show_fps: usize = opt("--fps").and_then(|v| v.parse().ok()).unwrap_or(0);
    let only_cat = opt("--category");
    let dump_path = opt("--dump");
    let mut dump = String::new();
    let t0 = std::time::Instant::now();
    let db = SignatureDb::builtin();
    let on = enabled(db);
    eprintln!(
        "database: {} signatures, {} enabled, compiled in {:?}",
        db.signatures().len(),
        on.len(),
        t0.elapsed()
    );
    let file = std::fs::File::open(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let mut by_cat: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut by_src: BTreeMap<String, (u32, u32, u32, u32)> = BTreeMap::new();
    let mut sig_fp: BTreeMap<u32, u32> = BTreeMap::new();
    let (mut misses, mut fps) = (0, 0);
    let t1 = std::time::Instant::now();
    for line in std::io::BufReader::new(file).lines().map_while(Result::ok) {
        let Ok(r) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let cat = r["category"].as_str().unwrap_or("?").to_string();
        if only_cat.as_ref().is_some_and(|c| *c != cat) {
            continue;
        }
        let src = r["source"].as_str().unwrap_or("?").to_string();
        let attack = r["expect"] == "block";
        if dump_path.is_some() {
            dump.push_str(&format!("{}\n", r["id"]));
        }
        let hits: Vec<u32> = inspect(db, &r, dump_path.is_some().then_some(&mut dump))
            .into_iter()
            .filter(|h| on.contains(h))
            .collect();
        let blocked = !hits.is_empty();
        let c = by_cat.entry(cat.clone()).or_default();
        c.0 += 1;
        c.1 += u32::from(blocked);
        let s = by_src.entry(src).or_default();
        if attack {
            s.0 += 1;
            s.1 += u32::from(blocked);
            if !blocked && misses < show_misses {
                misses += 1;
                println!("MISS {} {cat} {}", r["id"], short(&r));
            }
        } else {
            s.2 += 1;
            s.3 += u32::from(blocked);
            for h in &hits {
                *sig_fp.entry(*h).or_default() += 1;
            }
            if blocked && fps < show_fps {
                fps += 1;
                println!("FP {} {hits:?} {}", r["id"], short(&r));
            }
        }
    }
    let took = t1.elapsed();
    if let Some(p) = &dump_path
        && let Err(e) = std::fs::write(p, &dump)
    {
        eprintln!("{p}: {e}");
    }
    println!(
        "{:<16} {:>6} {:>8} {:>7}",
        "category", "total", "blocked", "rate"
    );
    for (k, (n, b)) in &by_cat {
        println!("{k:<16} {n:>6} {b:>8} {:>6.1}%", pct(*b, *n));
    }
    println!(
        "{:<18} {:>7} {:>7} {:>6} {:>7} {:>7} {:>6}",
        "source", "attacks", "blocked", "TP", "benign", "blocked", "FP"
    );
    let mut tot = (0, 0, 0, 0);
    for (k, (a, ab, b, bb)) in &by_src {
        println!(
            "{k:<18} {a:>7} {ab:>7} {:>5.1}% {b:>7} {bb:>7} {:>5.1}%",
            pct(*ab, *a),
            pct(*bb, *b)
        );
        tot = (tot.0 + a, tot.1 + ab, tot.2 + b, tot.3 + bb);
    }
    let real = by_src.get("openappsec-legit").copied().unwrap_or_default();
    println!(
        "DETECTION in-process: attacks {} blocked {} TP {:.1}% | benign {} blocked {} FP {:.1}% | real-traffic FP {:.1}% | {:?}",
        tot.0,
        tot.1,
        pct(tot.1, tot.0),
        tot.2,
        tot.3,
        pct(tot.3, tot.2),
        pct(real.3, real.2),
        took
    );
    if !sig_fp.is_empty() {
        println!("false-positive hits by signature: {sig_fp:?}");
    }
}

fn pct(a: u32, b: u32) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * f64::from(a) / f64::from(b)
    }
}

fn short(r: &serde_json::Value) -> String {
    let mut s = format!(
        "{} {}",
        r["method"].as_str().unwrap_or(""),
        r["path"].as_str().unwrap_or("")
    );
    if let Some(b) = r["body"].as_str().filter(|b| !b.is_empty()) {
        s.push_str(" BODY ");
        s.push_str(b);
    }
    if let Some(h) = r["headers"].as_object() {
        for k in ["User-Agent", "Referer", "X-Forwarded-For", "Cookie"] {
            if let Some(v) = h.get(k).and_then(|v| v.as_str()) {
                s.push_str(&format!(" [{k}: {v}]"));
            }
        }
    }
    s.chars().take(300).collect()
}
