//! The JSON document of a request, parsed once for every reader: strings and keys borrowed from the
//! request bytes when they carry no escapes, arrays as slices and objects as slices of (key, value)
//! pairs in document order. Nothing is hashed: a request document is walked a few times (the
//! schema, the signature scan) and dropped, so building a map per object costs more than every
//! lookup the walks make. Every container and unescaped string lives in one [`Arena`] that the
//! caller keeps for the document's life: a document costs a few arena chunks, not an allocation
//! per container and string, and dropping it walks nothing.
//!
//! Acceptance is serde_json's: `super::json_read` reads the documents it can read exactly as
//! serde_json does and declines the others, which serde_json then parses through this module's
//! visitor (the same grammar, error text and nesting limit as for `serde_json::Value`). The signature scan reads the document as written,
//! every occurrence of a repeated key (the applications behind do not agree on which one wins); the
//! schema reads what `Value` (an insertion-ordered map) makes of it, so verdicts do not depend on the
//! representation: one entry, at the first occurrence's position, holding the last occurrence's
//! value.

use bumpalo::Bump;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::{Number, Value};
use std::cell::{Cell, OnceCell};
use std::fmt;

/// One JSON value borrowed from the document it was parsed from and from its [`Arena`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(&'a str),
    Array(&'a [Json<'a>]),
    /// Pairs in document order; keys are unique once merged (see the module header).
    Object(&'a [(&'a str, Json<'a>)]),
}

// The arena frees its chunks without running destructors: a value that owned heap memory (a
// `Number` under serde_json's `arbitrary_precision`, which another crate could turn on) would leak
// once per document. The build fails instead.
const _: () = assert!(!std::mem::needs_drop::<Json<'static>>());

/// Where a document's containers and unescaped strings are kept: freed all at once with the
/// arena, never walked (a [`Json`] owns nothing that needs dropping). The memory is this thread's
/// spare arena, taken at the first allocation and given back, emptied, when the arena goes: a
/// thread parses its requests' documents into the same chunk instead of allocating per document.
pub(crate) struct Arena(OnceCell<Bump>);

thread_local! {
    static SPARE: Cell<Option<Bump>> = const { Cell::new(None) };
}

/// Largest arena a thread keeps between documents: a big document's is freed with it, so that
/// what a thread holds while idle stays small.
const KEEP: usize = 64 * 1024;

impl Arena {
    pub fn new() -> Self {
        Arena(OnceCell::new())
    }

    fn bump(&self) -> &Bump {
        self.0.get_or_init(|| SPARE.take().unwrap_or_default())
    }

    /// A slice of exactly the items `items` yields.
    pub(super) fn slice<T, I>(&self, items: I) -> &[T]
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        self.bump().alloc_slice_fill_iter(items)
    }

    fn str(&self, s: &str) -> &str {
        self.bump().alloc_str(s)
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        if let Some(mut bump) = self.0.take() {
            // Keeps the largest chunk only; nothing in it is dropped (see the type's header).
            bump.reset();
            if bump.allocated_bytes() <= KEEP {
                SPARE.set(Some(bump));
            }
        }
    }
}

/// Objects up to this many pairs are searched pairwise (duplicate keys, equality), without
/// allocating; larger ones sort an index, so that a hostile object costs n log n, not n².
const PAIRWISE: usize = 16;

