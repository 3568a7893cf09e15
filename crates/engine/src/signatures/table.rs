//! The literal automaton as one flat transition table, walked at one lookup per byte.
//!
//! aho-corasick builds the automaton (ASCII case-insensitive, overlapping matches); this module
//! copies it into a table of our own so the per-byte loop is as short as it can be: a byte's class
//! (the folded byte when some pattern holds it, else one class for every other byte), one indexed
//! load, one comparison against the highest match state. Match states are numbered first, so "is
//! this a match" is that comparison. The aho-corasick API asks two calls and a branch per byte
//! through its trait, which measured 3x slower in this loop (callgrind, `benches/instructions.sh
//! body100k`).

use aho_corasick::MatchKind;
use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous::NFA;

/// Most states of the table; beyond, the database is refused (it would not fit a cache anyway).
const MAX_STATES: usize = 1 << 20;
/// Views this long are walked as two interleaved halves.
const TWO_WALKS_FROM: usize = 1024;

/// The automaton over a set of patterns (matched ASCII case-insensitively, overlapping).
pub struct Table {
    /// Byte → class.
    class: [u8; 256],
    /// Transitions: `trans[state + class]`, states premultiplied by the number of classes.
    trans: Vec<u32>,
    /// States below this one are match states.
    match_limit: u32,
    start: u32,
    /// For match state `s / stride`, the range of `patterns` that end there.
    ends: Vec<(u32, u32)>,
    patterns: Vec<u32>,
    stride: u32,
    /// Length of the longest pattern.
    longest: usize,
}

