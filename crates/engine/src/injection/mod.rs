//! SQL injection and XSS tokenizers in the style of libinjection, behind the [`Tokenizer`] trait.
//!
//! The implementation is `libinjectionrs` (a pure-Rust port of libinjection: SQL tokenizer with
//! fingerprint folding, HTML5 tokenizer for XSS). It is a young crate, so it sits behind a trait, is
//! gated by cheap checks (`precheck`: a value that cannot be flagged is never tokenized), is
//! size-capped, and has its own tests and fuzz targets here.

mod precheck;
pub(crate) mod prose;

use crate::normalize::ByteSet;

/// Longest prefix given to a tokenizer: libinjection's SQL fingerprint looks at the first five folded
/// tokens and its HTML tokenizer is linear, but the cap bounds time on huge bodies.
pub const MAX_TOKENIZE: usize = 64 * 1024;

/// An injection detector for one language.
pub trait Tokenizer: Sync {
    /// Whether `input` parses as an injection.
    fn detect(&self, input: &[u8]) -> bool;
    /// A short description of what matched (the SQL fingerprint), for logs.
    fn fingerprint(&self, input: &[u8]) -> Option<String>;
}

/// The SQL injection tokenizer (libinjection's fingerprint algorithm).
pub struct Sqli;
/// The XSS tokenizer (libinjection's HTML5 tokenizer in five contexts).
pub struct Xss;

fn cap(input: &[u8]) -> &[u8] {
    &input[..input.len().min(MAX_TOKENIZE)]
}

impl Tokenizer for Sqli {
    fn detect(&self, input: &[u8]) -> bool {
        precheck::sqli_candidate(input, &ByteSet::of(input)) && detect_sqli(input)
    }
    fn fingerprint(&self, input: &[u8]) -> Option<String> {
        let r = libinjectionrs::detect_sqli(cap(input));
        if r.is_injection() {
            r.fingerprint.map(|f| f.to_string())
        } else {
            None
        }
    }
}

impl Tokenizer for Xss {
    fn detect(&self, input: &[u8]) -> bool {
        precheck::xss_candidate(input, &ByteSet::of(input)) && detect_xss(input)
    }
    fn fingerprint(&self, _input: &[u8]) -> Option<String> {
        None
    }
}

fn detect_sqli(input: &[u8]) -> bool {
    let input = cap(input);
    libinjectionrs::detect_sqli(input).is_injection()
        && !javascript_function(input)
        && before_final_email(input).is_none_or(|b| libinjectionrs::detect_sqli(b).is_injection())
        && prose::blanked(input).is_none_or(|b| libinjectionrs::detect_sqli(&b).is_injection())
        && prose::prose_sentences(input).is_none_or(|pieces| {
            pieces
                .iter()
                .any(|p| libinjectionrs::detect_sqli(p).is_injection())
        })
}

