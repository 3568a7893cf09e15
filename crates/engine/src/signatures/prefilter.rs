//! Facts proved about each confirming regex when the database is compiled, so that a value that
//! cannot match is rejected without running the regex:
//!
//! - **required byte groups**: sets of bytes such that every match holds at least one byte of each
//!   set (`\bunion\b.*\bselect\b` needs a `u`/`U`, a `c`/`C`, ...; the command-after-separator rule
//!   needs one of `;&|\`$` or a line break). Checked against a value's [`ByteSet`] in a few
//!   instructions. Found on the regex's Thompson NFA: a byte set is required when no match can be
//!   spelt without it (look-around assertions are taken as always true, so a set is only claimed
//!   when it is truly required). Sets are grown greedily from the most common bytes of ordinary
//!   text, so the claimed sets are made of the rarest bytes the regex allows.
//! - **anchors**: a short set of literals every match begins with, unless it begins at the start of
//!   the value through a `^` (the regex's finite prefix-literal set, read case-sensitively and
//!   folded to lower case, cut to at most [`MAX_ANCHOR_LEN`] bytes), so the regex runs anchored
//!   where the literal automaton found one instead of over the whole value.
//! - **shortest plain matches**: the length of the shortest match spelt with letters and digits
//!   (and some ordinary punctuation) alone, so that a shorter value of those bytes, such as most
//!   parameter names and many values, is settled by its bytes alone.

use regex_automata::nfa::thompson::{NFA, State};
use regex_automata::util::primitives::StateID;
use regex_automata::util::syntax;
use regex_syntax::ast::{self, Ast};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};

use crate::normalize::ByteSet;

/// Most byte groups kept per signature (the first ones found are the rarest).
const MAX_GROUPS: usize = 4;
/// Anchor literals are cut to this many bytes (a prefix of a prefix is still one): shorter
/// literals wake the regex a little more often, but keep the literal automaton small.
pub const MAX_ANCHOR_LEN: usize = 5;
/// A regex with more anchor literals than this gets some cut shorter (a separator followed by any
/// of ~100 command words keeps its words, so `;q=0.9` or `&page=` does not wake the regex). More
/// would grow the literal automaton, and with it the database's compile time, for little gain.
const MAX_ANCHORS: usize = 512;
/// Prefix literals extracted before cutting (the extraction gives up beyond, leaving one-byte
/// anchors).
const MAX_EXTRACTED: usize = 100_000;

/// Bytes of ordinary text from most to least common: the greedy search allows them first, so what
/// remains required is as rare as the regex permits. Bytes not listed come last.
const COMMON_FIRST: &[u8] = b"etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789 .,-/_:=;&?()\"'+%*!#@[]{}<>|\\`$^~\t\r\n";

/// What is known about one confirming regex.
pub struct Gate {
    /// Every match holds a byte of each of these sets.
    pub groups: Vec<ByteSet>,
    /// Where a match may start; `None` when that cannot be narrowed down.
    pub anchors: Option<Anchors>,
    /// For each of [`PLAIN_ALPHABETS`], the length of the shortest match spelt with its bytes
    /// alone (`None`: no match can be).
    pub shortest: [Option<usize>; PLAIN_ALPHABETS.len()],
}

/// Where the matches of a regex may start.
pub struct Anchors {
    /// Every match starts with one of these (lower case, distinct, none a prefix of another) ...
    pub literals: Vec<Vec<u8>>,
    /// ... or at the start of the value, through a `^`.
    pub at_start: AtStart,
}

/// Whether a match may start at the start of the value through a `^`.
pub enum AtStart {
    /// The pattern has no `^`.
    Never,
    /// Only when the value starts with one of these literals.
    When(Vec<Vec<u8>>),
    /// Whatever the value starts with.
    Always,
}

/// The syntax every signature regex is read with (case-insensitive, bytes, no Unicode classes).
pub fn syntax_config() -> syntax::Config {
    syntax::Config::new()
        .case_insensitive(true)
        .unicode(false)
        .utf8(false)
}

