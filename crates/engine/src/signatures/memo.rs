//! A per-thread memo of recent scan results.
//!
//! A scan is a pure function of the database, the target and the value's bytes, and real traffic
//! repeats most of what it sends: a browser's `User-Agent`, `Accept` and `Accept-Language`, the
//! names of an application's parameters, their common values. The memo is a two-way set-associative
//! table of [`SLOTS`] slots per thread (the less recently used of a set's two is replaced), indexed by
//! a randomly seeded hash of (database, selection of signatures, value) and checked against the stored bytes, so a
//! hit is exact and a collision is only a miss. Values longer
//! than [`MAX_VALUE`] bytes are not kept; a thread holds at most `SLOTS × MAX_VALUE` bytes of values.
//!
//! An attacker who floods the table only evicts entries: every lookup stays one slot, and a miss
//! costs a scan, as it would without the memo. Callers keep secrets out of it (cookies, credentials,
//! sensitive parameters; see `CompiledPolicy::scan`) so that a response's timing cannot tell whether
//! someone else sent the same secret recently.

use std::cell::RefCell;
use std::hash::{BuildHasher, Hasher};

/// Slots per thread (a power of two).
pub const SLOTS: usize = 1024;
/// Longest value kept, in bytes.
pub const MAX_VALUE: usize = 512;

/// What a value was scanned by: the database and the selection of its signatures (a target's,
/// or a header name's), packed (never 0, the empty slot's).
fn source(db: u64, selection: usize) -> u64 {
    db << 16 | (selection as u64 + 1)
}

#[derive(Default)]
struct Slot {
    hash: u64,
    /// [`source`] of the value held; 0 while the slot is empty.
    source: u64,
    value: Vec<u8>,
    hits: Vec<u32>,
    /// Used more recently than the other slot of its set.
    recent: bool,
}

impl Slot {
    #[inline]
    fn holds(&self, hash: u64, source: u64, value: &[u8]) -> bool {
        self.hash == hash && self.source == source && same_bytes(&self.value, value)
    }
}

/// `a == b`, values of up to 16 bytes (most look-ups: names, numbers, words) compared by two
/// overlapping words each, without a call to `memcmp`. Inlined into each look-up, as [`holder`]
/// is: a JSON document's items make one each, and the call costs as much as the comparison.
/// The schema walk's property look-up compares names with it for the same reason.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 16 {
        return a == b;
    }
    fn ends<const N: usize>(v: &[u8]) -> Option<(&[u8; N], &[u8; N])> {
        Some((v.first_chunk::<N>()?, v.last_chunk::<N>()?))
    }
    if let (Some(x), Some(y)) = (ends::<8>(a), ends::<8>(b)) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (ends::<4>(a), ends::<4>(b)) {
        return x == y;
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// A value of up to 16 bytes as two words that together hold every byte of it: its first and
/// last eight (overlapping when shorter than 16), its first and last four, or its bytes; `None`
/// for a longer value.
#[inline(always)]
fn short_words(v: &[u8]) -> Option<(u64, u64)> {
    if v.len() > 16 {
        return None;
    }
    if let (Some(a), Some(b)) = (v.first_chunk::<8>(), v.last_chunk::<8>()) {
        return Some((u64::from_le_bytes(*a), u64::from_le_bytes(*b)));
    }
    if let (Some(a), Some(b)) = (v.first_chunk::<4>(), v.last_chunk::<4>()) {
        return Some((
            u64::from(u32::from_le_bytes(*a)),
            u64::from(u32::from_le_bytes(*b)),
        ));
    }
    let word = v.iter().fold(0u64, |w, &byte| w << 8 | u64::from(byte));
    Some((word, 0))
}

/// The two halves of the full product of `a` and `b`, folded into one word: every bit of both
/// reaches the low bits the set is picked by.
#[inline(always)]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let full = u128::from(a) * u128::from(b);
    (full as u64) ^ ((full >> 64) as u64)
}

/// This thread's memo, lent by [`with_memo`] for a run of look-ups.
pub struct Memo {
    state: foldhash::fast::RandomState,
    /// Random words a value of up to 16 bytes is hashed with ([`Memo::hash`]).
    seeds: [u64; 2],
    slots: Vec<Slot>,
}

impl Memo {
    fn new() -> Memo {
        let state = foldhash::fast::RandomState::default();
        Memo {
            seeds: [state.hash_one(0u64), state.hash_one(1u64)],
            state,
            slots: std::iter::repeat_with(Slot::default).take(SLOTS).collect(),
        }
    }

