//! Quotes that are punctuation of text rather than SQL string delimiters: quotation marks around
//! a word or phrase (`"LIKE" STAMP`, `she said 'yes'`), apostrophes inside a word (`I'll`,
//! `D'APPLICATIONS`), inch and foot marks after a number (`36" X 48" FRAME`, `8.5X11"-300`).
//!
//! An SQL injection through a quote needs that quote to close the literal the value lands in and
//! SQL to continue after it (`x' OR 1=1--`, `" UNION SELECT`): the breakout quote is followed
//! by white space, an operator or a comment, or is unpaired. A quotation mark is paired, opens at
//! a word's start and closes at a word's end, holds no SQL punctuation and is followed by text,
//! not by a comparison; an apostrophe or an inch mark sits between a word and more text. Read as
//! SQL these make strings compared with nothing, which selects what the query selected anyway.
//! The tokenizer is asked again about a copy with such quotes blanked (what is left must still
//! be SQL), and the quote-breakout signatures do not count in a value all of whose quotes are
//! such punctuation (`unless: prose`).

/// Words after which a quote is an SQL continuation, not text: a quote next to one of them is
/// never taken for punctuation.
const SQL_WORDS: [&[u8]; 40] = [
    b"or",
    b"and",
    b"xor",
    b"not",
    b"union",
    b"select",
    b"like",
    b"rlike",
    b"is",
    b"in",
    b"div",
    b"mod",
    b"order",
    b"group",
    b"having",
    b"limit",
    b"where",
    b"from",
    b"into",
    b"sleep",
    b"between",
    b"regexp",
    b"exec",
    b"execute",
    b"declare",
    b"drop",
    b"insert",
    b"update",
    b"delete",
    b"waitfor",
    b"procedure",
    b"collate",
    b"sounds",
    b"glob",
    b"null",
    b"case",
    b"when",
    b"then",
    b"set",
    b"values",
];

fn is_letter(b: u8) -> bool {
    b.is_ascii_alphabetic() || b >= 0x80
}

/// The run of letters (ASCII or any non-ASCII byte) starting at `at` going forwards, or ending
/// just before `at` going backwards.
fn word_after(v: &[u8], at: usize) -> &[u8] {
    let n = v[at..].iter().take_while(|b| is_letter(**b)).count();
    &v[at..at + n]
}

fn word_before(v: &[u8], at: usize) -> &[u8] {
    let n = v[..at].iter().rev().take_while(|b| is_letter(**b)).count();
    &v[at - n..at]
}

fn sql_word(w: &[u8]) -> bool {
    SQL_WORDS.iter().any(|k| k.eq_ignore_ascii_case(w))
}

/// Whether the text from `at` on continues as SQL after a quote: its first non-blank byte is an
/// operator, comment, statement end or bracket, or its first word is an SQL word.
fn sql_follows(v: &[u8], at: usize) -> bool {
    let rest = v[at..].trim_ascii_start();
    match rest.first() {
        None => false,
        Some(b) if b"=<>!|&;#(+*/%^~-\\@`'\"".contains(b) => true,
        Some(_) => sql_word(word_after(rest, 0)),
    }
}

/// The position past the closing brackets and blanks from `at` on: a mark is judged by what
/// follows them, since a quote that closes a literal and then the call or subquery around it
/// (`1');`, `7'))--`) goes on as SQL there, where a size in brackets (`(36")`) ends.
fn after_closers(v: &[u8], at: usize) -> usize {
    at + v[at..]
        .iter()
        .take_while(|b| matches!(b, b')' | b' ' | b'\t'))
        .count()
}

/// Whether the text before `at` ends, after blanks, with an operator (the quote at `at` would
/// start an operand compared or computed with). After a word (`said 'yes' and 'no'`) a
/// quotation is text; as SQL it would be a string on its own, which selects nothing more.
fn sql_precedes(v: &[u8], at: usize) -> bool {
    let before = v[..at].trim_ascii_end();
    before
        .last()
        .is_some_and(|b| b"=<>!|&;#+*/%^~-\\@`".contains(b))
}

