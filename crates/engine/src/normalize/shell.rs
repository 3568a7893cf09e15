//! The shell's ways of splitting a word that the de-obfuscated view joins again: a quoted
//! fragment glued to the rest of the word, special parameters and unset variables spliced into it.
//! Each is judged at one `$` or quote of a value, by the bytes around it.

/// Whether the quote at `i` opens a short quoted run of letters and digits that a letter or digit
/// follows right after its closing quote, with no letter or digit before the opening one: the shell
/// reads `'c'url` as `curl`, a way to split a command word that payloads use.
pub(super) fn glued_fragment(v: &[u8], i: usize) -> bool {
    const MAX_FRAGMENT: usize = 8;
    if i > 0 && v[i - 1].is_ascii_alphanumeric() {
        return false;
    }
    let rest = &v[i + 1..];
    let n = rest
        .iter()
        .take(MAX_FRAGMENT + 1)
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    (1..=MAX_FRAGMENT).contains(&n)
        && rest.get(n) == Some(&v[i])
        && rest.get(n + 1).is_some_and(u8::is_ascii_alphanumeric)
}

/// The length of a braced variable `${name}` at `i` with a letter or digit right before and
/// right after it (`wh${x}oami`): payloads splice unset variables, which expand to nothing, into
/// command words. A template's placeholder between words has blanks or punctuation around it.
/// `${IFS}` is left: it expands to a blank.
pub(super) fn glued_braced_var(v: &[u8], i: usize) -> Option<usize> {
    const MAX_NAME: usize = 16;
    if i == 0 || !v[i - 1].is_ascii_alphanumeric() || v.get(i + 1) != Some(&b'{') {
        return None;
    }
    let rest = v.get(i + 2..)?;
    let n = rest
        .iter()
        .take(MAX_NAME + 1)
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    // `${IFS}` is a blank, not nothing: it separates words and the signatures read it so.
    let glued = (1..=MAX_NAME).contains(&n)
        && !rest[..n].eq_ignore_ascii_case(b"ifs")
        && rest.get(n) == Some(&b'}')
        && rest.get(n + 1).is_some_and(u8::is_ascii_alphanumeric);
    glued.then_some(n + 3)
}

/// A shell special parameter glued into a word (`c$!at`, `et$_c`, `pas$?swd`): in a fresh
/// shell these expand to nothing or to a few characters, and payloads splice them into command
/// and file names to break up the words a WAF looks for.
pub(super) fn special_param(v: &[u8], i: usize) -> bool {
    i > 0
        && v[i - 1].is_ascii_alphanumeric()
        && matches!(v.get(i + 1), Some(b'!' | b'?' | b'-' | b'_' | b'$' | b'#'))
        && v.get(i + 2)
            .is_some_and(|n| n.is_ascii_alphanumeric() || *n == b'/')
}