/// What comes before an e-mail address that ends `input`, when one does; the tokenizer is asked
/// again about that part. libinjection reads `or@var.es` in `john or@var.es` as the operator
/// `or` and the MySQL user variable `@var.es`: the shape of an injection, and the shape of a
/// sentence that ends with an address. A user variable that ends the injected text adds nothing
/// that can be true (one that no earlier statement set is NULL, and a statement that set it
/// shows its `;` and `set` in the part before), so only a final address is set aside: followed by
/// `is null`, `=` or a comment, `@var.es` is still read as SQL. The address (its local part
/// included, which is where the `or` sits) must be of a mail address's own characters, so no
/// quote, space, bracket or comment can hide in what is set aside.
fn before_final_email(input: &[u8]) -> Option<&[u8]> {
    let s = input.trim_ascii_end();
    let at = memchr::memrchr(b'@', s)?;
    let domain = &s[at + 1..];
    let labels_ok = domain
        .split(|b| *b == b'.')
        .all(|l| !l.is_empty() && l.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-'));
    let tld = domain.rsplit(|b| *b == b'.').next().unwrap_or_default();
    if !labels_ok
        || !domain.contains(&b'.')
        || tld.len() < 2
        || !tld.iter().all(u8::is_ascii_alphabetic)
    {
        return None;
    }
    let local = s[..at]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-'))
        .count();
    if local == 0 {
        return None;
    }
    Some(&s[..at - local])
}

/// A value that is wholly a JavaScript function (`function(n){n.key===e&&t(n.value)}`, front-end
/// error reporters send handler source): libinjection reads `function` as a SQL keyword and `&&`,
/// `===` as operators, but no SQL statement or expression starts with `function(`. The value must
/// end with the body's `}`, so that the prefix alone does not excuse SQL appended after it (a
/// quote breakout inside the body is still found by the syntax signatures).
fn javascript_function(input: &[u8]) -> bool {
    let s = input.trim_ascii();
    if s.last() != Some(&b'}') {
        return false;
    }
    let Some(rest) = s
        .get(..8)
        .filter(|w| w.eq_ignore_ascii_case(b"function"))
        .map(|_| &s[8..])
    else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    let rest = if rest
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'$')
    {
        let n = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
            .count();
        rest[n..].trim_ascii_start()
    } else {
        rest
    };
    rest.first() == Some(&b'(') && memchr::memchr(b'{', rest).is_some()
}

fn detect_xss(input: &[u8]) -> bool {
    let input = cap(input);
    libinjectionrs::detect_xss(input).is_injection()
        && inert_markup_blanked(input)
            .is_none_or(|blanked| libinjectionrs::detect_xss(&blanked).is_injection())
}

/// `input` with the markup that cannot run script blanked out, when it has any; the tokenizer is
/// asked again about that copy. Shapes common in real traffic and flagged by libinjection on
/// their own: a plain document type declaration (`"Doctype":"<!DOCTYPE html>"` in session
/// recorders, whole pages saved by editors), which runs nothing (a declaration with an internal
/// subset `[`, or markup inside it, is left alone); bogus comments without an attribute value
/// ([`inert_bogus_comments`]); tags in a value with neither `>` nor `=`
/// (`binary<script is incorrect`, a search for `<script`), which can neither close a tag nor give
/// an attribute a value, so they cannot carry script; and inert `style` attributes
/// ([`inert_styles`]).
fn inert_markup_blanked(input: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    if memchr::memchr2(b'>', b'=', input).is_none() {
        let mut v = input.to_vec();
        v.iter_mut().filter(|b| **b == b'<').for_each(|b| *b = b' ');
        return Some(v);
    }
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&input[from..], b"<!").map(|i| i + from) {
        let decl = &input[at + 2..];
        let end = memchr::memchr(b'>', decl).map(|i| at + 2 + i + 1);
        from = at + 2;
        if decl.len() < 7 || !decl[..7].eq_ignore_ascii_case(b"doctype") {
            continue;
        }
        let end = end?;
        if input[at + 2..end].iter().any(|b| matches!(b, b'[' | b'<')) {
            return None;
        }
        out.get_or_insert_with(|| input.to_vec())[at..end].fill(b' ');
        from = end;
    }
    inert_bogus_comments(input, &mut out);
    for (at, end) in inert_styles(input) {
        out.get_or_insert_with(|| input.to_vec())[at..end].fill(b' ');
    }
    inert_svg(input, &mut out);
    inert_xml_declarations(input, &mut out);
    inert_head_tags(input, &mut out);
    out
}

