//! The literal automaton shared by every target: one automaton ([`Table`], ASCII case-insensitive)
//! over every signature literal and every regex anchor of the database that is longer than one
//! byte, walked once per view, each occurrence seen with its position; this module says what each
//! of its patterns means for the signatures. One-byte literals (`;`, `"`, `(`, ...) are common in ordinary text
//! and would stop the walk at every occurrence: their presence is read off the view's byte set
//! instead, and their places are looked up only for the signatures that still need them.
//!
//! A walk records, for the signatures of the view's target, which have one of their literals in
//! the view ([`ViewState::present`]) and where those with anchors may start a match
//! ([`ViewState::anchors`]); a signature whose regex cannot match the view (its byte groups, asked
//! once per view) records nothing, and one with too many places is run over the whole view.

use std::collections::HashMap;

use super::table::Table;
use crate::normalize::ByteSet;
use portcullis_support::InlineVec;

/// Most signatures a database may hold (per-scan flags are fixed-size bitsets on the stack).
pub const MAX_SIGNATURES: usize = 256;
// Anchor records hold the signature index in their low 8 bits and the place in the other 24.
const _: () = assert!(MAX_SIGNATURES <= 1 << 8);
/// Places past this one are not recorded as anchors (the signature is run over the whole view).
const MAX_ANCHOR_PLACE: usize = (1 << 24) - 1;
/// Anchored runs of one signature per view before its regex is run once over the whole view
/// instead (a literal that occurs everywhere, such as a quote in a JSON text).
const MAX_RUNS_PER_SIGNATURE: usize = 8;
/// Anchors recorded per view in all.
const MAX_ANCHOR_HITS: usize = 32;

/// One flag per signature.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct SigBits([u64; MAX_SIGNATURES / 64]);

impl SigBits {
    pub fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    pub fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    /// Adds the flags of `other` that `mask` also has.
    fn add_masked(&mut self, other: &SigBits, mask: &SigBits) {
        for ((w, o), m) in self.0.iter_mut().zip(other.0).zip(mask.0) {
            *w |= o & m;
        }
    }
    /// The indexes set, in increasing order.
    pub fn ones(self) -> impl Iterator<Item = usize> {
        let mut words = self.0;
        let mut w = 0;
        std::iter::from_fn(move || {
            while w < words.len() {
                if words[w] != 0 {
                    let b = words[w].trailing_zeros() as usize;
                    words[w] &= words[w] - 1;
                    return Some(w * 64 + b);
                }
                w += 1;
            }
            None
        })
    }
}

/// What one pattern of the automaton means.
#[derive(Default)]
struct Entry {
    len: usize,
    /// Signatures it is a literal of (one of them must occur).
    of: SigBits,
    /// Signatures whose regex may match starting where it occurs.
    anchors: Vec<u16>,
    /// Signatures whose regex may match through a `^` when it occurs at the start of the view.
    first: Vec<u16>,
}

/// What a walk found in one view.
pub struct ViewState {
    /// Signatures with one of their literals in the view.
    pub present: SigBits,
    /// Signatures to run over the whole view (too many anchors).
    pub whole: SigBits,
    checked: SigBits,
    impossible: SigBits,
    /// `place << 8 | signature` for each anchor found, in the order found.
    anchors: [u32; MAX_ANCHOR_HITS],
    anchor_len: usize,
}

impl ViewState {
    pub fn new() -> ViewState {
        ViewState {
            present: SigBits::default(),
            whole: SigBits::default(),
            checked: SigBits::default(),
            impossible: SigBits::default(),
            anchors: [0; MAX_ANCHOR_HITS],
            anchor_len: 0,
        }
    }

    /// Where signature `i` may start a match.
    pub fn anchors_of(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.anchors[..self.anchor_len]
            .iter()
            .filter(move |&&a| (a & 0xff) as usize == i)
            .map(|&a| (a >> 8) as usize)
    }

    /// Pattern `e` occurs at `start`.
    fn found(
        &mut self,
        e: &Entry,
        start: usize,
        applies: &SigBits,
        possible: &impl Fn(usize) -> bool,
    ) {
        self.present.add_masked(&e.of, applies);
        self.found_anchors(e, start, applies, possible);
        if start == 0 {
            self.found_first(e, applies, possible);
        }
    }

