//! Tokenizer tests: classic injections are caught, ordinary text is not, seeds never panic.

use super::*;
use crate::test_support::assert_judges;

#[test]
fn sqli_catches_classic_shapes_and_passes_prose() {
    assert_judges(
        |v| Sqli.detect(v),
        &[
            b"1' OR '1'='1",
            b"1 OR 1=1--",
            b"x' UNION SELECT username, password FROM users--",
            b"1; DROP TABLE accounts",
            b"admin'--",
            b"1) AND SLEEP(5)#",
        ],
        &[
            b"hello world",
            b"john.doe@example.com",
            b"2024-01-05",
            b"Union Square, New York",
            b"select a size",
            b"42",
            b"O'Brien",
        ],
    );
}

#[test]
fn an_address_that_ends_a_value_is_not_read_as_a_user_variable() {
    assert_judges(
        |v| Sqli.detect(v),
        &[
            b"admin' or@a.bc is null-- ",
            b"' or 1=1 -- bob@example.com",
            b"1' or@x.io=@x.io#",
            b"x' or 1=1 or@x.io",
        ],
        &[
            b"john or@var.es",
            b"write to sales and@example.com ",
            b"Tom or@x.io",
        ],
    );
}

#[test]
fn xss_catches_tags_and_handlers_and_passes_plain_text() {
    assert_judges(
        |v| Xss.detect(v),
        &[
            b"<script>alert(1)</script>",
            b"<img src=x onerror=alert(1)>",
            b"\"><svg onload=confirm(1)>",
            b"<a href=\"javascript:alert(1)\">x</a>",
        ],
        &[
            b"a < b and c > d",
            b"price=10",
            b"https://example.com/a?b=c",
            b"<b>bold</b>",
        ],
    );
}

#[test]
fn fingerprint_is_reported_for_sqli() {
    assert!(Sqli.fingerprint(b"1' OR '1'='1").is_some());
    assert!(Sqli.fingerprint(b"hello").is_none());
}

#[test]
fn fuzz_seeds_never_panic() {
    for target in ["sqli_tokenizer", "xss_tokenizer"] {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/").to_string() + target;
        let entries = std::fs::read_dir(&dir).expect("seed directory exists");
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).expect("seed readable");
            let _ = Sqli.detect(&data);
            let _ = Xss.detect(&data);
        }
    }
}

/// The bounds below which a value of an alphabet is never a candidate hold for every value that
/// short (all of them, over letters, digits and `_`; single bytes for the others), and the
/// tokenizers' pre-checks reject what the bounds say they reject.
#[test]
fn candidate_free_bounds_hold_for_every_short_value() {
    let digits = ByteSet::EMPTY.with_range(b'0', b'9');
    let words = digits.with_range(b'a', b'z').with_range(b'A', b'Z');
    let alphabets = [
        digits,
        words,
        words.or(&ByteSet::from_bytes(b"_")),
        words.or(&ByteSet::from_bytes(b"-_.")),
        words.or(&ByteSet::from_bytes(b"-_. ,:/")),
        ByteSet::from_bytes(b"'a"),
    ];
    for alphabet in alphabets {
        let bytes: Vec<u8> = alphabet.iter().collect();
        let below = sql_free_below(&alphabet);
        let mut values: Vec<Vec<u8>> = vec![Vec::new()];
        let mut all: Vec<Vec<u8>> = Vec::new();
        for _ in 1..below.min(4) {
            values = values
                .iter()
                .flat_map(|v| bytes.iter().map(move |&b| [&v[..], &[b]].concat()))
                .collect();
            all.extend(values.iter().cloned());
        }
        if below == usize::MAX {
            all.extend((0..2000u64).map(|i| (i * 7919).to_string().repeat(3).into_bytes()));
        }
        for v in &all {
            let present = ByteSet::of(v);
            assert!(
                !sqli_candidate(v, &present),
                "{:?}",
                String::from_utf8_lossy(v)
            );
            if xss_free_below(&alphabet) > v.len() {
                assert!(
                    !xss_candidate(v, &present),
                    "{:?}",
                    String::from_utf8_lossy(v)
                );
            }
        }
    }
    // The bounds are tight where they matter: the shortest strong words are candidates.
    let words = ByteSet::EMPTY.with_range(b'a', b'z');
    assert_eq!(sql_free_below(&words), 4);
    assert!(sqli_candidate(b"exec", &ByteSet::of(b"exec")));
    assert!(sqli_candidate(b"--", &ByteSet::of(b"--")));
    assert_eq!(xss_free_below(&ByteSet::from_bytes(b"a=")), 0);
}