impl<'a> Json<'a> {
    /// Parses a whole document (trailing bytes other than whitespace are an error), repeated keys
    /// merged.
    pub fn parse(bytes: &'a [u8], arena: &'a Arena) -> Result<Json<'a>, serde_json::Error> {
        let mut repeats = false;
        let doc = parse_written(bytes, arena, &mut repeats)?;
        Ok(if repeats { doc.merged(arena) } else { doc })
    }

    /// A copy with the repeated keys of every object merged, outside in (an object dropped with
    /// its key needs no merging of its own). Strings and untouched scalars are shared.
    fn merged(&self, arena: &'a Arena) -> Json<'a> {
        match self {
            Json::Array(items) => Json::Array(arena.slice(items.iter().map(|i| i.merged(arena)))),
            Json::Object(pairs) => {
                let kept = dedup(pairs);
                Json::Object(arena.slice(kept.into_iter().map(|(k, v)| (k, v.merged(arena)))))
            }
            other => other.clone(),
        }
    }

    /// Compact JSON text, byte for byte what `serde_json::Value::to_string` writes.
    pub fn render(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The text a violation shows: a string's own characters, any other value as JSON.
    pub fn display(&self) -> String {
        match self {
            Json::String(s) => (*s).to_string(),
            other => other.render(),
        }
    }

    /// JSON Schema equality (`enum`, `uniqueItems`): top-level numbers by value (`1 == 1.0`);
    /// inside arrays and objects numbers by representation, objects regardless of key order.
    pub fn same(&self, other: &Json<'_>) -> bool {
        match (self, other) {
            (Json::Number(a), Json::Number(b)) => a.as_f64() == b.as_f64(),
            _ => self.deep_eq(other),
        }
    }

    /// Like [`Self::same`], against a value from the schema (an `enum` or `const`).
    pub fn same_as(&self, other: &Value) -> bool {
        match (self, other) {
            (Json::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
            _ => self.eq_value(other),
        }
    }

    fn deep_eq(&self, other: &Json<'_>) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Number(a), Json::Number(b)) => a == b,
            (Json::String(a), Json::String(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.deep_eq(y))
            }
            (Json::Object(a), Json::Object(b)) => objects_eq(a, b),
            _ => false,
        }
    }

    fn eq_value(&self, other: &Value) -> bool {
        match (self, other) {
            (Json::Null, Value::Null) => true,
            (Json::Bool(a), Value::Bool(b)) => a == b,
            (Json::Number(a), Value::Number(b)) => a == b,
            (Json::String(a), Value::String(b)) => a == b,
            (Json::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.eq_value(y))
            }
            // Keys are unique on both sides, so equal sizes and every key found means equal.
            (Json::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(*k).is_some_and(|w| v.eq_value(w)))
            }
            _ => false,
        }
    }
}

type Pairs<'a> = [(&'a str, Json<'a>)];

fn objects_eq(a: &Pairs<'_>, b: &Pairs<'_>) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() <= PAIRWISE {
        return a.iter().all(|(k, v)| {
            b.iter()
                .find(|(bk, _)| bk == k)
                .is_some_and(|(_, w)| v.deep_eq(w))
        });
    }
    // Keys are unique on both sides: sorted, equal objects pair up position by position.
    let (sa, sb) = (by_key(a), by_key(b));
    sa.iter()
        .zip(&sb)
        .all(|(&i, &j)| a[i].0 == b[j].0 && a[i].1.deep_eq(&b[j].1))
}

/// The positions of `pairs` in key order.
fn by_key(pairs: &Pairs<'_>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|&x, &y| pairs[x].0.cmp(pairs[y].0));
    order
}

/// Whether a key occurs twice among `pairs`.
pub(super) fn repeats(pairs: &Pairs<'_>) -> bool {
    let n = pairs.len();
    if n <= PAIRWISE {
        return (1..n).any(|i| pairs[..i].iter().any(|p| p.0 == pairs[i].0));
    }
    let order = by_key(pairs);
    order.windows(2).any(|w| pairs[w[0]].0 == pairs[w[1]].0)
}

/// The pairs merged the way an insertion-ordered map merges repeated keys: the first position
/// keeps the last value, later occurrences go.
fn dedup<'a>(pairs: &Pairs<'a>) -> Vec<(&'a str, Json<'a>)> {
    let mut pairs = pairs.to_vec();
    if !repeats(&pairs) {
        return pairs;
    }
    let n = pairs.len();
    // `by_key` sorts stably: equal keys stay in document order within their run.
    let order = by_key(&pairs);
    let mut gone = vec![false; n];
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && pairs[order[end]].0 == pairs[order[start]].0 {
            end += 1;
        }
        if end - start > 1 {
            let value = std::mem::replace(&mut pairs[order[end - 1]].1, Json::Null);
            pairs[order[start]].1 = value;
            for &i in &order[start + 1..end] {
                gone[i] = true;
            }
        }
        start = end;
    }
    let mut i = 0;
    pairs.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
    pairs
}

/// A request body as the checks read it: its bytes, and its JSON document parsed the first time a
/// check asks for it, then shared by every later reader.
pub(crate) struct JsonBody<'a> {
    bytes: &'a [u8],
    arena: &'a Arena,
    parsed: OnceCell<Result<Parsed<'a>, serde_json::Error>>,
}

struct Parsed<'a> {
    /// Every pair of every object, as written.
    written: Json<'a>,
    /// The document with its repeated keys merged, when it has any.
    merged: Option<Json<'a>>,
}