/// Proves what it can about `pattern`, whose signature has `literals` (matched ASCII
/// case-insensitively). Never fails: an unprovable fact is simply not claimed.
pub fn analyse(pattern: &str) -> Gate {
    let nfa = NFA::compiler().syntax(syntax_config()).build(pattern);
    let (groups, shortest) = match &nfa {
        Ok(nfa) => {
            let mut search = Search::new(nfa);
            let shortest = PLAIN_ALPHABETS.map(|a| search.shortest(&a));
            (required_groups(nfa), shortest)
        }
        // Unproved: a match may be as short as one byte of anything.
        Err(_) => (Vec::new(), [Some(1); PLAIN_ALPHABETS.len()]),
    };
    Gate {
        groups,
        anchors: anchors(pattern),
        shortest,
    }
}

/// Alphabets of ordinary values, each holding the one before: digits; letters and digits; with
/// `-`, `_` and `.`; with ` `, `,`, `:` and `/` too.
pub const PLAIN_ALPHABETS: [ByteSet; 4] = {
    let digits = ByteSet::EMPTY.with_range(b'0', b'9');
    let words = digits.with_range(b'a', b'z').with_range(b'A', b'Z');
    let marks = words.or(&ByteSet::from_bytes(b"-_."));
    [
        digits,
        words,
        marks,
        marks.or(&ByteSet::from_bytes(b" ,:/")),
    ]
};

/// For each byte, the first of [`PLAIN_ALPHABETS`] holding it ([`NOT_PLAIN`]: none).
const PLAIN_CLASS: [u8; 256] = {
    let mut t = [NOT_PLAIN; 256];
    let mut k = PLAIN_ALPHABETS.len();
    while k > 0 {
        k -= 1;
        let mut b = 0;
        while b < 256 {
            if PLAIN_ALPHABETS[k].contains(b as u8) {
                t[b] = k as u8;
            }
            b += 1;
        }
    }
    t
};
const NOT_PLAIN: u8 = u8::MAX;

/// The first of [`PLAIN_ALPHABETS`] holding every byte of `value`.
#[cfg(test)]
pub fn plain_alphabet(value: &[u8]) -> Option<usize> {
    let class = value
        .iter()
        .fold(0, |k, &b| k.max(PLAIN_CLASS[usize::from(b)]));
    (class != NOT_PLAIN).then_some(usize::from(class))
}

/// Whether every byte of `value` is in one of the first `alphabets` of [`PLAIN_ALPHABETS`]:
/// stops at the first byte that is not, which is most often the first of a value that is not
/// plain enough.
#[inline]
pub fn within_alphabets(value: &[u8], alphabets: u8) -> bool {
    value
        .iter()
        .all(|&b| PLAIN_CLASS[usize::from(b)] < alphabets)
}

/// For each length below the largest of `plain_below`, how many of the first [`PLAIN_ALPHABETS`]
/// a value of that length may be spelt with and still be shorter than the `plain_below` of the
/// first alphabet holding it, for every alphabet up to that one. A value of length `len` made of
/// the first `plain_alphabets(..)[len]` alphabets is then shorter than `plain_below` of its own
/// first alphabet.
pub fn plain_alphabets(plain_below: &[usize; PLAIN_ALPHABETS.len()]) -> Vec<u8> {
    let longest = plain_below.iter().copied().max().unwrap_or(0);
    (0..longest)
        .map(|len| plain_below.iter().take_while(|&&below| len < below).count() as u8)
        .collect()
}

/// For each of [`PLAIN_ALPHABETS`], the length of the shortest of `literals` spelt with its bytes
/// alone (matched ASCII case-insensitively: the alphabets hold both cases of every letter).
pub fn shortest_literal(literals: &[Vec<u8>]) -> [Option<usize>; PLAIN_ALPHABETS.len()] {
    PLAIN_ALPHABETS.map(|a| {
        literals
            .iter()
            .filter(|l| l.iter().all(|&b| a.contains(b)))
            .map(Vec::len)
            .min()
    })
}