    /// Pattern `e` occurs at `start`: record it as an anchor of its signatures.
    fn found_anchors(
        &mut self,
        e: &Entry,
        start: usize,
        applies: &SigBits,
        possible: &impl Fn(usize) -> bool,
    ) {
        for &i in &e.anchors {
            let i = usize::from(i);
            if applies.get(i) {
                self.anchor(i, start, possible);
            }
        }
    }

    /// Pattern `e` starts the view: record the start for the signatures with a `^` it begins,
    /// and count them present (those whose matches all start so are not woken by their own
    /// literals elsewhere).
    fn found_first(&mut self, e: &Entry, applies: &SigBits, possible: &impl Fn(usize) -> bool) {
        for &i in &e.first {
            let i = usize::from(i);
            if applies.get(i) {
                self.present.set(i);
                self.anchor(i, 0, possible);
            }
        }
    }

    /// Whether signature `i` applies and may still record anchors.
    fn waits_for(&self, i: usize, applies: &SigBits) -> bool {
        applies.get(i) && !self.whole.get(i) && !self.impossible.get(i)
    }

    fn anchor(&mut self, i: usize, start: usize, possible: &impl Fn(usize) -> bool) {
        if self.whole.get(i) || self.impossible.get(i) {
            return;
        }
        if !self.checked.get(i) {
            self.checked.set(i);
            if !possible(i) {
                self.impossible.set(i);
                return;
            }
        }
        let runs = self.anchors_of(i).count();
        if runs < MAX_RUNS_PER_SIGNATURE
            && self.anchor_len < MAX_ANCHOR_HITS
            && start <= MAX_ANCHOR_PLACE
        {
            self.anchors[self.anchor_len] = (start as u32) << 8 | i as u32;
            self.anchor_len += 1;
        } else {
            self.whole.set(i);
        }
    }
}

/// What a one-byte literal means: an [`Entry`] kept outside the automaton.
struct OneByte {
    /// The byte, lower case.
    byte: u8,
    /// The byte in both cases (one byte when it is not a letter).
    bytes: ByteSet,
    entry: Entry,
}

/// Collects the automaton's patterns while the database compiles.
#[derive(Default)]
pub struct Builder {
    patterns: Vec<Vec<u8>>,
    /// Pattern → its position in `patterns`.
    index: HashMap<Vec<u8>, usize>,
    entries: Vec<Entry>,
    one_byte: Vec<OneByte>,
}

impl Builder {
    fn entry(&mut self, lit: &[u8]) -> &mut Entry {
        let folded = lit.to_ascii_lowercase();
        if let [byte] = folded[..] {
            let k = match self.one_byte.iter().position(|o| o.byte == byte) {
                Some(k) => k,
                None => {
                    self.one_byte.push(OneByte {
                        byte,
                        bytes: ByteSet::from_bytes(&[byte, byte.to_ascii_uppercase()]),
                        entry: Entry {
                            len: 1,
                            ..Entry::default()
                        },
                    });
                    self.one_byte.len() - 1
                }
            };
            return &mut self.one_byte[k].entry;
        }
        let k = match self.index.get(&folded) {
            Some(&k) => k,
            None => {
                self.entries.push(Entry {
                    len: folded.len(),
                    ..Entry::default()
                });
                self.index.insert(folded.clone(), self.patterns.len());
                self.patterns.push(folded);
                self.patterns.len() - 1
            }
        };
        &mut self.entries[k]
    }

    /// `lit` is a literal of signature `sig`.
    pub fn literal(&mut self, sig: usize, lit: &[u8]) {
        self.entry(lit).of.set(sig);
    }

    /// Matches of signature `sig` may start with `lit`.
    pub fn anchor(&mut self, sig: usize, lit: &[u8]) {
        let e = self.entry(lit);
        if !e.anchors.contains(&(sig as u16)) {
            e.anchors.push(sig as u16);
        }
    }

    /// Matches of signature `sig` through a `^` may start with `lit`.
    pub fn first(&mut self, sig: usize, lit: &[u8]) {
        let e = self.entry(lit);
        if !e.first.contains(&(sig as u16)) {
            e.first.push(sig as u16);
        }
    }