impl<'a> JsonBody<'a> {
    pub fn new(bytes: &'a [u8], arena: &'a Arena) -> Self {
        JsonBody {
            bytes,
            arena,
            parsed: OnceCell::new(),
        }
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn parsed(&self) -> Result<&Parsed<'a>, &serde_json::Error> {
        self.parsed
            .get_or_init(|| {
                let mut repeats = false;
                let written = parse_written(self.bytes, self.arena, &mut repeats)?;
                let merged = repeats.then(|| written.merged(self.arena));
                Ok(Parsed { written, merged })
            })
            .as_ref()
    }

    /// The document as a schema reads it, repeated keys merged (see the module header).
    pub fn document(&self) -> Result<&Json<'a>, &serde_json::Error> {
        self.parsed()
            .map(|p| p.merged.as_ref().unwrap_or(&p.written))
    }

    /// The document as written, every occurrence of a repeated key kept.
    pub fn written(&self) -> Result<&Json<'a>, &serde_json::Error> {
        self.parsed().map(|p| &p.written)
    }
}

/// Parses a whole document keeping every pair; `repeats` is set when an object repeats a key.
/// Text that is UTF-8 is validated here once, in one pass over the bytes, and read without
/// serde_json validating each string again; other bytes go through serde_json's checking reader,
/// whose error names the position of the bad sequence.
fn parse_written<'a>(
    bytes: &'a [u8],
    arena: &'a Arena,
    repeats: &mut bool,
) -> Result<Json<'a>, serde_json::Error> {
    let mut scratch = Scratch::new(arena);
    let doc = match std::str::from_utf8(bytes) {
        Ok(text) => match super::json_read::document(text, &mut scratch) {
            Some(doc) => doc,
            None => {
                scratch.clear();
                parse_with(serde_json::Deserializer::from_str(text), &mut scratch)?
            }
        },
        Err(_) => parse_with(serde_json::Deserializer::from_slice(bytes), &mut scratch)?,
    };
    *repeats = scratch.repeats;
    Ok(doc)
}

/// The document as serde_json alone parses it, for the tests that hold `super::json_read` to it.
#[cfg(test)]
pub(super) fn parse_serde<'a>(
    bytes: &'a [u8],
    arena: &'a Arena,
) -> Result<(Json<'a>, bool), serde_json::Error> {
    let mut scratch = Scratch::new(arena);
    let doc = parse_with(serde_json::Deserializer::from_slice(bytes), &mut scratch)?;
    Ok((doc, scratch.repeats))
}

fn parse_with<'a, R: serde_json::de::Read<'a>>(
    mut de: serde_json::Deserializer<R>,
    scratch: &mut Scratch<'a>,
) -> Result<Json<'a>, serde_json::Error> {
    let doc = Written(scratch).deserialize(&mut de)?;
    de.end()?;
    Ok(doc)
}

/// Room the scratch stacks start with: what a typical API document holds open at once.
const SCRATCH: usize = 32;
/// Largest scratch stack (members) a thread keeps for its next document: both stacks at this
/// size hold about what the arena keeps (`KEEP`), so what a thread holds while idle stays small.
const KEEP_MEMBERS: usize = 1024;

/// The two scratch stacks, emptied, borrowing nothing.
type Stacks = (Vec<Json<'static>>, Vec<(&'static str, Json<'static>)>);

thread_local! {
    /// The stacks of this thread's last document, kept for its next one: a document takes them
    /// instead of allocating its own two.
    static SPARE_STACKS: Cell<Option<Stacks>> = const { Cell::new(None) };
}

/// `v` emptied, as a vector of `U`: collected in place, so a `U` of `T`'s layout (an item that
/// borrows nothing instead of one borrowing a document) keeps its buffer and capacity.
fn emptied<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// The containers being parsed, their members so far on two stacks shared by the whole parse (an
/// inner container's members sit above its parent's and leave before them), so that each array or
/// object is allocated once, at its final size, instead of growing a vector of its own.
pub(super) struct Scratch<'de> {
    pub(super) items: Vec<Json<'de>>,
    pub(super) pairs: Vec<(&'de str, Json<'de>)>,
    /// Some object repeats a key.
    pub(super) repeats: bool,
    pub(super) arena: &'de Arena,
    /// The string being unescaped, kept between strings so that it grows only to the longest.
    pub(super) unescaped: String,
}

impl<'de> Scratch<'de> {
    pub(super) fn new(arena: &'de Arena) -> Self {
        let (items, pairs) = SPARE_STACKS
            .take()
            .unwrap_or_else(|| (Vec::with_capacity(SCRATCH), Vec::with_capacity(SCRATCH)));
        Scratch {
            items,
            pairs,
            repeats: false,
            arena,
            unescaped: String::new(),
        }
    }