/// Literals every match of `pattern` starts with, matched ASCII case-insensitively, and what a
/// match through a `^` may start with.
///
/// The pattern is read case-sensitively (its case-insensitive form would multiply every letter
/// into two literals): a case-insensitive match is a case variant of a case-sensitive one, so it
/// starts with a case variant of one of these literals. An inline flag that turns
/// case-insensitivity off breaks that argument, so such patterns get no anchors. A `^` can only
/// hold where the value begins, so branches through one are left out of the literals; the
/// value's first bytes decide whether they are tried there.
fn anchors(pattern: &str) -> Option<Anchors> {
    if turns_case_insensitivity_off(pattern) {
        return None;
    }
    let hir = syntax::parse_with(pattern, &syntax_config().case_insensitive(false)).ok()?;
    let mut has_start = false;
    let literals = prefix_literals(&replace_text_start(&hir, &Hir::fail(), &mut has_start))?;
    let at_start = if !has_start {
        AtStart::Never
    } else {
        // Matches at the start of the value read `^` as nothing: their prefixes are those of the
        // pattern with `^` removed.
        match prefix_literals(&replace_text_start(&hir, &Hir::empty(), &mut has_start)) {
            Some(first) => AtStart::When(first),
            None => AtStart::Always,
        }
    };
    Some(Anchors { literals, at_start })
}

/// At most [`MAX_ANCHORS`] literals every match of `hir` starts with (lower case, cut as short as
/// needed), or `None` when matches can start with anything.
fn prefix_literals(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let mut ex = Extractor::new();
    ex.kind(ExtractKind::Prefix)
        .limit_class(16)
        .limit_repeat(4)
        .limit_literal_len(MAX_ANCHOR_LEN)
        .limit_total(MAX_EXTRACTED);
    let seq = ex.extract(hir);
    let all: Vec<Vec<u8>> = seq
        .literals()?
        .iter()
        .map(|l| l.as_bytes().to_ascii_lowercase())
        .collect();
    let mut literals = minimal(all.iter().map(Vec::as_slice));
    if literals.iter().any(Vec::is_empty) {
        return None;
    }
    // Too many: cut some shorter (a prefix of a prefix is still one), longest cuts first and,
    // at each length, the prefixes standing for the most literals first. The runs of spaces
    // between a separator and a word multiply into thousands of literals and are cut back to
    // the separator; the words after a bare separator keep their length (`;passw`, `&sort`), so
    // that `&page=` does not wake a command-injection regex.
    for len in (1..MAX_ANCHOR_LEN).rev() {
        if literals.len() <= MAX_ANCHORS {
            break;
        }
        // `minimal` sorts: the literals sharing a prefix are neighbours.
        let mut groups: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        let mut start = 0;
        while start < literals.len() {
            let prefix = &literals[start][..literals[start].len().min(len)];
            let end = start + literals[start..].partition_point(|l| l.starts_with(prefix));
            if end - start > 1 {
                groups.push((end - start, start..end));
            }
            start = end;
        }
        groups.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.start.cmp(&b.1.start)));
        let mut excess = literals.len() - MAX_ANCHORS;
        let mut cut = vec![false; literals.len()];
        for (size, range) in groups {
            if excess == 0 {
                break;
            }
            cut[range].iter_mut().for_each(|c| *c = true);
            excess = excess.saturating_sub(size - 1);
        }
        literals = minimal(
            literals
                .iter()
                .zip(&cut)
                .map(|(l, &c)| if c { &l[..len] } else { &l[..] }),
        );
    }
    (literals.len() <= MAX_ANCHORS).then_some(literals)
}

/// Distinct literals, none with another as its prefix (it would add nothing: every match it
/// starts also starts with the shorter one).
fn minimal<'a>(lits: impl Iterator<Item = &'a [u8]>) -> Vec<Vec<u8>> {
    let mut sorted: Vec<&[u8]> = lits.collect();
    sorted.sort();
    sorted.dedup();
    // In sorted order a prefix comes right before what it prefixes.
    let mut kept: Vec<Vec<u8>> = Vec::with_capacity(sorted.len());
    for l in sorted {
        if !kept.last().is_some_and(|k| l.starts_with(k)) {
            kept.push(l.to_vec());
        }
    }
    kept
}

