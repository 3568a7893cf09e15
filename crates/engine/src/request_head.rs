//! The request head the engine reads and the proxy forwards: method, target, version and the
//! header fields ([`Fields`]).
//!
//! The fields are ranges into one buffer of values (on the HTTP/1 path the request's own bytes, no
//! copy) and one string of lower-case names, kept in the order a `HeaderMap` iterates them (names
//! in the order they first appear, each followed by all of its values in order): the checks that
//! find a repetition as "the next field has the same name", the event's field list and the
//! upstream head all read that order, so a head read here and one read through hyper's
//! `HeaderMap` are judged, logged and forwarded alike. No `HeaderName` or `HeaderValue` is built:
//! the HTTP/1 parser has already checked what they would check.

mod kind;

pub use kind::FieldKind;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, Uri, Version};

/// A request head: what `http::request::Parts` holds, less the extensions, with the fields as
/// [`Fields`].
#[derive(Clone, Debug, Default)]
pub struct RequestHead {
    pub method: Method,
    pub uri: Uri,
    pub version: Version,
    pub headers: Fields,
}

impl From<http::request::Parts> for RequestHead {
    fn from(p: http::request::Parts) -> Self {
        RequestHead {
            headers: Fields::from_map(&p.headers),
            method: p.method,
            uri: p.uri,
            version: p.version,
        }
    }
}

impl RequestHead {
    /// The head as `http::request::Parts`, for a client that takes a `HeaderMap`.
    pub fn into_parts(self) -> http::request::Parts {
        let (mut parts, ()) = http::Request::new(()).into_parts();
        parts.headers = self.headers.to_map();
        parts.method = self.method;
        parts.uri = self.uri;
        parts.version = self.version;
        parts
    }
}

/// One field: its name in [`Fields::names`], its value in [`Fields::values`], and the name's
/// kind (found when the name is first stored; the fields of one name share it).
#[derive(Clone, Copy, Debug)]
struct Field {
    name: (usize, usize),
    value: (usize, usize),
    kind: FieldKind,
}

/// A request's header fields, in `HeaderMap` order (see the module's header).
#[derive(Clone, Default)]
pub struct Fields {
    /// The lower-case names; a name that repeats is kept once.
    names: String,
    values: Bytes,
    list: Vec<Field>,
}

/// A field's value: the bytes as received (what `HeaderValue` holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldValue<'a>(&'a [u8]);

/// A value that is not visible ASCII text ([`FieldValue::to_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotText;

impl<'a> FieldValue<'a> {
    #[inline]
    pub fn as_bytes(self) -> &'a [u8] {
        self.0
    }

    #[inline]
    pub fn len(self) -> usize {
        self.0.len()
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    /// The value as text when it is visible ASCII and tabs only, as `HeaderValue::to_str` takes it
    /// (obs-text is refused).
    #[inline]
    pub fn to_str(self) -> Result<&'a str, NotText> {
        if self.0.iter().all(|&b| b == b'\t' || (32..127).contains(&b)) {
            std::str::from_utf8(self.0).map_err(|_| NotText)
        } else {
            Err(NotText)
        }
    }
}

impl Fields {
    /// Empty fields whose values will lie in `values` (the head they were parsed from): a value
    /// [`Self::append`]ed from that buffer is kept as a range of it.
    pub fn sharing(values: Bytes, count: usize) -> Fields {
        Fields {
            names: String::with_capacity(count * 16),
            values,
            list: Vec::with_capacity(count),
        }
    }

    /// The fields of `map`, in its order (names and values copied once into two buffers).
    pub fn from_map(map: &HeaderMap) -> Fields {
        let (mut name_len, mut value_len) = (0, 0);
        for (n, v) in map {
            name_len += n.as_str().len();
            value_len += v.len();
        }
        let mut names = String::with_capacity(name_len);
        let mut values = Vec::with_capacity(value_len);
        let mut list = Vec::with_capacity(map.len());
        let mut last: Option<(&HeaderName, (usize, usize), FieldKind)> = None;
        for (n, v) in map {
            let (name, kind) = match last {
                Some((prev, range, kind)) if prev == n => (range, kind),
                _ => {
                    let at = names.len();
                    names.push_str(n.as_str());
                    ((at, names.len()), FieldKind::of(n.as_str()))
                }
            };
            last = Some((n, name, kind));
            let at = values.len();
            values.extend_from_slice(v.as_bytes());
            list.push(Field {
                name,
                value: (at, values.len()),
                kind,
            });
        }
        Fields {
            names,
            values: Bytes::from(values),
            list,
        }
    }

    /// The fields as a `HeaderMap` in the same order (the values share this buffer). A field
    /// `HeaderName` or `HeaderValue` would refuse is left out: only [`Self::append`] from outside
    /// a parsed head can bring one.
    pub fn to_map(&self) -> HeaderMap {
        let mut map = HeaderMap::with_capacity(self.list.len());
        for f in &self.list {
            let name = HeaderName::from_bytes(self.name(f).as_bytes());
            let value = HeaderValue::from_maybe_shared(self.values.slice(f.value.0..f.value.1));
            if let (Ok(n), Ok(v)) = (name, value) {
                map.append(n, v);
            }
        }
        map
    }

    /// How many fields (each value counts, as `HeaderMap::len`).
    #[inline]
    pub fn len(&self) -> usize {
        self.list.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    #[inline]
    fn name(&self, f: &Field) -> &str {
        self.names.get(f.name.0..f.name.1).unwrap_or("")
    }

    #[inline]
    fn value(&self, f: &Field) -> FieldValue<'_> {
        FieldValue(self.values.get(f.value.0..f.value.1).unwrap_or(&[]))
    }