    /// The members of the array being closed, from `base` up, moved into the arena.
    pub(super) fn array(&mut self, base: usize) -> Json<'de> {
        Json::Array(self.arena.slice(self.items.drain(base..)))
    }

    /// The pairs of the object being closed, from `base` up, moved into the arena.
    pub(super) fn object(&mut self, base: usize) -> Json<'de> {
        let pairs = self.arena.slice(self.pairs.drain(base..));
        // Once one is found, the merge visits every object anyway.
        self.repeats = self.repeats || repeats(pairs);
        Json::Object(pairs)
    }

    /// An unescaped string, kept in the arena.
    pub(super) fn string(&self, s: &str) -> &'de str {
        self.arena.str(s)
    }

    /// Empty again, after a reader that declined a document part of the way through it.
    fn clear(&mut self) {
        self.items.clear();
        self.pairs.clear();
        self.repeats = false;
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        let (items, pairs) = (
            std::mem::take(&mut self.items),
            std::mem::take(&mut self.pairs),
        );
        if items.capacity() <= KEEP_MEMBERS && pairs.capacity() <= KEEP_MEMBERS {
            SPARE_STACKS.set(Some((emptied(items), emptied(pairs))));
        }
    }
}

/// Builds a [`Json`] with every pair as written, flagging an object that repeats a key.
struct Written<'s, 'de>(&'s mut Scratch<'de>);

impl<'de> DeserializeSeed<'de> for Written<'_, 'de> {
    type Value = Json<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Written<'_, 'de> {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(i.into()))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(u.into()))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Json<'de>, E> {
        // As `Value` does: a non-finite float (not valid JSON) becomes null.
        Ok(Number::from_f64(f).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(self.0.string(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let base = self.0.items.len();
        while let Some(item) = seq.next_element_seed(Written(&mut *self.0))? {
            self.0.items.push(item);
        }
        Ok(self.0.array(base))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let base = self.0.pairs.len();
        while let Some(key) = map.next_key_seed(Key(self.0.arena))? {
            let value = map.next_value_seed(Written(&mut *self.0))?;
            self.0.pairs.push((key, value));
        }
        Ok(self.0.object(base))
    }
}

/// An object key, borrowed when it has no escapes, else unescaped into the arena (serde's own
/// `Cow<str>` always copies).
struct Key<'de>(&'de Arena);

