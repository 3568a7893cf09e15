//! Validates a JSON document against a compiled schema, collecting errors with the JSON pointer of
//! the offending value, the value itself (callers render a snippet only for what they report) and a
//! category that maps to a WAF violation kind. The one walker for request bodies, json-valued
//! parameters and JSON profiles' schemas; what each keyword requires is [`super::keywords`]'.

use super::json::Json;
use super::keywords::{self, Broken, Category, Property, Tally};
use super::schema::{Additional, Node, SchemaId, Schemas, T_ARR, T_BOOL, T_NULL, T_OBJ, T_STR};
use std::fmt::Write as _;

/// Where the walk is in the document: a chain of steps on the walk's own stack, made into a JSON
/// pointer only when an error is recorded there. Valid documents, the common case, never pay for
/// a pointer string per value.
enum At<'p> {
    Root,
    Key(&'p At<'p>, &'p str),
    Index(&'p At<'p>, usize),
}

impl At<'_> {
    /// The JSON pointer of this place (`/a/0/b`, keys escaped).
    fn pointer(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match *self {
            At::Root => {}
            At::Key(up, key) => {
                up.write(out);
                out.push('/');
                super::load::push_escaped(out, key);
            }
            At::Index(up, i) => {
                up.write(out);
                let _ = write!(out, "/{i}");
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SchemaError<'d> {
    pub pointer: String,
    pub category: Category,
    pub detail: String,
    /// The value at `pointer`.
    pub value: &'d Json<'d>,
}

/// The walk over the borrowed document; what it has found and may still spend is the [`Tally`].
struct Walk<'t, 'a, 'd>(&'t mut Tally<'a, SchemaError<'d>>);

/// Validates `value` against schema `id`; returns at most `max_errors` errors.
pub(crate) fn validate<'d>(
    schemas: &Schemas,
    id: SchemaId,
    value: &'d Json<'d>,
    max_errors: usize,
    max_depth: usize,
) -> Vec<SchemaError<'d>> {
    Tally::run(schemas, max_errors, max_depth, |t| {
        Walk(t).check(id, value, &At::Root, 0)
    })
}

fn kind_of(v: &Json<'_>) -> (u8, &'static str) {
    match v {
        Json::Null => (T_NULL, "null"),
        Json::Bool(_) => (T_BOOL, "boolean"),
        Json::Number(n) => keywords::number_kind(n),
        Json::String(_) => (T_STR, "string"),
        Json::Array(_) => (T_ARR, "array"),
        Json::Object(_) => (T_OBJ, "object"),
    }
}

impl<'d> Walk<'_, '_, 'd> {
    fn push(&mut self, at: &At<'_>, value: &'d Json<'d>, category: Category, detail: String) {
        self.0.push(|| SchemaError {
            pointer: at.pointer(),
            category,
            detail,
            value,
        });
    }

    fn valid(&self, id: SchemaId, v: &'d Json<'d>, depth: usize) -> bool {
        self.0.probe(|t| Walk(t).check(id, v, &At::Root, depth))
    }

    fn check(&mut self, id: SchemaId, v: &'d Json<'d>, at: &At<'_>, depth: usize) {
        if self.0.full() {
            return;
        }
        let n: &Node = self.0.schemas.node(id);
        if let Err(detail) = self.0.enter(n, depth) {
            return self.push(at, v, Category::Structure, detail);
        }
        let (kind, kind_name) = kind_of(v);
        if let Some(detail) = keywords::type_mismatch(n, kind, kind_name) {
            return self.push(at, v, Category::Type, detail);
        }
        if let Some(e) = &n.enumeration
            && let Some((c, detail)) = keywords::enum_mismatch(e.iter().any(|x| v.same_as(x)))
        {
            self.push(at, v, c, detail);
        }
        let mut broken = |(c, detail): Broken| self.push(at, v, c, detail);
        match v {
            Json::Number(num) => keywords::number(n, num, &mut broken),
            Json::String(s) => keywords::string(n, s, &mut broken),
            Json::Array(items) => {
                keywords::array(n, items.len(), |a, b| items[a].same(&items[b]), &mut broken);
                self.items(n, items, at, depth);
            }
            Json::Object(pairs) => {
                keywords::object(n, pairs.len(), &mut broken);
                self.object(n, pairs, v, at, depth);
            }
            _ => {}
        }
        for &c in &n.all_of {
            self.check(c, v, at, depth + 1);
        }
        if n.any_of.is_empty() && n.one_of.is_empty() && n.not.is_none() {
            return;
        }
        let applicators = keywords::applicators(n, |c| self.valid(c, v, depth + 1));
        for detail in applicators.into_iter().flatten() {
            self.push(at, v, Category::Structure, detail);
        }
    }

    fn items(&mut self, n: &Node, items: &'d [Json<'d>], at: &At<'_>, depth: usize) {
        let Some(item) = n.items else { return };
        for (i, elem) in items.iter().enumerate() {
            self.check(item, elem, &At::Index(at, i), depth + 1);
            if self.0.full() {
                return;
            }
        }
    }

    fn object(
        &mut self,
        n: &Node,
        pairs: &'d [(&'d str, Json<'d>)],
        v: &'d Json<'d>,
        at: &At<'_>,
        depth: usize,
    ) {
        if !n.required.is_empty() {
            self.required(n, pairs, v, at);
        }
        // An object schema that names no property and allows any other (`type: object` alone)
        // has nothing to say about its keys.
        if n.properties.is_empty() && n.additional == Additional::Any {
            return;
        }
        for (key, value) in pairs {
            let at = At::Key(at, key);
            match keywords::property_rule(self.0.schemas, n, key) {
                Property::Check(p) => self.check(p, value, &at, depth + 1),
                Property::Any => {}
                Property::Refused(detail) => self.push(&at, value, Category::Structure, detail),
            }
            if self.0.full() {
                return;
            }
        }
    }

    /// Missing `required` properties, in the schema's order: one look-up per key of the object
    /// (a short list in order, a long one in the names sorted at compile time), marking a bit per
    /// required name, so a hostile object with many keys costs n log r, not n × r.
    fn required(&mut self, n: &Node, pairs: &[(&str, Json<'_>)], v: &'d Json<'d>, at: &At<'_>) {
        const WORD: usize = u64::BITS as usize;
        let mut small = [0u64; 2];
        let mut large = Vec::new();
        let seen: &mut [u64] = if n.required.len() <= small.len() * WORD {
            &mut small
        } else {
            large.resize(n.required.len().div_ceil(WORD), 0);
            &mut large
        };
        let order = &n.required_sorted;
        let mut mark = |i: usize| seen[i / WORD] |= 1 << (i % WORD);
        for (key, _) in pairs {
            if n.required.len() <= keywords::SCAN_NAMES {
                let named = |i: &usize| {
                    let r = &n.required[*i];
                    r.len() == key.len() && **r == **key
                };
                (0..n.required.len()).filter(named).for_each(&mut mark);
                continue;
            }
            let from = order.partition_point(|&i| *n.required[i as usize] < **key);
            for &i in order[from..]
                .iter()
                .take_while(|&&i| *n.required[i as usize] == **key)
            {
                mark(i as usize);
            }
        }
        for (i, name) in n.required.iter().enumerate() {
            if seen[i / WORD] & (1 << (i % WORD)) != 0 {
                continue;
            }
            if let Some(detail) = keywords::missing(self.0.schemas, n, name) {
                self.push(at, v, Category::Structure, detail);
            }
        }
    }
}