/// The positions of the quotes of `v` that are text punctuation (see the module comment), and
/// whether every `'` and `"` of `v` is one.
pub fn prose_quotes(v: &[u8]) -> (Vec<usize>, bool) {
    let mut prose = Vec::new();
    let mut all = true;
    let mut i = 0;
    while i < v.len() {
        let q = v[i];
        if q != b'\'' && q != b'"' {
            i += 1;
            continue;
        }
        let prev = i.checked_sub(1).map(|p| v[p]);
        let next = v.get(i + 1).copied();
        // An apostrophe inside a word: `I'll`, `O'Reilly`, `L'ÉTÉ`.
        if q == b'\''
            && prev.is_some_and(is_letter)
            && next.is_some_and(is_letter)
            && !sql_word(word_before(v, i))
            && !sql_word(word_after(v, i + 1))
        {
            prose.push(i);
            i += 1;
            continue;
        }
        // An inch or foot mark after a number: `36" X 48"`, `8.5X11"-300`, `5'11"`.
        if prev.is_some_and(|b| b.is_ascii_digit())
            && !quoted_number(v, i)
            && next.is_none_or(|b| b" \t-)],/xX.".contains(&b) || b.is_ascii_digit())
            && !v[i + 1..].starts_with(b"--")
            // A range of sizes (`11"-300`) goes on with a number, not an operator.
            && (v[i + 1..].starts_with(b"-") && v.get(i + 2).is_some_and(u8::is_ascii_digit)
                || !sql_follows(v, after_closers(v, i + 1)))
        {
            prose.push(i);
            i += 1;
            continue;
        }
        // A quotation mark pair around a word or phrase.
        if let Some(close) = quotation_close(v, i) {
            prose.push(i);
            prose.push(close);
            i = close + 1;
            continue;
        }
        all = false;
        i += 1;
    }
    let any = !prose.is_empty();
    (prose, all && any)
}

/// Whether the number ending just before the quote at `at` starts right after a quote (`'1'`,
/// `-'1',`) that is not itself a foot mark: then the quote closes a quoted number, it is no
/// inch mark.
fn quoted_number(v: &[u8], at: usize) -> bool {
    let n = v[..at]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit() || matches!(b, b'.' | b'x' | b'X'))
        .count();
    // A foot mark before the inches (`5'11"`) is no opening quote.
    let foot = at > n + 1 && v[at - n - 2].is_ascii_digit();
    at > n && matches!(v[at - n - 1], b'\'' | b'"' | b'`') && !foot
}

/// Whether a text in single quotes is only SQL: operator words (`'OR'`, `'NOT LIKE'`) or
/// operator symbols (`'&&'`, `'%'`). Between empty strings such a text is the implicit
/// conversion trick (`''REGEXP''` is true for every row); a product title's quotation is in
/// double quotes, which every SQL dialect but MySQL's default reads as an identifier.
fn only_sql(text: &[u8]) -> bool {
    text.split(|b| !is_letter(*b))
        .filter(|w| !w.is_empty())
        .all(|w| {
            sql_word(w) || w.eq_ignore_ascii_case(b"regexp") || w.eq_ignore_ascii_case(b"rlike")
        })
}