/// Bogus comments: `<!` followed by neither `--`, `[` nor a document type, `<?`, `<%`, and `</`
/// followed by anything but a letter, which an HTML parser reads as a comment up to the next `>`
/// (or the end), whatever they hold. libinjection flags
/// one holding a backtick, which old Internet Explorer took for a quote; without an `=` or a
/// quote before the `>` there is no attribute value for it to open (random anti-bot sensor data
/// holds such runs: ``<%Q:@1i`?}1aph1]S1</MP_Yf…>``). `<?xml`, `<?import` and the rest keep their
/// own handling: they hold an `=`.
fn inert_bogus_comments(input: &[u8], out: &mut Option<Vec<u8>>) {
    let mut from = 0;
    while let Some(at) = memchr::memchr(b'<', &input[from..]).map(|i| i + from) {
        from = at + 1;
        let rest = &input[at + 1..];
        let bogus = match rest.first() {
            Some(b'?' | b'%') => true,
            Some(b'/') => rest.get(1).is_some_and(|b| !b.is_ascii_alphabetic()),
            Some(b'!') => {
                !rest[1..].starts_with(b"--")
                    && !rest[1..].starts_with(b"[")
                    && !rest[1..]
                        .get(..7)
                        .is_some_and(|d| d.eq_ignore_ascii_case(b"doctype"))
            }
            _ => false,
        };
        if !bogus {
            continue;
        }
        let end = memchr::memchr(b'>', rest).map_or(input.len(), |len| at + 1 + len + 1);
        if !input[at..end]
            .iter()
            .any(|b| matches!(b, b'=' | b'"' | b'\''))
        {
            out.get_or_insert_with(|| input.to_vec())[at..end].fill(b' ');
            from = end;
        }
    }
}

/// `<meta>` and `<link>` tags that cannot run script, pasted with a page's head or a snippet
/// (`<meta name="viewport" content="width=device-width">`, `<link rel="stylesheet"
/// href="/css/site.css">`): libinjection flags both tags by name. What makes them run script or
/// take over the page is an attribute (`http-equiv` refresh or cookies, a `charset`, which sets
/// the encoding the rest of the page is read in when it comes first, an event handler,
/// `rel=import`) or a URL to a script, data or another site; a tag with only
/// descriptive attributes and a same-site `href` is blanked in the copy.
fn inert_head_tags(input: &[u8], out: &mut Option<Vec<u8>>) {
    const META: [&[u8]; 5] = [b"name", b"content", b"property", b"itemprop", b"lang"];
    const LINK: [&[u8]; 11] = [
        b"rel",
        b"href",
        b"type",
        b"sizes",
        b"media",
        b"crossorigin",
        b"integrity",
        b"as",
        b"title",
        b"hreflang",
        b"color",
    ];
    let lower = input.to_ascii_lowercase();
    for at in memchr::memchr_iter(b'<', &lower) {
        let rest = &lower[at + 1..];
        let allowed: &[&[u8]] = if rest.starts_with(b"meta") {
            &META
        } else if rest.starts_with(b"link") {
            &LINK
        } else {
            continue;
        };
        let Some(len) = memchr::memchr(b'>', rest) else {
            continue;
        };
        let tag = &rest[4..len];
        if !tag.first().is_some_and(u8::is_ascii_whitespace) {
            continue;
        }
        if inert_attributes(tag, allowed) {
            out.get_or_insert_with(|| input.to_vec())[at..at + 1 + len + 1].fill(b' ');
        }
    }
}