impl<'de> DeserializeSeed<'de> for Key<'de> {
    type Value = &'de str;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'de str, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'de> {
    type Value = &'de str;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<&'de str, E> {
        Ok(s)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<&'de str, E> {
        Ok(self.0.str(s))
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => s.collect_seq(items.iter()),
            Json::Object(pairs) => s.collect_map(pairs.iter().map(|(k, v)| (*k, v))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document's scratch stacks go to the next one emptied but with their buffer (what spares
    /// a parse its two allocations), and the next document parses as the first did.
    #[test]
    fn the_scratch_stacks_are_handed_on_with_their_buffers() {
        let mut pairs: Vec<(&str, Json<'_>)> = Vec::with_capacity(SCRATCH);
        pairs.push(("a", Json::Null));
        let (at, room) = (pairs.as_ptr() as usize, pairs.capacity());
        let kept: Vec<(&'static str, Json<'static>)> = emptied(pairs);
        assert_eq!((kept.as_ptr() as usize, kept.capacity()), (at, room));
        assert!(kept.is_empty());
        let text = r#"{"a":[1,{"b":"c"}],"d":{"e":null}}"#;
        for _ in 0..3 {
            same_as_value(text);
        }
    }

    fn same_as_value(text: &str) {
        let arena = Arena::new();
        let json = Json::parse(text.as_bytes(), &arena);
        let value = serde_json::from_str::<Value>(text);
        match (&json, &value) {
            (Ok(j), Ok(v)) => {
                assert_eq!(j.render(), v.to_string(), "{text}");
                assert!(j.eq_value(v), "{text}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
            _ => panic!("{text}: {json:?} against {value:?}"),
        }
    }

    #[test]
    fn accepts_refuses_and_renders_like_value() {
        let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let too_deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        for text in [
            r#"{"a":1,"b":[true,null,-2,3.5e10,"x\u00e9\n\"y"],"c":{"d":{}}}"#,
            r#"{"k\"ey":1e400}"#,
            r#"{"a":1,}"#,
            r#"[1,2] x"#,
            "\"\\ud800\"",
            "  18446744073709551616  ",
            "-0.0",
            "\"tab\there\"",
            r#"{"a":1,"b":2,"a":{"z":[3]}}"#,
            &deep_ok,
            &too_deep,
        ] {
            same_as_value(text);
        }
    }

    #[test]
    fn a_thread_reuses_its_arena_up_to_a_bound() {
        let spare = || SPARE.take().map(|b| b.allocated_bytes());
        spare();
        let small = br#"{"a":["x\ny",{"b":2}]}"#;
        for _ in 0..2 {
            let arena = Arena::new();
            assert!(Json::parse(small, &arena).is_ok());
            drop(arena);
            let kept = spare().expect("the arena given back");
            assert!(kept <= KEEP);
            SPARE.set(Some(Bump::with_capacity(kept)));
        }
        let big = format!("[{}1]", "1,".repeat(KEEP));
        let arena = Arena::new();
        assert!(Json::parse(big.as_bytes(), &arena).is_ok());
        drop(arena);
        assert_eq!(spare(), None, "a big document's arena is freed");
    }

    #[test]
    fn borrows_unescaped_strings() {
        let doc = br#"{"plain":"text","esc\u0061ped":"a\nb"}"#;
        let arena = Arena::new();
        let Ok(Json::Object(pairs)) = Json::parse(doc, &arena) else {
            panic!("object")
        };
        let within = |s: &str| doc.as_ptr_range().contains(&s.as_ptr());
        assert!(pairs[0].0 == "plain" && within(pairs[0].0));
        assert!(matches!(pairs[0].1, Json::String(s) if s == "text" && within(s)));
        assert!(pairs[1].0 == "escaped" && !within(pairs[1].0));
        assert!(matches!(pairs[1].1, Json::String(s) if s == "a\nb" && !within(s)));
    }

    #[test]
    fn duplicate_keys_merge_like_an_ordered_map() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{}\":{i},", i % 13));
        }
        text.push_str("\"k3\":\"last\"}");
        same_as_value(&text);
        let arena = Arena::new();
        let Ok(Json::Object(pairs)) = Json::parse(text.as_bytes(), &arena) else {
            panic!("object")
        };
        assert_eq!(pairs.len(), 13);
        assert_eq!(pairs[3], ("k3", Json::String("last")));
        same_as_value(r#"{"b":1,"a":2,"b":3,"c":4,"a":5}"#);
        // Keys alike in length and end bytes are still told apart, and empty keys repeat.
        same_as_value(r#"{"abc":1,"axc":2,"ac":3,"":4,"x":5,"":6}"#);
        let arena = Arena::new();
        let keys = |text: &'static str| match Json::parse(text.as_bytes(), &arena) {
            Ok(Json::Object(pairs)) => pairs.iter().map(|p| p.0.to_string()).collect::<Vec<_>>(),
            _ => panic!("object"),
        };
        assert_eq!(keys(r#"{"abc":1,"axc":2,"abc":3}"#), ["abc", "axc"]);
        assert_eq!(keys(r#"{"abc":1,"axc":2}"#), ["abc", "axc"]);
    }

    #[test]
    fn schema_equality() {
        let arena = Arena::new();
        let parse = |text: &[u8]| Json::parse(text.to_vec().leak(), &arena).expect("json");
        let one = parse(b"1");
        let one_f = parse(b"1.0");
        assert!(one.same(&one_f) && one.same_as(&serde_json::json!(1.0)));
        let a = parse(br#"{"x":1,"y":[1]}"#);
        let b = parse(br#"{"y":[1],"x":1}"#);
        assert!(a.same(&b) && a.same_as(&serde_json::json!({"y":[1],"x":1})));
        assert!(!a.same_as(&serde_json::json!({"y":[1.0],"x":1})));
        // Wide objects (past the pairwise size) compare regardless of key order too.
        let wide = |keys: Vec<usize>| {
            let body: Vec<String> = keys.iter().map(|i| format!("\"k{i}\":{i}")).collect();
            format!("{{{}}}", body.join(","))
        };
        let fwd = wide((0..30).collect());
        let rev = wide((0..30).rev().collect());
        let changed = rev.replace("\"k7\":7", "\"k7\":8");
        let f = parse(fwd.as_bytes());
        assert!(f.same(&parse(rev.as_bytes())));
        assert!(!f.same(&parse(changed.as_bytes())));
    }
}
