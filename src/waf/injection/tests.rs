//! Tokenizer tests: classic injections are caught, ordinary text is not, seeds never panic.

use super::*;

#[test]
fn sqli_catches_classic_shapes() {
    for s in [
        "1' OR '1'='1",
        "1 OR 1=1--",
        "x' UNION SELECT username, password FROM users--",
        "1; DROP TABLE accounts",
        "admin'--",
        "1) AND SLEEP(5)#",
    ] {
        assert!(Sqli.detect(s.as_bytes()), "{s}");
    }
}

#[test]
fn sqli_passes_prose_and_identifiers() {
    for s in [
        "hello world",
        "john.doe@example.com",
        "2024-01-05",
        "Union Square, New York",
        "select a size",
        "42",
        "O'Brien",
    ] {
        assert!(!Sqli.detect(s.as_bytes()), "{s}");
    }
}

#[test]
fn xss_catches_tags_and_handlers() {
    for s in [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "\"><svg onload=confirm(1)>",
        "<a href=\"javascript:alert(1)\">x</a>",
    ] {
        assert!(Xss.detect(s.as_bytes()), "{s}");
    }
}

#[test]
fn xss_passes_plain_text() {
    for s in [
        "a < b and c > d",
        "price=10",
        "https://example.com/a?b=c",
        "<b>bold</b>",
    ] {
        assert!(!Xss.detect(s.as_bytes()), "{s}");
    }
}

#[test]
fn fingerprint_is_reported_for_sqli() {
    assert!(Sqli.fingerprint(b"1' OR '1'='1").is_some());
    assert!(Sqli.fingerprint(b"hello").is_none());
}

#[test]
fn fuzz_seeds_never_panic() {
    for target in ["sqli_tokenizer", "xss_tokenizer"] {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/").to_string() + target;
        let entries = std::fs::read_dir(&dir).expect("seed directory exists");
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).expect("seed readable");
            let _ = Sqli.detect(&data);
            let _ = Xss.detect(&data);
        }
    }
}