/// Whether the attributes `tag` holds (lower case, between the tag name and `>`) are all among
/// `allowed`, with plain quoted or bare values that name no script, data or UTF-7, no import,
/// and no URL to another site.
fn inert_attributes(tag: &[u8], allowed: &[&[u8]]) -> bool {
    let mut i = 0;
    while i < tag.len() {
        let b = tag[i];
        if b.is_ascii_whitespace() || b == b'/' {
            i += 1;
            continue;
        }
        let n = tag[i..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
            .count();
        let name = &tag[i..i + n];
        if n == 0 || !allowed.contains(&name) {
            return false;
        }
        i += n;
        while tag.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if tag.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while tag.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let (value, next) = match tag.get(i) {
            Some(&q @ (b'"' | b'\'')) => match memchr::memchr(q, &tag[i + 1..]) {
                Some(e) => (&tag[i + 1..i + 1 + e], i + 1 + e + 1),
                None => return false,
            },
            _ => {
                let e = tag[i..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace())
                    .map_or(tag.len(), |e| i + e);
                (&tag[i..e], e)
            }
        };
        if value
            .iter()
            .any(|b| matches!(b, b'<' | b'>' | b'&' | b'\\' | b'`' | b'"' | b'\''))
            || [
                &b"script"[..],
                b"data:",
                b"utf-7",
                b"utf7",
                b"import",
                b"expression",
            ]
            .iter()
            .any(|w| memchr::memmem::find(value, w).is_some())
            || name == b"href" && !same_site(value)
        {
            return false;
        }
        i = next;
    }
    true
}

/// A relative URL (`/css/site.css`, `favicon.ico`): no scheme and not protocol-relative.
fn same_site(url: &[u8]) -> bool {
    let url = url.trim_ascii();
    !url.starts_with(b"//")
        && url
            .iter()
            .position(|b| matches!(b, b':' | b'/' | b'?' | b'#'))
            .is_none_or(|p| url[p] != b':')
}

/// XML declarations (`<?xml version="1.0" encoding="GBK"?>` in a logged API response, a saved
/// document): libinjection flags every `<?xml` for Internet Explorer's `<?xml:namespace …>` and
/// `<?import …>` behaviours, but a declaration is only `version`, `encoding` and `standalone`
/// with quoted values and runs nothing. Anything else after `<?xml` is left to the tokenizer.
fn inert_xml_declarations(input: &[u8], out: &mut Option<Vec<u8>>) {
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&input[from..], b"<?xml").map(|i| i + from) {
        from = at + 5;
        if let Some(len) = xml_declaration_len(&input[at..]) {
            out.get_or_insert_with(|| input.to_vec())[at..at + len].fill(b' ');
            from = at + len;
        }
    }
}