    /// (lower-case name, value) pairs in `HeaderMap` order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (&str, FieldValue<'_>)> + Clone {
        self.list.iter().map(|f| (self.name(f), self.value(f)))
    }

    /// (lower-case name, its kind, value) triples in `HeaderMap` order.
    #[inline]
    pub fn iter_kinds(&self) -> impl Iterator<Item = (&str, FieldKind, FieldValue<'_>)> + Clone {
        self.list
            .iter()
            .map(|f| (self.name(f), f.kind, self.value(f)))
    }

    #[inline]
    fn is(&self, f: &Field, name: &str) -> bool {
        f.name.1 - f.name.0 == name.len()
            && self.names.as_bytes()[f.name.0..f.name.1].eq_ignore_ascii_case(name.as_bytes())
    }

    /// The first value of the field `name` (any case), as `HeaderMap::get`.
    #[inline]
    pub fn get(&self, name: impl AsRef<str>) -> Option<FieldValue<'_>> {
        let name = name.as_ref();
        self.list
            .iter()
            .find(|f| self.is(f, name))
            .map(|f| self.value(f))
    }

    /// Every value of the field `name` (any case), in order.
    #[inline]
    pub fn get_all<'s>(
        &'s self,
        name: impl AsRef<str> + 's,
    ) -> impl Iterator<Item = FieldValue<'s>> + 's {
        self.list
            .iter()
            .filter(move |f| self.is(f, name.as_ref()))
            .map(|f| self.value(f))
    }

    #[inline]
    pub fn contains_key(&self, name: impl AsRef<str>) -> bool {
        let name = name.as_ref();
        self.list.iter().any(|f| self.is(f, name))
    }

    /// Adds a field after the values its name already has, as `HeaderMap::append`. `name` is a
    /// field name in any case; a `value` that lies in the buffer given to [`Self::sharing`] is
    /// kept as a range of it, any other is copied. Returns the name's kind.
    pub fn append(&mut self, name: &str, value: &[u8]) -> FieldKind {
        let value = self.place_value(value);
        // The stored names are lower-case: an earlier field of the same name is found without
        // lowering this one first, and a repeated name is not stored again.
        match self.list.iter().rposition(|g| self.is(g, name)) {
            Some(i) => {
                let Field { name, kind, .. } = self.list[i];
                self.list.insert(i + 1, Field { name, value, kind });
                kind
            }
            None => {
                let at = self.names.len();
                self.names.push_str(name);
                self.names[at..].make_ascii_lowercase();
                let kind = FieldKind::of(&self.names[at..]);
                self.list.push(Field {
                    name: (at, self.names.len()),
                    value,
                    kind,
                });
                kind
            }
        }
    }

    /// `part` of a value as `Bytes` that share this head's buffer (a copy when it is not in it).
    #[inline]
    pub fn shared(&self, part: &[u8]) -> Bytes {
        match self.range_of(part) {
            Some((a, b)) => self.values.slice(a..b),
            None => Bytes::copy_from_slice(part),
        }
    }

    /// Where `part` lies in the values buffer, if it does.
    #[inline]
    fn range_of(&self, part: &[u8]) -> Option<(usize, usize)> {
        let at = (part.as_ptr() as usize).wrapping_sub(self.values.as_ptr() as usize);
        (at <= self.values.len() && part.len() <= self.values.len() - at)
            .then(|| (at, at + part.len()))
    }

    /// The range of `value` in the values buffer, copying it there when it is not in it.
    fn place_value(&mut self, value: &[u8]) -> (usize, usize) {
        if let Some(range) = self.range_of(value) {
            return range;
        }
        let mut all = Vec::with_capacity(self.values.len() + value.len());
        all.extend_from_slice(&self.values);
        all.extend_from_slice(value);
        let at = self.values.len();
        self.values = Bytes::from(all);
        (at, self.values.len())
    }

    /// Removes every value of `name` (any case), as `HeaderMap::remove`: the last name's values
    /// take the removed name's place (the map swaps its last entry in), which the upstream head's
    /// order shows. True when there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(start) = self.list.iter().position(|f| self.is(f, name)) else {
            return false;
        };
        let end = start
            + self.list[start..]
                .iter()
                .take_while(|f| self.is(f, name))
                .count();
        let last = self.list.len() - 1;
        let last_name = self.list[last].name;
        let last_start = self.list[..=last]
            .iter()
            .rposition(|f| f.name != last_name)
            .map_or(0, |i| i + 1);
        if last_start == start {
            self.list.truncate(start);
        } else {
            let moved: Vec<Field> = self.list.drain(last_start..).collect();
            self.list.splice(start..end, moved);
        }
        true
    }

    /// Sets `name` to the one value `value`, as `HeaderMap::insert`: in the place of its first
    /// value when it has one, its other values removed; appended otherwise.
    pub fn insert(&mut self, name: &str, value: &[u8]) {
        let Some(start) = self.list.iter().position(|f| self.is(f, name)) else {
            self.append(name, value);
            return;
        };
        let value = self.place_value(value);
        let rest = self.list[start + 1..]
            .iter()
            .take_while(|f| self.is(f, name))
            .count();
        self.list[start].value = value;
        self.list.drain(start + 1..start + 1 + rest);
    }
}

impl std::fmt::Debug for Fields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.iter()
                    .map(|(n, v)| (n, String::from_utf8_lossy(v.as_bytes()))),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests;