/// The closing quote of a quotation that opens at `open`, if the quote there opens one: at a
/// word's start (after the value's start, a blank or an opening bracket, and not after an
/// operator or SQL word), round a text that does not start with a digit (a number in quotes is
/// a number to SQL) and holds no quote, backslash or SQL punctuation, closed at a word's end by
/// the same quote, and followed by the end, a blank or closing punctuation and then no
/// operator.
fn quotation_close(v: &[u8], open: usize) -> Option<usize> {
    let q = v[open];
    if open > 0 && !v[open - 1].is_ascii_whitespace() {
        return None;
    }
    if sql_precedes(v, open) {
        return None;
    }
    let first = *v.get(open + 1)?;
    if first.is_ascii_whitespace() || first.is_ascii_digit() || first == q {
        return None;
    }
    // An apostrophe inside a word (`I'll`) does not close a quotation in single quotes.
    let close = (open + 1..v.len()).find(|&j| {
        v[j] == q
            && !(q == b'\'' && is_letter(v[j - 1]) && v.get(j + 1).is_some_and(|b| is_letter(*b)))
    })?;
    let text = &v[open + 1..close];
    if q == b'\'' && only_sql(text) {
        return None;
    }
    if text.last().is_some_and(u8::is_ascii_whitespace)
        || text.iter().any(|b| b"\"`\\=;#<>()".contains(b))
        || text.iter().enumerate().any(|(k, b)| {
            *b == b'\''
                && !(k > 0
                    && is_letter(text[k - 1])
                    && text.get(k + 1).is_some_and(|n| is_letter(*n)))
        })
        || memchr::memmem::find(text, b"--").is_some()
        || memchr::memmem::find(text, b"/*").is_some()
    {
        return None;
    }
    if dash_then_text(v, close + 1) {
        return Some(close);
    }
    let after = v.get(close + 1).copied();
    if !after.is_none_or(|b| b.is_ascii_whitespace() || b".,!?:".contains(&b)) {
        return None;
    }
    let rest = v[close + 1..].trim_ascii_start();
    if rest
        .first()
        .is_some_and(|b| b"=<>!|&;#+*/%^~-\\@`(".contains(b))
    {
        return None;
    }
    // A bracket closed and then a comment (`( 'a' ) --`) ends an SQL expression, not a phrase.
    let after_brackets = {
        let n = rest
            .iter()
            .take_while(|b| **b == b')' || b.is_ascii_whitespace())
            .count();
        &rest[n..]
    };
    if after_brackets.starts_with(b"--")
        || after_brackets.starts_with(b"#")
        || after_brackets.starts_with(b"/*")
    {
        return None;
    }
    Some(close)
}

/// Whether the text at `at`, right after a quotation's closing quote, is a dash typed as `--`
/// followed by a blank and a word (`the 'classic'-- a remake`). The quote
/// before it closes a quotation that opened after a blank, so in a string the value lands in it
/// opens a new literal and the `--` sits inside that literal; in a number it follows a word and
/// a string, which no grammar continues. A breakout (`admin'-- a`) has its quote after a word,
/// not round one, and is never this quotation.
fn dash_then_text(v: &[u8], at: usize) -> bool {
    let Some(rest) = v[at..].strip_prefix(b"--") else {
        return false;
    };
    let blanks = rest.iter().take_while(|b| **b == b' ').count();
    blanks > 0 && !word_after(rest, blanks).is_empty()
}

/// `v` with its text-punctuation quotes blanked, and with a `--` that ends a value holding no
/// quote right after a token of mixed-case letters and digits (`1611-IioXXIG1ti8rspL2vbXFy--`,
/// an id's padding; not a number or an SQL word, `1*1--`) blanked too, when there is any: a comment only cuts off what the application appends after the value,
/// and without a quote in the value that is not a string's closing quote, so the SQL before it
/// must be an injection on its own. `None` when nothing is blanked.
pub fn blanked(v: &[u8]) -> Option<Vec<u8>> {
    let (at, _) = prose_quotes(v);
    let mut out: Option<Vec<u8>> = None;
    for i in at {
        out.get_or_insert_with(|| v.to_vec())[i] = b' ';
    }
    let t = v.trim_ascii_end();
    let token = t.strip_suffix(b"--").map(|t| {
        &t[t.len()
            - t.iter()
                .rev()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count()..]
    });
    if token.is_some_and(|w| {
        w.len() >= 8
            && w.iter().any(u8::is_ascii_digit)
            && w.iter().any(u8::is_ascii_lowercase)
            && w.iter().any(u8::is_ascii_uppercase)
    }) && !v.iter().any(|b| matches!(b, b'\'' | b'"' | b'`'))
    {
        let n = t.len();
        out.get_or_insert_with(|| v.to_vec())[n - 2..n].fill(b' ');
    }
    out
}

