//! Decoder tests: each evasion technique is decoded and reported; clean input reports nothing.

use super::text::deobfuscate_every_step;
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
    assert_eq!(
        unescape_json_string(br"\q").unwrap_err().to_string(),
        r"invalid escape \q at byte 0"
    );
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
    assert_eq!(
        deobfuscate(b"c$!at /et$_c/pas$?swd").as_deref(),
        Some(&b"cat /etc/passwd"[..])
    );
    assert_eq!(
        decode_js_escapes(br"this['\145\166\141\154'](\u{61}\u{006c}ert)").as_deref(),
        Some(&b"this['eval'](alert)"[..])
    );
    // A control character's escape with its digits unpadded (`\u00a`) is read where the next
    // escape or the end shows that no digit is missing; followed by other text it is not.
    assert_eq!(
        decode_js_escapes(br"\u0031\u00a\u0069\u0064\u0009\u00d").as_deref(),
        Some(&b"1\nid\t\r"[..])
    );
    assert_eq!(decode_js_escapes(br"\u00ax \u00"), None);
    // Quoted fragments glued to a word, and empty command substitutions, join the word.
    assert_eq!(
        deobfuscate(b"'c'url x; \"wh\"oami; ti''me; wh``oami; who$()ami; 'ab'").as_deref(),
        Some(&b"curl x; whoami; time; whoami; whoami; 'ab'"[..])
    );
    // An unset variable in braces inside a word joins it; a placeholder between words stays.
    assert_eq!(
        deobfuscate(b";wh${x}oami;c${u_1}at;echo${IFS}x").as_deref(),
        Some(&b";whoami;cat;echo${IFS}x"[..])
    );
    assert_eq!(deobfuscate(b"Hello ${user}, total ${sum}."), None);
    // Not between two word characters, `$()` is left for the signatures that read it.
    assert_eq!(deobfuscate(b"f $() x"), None);
    // A quoted word followed by a space, or a fragment longer than a command word, stays.
    assert_eq!(deobfuscate(b"say 'hello' now"), None);
    assert_eq!(deobfuscate(b"```\nfn main() {}\n```"), None);
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
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/seeds/").to_string() + target;
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

/// Deterministic pseudo-random values over a small alphabet, for the equivalence tests below.
fn random_values<'a>(alphabet: &'a [&'a [u8]], count: usize) -> impl Iterator<Item = Vec<u8>> + 'a {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    (0..count).map(move |_| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut s = seed;
        let mut v = Vec::new();
        for _ in 0..(seed % 24) {
            v.extend_from_slice(alphabet[(s % alphabet.len() as u64) as usize]);
            s = s.rotate_right(5) ^ seed;
        }
        v
    })
}

/// `base64_text` decodes as it goes and stops early; it must agree with the base64 crate's
/// strict decoders (standard, then URL-safe, no padding, no trailing bits) and the 95% rule.
#[test]
fn base64_text_agrees_with_the_base64_crate() {
    use base64::Engine as _;
    fn reference(value: &[u8]) -> Option<Vec<u8>> {
        let respace = value.contains(&b' ') && !value.starts_with(b" ");
        let trimmed = value
            .strip_suffix(b"==")
            .or_else(|| value.strip_suffix(b"="))
            .unwrap_or(value);
        if trimmed.len() < 6 || trimmed.len() > 8192 || trimmed.len() % 4 == 1 {
            return None;
        }
        let ok =
            |b: &u8| b.is_ascii_alphanumeric() || b"+/-_".contains(b) || (respace && *b == b' ');
        if !trimmed.iter().all(ok) {
            return None;
        }
        let t: Vec<u8> = if respace {
            trimmed
                .iter()
                .map(|&b| if b == b' ' { b'+' } else { b })
                .collect()
        } else {
            trimmed.to_vec()
        };
        let d = base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(&t)
            .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&t))
            .ok()?;
        let printable: usize = d
            .utf8_chunks()
            .flat_map(|c| c.valid().chars())
            .filter(|&c| !c.is_control() || matches!(c, '\t' | '\r' | '\n'))
            .map(char::len_utf8)
            .sum();
        (printable * 100 >= d.len() * 95 && !d.is_empty()).then_some(d)
    }
    let alphabet: &[&[u8]] = &[
        b"YWxl", b"cnQo", b"MSk=", b"PHNj", b"cmlw", b"dD4", b"A", b"Q", b"w", b"g", b"+", b"/",
        b"-", b"_", b" ", b"=", b"==", b"Zm9v", b"YmFy", b"//8", b"AA", b"x", b"9", b"%", b"5Ziu",
        b"wqA", b"wpA", b"7aCA", b"4KCA", b"8J+Y", b"gA", b"77+9",
    ];
    let mut decoded = 0;
    for v in random_values(alphabet, 200_000) {
        let got = base64_text(&v);
        assert_eq!(got, reference(&v), "{:?}", String::from_utf8_lossy(&v));
        decoded += usize::from(got.is_some());
    }
    assert!(
        decoded > 1000,
        "the values must reach the decoder: {decoded}"
    );
}