    pub fn build(self) -> Result<Literals, super::table::TableError> {
        let table = if self.patterns.is_empty() {
            None
        } else {
            Some(Table::build(&self.patterns)?)
        };
        let one_byte_set = self
            .one_byte
            .iter()
            .fold(ByteSet::EMPTY, |set, o| set.or(&o.bytes));
        let mut one_byte_index = [0u8; 256];
        for (k, o) in self.one_byte.iter().enumerate() {
            for b in o.bytes.iter() {
                // At most 256 one-byte literals exist, one per byte value (a letter's two cases share one).
                one_byte_index[usize::from(b)] = k as u8;
            }
        }
        Ok(Literals {
            table,
            entries: self.entries,
            one_byte: self.one_byte,
            one_byte_set,
            one_byte_index,
        })
    }
}

/// The compiled automaton, what each of its patterns means, and the one-byte literals.
pub struct Literals {
    table: Option<Table>,
    entries: Vec<Entry>,
    one_byte: Vec<OneByte>,
    /// Every byte (both cases) of a one-byte literal.
    one_byte_set: ByteSet,
    /// For each byte of `one_byte_set`, its position in `one_byte`.
    one_byte_index: [u8; 256],
}

/// The automaton's occurrences in one view, in the order found: (end, pattern).
pub type Occurrences = InlineVec<(usize, u32), 8>;

impl Literals {
    /// Whether any byte of `present` is a one-byte literal.
    pub fn has_one_byte(&self, present: &ByteSet) -> bool {
        present.intersects(&self.one_byte_set)
    }

    /// Bytes held on the heap: (the automaton's table, what its patterns mean).
    pub fn heap_bytes(&self) -> (usize, usize) {
        let entry = |e: &Entry| {
            size_of::<Entry>() + (e.anchors.capacity() + e.first.capacity()) * size_of::<u16>()
        };
        let entries = self.entries.iter().map(entry).sum::<usize>()
            + self
                .one_byte
                .iter()
                .map(|o| size_of::<OneByte>() - size_of::<Entry>() + entry(&o.entry))
                .sum::<usize>();
        (self.table.as_ref().map_or(0, Table::heap_bytes), entries)
    }

    /// Every occurrence in `view` of the automaton's patterns (one pass).
    pub fn occurrences(&self, view: &[u8], found: &mut Occurrences) {
        if let Some(table) = &self.table {
            table.walk(view, |end, p| found.push((end, p as u32)));
        }
    }

    /// Records in `vs` what the occurrences `found` (from [`Literals::occurrences`] on `view`) and
    /// the one-byte literals mean for the signatures in `applies`; `present` is the view's byte
    /// set and `possible(i)` says whether signature `i`'s regex can match the view at all.
    pub fn apply(
        &self,
        view: &[u8],
        present: &ByteSet,
        found: &Occurrences,
        applies: &SigBits,
        possible: impl Fn(usize) -> bool,
        vs: &mut ViewState,
    ) {
        for &(end, p) in found.iter() {
            let e = &self.entries[p as usize];
            vs.found(e, end - e.len, applies, &possible);
        }
        let bytes = present.and(&self.one_byte_set);
        if bytes != ByteSet::EMPTY {
            self.one_byte_places(view, &bytes, applies, &possible, vs);
        }
    }

    /// The one-byte literals the view holds (`bytes`, from its byte set): their signatures are
    /// present, and the places of the byte are anchors of the signatures still waiting for them.
    fn one_byte_places(
        &self,
        view: &[u8],
        bytes: &ByteSet,
        applies: &SigBits,
        possible: &impl Fn(usize) -> bool,
        vs: &mut ViewState,
    ) {
        for b in bytes.iter() {
            let k = self.one_byte_index[usize::from(b)];
            // A letter is listed under both its cases: visit its literal once.
            if b.is_ascii_alphabetic() && b.is_ascii_uppercase() && bytes.contains(b | 0x20) {
                continue;
            }
            let o = &self.one_byte[usize::from(k)];
            let e = &o.entry;
            vs.present.add_masked(&e.of, applies);
            if view.first().map(u8::to_ascii_lowercase) == Some(o.byte) {
                vs.found_first(e, applies, possible);
            }
            if !e
                .anchors
                .iter()
                .any(|&i| vs.waits_for(usize::from(i), applies))
            {
                continue;
            }
            let upper = o.byte.to_ascii_uppercase();
            for at in memchr::memchr2_iter(o.byte, upper, view) {
                vs.found_anchors(e, at, applies, possible);
            }
        }
    }
}