/// Markup that cannot run script is not XSS on its own; with script next to it, it still is.
#[test]
fn inert_markup_alone_is_not_xss() {
    use crate::injection::{Tokenizer, Xss};
    assert_judges(
        |v| Xss.detect(v),
        &[
            b"<!DOCTYPE html><script>alert(1)</script>",
            b"<!DOCTYPE html><img src=x onerror=alert(1)>",
            b"<svg onload=alert(1)",
            b"<script>alert(1)",
            b"<div style=\"width: expression(alert(1))\">",
            b"<div style=\"background:url(javascript:alert(1))\">",
            b"<p style=\"color:red\" onmouseover=\"alert(1)\">x</p>",
            b"<p style=x:\\65xpression(alert(1))>",
            b"<!DOCTYPE x [<!ENTITY a \"b\">]><script>alert(1)</script>",
            b"<?xml:namespace prefix=\"t\" ns=\"urn:schemas-microsoft-com:time\">",
            b"<?import namespace=\"t\" implementation=\"#default#time2\">",
            b"<?xml version=\"1.0\"?><script>alert(1)</script>",
            b"<?xml version=\"1.0\" onload=\"alert(1)\"?>",
            b"<!a foo=x=`y><img alt=\"`><img src=x:x onerror=alert(2)//\">",
            b"<!-- `<img/src=xx:xx onerror=alert(1)//--!>",
        ],
        &[
            b"{\"Doctype\":\"<!DOCTYPE html>\",\"Url\":\"https://builder.io/signup\"}",
            b"<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\"><p>hi</p>",
            b"for power, binary<script is incorrect",
            b"1<script",
            b"<p></p><h2 class=\"tea-h2\"><span style=\"background-color: rgb(255, 0, 0);\">notice</span></h2>",
            b"<p style=\"font-family: &quot;Microsoft YaHei&quot;; white-space: normal;\">hello</p>",
            b"req url: https://h.example.cn/cgi \nres data: <?xml version=\"1.0\" encoding=\"GBK\"?> \n<qzone>\n<result type=\"0\">\n<message></message>\n</result>\n</qzone>",
            b"<?xml version='1.0' standalone='yes'?><note><to>Tove</to></note>",
            b"!*IM[f~i_5ks<!Tg61i^%XktY7DI~:sA S5I$/5$`r+m2#V_@L6yM+:V-}-lRk]M;^E!i&`DBsOxSw*rj0F+ddTQBO9@}[|>3;Ec8kY",
            b"F8KeJ{zXaMUB)mBd)yk*.d;zXL!t<%Q:@1i`?}1aph1]S1</MP_YfJJm951f)mKI,/+~_Kn4CGoA5s!*IM[f~i_5ksoK_L?G0/0!db%QRc7hikvt4?]s~uh3-8Go>6u%{.{($AwFMi4",
            b">:9FRaP(RzIeGh05p)SD3</[B)`Pink#8vrelyzwa,N P@Y0:XiU2.ew@34m ,8T/QrPp;MXRO)*",
        ],
    );
}

/// JavaScript function source is not SQL, whatever its operators.
#[test]
fn javascript_function_source_is_not_sqli() {
    use crate::injection::{Sqli, Tokenizer};
    assert!(!Sqli.detect(b"function(n){n.key===e&&t(n.value)}"));
    assert!(Sqli.detect(b"1' or '1'='1"));
    assert!(Sqli.detect(b"1) or (select 1 from function(x))--"));
    assert!(Sqli.detect(b"function(){}' or 1=1--"));
}

#[test]
fn a_semicolon_before_prose_separates_no_statements() {
    assert_judges(
        |v| Sqli.detect(v),
        &[
            b"1; DROP TABLE accounts",
            b"1 union select 1,2; thanks all",
            b"We use cookies; select 1",
        ],
        &[
            b"We use cookies; expires after 30 days",
            b"We use analytics; cookies expire after 1 year",
        ],
    );
}