/// `deobfuscate` skips values no step would change; what it returns must not depend on that.
#[test]
fn deobfuscate_skips_only_values_it_would_not_change() {
    let alphabet: &[&[u8]] = &[
        b"&", b"&#60;", b"&#x3c", b"&lt;", b"&amp", b"&bogus;", b"#", b"x", b"'", b"\"", b"\\",
        b"^", b"$", b"$@", b"+", b" ", b"/*", b"*/", b"a", b"1", b"/", b"\\u0041", b"\\x41", b";",
        b"`", b"${x}", b"{", b"}",
    ];
    let mut skipped = 0;
    for v in random_values(alphabet, 200_000) {
        let full = deobfuscate_every_step(&v);
        assert_eq!(deobfuscate(&v), full, "{:?}", String::from_utf8_lossy(&v));
        // The views skip it by the value's bytes alone.
        if !views::may_deobfuscate(&ByteSet::of(&v)) {
            assert_eq!(full, None, "{:?}", String::from_utf8_lossy(&v));
            skipped += 1;
        }
    }
    assert!(
        skipped > 1000,
        "values without triggers must occur: {skipped}"
    );
}

/// Long values take the block-wise quote check: quotes at every place of a block (its first and
/// last bytes included) and across block edges must be judged as the short path judges them.
#[test]
fn deobfuscate_judges_quotes_in_long_values_as_in_short_ones() {
    let alphabet: &[&[u8]] = &[b"'", b"\"", b"a", b"1", b" ", b":", b",", b"{", b"x"];
    let filler = b"{\"name\":\"Product number 1\",\"tags\":[\"home\",\"garden\"]},".repeat(2);
    for (k, tail) in random_values(alphabet, 20_000).enumerate() {
        let mut v = filler[..k % filler.len()].to_vec();
        v.extend_from_slice(&tail);
        v.extend_from_slice(&filler[..(k * 7) % filler.len()]);
        assert_eq!(
            deobfuscate(&v),
            deobfuscate_every_step(&v),
            "{:?}",
            String::from_utf8_lossy(&v)
        );
    }
}