    /// A value of up to 16 bytes (most look-ups: a JSON document's keys, numbers and words) is
    /// hashed as its two words (read as [`same_bytes`] reads them) folded by one multiplication
    /// with the random seeds, the source and the length, without a hasher's state to build and
    /// finish; a longer one by the seeded hasher. A collision is only a miss (the slot's bytes are
    /// compared), and the seeds keep which values share a set unpredictable to a client.
    #[inline(always)]
    fn hash(&self, source: u64, value: &[u8]) -> u64 {
        if let Some((a, b)) = short_words(value) {
            let [s0, s1] = self.seeds;
            return folded_multiply(a ^ s0 ^ source, b ^ s1 ^ value.len() as u64);
        }
        let mut h = self.state.build_hasher();
        h.write_u64(source);
        h.write(value);
        h.finish()
    }

    /// Appends to `hits` what `scan` appends for (`db`, `selection`, `value`), from the memo when
    /// it holds the answer, else from `scan` (whose answer is then kept in the less recently used
    /// slot of the set).
    pub fn scan(
        &mut self,
        db: u64,
        selection: usize,
        value: &[u8],
        hits: &mut Vec<u32>,
        scan: impl FnOnce(&mut Vec<u32>),
    ) {
        if value.len() > MAX_VALUE {
            return scan(hits);
        }
        let source = source(db, selection);
        let hash = self.hash(source, value);
        let (slot, other) = match holder(set_of(&mut self.slots, hash), hash, source, value) {
            Ok(found) => found,
            Err([a, b]) => {
                let from = hits.len();
                scan(hits);
                let (slot, other) = if a.recent { (b, a) } else { (a, b) };
                slot.hash = hash;
                slot.source = source;
                slot.value.clear();
                slot.value.extend_from_slice(value);
                slot.hits.clear();
                slot.hits.extend_from_slice(&hits[from..]);
                (slot.recent, other.recent) = (true, false);
                return;
            }
        };
        hits.extend_from_slice(&slot.hits);
        (slot.recent, other.recent) = (true, false);
    }

    /// Whether the memo holds (`db`, `selection`, `value`) with no hits: the answer [`Self::scan`]
    /// would give from the memo, without a scan to hand it or hits to copy. A found answer is
    /// marked used, as [`Self::scan`] marks it.
    #[inline]
    pub fn holds_clean(&mut self, db: u64, selection: usize, value: &[u8]) -> bool {
        if value.len() > MAX_VALUE {
            return false;
        }
        let source = source(db, selection);
        let hash = self.hash(source, value);
        let Ok((slot, other)) = holder(set_of(&mut self.slots, hash), hash, source, value) else {
            return false;
        };
        if !slot.hits.is_empty() {
            return false;
        }
        (slot.recent, other.recent) = (true, false);
        true
    }
}

thread_local! {
    static MEMO: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// How a scan uses the memo.
pub enum MemoUse<'a> {
    /// Lent by [`with_memo`] for a run of look-ups (a JSON document's items).
    Lent(&'a mut Memo),
    /// This thread's memo, borrowed at the look-up only: a lone value that the prefilter settles
    /// (most of them) pays nothing for the memo.
    AtLookUp,
    /// No memo: a secret, or the memo already lent further up the stack.
    Off,
}

impl MemoUse<'_> {
    /// The same use, for one more call, while `self` is kept for later ones.
    pub fn reborrow(&mut self) -> MemoUse<'_> {
        match self {
            MemoUse::Lent(memo) => MemoUse::Lent(memo),
            MemoUse::AtLookUp => MemoUse::AtLookUp,
            MemoUse::Off => MemoUse::Off,
        }
    }

    /// Answers `value`'s scan from the memo this use allows, `scan` filling `hits` on a miss.
    pub(super) fn scan(
        self,
        db: u64,
        selection: usize,
        value: &[u8],
        hits: &mut Vec<u32>,
        scan: impl FnOnce(&mut Vec<u32>),
    ) {
        match self {
            MemoUse::Lent(memo) => memo.scan(db, selection, value, hits, scan),
            MemoUse::AtLookUp => with_memo(|memo| match memo {
                Some(memo) => memo.scan(db, selection, value, hits, scan),
                None => scan(hits),
            }),
            MemoUse::Off => scan(hits),
        }
    }
}