/// Words that start an SQL statement: after a `;` one of them makes a stacked query.
const STATEMENT_WORDS: [&[u8]; 36] = [
    b"select",
    b"insert",
    b"update",
    b"delete",
    b"drop",
    b"create",
    b"alter",
    b"exec",
    b"execute",
    b"declare",
    b"shutdown",
    b"waitfor",
    b"set",
    b"begin",
    b"if",
    b"use",
    b"truncate",
    b"grant",
    b"revoke",
    b"merge",
    b"call",
    b"union",
    b"with",
    b"replace",
    b"load",
    b"handler",
    b"do",
    b"show",
    b"print",
    b"rename",
    b"kill",
    b"prepare",
    b"values",
    b"table",
    b"pragma",
    b"attach",
];

/// The sentences of a text whose every `;` is followed by a blank and a word that starts no
/// SQL statement (`We use cookies; expires after 30 days`), when it holds no quote and no
/// comment. A `;` ends a statement, and what follows it must be another; a word of prose there
/// is a syntax error, so the text is SQL only if one sentence is SQL on its own. `None` when a
/// `;` could separate stacked queries (`1; drop table t`, `1;select 1`, a `;` at the end) or a
/// quote or comment could change where the value's SQL ends.
pub fn prose_sentences(v: &[u8]) -> Option<Vec<&[u8]>> {
    if !v.contains(&b';')
        || v.iter().any(|b| b"'\"`#".contains(b))
        || memchr::memmem::find(v, b"--").is_some()
        || memchr::memmem::find(v, b"/*").is_some()
    {
        return None;
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for at in memchr::memchr_iter(b';', v) {
        let rest = &v[at + 1..];
        let blanks = rest.iter().take_while(|b| **b == b' ').count();
        let word = word_after(rest, blanks);
        if blanks == 0
            || word.is_empty()
            || STATEMENT_WORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
        {
            return None;
        }
        pieces.push(&v[start..at]);
        start = at + 1;
    }
    pieces.push(&v[start..]);
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_prose(v: &str) -> bool {
        prose_quotes(v.as_bytes()).1
    }

    #[test]
    fn text_punctuation_is_prose() {
        for v in [
            "\"IS\" STAMP",
            "\"LIKE\" STAMP",
            "SMALL \"&\" SIGN",
            "36\" X 48\" FRAME",
            "SCRAPBOOK PAPER PACK (8.5X11\"-300 DPI)",
            "Mark, 'Call me when you get to the gate and I'll come out and open it up'",
            "she said 'yes' and 'no' or 'maybe'",
            "L'ÉTÉ D'UNE VIE",
            "5'11\" TALL",
            "FRAME (36\")",
        ] {
            assert!(all_prose(v), "{v}");
        }
    }

    #[test]
    fn breakout_quotes_are_not_prose() {
        for v in [
            "x' OR 1=1--",
            "\" OR \"1\"=\"1",
            "admin'--",
            "1' AND '1'='1",
            "18' OR '1'='1",
            "36\" OR 1=1 --",
            "a' or 'a'='a",
            "'1' or '1'",
            "\"=\"",
            "admin'or'1'='1",
            "x' union select 1",
            "1'--",
            "DRESS WITH HAT 18';",
            "'OR'",
            "A 'NOT RLIKE' B",
            "A '&&' B",
            "select '1',sin(id),2 from bar where",
            "( BINARY ( 'b') )  --",
            "1');",
            "7')) or 1=1",
        ] {
            assert!(!all_prose(v), "{v}");
        }
    }

    #[test]
    fn blanks_prose_and_a_final_glued_comment() {
        assert_eq!(blanked(b"\"IS\" STAMP").unwrap(), b" IS  STAMP");
        assert_eq!(
            blanked(b"1611-IioXXIG1ti8rspL2vbXFy--").unwrap(),
            b"1611-IioXXIG1ti8rspL2vbXFy  "
        );
        assert!(blanked(b"1*1--").is_none());
        assert!(blanked(b"admin'--").is_none());
        assert!(blanked(b"1 or 1=1 --").is_none());
        assert_eq!(blanked(b"O'Brien' OR 1=1--").unwrap(), b"O Brien' OR 1=1--");
    }
}