/// The de-obfuscation passes as first written, byte by byte: the run-copying passes of `rewrite`
/// must produce the same text.
fn rewrite_byte_by_byte(value: &[u8]) -> Vec<u8> {
    let mut v = decode_html_entities(value).into_owned();
    if !v.contains(&b' ') && v.iter().filter(|&&b| b == b'+').count() >= 2 {
        v.iter_mut().filter(|b| **b == b'+').for_each(|b| *b = b' ');
    }
    if v.windows(2).any(|w| w == b"/*") {
        let (mut out, mut i) = (Vec::new(), 0);
        while i < v.len() {
            if v[i] == b'/' && v.get(i + 1) == Some(&b'*') {
                let end = v[i + 2..].windows(2).position(|w| w == b"*/");
                out.push(b' ');
                i = end.map_or(v.len(), |p| i + 2 + p + 2);
                continue;
            }
            out.push(v[i]);
            i += 1;
        }
        v = out;
    }
    let (mut out, mut i) = (Vec::new(), 0);
    while i < v.len() {
        let (b, next) = (v[i], v.get(i + 1).copied());
        let alnum = |n: Option<u8>| n.is_some_and(|n| n.is_ascii_alphanumeric());
        match b {
            b'\\' | b'^' if alnum(next) || next == Some(b'/') => {}
            b'$' if matches!(next, Some(b'@' | b'*'))
                || (i > 0
                    && alnum(Some(v[i - 1]))
                    && matches!(next, Some(b'!' | b'?' | b'-' | b'_' | b'$' | b'#'))
                    && (alnum(v.get(i + 2).copied()) || v.get(i + 2) == Some(&b'/')))
                || (alnum(next) && !alnum(v.get(i + 2).copied())) =>
            {
                i += 1
            }
            b'\'' | b'"' if next == Some(b) => i += 1,
            b'`' if next == Some(b'`')
                && i > 0
                && alnum(Some(v[i - 1]))
                && alnum(v.get(i + 2).copied()) =>
            {
                i += 1
            }
            b'\'' | b'"' if i > 0 && alnum(Some(v[i - 1])) && alnum(next) => {}
            b'\'' | b'"'
                if (i == 0 || !alnum(Some(v[i - 1]))) && {
                    let n = v[i + 1..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .count();
                    (1..=8).contains(&n)
                        && v.get(i + 1 + n) == Some(&b)
                        && alnum(v.get(i + 2 + n).copied())
                } => {}
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

#[test]
fn rewrite_copies_runs_as_the_byte_by_byte_passes_did() {
    let alphabet: &[&[u8]] = &[
        // No octal digit: `\NNN` is a JS escape, decoded before these steps.
        b"/*", b"*/", b"/", b"*", b"'", b"\"", b"\\", b"^", b"$", b"$@", b"a", b"9", b" ", b"+",
        b"&lt;", b";", b"!", b"?", b"-", b"_", b"#", b"`",
    ];
    for v in random_values(alphabet, 200_000) {
        let expected = rewrite_byte_by_byte(&v);
        let got = deobfuscate_every_step(&v).unwrap_or_else(|| v.clone());
        assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(&v));
    }
}

/// A value of an alphabet shorter than `views_free_below` gets no inspection views.
#[test]
fn values_below_the_views_bound_have_no_views() {
    let words = ByteSet::EMPTY
        .with_range(b'0', b'9')
        .with_range(b'a', b'z')
        .with_range(b'A', b'Z');
    let plain = words.or(&ByteSet::from_bytes(b"-_. ,:/="));
    let alphabet: &[&[u8]] = &[
        b"a", b"Z", b"7", b"q", b"x", b"-", b"_", b".", b" ", b",", b":", b"/", b"=",
    ];
    let below = views_free_below(&plain, false);
    assert!(below > 1 && views_free_below(&plain, true) == 0);
    assert_eq!(views_free_below(&ByteSet::from_bytes(b"a%"), false), 0);
    assert_eq!(views_free_below(&ByteSet::from_bytes(b"a&;"), false), 0);
    let mut checked = 0;
    for v in random_values(alphabet, 50_000).filter(|v| v.len() < below) {
        let views = inspection_views(&v, &ByteSet::of(&v), false);
        assert!(
            views.is_empty(),
            "{:?}: {views:?}",
            String::from_utf8_lossy(&v)
        );
        checked += 1;
    }
    assert!(checked > 1000, "{checked}");
    // A path's segments are tried as base64 wherever they are, not only the last.
    let path = b"/api/v2/JHtqbmRpOmRuczovL3h9/items/42";
    let views = inspection_views(path, &ByteSet::of(path), true);
    assert!(views.iter().any(|v| v == b"${jndi:dns://x}"), "{views:?}");
    // At the bound, base64 takes over.
    assert!(!inspection_views(b"PHNjcmlwdD4=", &ByteSet::of(b"PHNjcmlwdD4="), false).is_empty());
}

/// An encoded value is also seen with only its encoding undone: the shell-quoting pass of the
/// de-obfuscated view would drop the `$x` of a Velocity template or the `\` of a redirect.
#[test]
fn encoded_values_are_seen_decoded_without_the_shell_pass() {
    let views = |v: &[u8]| inspection_views(v, &ByteSet::of(v), false);
    let entities: String = "#set($x=7*7)$x"
        .chars()
        .map(|c| format!("&#{};", c as u32))
        .collect();
    assert!(views(entities.as_bytes()).contains(&b"#set($x=7*7)$x".to_vec()));
    let escaped: String = "/\\evil.com"
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect();
    assert!(views(escaped.as_bytes()).contains(&b"/\\evil.com".to_vec()));
    assert_eq!(decoded_text(b"plain $x text"), None);
    // Base64 whose padding was percent-encoded, as cookies carry it.
    assert!(views(b"eyB7ezcqN319IH0%3D").contains(&b"{ {{7*7}} }".to_vec()));
    // Percent-encoding under HTML references and base64.
    assert!(views(b"&#47;&#37;&#48;&#57;&#47;evil.com").contains(&b"/\t/evil.com".to_vec()));
    assert!(views(b"LyUwOS9ldmlsLmNvbQ==").contains(&b"/\t/evil.com".to_vec()));
}

#[test]
fn form_encoded_header_and_cookie_values_are_seen_with_their_spaces() {
    let views = |v: &[u8]| inspection_views(v, &ByteSet::of(v), false);
    // `quote_plus` of `;uname -a` and of an escaped tag, as a cookie or a custom header carries it.
    assert!(views(b"%3Buname+-a").contains(&b";uname -a".to_vec()));
    assert!(views(b"%26lt%3Bimg+src%3Dx%26gt%3B").contains(&b"&lt;img src=x&gt;".to_vec()));
    // An encoded plus stays a plus; a value with a space is not form-encoded.
    assert!(views(b"a%2Bb+c").contains(&b"a+b c".to_vec()));
    assert!(!views(b"a+b %3B").iter().any(|v| v == b"a b ;"));
}

#[test]
fn short_commands_in_base64_are_decoded_and_short_words_are_not() {
    assert_eq!(base64_text(b"fCBpZA=="), Some(b"| id".to_vec()));
    assert_eq!(base64_text(b"JTBBaWQ="), Some(b"%0Aid".to_vec()));
    // Text around non-ASCII characters is text too; random bytes seldom form UTF-8.
    assert_eq!(
        base64_text(b"5ZiNU2V0LWNvb2tpZTpjcmxmPWluamVjdGlvbg"),
        Some("嘍Set-cookie:crlf=injection".as_bytes().to_vec())
    );
    assert_eq!(base64_text(b"wpDCkMKQ"), None, "C1 controls are not text");
    for word in [&b"search"[..], b"mobile", b"en_US", b"abc123", b"Chrome"] {
        assert_eq!(base64_text(word), None, "{}", String::from_utf8_lossy(word));
    }
}

#[test]
fn words_split_by_tags_are_joined_under_other_encodings() {
    let views = |v: &[u8]| inspection_views(v, &ByteSet::of(v), false);
    let joined = br#"\"autofocus onfocus=alert<x>(1)//"#.to_vec();
    // Base64 of `\"autof<x>ocus o<x>nfocus=alert<x>(1)//`, then the same with HTML references
    // and with JavaScript escapes.
    assert!(views(b"XCJhdXRvZjx4Pm9jdXMgbzx4Pm5mb2N1cz1hbGVydDx4PigxKS8v").contains(&joined));
    assert!(
        views(br#"\&quot;autof&lt;x&gt;ocus o&lt;x&gt;nfocus=alert&lt;x&gt;(1)//"#)
            .contains(&joined)
    );
    assert!(
        views(br"autof\u003cx\u003eocus o\u003cx\u003enfocus=alert(1)")
            .contains(&b"autofocus onfocus=alert(1)".to_vec())
    );
    // Markup that splits no word (base64 of `<b>bold</b> and <i>x</i>`) keeps its tags.
    let b = b"PGI+Ym9sZDwvYj4gYW5kIDxpPng8L2k+";
    let seen = views(b);
    assert!(seen.contains(&b"<b>bold</b> and <i>x</i>".to_vec()));
    assert!(!seen.iter().any(|v| v.starts_with(b"bold")), "{seen:?}");
}