/// `hir` with every `^` (start of the value) replaced by `with`; `seen` records that there was one.
fn replace_text_start(hir: &Hir, with: &Hir, seen: &mut bool) -> Hir {
    let mut sub = |h: &Hir| replace_text_start(h, with, seen);
    match hir.kind() {
        HirKind::Look(Look::Start) => {
            *seen = true;
            with.clone()
        }
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            sub: Box::new(sub(&r.sub)),
            ..r.clone()
        }),
        HirKind::Capture(c) => Hir::capture(Capture {
            sub: Box::new(sub(&c.sub)),
            ..c.clone()
        }),
        HirKind::Concat(parts) => Hir::concat(parts.iter().map(sub).collect()),
        HirKind::Alternation(parts) => Hir::alternation(parts.iter().map(sub).collect()),
        _ => hir.clone(),
    }
}

/// Whether the pattern holds an inline flag group such as `(?-i)` or `(?-i:...)`.
fn turns_case_insensitivity_off(pattern: &str) -> bool {
    struct Finder;
    impl ast::Visitor for Finder {
        type Output = ();
        type Err = ();
        fn finish(self) -> Result<(), ()> {
            Ok(())
        }
        fn visit_pre(&mut self, node: &Ast) -> Result<(), ()> {
            let flags = match node {
                Ast::Flags(set) => &set.flags,
                Ast::Group(g) => match &g.kind {
                    ast::GroupKind::NonCapturing(flags) => flags,
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            };
            match flags.flag_state(ast::Flag::CaseInsensitive) {
                Some(false) => Err(()),
                _ => Ok(()),
            }
        }
    }
    match ast::parse::Parser::new().parse(pattern) {
        Ok(tree) => ast::visit(&tree, Finder).is_err(),
        Err(_) => true,
    }
}

/// Reachability of a match state using only the allowed bytes, with a reusable visit stamp.
struct Search<'a> {
    nfa: &'a NFA,
    stamp: Vec<u32>,
    round: u32,
    stack: Vec<StateID>,
}