/// Why the literal automaton cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{0}")]
    Build(#[from] aho_corasick::BuildError),
    #[error("{0}")]
    Start(#[from] aho_corasick::MatchError),
    #[error("more than 255 distinct pattern bytes")]
    TooManyBytes,
    #[error("every byte occurs in a pattern")]
    EveryByte,
    #[error("automaton state id out of range")]
    StateOutOfRange,
    #[error("more than {MAX_STATES} automaton states")]
    TooManyStates,
}

impl Table {
    /// The automaton of `patterns` (none empty).
    pub fn build(patterns: &[Vec<u8>]) -> Result<Table, TableError> {
        // The contiguous NFA, not aho-corasick's DFA: the table below is the DFA, so building
        // theirs too would only raise the peak of memory at start (and the freed pages stay
        // resident). The NFA's `next_state` follows failure transitions, so it walks the same states.
        let ac = NFA::builder()
            .match_kind(MatchKind::Standard)
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(patterns)?;
        // A byte matters only through the patterns holding it (either case): one class per folded
        // byte that occurs in a pattern, class 0 for all the others.
        let mut class = [0u8; 256];
        let mut representative = vec![0u8];
        for p in patterns {
            for &b in p {
                let folded = b.to_ascii_lowercase();
                if class[usize::from(folded)] == 0 {
                    let c =
                        u8::try_from(representative.len()).map_err(|_| TableError::TooManyBytes)?;
                    class[usize::from(folded)] = c;
                    class[usize::from(folded.to_ascii_uppercase())] = c;
                    representative.push(folded);
                }
            }
        }
        // Representative 0 must be a byte of class 0.
        representative[0] = (0..=255u8)
            .find(|&b| class[usize::from(b)] == 0)
            .ok_or(TableError::EveryByte)?;
        let stride = representative.len();

        // Every state reachable from the start (in aho-corasick's ids), numbered as found, with
        // its row of transitions to those numbers.
        let start = ac.start_state(aho_corasick::Anchored::No)?;
        // aho-corasick's state ids are offsets into its NFA, so below its size in u32s: a flat
        // index from id to number is cheaper than hashing every transition.
        const UNSEEN: u32 = u32::MAX;
        let mut index = vec![UNSEEN; ac.memory_usage() / 4 + 1];
        index[start.as_usize()] = 0;
        let mut states = vec![start];
        // A trie has at most one state per pattern byte (and the root). Reserving that bound up
        // front keeps the table from being copied as it grows; only the rows written become
        // resident, the rest of the reservation stays untouched address space.
        let bound = patterns.iter().map(Vec::len).sum::<usize>() + 1;
        let mut trans: Vec<u32> = Vec::with_capacity(bound.min(MAX_STATES) * stride);
        let mut k = 0;
        while k < states.len() {
            for &b in &representative {
                let next = ac.next_state(aho_corasick::Anchored::No, states[k], b);
                let seen = index
                    .get_mut(next.as_usize())
                    .ok_or(TableError::StateOutOfRange)?;
                if *seen == UNSEEN {
                    if states.len() == MAX_STATES {
                        return Err(TableError::TooManyStates);
                    }
                    *seen = states.len() as u32;
                    states.push(next);
                }
                trans.push(*seen);
            }
            k += 1;
        }
        drop(index);
        // Renumber, match states first: the entries to premultiplied new numbers, then the rows
        // moved to their new places in the same table (one cycle of the permutation at a time)
        // rather than copied into a second table.
        let mut order: Vec<usize> = (0..states.len()).collect();
        order.sort_by_key(|&i| !ac.is_match(states[i]));
        let mut new_id = vec![0u32; states.len()];
        for (n, &i) in order.iter().enumerate() {
            new_id[i] = (n * stride) as u32;
        }
        for t in &mut trans {
            *t = new_id[*t as usize];
        }
        let mut placed = vec![false; states.len()];
        let mut carried = vec![0u32; stride];
        for first in 0..states.len() {
            if placed[first] {
                continue;
            }
            // Carry the row of `first` to its place, the row found there to its own, and so on
            // until the cycle closes at `first`.
            carried.copy_from_slice(&trans[first * stride..][..stride]);
            let mut at = first;
            loop {
                let to = new_id[at] as usize / stride;
                placed[to] = true;
                let row = &mut trans[to * stride..][..stride];
                row.swap_with_slice(&mut carried);
                if to == first {
                    break;
                }
                at = to;
            }
        }
        let matches = order.iter().filter(|&&i| ac.is_match(states[i])).count();
        let mut ends = Vec::with_capacity(matches);
        let mut pats = Vec::new();
        for &i in &order[..matches] {
            let from = pats.len() as u32;
            for m in 0..ac.match_len(states[i]) {
                pats.push(ac.match_pattern(states[i], m).as_u32());
            }
            ends.push((from, pats.len() as u32));
        }
        Ok(Table {
            class,
            trans,
            match_limit: (matches * stride) as u32,
            start: new_id[0],
            ends,
            patterns: pats,
            stride: stride as u32,
            longest: patterns.iter().map(Vec::len).max().unwrap_or(1),
        })
    }

    /// Calls `found(end, pattern)` for every pattern occurrence in `view` (`end` is one past its
    /// last byte). Long views are walked as two interleaved halves (the walk waits on one load
    /// per byte, so two independent walks take little more time than one): occurrences then come
    /// out of order.
    #[inline]
    pub fn walk(&self, view: &[u8], mut found: impl FnMut(usize, usize)) {
        let mut report = |end: usize, state: u32| {
            let (first, last) = self.ends[(state / self.stride) as usize];
            for &p in &self.patterns[first as usize..last as usize] {
                found(end, p as usize);
            }
        };
        let (mut from, mut s) = (0, self.start);
        if view.len() >= TWO_WALKS_FROM.max(4 * self.longest) {
            // The second walk starts early enough to see whole every occurrence ending in its
            // half, and reports only those.
            let half = view.len() / 2;
            let second_from = half - (self.longest - 1);
            let (first, second) = (&view[..half], &view[second_from..]);
            let mut t = self.start;
            loop {
                let (at, a, b) = self.next_match_of_two(first, second, from, s, t);
                (s, t) = (a, b);
                if at == first.len() {
                    break;
                }
                if a < self.match_limit {
                    report(at + 1, a);
                }
                if b < self.match_limit && second_from + at >= half {
                    report(second_from + at + 1, b);
                }
                from = at + 1;
            }
            // The first walk is done; the second goes on alone.
            let rest = &view[second_from..];
            (from, s) = (first.len(), t);
            while let Some((at, m)) = self.next_match(rest, from, s) {
                report(second_from + at + 1, m);
                (from, s) = (at + 1, m);
            }
            return;
        }
        while let Some((at, m)) = self.next_match(view, from, s) {
            report(at + 1, m);
            (from, s) = (at + 1, m);
        }
    }

    /// From state `s` at `view[from]`, the place and state of the next match. Kept apart from
    /// [`Table::walk`] so the loop holds its few values in registers.
    #[inline(never)]
    fn next_match(&self, view: &[u8], from: usize, mut s: u32) -> Option<(usize, u32)> {
        let (trans, class, limit) = (&self.trans[..], &self.class, self.match_limit);
        for (k, &b) in view.get(from..)?.iter().enumerate() {
            s = trans[(s + u32::from(class[usize::from(b)])) as usize];
            if s < limit {
                return Some((from + k, s));
            }
        }
        None
    }

    /// [`Table::next_match`] of two walks in step over `a` and `b` (`b` no shorter), from
    /// `from` to the end of `a`: the place and both states when either is a match, else
    /// `a.len()` and the states at the end.
    #[inline(never)]
    fn next_match_of_two(
        &self,
        a: &[u8],
        b: &[u8],
        from: usize,
        mut s: u32,
        mut t: u32,
    ) -> (usize, u32, u32) {
        let (trans, class, limit) = (&self.trans[..], &self.class, self.match_limit);
        let pairs = a[from..].iter().zip(&b[from..]);
        for (k, (&x, &y)) in pairs.enumerate() {
            s = trans[(s + u32::from(class[usize::from(x)])) as usize];
            t = trans[(t + u32::from(class[usize::from(y)])) as usize];
            if s.min(t) < limit {
                return (from + k, s, t);
            }
        }
        (a.len(), s, t)
    }
}

impl Table {
    /// Bytes of the table in use on the heap (`trans` is allocated for the NFA's bound on the
    /// number of states; the part past its length is never written, so never resident).
    pub fn heap_bytes(&self) -> usize {
        self.trans.len() * size_of::<u32>()
            + self.ends.len() * size_of::<(u32, u32)>()
            + self.patterns.len() * size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn finds_every_overlapping_occurrence_in_either_case() {
        let pats: Vec<Vec<u8>> = ["or", "select", "sel", "--"]
            .iter()
            .map(|p| p.as_bytes().to_vec())
            .collect();
        let t = Table::build(&pats).expect("builds");
        let mut seen = Vec::new();
        t.walk(b"x OR 1 SeLect--", |end, p| seen.push((end, p)));
        assert_eq!(seen, [(4, 0), (10, 2), (13, 1), (15, 3)]);
        let mut none = 0;
        t.walk(b"\xff\x00plain text", |_, _| none += 1);
        assert_eq!(none, 0);
    }

    /// Long views are walked as two halves: every occurrence is still found exactly once,
    /// including those that straddle the middle.
    #[test]
    fn two_walks_find_what_one_finds() {
        let words = ["union", "select", "or", "etc/passwd", "<script"];
        let pats: Vec<Vec<u8>> = words.iter().map(|p| p.as_bytes().to_vec()).collect();
        let t = Table::build(&pats).expect("builds");
        for len in [1024usize, 1025, 3001] {
            for shift in 0..12 {
                let mut text = vec![b'x'; len];
                for (k, at) in [0, len / 2 - 6 + shift, len / 2 - 1, len - 10]
                    .iter()
                    .enumerate()
                {
                    let w = words[(k + shift) % words.len()].as_bytes();
                    let end = (*at + w.len()).min(len);
                    text[*at..end].copy_from_slice(&w[..end - at]);
                }
                let mut expected = Vec::new();
                for (p, w) in pats.iter().enumerate() {
                    for start in 0..=len - w.len() {
                        if text[start..start + w.len()].eq_ignore_ascii_case(w) {
                            expected.push((start + w.len(), p));
                        }
                    }
                }
                let mut seen = Vec::new();
                t.walk(&text, |end, p| seen.push((end, p)));
                seen.sort_unstable();
                expected.sort_unstable();
                assert_eq!(seen, expected, "length {len}, shift {shift}");
            }
        }
    }
}