/// The length of the XML declaration `v` starts with (`<?xml`, white space, the three
/// pseudo-attributes with plain quoted values, `?>`), if it is one.
fn xml_declaration_len(v: &[u8]) -> Option<usize> {
    let space = |i: &mut usize| {
        let start = *i;
        while v.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
        *i > start
    };
    let mut i = b"<?xml".len();
    if !space(&mut i) {
        return None;
    }
    loop {
        if v[i..].starts_with(b"?>") {
            return Some(i + 2);
        }
        let name = v[i..].iter().take_while(|b| b.is_ascii_lowercase()).count();
        if !matches!(&v[i..i + name], b"version" | b"encoding" | b"standalone") {
            return None;
        }
        i += name;
        space(&mut i);
        if v.get(i) != Some(&b'=') {
            return None;
        }
        i += 1;
        space(&mut i);
        let quote = *v.get(i).filter(|q| matches!(**q, b'"' | b'\''))?;
        let text = v[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
            .count();
        if v.get(i + 1 + text) != Some(&quote) {
            return None;
        }
        i += text + 2;
        space(&mut i);
    }
}

/// Inline SVG icons (`<svg xmlns="http://www.w3.org/2000/svg" viewBox=…><path d=…/></svg>` in
/// a JSON config or a rich-text field): libinjection flags every `<svg` and every `xmlns`, but the
/// tag and the standard namespace declarations run nothing. What makes SVG run script (event
/// handlers, `<script>`, `href`/`xlink:href` to `javascript:`/`data:`, `<animate>`/`<set>` with
/// `to`/`values`, `<handler>`, other namespaces) is still flagged on its own in the copy, where
/// the tag is renamed and those declarations blanked.
fn inert_svg(input: &[u8], out: &mut Option<Vec<u8>>) {
    const NAMESPACES: [&[u8]; 2] = [
        b"xmlns=\"http://www.w3.org/2000/svg\"",
        b"xmlns:xlink=\"http://www.w3.org/1999/xlink\"",
    ];
    if memchr::memmem::find(input, b"<svg").is_none()
        && memchr::memmem::find(input, b"<SVG").is_none()
    {
        return;
    }
    let lower = input.to_ascii_lowercase();
    for at in memchr::memmem::find_iter(&lower, b"<svg") {
        if lower
            .get(at + 4)
            .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/'))
        {
            out.get_or_insert_with(|| input.to_vec())[at + 3] = b'h';
        }
    }
    // The declarations as written, or with their quotes escaped (markup inside a JSON string).
    for ns in NAMESPACES {
        let escaped: Vec<u8> = ns
            .iter()
            .flat_map(|b| {
                if *b == b'"' {
                    vec![b'\\', b'"']
                } else {
                    vec![*b]
                }
            })
            .collect();
        for form in [ns, &escaped[..]] {
            for at in memchr::memmem::find_iter(&lower, form) {
                out.get_or_insert_with(|| input.to_vec())[at..at + form.len()].fill(b' ');
            }
        }
    }
}

/// Spans of `style="…"` attributes whose CSS cannot reach script (no `expression(`, `url(`,
/// `behavior`, `-moz-binding`, `@import`, no CSS or character-reference escapes that could spell
/// them, no brackets or braces that break out of the declaration list): rich-text editors write them into every paragraph, and libinjection flags the attribute
/// by name.
fn inert_styles(input: &[u8]) -> Vec<(usize, usize)> {
    const SCRIPTABLE: [&[u8]; 9] = [
        b"expression",
        b"script",
        b"url",
        b"behavior",
        b"binding",
        b"import",
        b"\\",
        b"&#",
        b"/*",
    ];
    let lower = input.to_ascii_lowercase();
    let mut spans = Vec::new();
    for at in memchr::memmem::find_iter(&lower, b"style") {
        if at > 0
            && !matches!(
                lower[at - 1],
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'"' | b'\'' | b'/'
            )
        {
            continue;
        }
        let mut i = at + 5;
        while lower.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        if lower.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while lower.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        // Quoted, quoted with escaped quotes (markup inside a JSON or JS string), or bare.
        let (css, end) = match (lower.get(i), lower.get(i + 1)) {
            (Some(&q @ (b'"' | b'\'')), _) => match memchr::memchr(q, &lower[i + 1..]) {
                Some(close) => (&lower[i + 1..i + 1 + close], i + 1 + close + 1),
                None => continue,
            },
            (Some(b'\\'), Some(&q @ (b'"' | b'\''))) => {
                match memchr::memmem::find(&lower[i + 2..], &[b'\\', q]) {
                    Some(close) => (&lower[i + 2..i + 2 + close], i + 2 + close + 2),
                    None => continue,
                }
            }
            _ => {
                let end = lower[i..]
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b'>')
                    .map_or(lower.len(), |n| i + n);
                (&lower[i..end], end)
            }
        };
        if SCRIPTABLE
            .iter()
            .all(|w| memchr::memmem::find(css, w).is_none())
            && !css
                .iter()
                .any(|b| matches!(b, b'<' | b'[' | b']' | b'{' | b'}'))
        {
            spans.push((at, end));
        }
    }
    spans
}

/// Whether the SQL tokenizer could flag `input` at all (its pre-check); `present` is `ByteSet::of(input)`.
pub fn sqli_candidate(input: &[u8], present: &ByteSet) -> bool {
    precheck::sqli_candidate(input, present)
}

/// Whether the XSS tokenizer could flag `input` at all (its pre-check, exact in that direction).
pub fn xss_candidate(input: &[u8], present: &ByteSet) -> bool {
    precheck::xss_candidate(input, present)
}

pub use precheck::{sql_free_below, xss_free_below};

/// SQL injection check used by the signature database; `present` is `ByteSet::of(input)`.
pub fn is_sqli(input: &[u8], present: &ByteSet) -> bool {
    precheck::sqli_candidate(input, present) && detect_sqli(input)
}

/// XSS check used by the signature database; `present` is `ByteSet::of(input)`.
pub fn is_xss(input: &[u8], present: &ByteSet) -> bool {
    precheck::xss_candidate(input, present) && detect_xss(input)
}

#[cfg(test)]
mod tests;
