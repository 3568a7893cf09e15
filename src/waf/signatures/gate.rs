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
//! - **anchoring**: whether every match begins with one of the signature's literals (from the
//!   regex's finite prefix-literal set), so the regex can be run anchored at each place the literal
//!   automaton found a literal instead of over the whole value.
//!
//! Imports: `regex-automata` (NFA), `regex-syntax` (prefix literals), [`ByteSet`].

use regex_automata::nfa::thompson::{NFA, State};
use regex_automata::util::syntax;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use crate::waf::normalize::ByteSet;

/// Most byte groups kept per signature (the first ones found are the rarest).
const MAX_GROUPS: usize = 8;

/// Bytes of ordinary text from most to least common: the greedy search allows them first, so what
/// remains required is as rare as the regex permits. Bytes not listed come last.
const COMMON_FIRST: &[u8] = b"etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789 .,-/_:=;&?()\"'+%*!#@[]{}<>|\\`$^~\t\r\n";

/// What is known about one confirming regex.
pub struct Gate {
    /// Every match holds a byte of each of these sets.
    pub groups: Vec<ByteSet>,
    /// Every match starts with one of the signature's literals.
    pub anchored: bool,
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
pub fn analyse(pattern: &str, literals: &[String]) -> Gate {
    let groups = NFA::compiler()
        .syntax(syntax_config())
        .build(pattern)
        .map(|nfa| required_groups(&nfa))
        .unwrap_or_default();
    Gate {
        groups,
        anchored: starts_with_literal(pattern, literals),
    }
}

/// Whether every match of `pattern` starts with one of `literals`.
fn starts_with_literal(pattern: &str, literals: &[String]) -> bool {
    if literals.is_empty() {
        return false;
    }
    let Ok(hir) = syntax::parse_with(pattern, &syntax_config()) else {
        return false;
    };
    let mut ex = Extractor::new();
    ex.kind(ExtractKind::Prefix)
        .limit_class(64)
        .limit_repeat(4)
        .limit_literal_len(64)
        .limit_total(2000);
    let seq = ex.extract(&hir);
    let Some(prefixes) = seq.literals() else {
        return false;
    };
    !prefixes.is_empty()
        && prefixes.iter().all(|p| {
            literals.iter().any(|l| {
                p.as_bytes().len() >= l.len()
                    && p.as_bytes()[..l.len()].eq_ignore_ascii_case(l.as_bytes())
            })
        })
}

/// Reachability of a match state using only the allowed bytes, with a reusable visit stamp.
struct Search<'a> {
    nfa: &'a NFA,
    stamp: Vec<u32>,
    round: u32,
    stack: Vec<regex_automata::util::primitives::StateID>,
}

impl Search<'_> {
    fn can_match(&mut self, allowed: &ByteSet) -> bool {
        self.round += 1;
        let round = self.round;
        self.stack.clear();
        self.stack.push(self.nfa.start_anchored());
        let any = |lo: u8, hi: u8| (lo..=hi).any(|b| allowed.contains(b));
        while let Some(s) = self.stack.pop() {
            let seen = &mut self.stamp[s.as_usize()];
            if *seen == round {
                continue;
            }
            *seen = round;
            match self.nfa.state(s) {
                State::ByteRange { trans } => {
                    if any(trans.start, trans.end) {
                        self.stack.push(trans.next);
                    }
                }
                State::Sparse(t) => {
                    for tr in t.transitions.iter() {
                        if any(tr.start, tr.end) {
                            self.stack.push(tr.next);
                        }
                    }
                }
                State::Dense(t) => {
                    for (b, next) in t.transitions.iter().enumerate() {
                        if allowed.contains(b as u8) {
                            self.stack.push(*next);
                        }
                    }
                }
                State::Look { next, .. } | State::Capture { next, .. } => self.stack.push(*next),
                State::Union { alternates } => self.stack.extend(alternates.iter().copied()),
                State::BinaryUnion { alt1, alt2 } => {
                    self.stack.push(*alt1);
                    self.stack.push(*alt2);
                }
                State::Fail => {}
                State::Match { .. } => return true,
            }
        }
        false
    }
}

/// The required byte groups of `nfa`, rarest first. Bytes the NFA treats alike (its byte classes)
/// are tried together, which keeps the search to one reachability pass per class.
fn required_groups(nfa: &NFA) -> Vec<ByteSet> {
    let mut search = Search {
        nfa,
        stamp: vec![0; nfa.states().len()],
        round: 0,
        stack: Vec::new(),
    };
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

    fn lits(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn required_bytes_are_found_and_only_those() {
        let g = analyse(r"\bunion\b[\s\S]{0,100}?\bselect\b", &lits(&["union"]));
        assert!(g.anchored);
        // The letters of both words are required, rarest first (up to `MAX_GROUPS`: the most
        // common, `e`, is left out); the space is not (look-arounds are taken as true, so
        // `unionselect` counts as a match).
        for b in b"unioslct" {
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
        let g = analyse(r"[;|]\s*(?:id|ls)\b", &lits(&[";", "|"]));
        assert!(g.anchored);
        assert!(g.groups[0].contains(b';') && g.groups[0].contains(b'|'));
        assert!(
            g.groups
                .iter()
                .any(|s| s.contains(b'd') && s.contains(b'l') && !s.contains(b'i'))
        );
        // A match that can start anywhere is not anchored at the literal.
        assert!(!analyse(r"a?select", &lits(&["select"])).anchored);
        assert!(!analyse(r"\w+select", &lits(&["select"])).anchored);
    }
}