impl<'a> Search<'a> {
    fn new(nfa: &'a NFA) -> Search<'a> {
        Search {
            nfa,
            stamp: vec![0; nfa.states().len()],
            round: 0,
            stack: Vec::new(),
        }
    }

    /// The length of the shortest match spelt with `allowed` bytes only, look-arounds taken as
    /// true (so never longer than the true one); `None` when there is none. A breadth-first
    /// search in which a byte costs one step and the other transitions none.
    fn shortest(&mut self, allowed: &ByteSet) -> Option<usize> {
        let mut distance = vec![usize::MAX; self.nfa.states().len()];
        let mut queue = std::collections::VecDeque::from([(self.nfa.start_anchored(), 0)]);
        while let Some((s, d)) = queue.pop_front() {
            let best = &mut distance[s.as_usize()];
            if *best <= d {
                continue;
            }
            *best = d;
            let is_match = moves(self.nfa, s, allowed, |next, byte| {
                if byte {
                    queue.push_back((next, d + 1));
                } else {
                    queue.push_front((next, d));
                }
            });
            if is_match {
                return Some(d);
            }
        }
        None
    }

    fn can_match(&mut self, allowed: &ByteSet) -> bool {
        self.round += 1;
        let round = self.round;
        self.stack.clear();
        self.stack.push(self.nfa.start_anchored());
        while let Some(s) = self.stack.pop() {
            let seen = &mut self.stamp[s.as_usize()];
            if *seen == round {
                continue;
            }
            *seen = round;
            let stack = &mut self.stack;
            if moves(self.nfa, s, allowed, |next, _| stack.push(next)) {
                return true;
            }
        }
        false
    }
}

/// Calls `step(next, byte)` for each move out of state `s` that `allowed` permits (`byte`: it
/// reads one; look-arounds are taken as true and read none); returns whether `s` is the match state.
fn moves(nfa: &NFA, s: StateID, allowed: &ByteSet, mut step: impl FnMut(StateID, bool)) -> bool {
    let any = |lo: u8, hi: u8| allowed.intersects_range(lo, hi);
    match nfa.state(s) {
        State::ByteRange { trans } => {
            if any(trans.start, trans.end) {
                step(trans.next, true);
            }
        }
        State::Sparse(t) => {
            for tr in t.transitions.iter().filter(|tr| any(tr.start, tr.end)) {
                step(tr.next, true);
            }
        }
        State::Dense(t) => {
            for (b, next) in t.transitions.iter().enumerate() {
                if allowed.contains(b as u8) {
                    step(*next, true);
                }
            }
        }
        State::Look { next, .. } | State::Capture { next, .. } => step(*next, false),
        State::Union { alternates } => alternates.iter().for_each(|&a| step(a, false)),
        State::BinaryUnion { alt1, alt2 } => {
            step(*alt1, false);
            step(*alt2, false);
        }
        State::Fail => {}
        State::Match { .. } => return true,
    }
    false
}

/// The required byte groups of `nfa`, rarest first. Bytes the NFA treats alike (its byte classes)
/// are tried together, which keeps the search to one reachability pass per class.
fn required_groups(nfa: &NFA) -> Vec<ByteSet> {
    let mut search = Search::new(nfa);
    let classes = nfa.byte_classes();
    // One representative class list in common-first order, each class with all its bytes.
    let mut order: Vec<u8> = COMMON_FIRST.to_vec();
    order.extend((0..=255u8).filter(|b| !COMMON_FIRST.contains(b)));
    let mut class_bytes: Vec<ByteSet> = vec![ByteSet::EMPTY; classes.alphabet_len()];
    for b in 0..=255u8 {
        class_bytes[usize::from(classes.get(b))].insert(b);
    }
    let mut class_order: Vec<usize> = Vec::new();
    for b in order {
        let c = usize::from(classes.get(b));
        if !class_order.contains(&c) {
            class_order.push(c);
        }
    }
    let mut groups = Vec::new();
    let mut base = ByteSet::EMPTY;
    while groups.len() < MAX_GROUPS && !search.can_match(&base) {
        let mut allowed = base;
        let mut group = ByteSet::EMPTY;
        for &c in &class_order {
            let bytes = class_bytes[c];
            if bytes.is_subset(&allowed) {
                continue;
            }
            let trial = allowed.or(&bytes);
            if search.can_match(&trial) {
                group = group.or(&bytes);
            } else {
                allowed = trial;
            }
        }
        if group == ByteSet::EMPTY {
            break;
        }
        base = base.or(&group);
        groups.push(group);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors(g: &Gate) -> Vec<String> {
        g.anchors
            .iter()
            .flat_map(|a| &a.literals)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    #[test]
    fn required_bytes_are_found_and_only_those() {
        let g = analyse(r"\bunion\b[\s\S]{0,100}?\bselect\b");
        assert_eq!(anchors(&g), ["union"]);
        // The letters of both words are required, rarest first (up to `MAX_GROUPS`); the space
        // is not (look-arounds are taken as true, so `unionselect` counts as a match).
        assert_eq!(g.groups.len(), MAX_GROUPS);
        for b in b"ucls" {
            assert!(
                g.groups
                    .iter()
                    .any(|s| s.contains(*b) && s.contains(b.to_ascii_uppercase())),
                "{}",
                *b as char
            );
        }
        assert!(g.groups.iter().all(|s| !s.contains(b' ')));
        // An alternation requires one of its branches' bytes: the rarest of each (`d` of `id`,
        // `l` of `ls`).
        let g = analyse(r"[;|]\s*(?:id|ls)\b");
        let a = anchors(&g);
        assert!(a.iter().all(|a| a.starts_with([';', '|'])), "{a:?}");
        assert!(a.contains(&";id".to_string()) && a.contains(&"| ".to_string()));
        assert!(g.groups[0].contains(b';') && g.groups[0].contains(b'|'));
        assert!(
            g.groups
                .iter()
                .any(|s| s.contains(b'd') && s.contains(b'l') && !s.contains(b'i'))
        );
    }

    #[test]
    fn plain_values_are_told_by_their_length_and_bytes() {
        // Digits below 3 bytes, letters and digits below 2, nothing with marks or spaces.
        let alphabets = plain_alphabets(&[3, 2, 0, 0]);
        assert_eq!(alphabets, [2, 2, 1]);
        let plain = |v: &[u8]| {
            alphabets
                .get(v.len())
                .is_some_and(|&n| n > 0 && within_alphabets(v, n))
        };
        for (v, settled) in [
            (&b"7"[..], true),
            (b"42", true),
            (b"a", true),
            (b"id", false),
            (b"a1", false),
            (b"-", false),
            (b"123", false),
            (b";", false),
        ] {
            let k = plain_alphabet(v);
            assert_eq!(plain(v), settled, "{}", String::from_utf8_lossy(v));
            assert_eq!(k.is_some_and(|k| v.len() < [3, 2, 0, 0][k]), settled);
        }
    }

    #[test]
    fn shortest_plain_matches_are_measured_per_alphabet() {
        // Look-arounds are taken as true: `unionselect` (11 bytes) counts.
        let g = analyse(r"\bunion\b\s*select\b");
        assert_eq!(g.shortest, [None, Some(11), Some(11), Some(11)]);
        assert_eq!(
            analyse(r"^ro0ab").shortest,
            [None, Some(5), Some(5), Some(5)]
        );
        assert_eq!(
            analyse(r"\d{3}\.\d+").shortest,
            [None, None, Some(5), Some(5)]
        );
        assert_eq!(analyse(r"<script|[;|]\s*id").shortest, [None; 4]);
        assert_eq!(
            shortest_literal(&[b"ab".to_vec(), b"x y".to_vec(), b"<".to_vec()]),
            [None, Some(2), Some(2), Some(2)]
        );
        assert_eq!(plain_alphabet(b"20"), Some(0));
        assert_eq!(plain_alphabet(b"en-US"), Some(2));
        assert_eq!(plain_alphabet(b"10:30"), Some(3));
        assert_eq!(plain_alphabet(b"a;b"), None);
    }

    #[test]
    fn anchors_are_the_prefixes_every_match_starts_with() {
        // Folded to lower case, cut to five bytes, without literals another one prefixes; the
        // `^` branch is tried at the start of the value instead.
        let g = analyse(r"(?:^|\()(?:OR|and)\s+1|\bsystem\s*\(|\bsys\(");
        let a = anchors(&g);
        assert_eq!(a[..3], ["(and\t", "(and\n", "(and\u{b}"]);
        assert_eq!(a[a.len() - 3..], ["(or ", "sys(", "syste"]);
        assert_eq!(a.len(), 14);
        match g.anchors.map(|a| a.at_start) {
            Some(AtStart::When(first)) => {
                assert!(first.contains(&b"or ".to_vec()) && first.contains(&b"sys(".to_vec()));
                assert!(!first.iter().any(|f| f.starts_with(b"x")), "{first:?}");
            }
            _ => panic!("a `^` branch"),
        }
        assert!(matches!(
            analyse(r"\bsys\(").anchors.map(|a| a.at_start),
            Some(AtStart::Never)
        ));
        assert!(matches!(
            analyse(r"^\w|x").anchors.map(|a| a.at_start),
            Some(AtStart::Always)
        ));
        // Too many literals are cut shorter, the prefixes standing for the most first: here
        // enough groups of ten cut to four bytes (`k000`), the others kept whole.
        let many = (0..3000)
            .map(|i| format!("k{i:04}"))
            .collect::<Vec<_>>()
            .join("|");
        let a = anchors(&analyse(&many));
        assert_eq!(a.len(), 3000 - (3000 - MAX_ANCHORS).div_ceil(9) * 9);
        assert!(a.contains(&"k000".to_string()) && a.contains(&"k2999".to_string()));
        // Runs of spaces are cut back; the words after a bare separator keep their length.
        let words = ["whoami", "passwd", "sort", "cat", "ping"].join("|");
        let g = analyse(&format!(r"[;&|]\s*(?:{words})\b"));
        let a = anchors(&g);
        assert!(a.len() <= MAX_ANCHORS);
        for kept in ["&sort", ";whoa", "|pass", "&cat", "; "] {
            assert!(a.contains(&kept.to_string()), "{kept}: {a:?}");
        }
        // A match that can start with anything has no anchors.
        assert!(analyse(r"a?select").anchors.is_some());
        assert!(analyse(r"\w+select").anchors.is_none());
        assert!(analyse(r"(?-i:X)y").anchors.is_none());
    }
}
