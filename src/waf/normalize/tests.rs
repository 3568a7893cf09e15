//! Decoder tests: each evasion technique is decoded and reported; clean input reports nothing.

use super::*;

fn pct(input: &str, passes: u32) -> (String, Vec<&'static str>) {
    let mut ev = Evasions::default();
    let out = decode_percent(input.as_bytes(), passes, &mut ev);
    (
        String::from_utf8_lossy(&out).into_owned(),
        ev.iter().map(Evasion::description).collect(),
    )
}

fn path(input: &str) -> (String, Vec<&'static str>) {
    let mut ev = Evasions::default();
    let out = normalize_path(input.as_bytes(), &mut ev);
    (
        String::from_utf8_lossy(&out).into_owned(),
        ev.iter().map(Evasion::description).collect(),
    )
}

#[test]
fn single_decoding_is_not_an_evasion() {
    assert_eq!(pct("a%20b%3Cc", 3), ("a b<c".into(), vec![]));
}

#[test]
fn double_encoding_is_decoded_and_reported() {
    assert_eq!(
        pct("%253Cscript%253E", 3),
        ("<script>".into(), vec!["Multiple decoding"])
    );
    // the pass limit is honoured
    assert_eq!(pct("%25253C", 2).0, "%3C");
    assert_eq!(pct("%25253C", 1), ("%253C".into(), vec![]));
}

#[test]
fn percent_u_and_fullwidth_are_decoded() {
    assert_eq!(pct("%u003cx", 2), ("<x".into(), vec!["%u decoding"]));
    let (s, e) = pct("%uFF0E%uFF0E/", 2);
    assert_eq!(s, "../");
    assert_eq!(e, vec!["%u decoding", "IIS Unicode codepoints"]);
}

#[test]
fn overlong_utf8_and_bare_bytes() {
    assert_eq!(
        pct("..%c0%af..%c0%af", 2),
        ("../../".into(), vec!["IIS Unicode codepoints"])
    );
    assert_eq!(pct("a%ffb", 2).1, vec!["Bare byte decoding"]);
    assert_eq!(pct("%c0%ee%c0%ee%c1%9c", 1).0, "..\\");
    // lax decoding to a path character wins over a strict overlong letter ('o')
    assert_eq!(
        pct("etc%c1%afpasswd", 1),
        ("etc/passwd".into(), vec!["IIS Unicode codepoints"])
    );
    // an overlong letter that is no path character stays a bare byte
    assert_eq!(pct("a%c1%a1b", 1).1, vec!["Bare byte decoding"]);
    assert_eq!(pct("caf%C3%A9", 2), ("café".into(), vec![]));
}

#[test]
fn bad_escapes_are_kept_and_reported() {
    assert_eq!(pct("100%zz", 2), ("100%zz".into(), vec!["Bad unescape"]));
    assert_eq!(pct("50%", 2), ("50%".into(), vec!["Bad unescape"]));
}

#[test]
fn path_normalisation_reports_each_technique() {
    assert_eq!(path("/a/b/c"), ("/a/b/c".into(), vec![]));
    assert_eq!(
        path("/a/./b/../c"),
        ("/a/c".into(), vec!["Directory traversals"])
    );
    assert_eq!(
        path("/../../etc/passwd"),
        ("/etc/passwd".into(), vec!["Directory traversals"])
    );
    assert_eq!(path("/a//b"), ("/a/b".into(), vec!["Multiple slashes"]));
    assert_eq!(path("\\a\\b"), ("/a/b".into(), vec!["IIS backslashes"]));
    assert_eq!(
        path("/a;jsessionid=1/b"),
        ("/a/b".into(), vec!["Semicolon path parameters"])
    );
    assert_eq!(path("/admin./x"), ("/admin/x".into(), vec!["Trailing dot"]));
    assert_eq!(path("/dir/"), ("/dir/".into(), vec!["Trailing slash"]));
    assert_eq!(path("/a\tb").1, vec!["Apache whitespace"]);
    assert_eq!(path("/").0, "/");
    assert_eq!(path("").0, "/");
}

#[test]
fn html_entities_decode() {
    assert_eq!(
        &*decode_html_entities(b"&lt;svg&#x20;onload&#61;alert&lpar;1&rpar;&gt;"),
        b"<svg onload=alert(1)>"
    );
    assert_eq!(&*decode_html_entities(b"&#0000106avascript"), b"javascript");
    assert_eq!(&*decode_html_entities(b"AT&T &unknown;"), b"AT&T &unknown;");
}

#[test]
fn json_escapes_decode_and_errors_are_named() {
    assert_eq!(
        unescape_json_string(br#"a\"b\u003cx\n"#).as_deref(),
        Ok(&b"a\"b<x\n"[..])
    );
    assert_eq!(
        unescape_json_string(br"\ud83d\ude00").as_deref(),
        Ok("😀".as_bytes())
    );
    assert!(unescape_json_string(br"\q").unwrap_err().contains("byte 0"));
    assert!(unescape_json_string(b"ab\\").is_err());
}

#[test]
fn deobfuscation_undoes_quote_and_comment_tricks() {
    assert_eq!(
        deobfuscate(b"c'a't /e''tc/pa\"\"sswd").as_deref(),
        Some(&b"cat /etc/passwd"[..])
    );
    assert_eq!(
        deobfuscate(b"un/**/ion sel/*x*/ect").as_deref(),
        Some(&b"un ion sel ect"[..])
    );
    assert_eq!(
        deobfuscate(b"c\\at /et\\c/passwd").as_deref(),
        Some(&b"cat /etc/passwd"[..])
    );
    assert_eq!(deobfuscate(b"plain text"), None);
    assert!(contains_nul(b"a\0b"));
    assert_eq!(&*fold_case(b"SeLeCt"), b"select");
}

#[test]
fn evasion_names_round_trip() {
    for e in Evasion::ALL {
        assert_eq!(Evasion::from_description(e.description()), Some(*e));
    }
    assert_eq!(Evasion::from_description("bogus"), None);
}

#[test]
fn fuzz_seeds_never_panic() {
    for target in [
        "decode_percent",
        "normalize_path",
        "decode_html",
        "unescape_json",
    ] {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/").to_string() + target;
        for e in std::fs::read_dir(&dir)
            .expect("seed directory exists")
            .flatten()
        {
            let data = std::fs::read(e.path()).expect("seed readable");
            let mut ev = Evasions::default();
            let _ = decode_percent(&data, 3, &mut ev);
            let _ = normalize_path(&data, &mut ev);
            let _ = decode_html_entities(&data);
            let _ = unescape_json_string(&data);
            let _ = deobfuscate(&data);
        }
    }
}