impl<'a> From<Option<&'a mut Memo>> for MemoUse<'a> {
    fn from(memo: Option<&'a mut Memo>) -> Self {
        memo.map_or(MemoUse::Off, MemoUse::Lent)
    }
}

/// Runs `f` with this thread's memo (made on first use), borrowed once for every look-up `f` makes:
/// the items of a JSON body are scanned under one borrow, not one per item. `None` when the memo
/// is already lent further up the stack (callers pass theirs down instead): `f` then scans without
/// it, which gives the same answers.
pub fn with_memo<R>(f: impl FnOnce(Option<&mut Memo>) -> R) -> R {
    MEMO.with(|cell| match cell.try_borrow_mut() {
        Ok(mut memo) => f(Some(memo.get_or_insert_with(Memo::new))),
        Err(_) => f(None),
    })
}

/// The two slots of `hash`'s set.
fn set_of(slots: &mut [Slot], hash: u64) -> [&mut Slot; 2] {
    let set = (hash as usize & (SLOTS / 2 - 1)) * 2;
    let (a, b) = slots[set..set + 2].split_at_mut(1);
    [&mut a[0], &mut b[0]]
}

/// The slot of a set holding (`source`, `value`) and the other one, or the set back when neither does.
/// Inlined into each look-up (a JSON document makes one per key and value): the call and its
/// result passed through memory cost as much as the comparison.
#[inline(always)]
fn holder<'a>(
    [a, b]: [&'a mut Slot; 2],
    hash: u64,
    source: u64,
    value: &[u8],
) -> Result<(&'a mut Slot, &'a mut Slot), [&'a mut Slot; 2]> {
    if a.holds(hash, source, value) {
        Ok((a, b))
    } else if b.holds(hash, source, value) {
        Ok((b, a))
    } else {
        Err([a, b])
    }
}

/// Whether this thread's memo holds the answer for (`db`, `selection`, `value`).
#[cfg(test)]
pub fn holds(db: u64, selection: usize, value: &[u8]) -> bool {
    let source = source(db, selection);
    with_memo(|memo| {
        memo.is_some_and(|m| {
            let hash = m.hash(source, value);
            let [a, b] = set_of(&mut m.slots, hash);
            a.holds(hash, source, value) || b.holds(hash, source, value)
        })
    })
}

#[cfg(test)]
mod tests {
    /// Values of every length up to 16 (numbers, keys, the same byte repeated) and their sources
    /// fall into the sets about evenly, as the hasher's would: a short value's hash reads every
    /// byte, its length and its source.
    #[test]
    fn short_values_spread_over_the_sets() {
        let memo = super::Memo::new();
        let mut values: Vec<Vec<u8>> = Vec::new();
        for i in 0..1500u32 {
            values.push(i.to_string().into_bytes());
            values.push(format!("key{i}").into_bytes());
            values.push(format!("{i:016}").into_bytes());
        }
        for len in 0..=16 {
            values.push(vec![b'0'; len]);
        }
        let sets = super::SLOTS / 2;
        let mut per_set = vec![0usize; sets];
        for source in [1u64, 2] {
            for v in &values {
                assert!(v.len() <= 16);
                per_set[memo.hash(source, v) as usize & (sets - 1)] += 1;
            }
        }
        let mean = 2 * values.len() / sets;
        let fullest = per_set.iter().copied().max().unwrap_or(0);
        assert!(
            fullest <= 3 * mean,
            "{fullest} values in one set (mean {mean})"
        );
        let distinct: std::collections::HashSet<&Vec<u8>> = values.iter().collect();
        let hashes: std::collections::HashSet<u64> =
            distinct.iter().map(|v| memo.hash(1, v)).collect();
        assert_eq!(
            hashes.len(),
            distinct.len(),
            "distinct short values, distinct hashes"
        );
    }

    #[test]
    fn same_bytes_is_equality() {
        let values: Vec<Vec<u8>> = (0..40)
            .flat_map(|n| {
                let v: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
                // The same length, one byte changed: first, middle, last.
                let changed = |at: usize| {
                    let mut w = v.clone();
                    if let Some(b) = w.get_mut(at) {
                        *b ^= 1;
                    }
                    w
                };
                let (first, middle, last) = (changed(0), changed(n / 2), changed(n.max(1) - 1));
                [v, first, middle, last]
            })
            .collect();
        for a in &values {
            for b in &values {
                assert_eq!(super::same_bytes(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }
}
