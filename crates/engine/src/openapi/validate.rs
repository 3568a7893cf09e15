//! Validates a JSON document against a compiled schema, collecting errors with the JSON pointer of
//! the offending value, the value itself (callers render a snippet only for what they report) and a
//! category that maps to a WAF violation kind. The one walker for request bodies, json-valued
//! parameters and JSON profiles' schemas.

use super::json::Json;
use super::schema::{
    Additional, Node, SchemaId, Schemas, T_ARR, T_BOOL, T_INT, T_NULL, T_NUM, T_OBJ, T_STR,
};
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt::Write as _;

/// Most schema nodes one validation may visit (anyOf/oneOf over recursive schemas can branch).
const MAX_STEPS: usize = 200_000;

/// What kind of rule a value broke (parameters map these to different violations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Category {
    Type,
    Format,
    Numeric,
    Length,
    Enum,
    Pattern,
    Structure,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SchemaError<'d> {
    pub pointer: String,
    pub category: Category,
    pub detail: String,
    /// The value at `pointer`.
    pub value: &'d Json<'d>,
}

/// The walk's state: output and budget.
struct Walk<'a, 'd> {
    schemas: &'a Schemas,
    out: &'a mut Vec<SchemaError<'d>>,
    max_errors: usize,
    max_depth: usize,
    steps: &'a Cell<usize>,
}

/// Validates `value` against schema `id`; returns at most `max_errors` errors.
pub(crate) fn validate<'d>(
    schemas: &Schemas,
    id: SchemaId,
    value: &'d Json<'d>,
    max_errors: usize,
    max_depth: usize,
) -> Vec<SchemaError<'d>> {
    let mut out = Vec::new();
    let steps = Cell::new(MAX_STEPS);
    let mut w = Walk {
        schemas,
        out: &mut out,
        max_errors,
        max_depth,
        steps: &steps,
    };
    w.check(id, value, &mut String::new(), 0);
    out
}

fn kind_of(v: &Json<'_>) -> (u8, &'static str) {
    match v {
        Json::Null => (T_NULL, "null"),
        Json::Bool(_) => (T_BOOL, "boolean"),
        Json::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            (T_INT, "integer")
        }
        Json::Number(_) => (T_NUM, "number"),
        Json::String(_) => (T_STR, "string"),
        Json::Array(_) => (T_ARR, "array"),
        Json::Object(_) => (T_OBJ, "object"),
    }
}

pub(crate) fn type_names(t: u8) -> String {
    let names = [
        (T_NULL, "null"),
        (T_BOOL, "boolean"),
        (T_INT, "integer"),
        (T_NUM, "number"),
        (T_STR, "string"),
        (T_ARR, "array"),
        (T_OBJ, "object"),
    ];
    let list: Vec<&str> = names
        .iter()
        .filter(|(b, _)| t & b != 0)
        .map(|(_, n)| *n)
        .collect();
    list.join(" or ")
}

impl<'d> Walk<'_, 'd> {
    fn full(&self) -> bool {
        self.out.len() >= self.max_errors
    }

    fn push(&mut self, at: &str, value: &'d Json<'d>, category: Category, detail: String) {
        if !self.full() {
            self.out.push(SchemaError {
                pointer: at.to_string(),
                category,
                detail,
                value,
            });
        }
    }

    fn valid(&self, id: SchemaId, v: &'d Json<'d>, depth: usize) -> bool {
        let mut tmp = Vec::new();
        let mut w = Walk {
            schemas: self.schemas,
            out: &mut tmp,
            max_errors: 1,
            max_depth: self.max_depth,
            steps: self.steps,
        };
        w.check(id, v, &mut String::new(), depth);
        tmp.is_empty()
    }

    fn check(&mut self, id: SchemaId, v: &'d Json<'d>, at: &mut String, depth: usize) {
        if self.full() {
            return;
        }
        let left = self.steps.get();
        if left == 0 {
            return self.push(
                at,
                v,
                Category::Structure,
                "schema validation budget exhausted".into(),
            );
        }
        self.steps.set(left - 1);
        if depth > self.max_depth {
            return self.push(
                at,
                v,
                Category::Structure,
                format!("nesting deeper than {}", self.max_depth),
            );
        }
        let n: &Node = self.schemas.node(id);
        if n.never {
            return self.push(
                at,
                v,
                Category::Structure,
                "no value is allowed here".into(),
            );
        }
        let (kind, kind_name) = kind_of(v);
        if n.types != 0 {
            let ok = n.types & kind != 0 || (kind == T_INT && n.types & T_NUM != 0);
            if !ok {
                return self.push(
                    at,
                    v,
                    Category::Type,
                    format!("expected {}, got {kind_name}", type_names(n.types)),
                );
            }
        }
        if let Some(e) = &n.enumeration
            && !e.iter().any(|x| v.same_as(x))
        {
            self.push(
                at,
                v,
                Category::Enum,
                "value is not one of the allowed values".into(),
            );
        }
        match v {
            Json::Number(num) => self.number(n, num, v, at),
            Json::String(s) => self.string(n, s, v, at),
            Json::Array(items) => self.array(n, items, v, at, depth),
            Json::Object(pairs) => self.object(n, pairs, v, at, depth),
            _ => {}
        }
        for &c in &n.all_of {
            self.check(c, v, at, depth + 1);
        }
        if !n.any_of.is_empty() && !n.any_of.iter().any(|&c| self.valid(c, v, depth + 1)) {
            self.push(
                at,
                v,
                Category::Structure,
                "value matches none of the anyOf schemas".into(),
            );
        }
        if !n.one_of.is_empty() {
            let matched = n
                .one_of
                .iter()
                .filter(|&&c| self.valid(c, v, depth + 1))
                .count();
            if matched != 1 {
                self.push(
                    at,
                    v,
                    Category::Structure,
                    format!("value matches {matched} oneOf schemas, expected exactly 1"),
                );
            }
        }
        if let Some(not) = n.not
            && self.valid(not, v, depth + 1)
        {
            self.push(
                at,
                v,
                Category::Structure,
                "value matches a forbidden (not) schema".into(),
            );
        }
    }

    fn number(&mut self, n: &Node, num: &serde_json::Number, v: &'d Json<'d>, at: &str) {
        if !n.format.number_ok(num) {
            self.push(
                at,
                v,
                Category::Format,
                format!("{num} is out of the {} range", n.format.name()),
            );
        }
        let Some(f) = num.as_f64() else { return };
        if let Some((min, excl)) = n.minimum
            && (f < min || (excl && f == min))
        {
            let op = if excl { ">" } else { ">=" };
            self.push(at, v, Category::Numeric, format!("{num} is not {op} {min}"));
        }
        if let Some((max, excl)) = n.maximum
            && (f > max || (excl && f == max))
        {
            let op = if excl { "<" } else { "<=" };
            self.push(at, v, Category::Numeric, format!("{num} is not {op} {max}"));
        }
        if let Some(m) = n.multiple_of {
            let q = f / m;
            if !q.is_finite() || (q - q.round()).abs() > 1e-9 {
                self.push(
                    at,
                    v,
                    Category::Numeric,
                    format!("{num} is not a multiple of {m}"),
                );
            }
        }
    }

    fn string(&mut self, n: &Node, s: &str, v: &'d Json<'d>, at: &str) {
        let needs_len = n.min_length.is_some() || n.max_length.is_some();
        if needs_len {
            let len = s.chars().count() as u64;
            if let Some(min) = n.min_length.filter(|m| len < *m) {
                self.push(
                    at,
                    v,
                    Category::Length,
                    format!("length {len} is shorter than {min}"),
                );
            }
            if let Some(max) = n.max_length.filter(|m| len > *m) {
                self.push(
                    at,
                    v,
                    Category::Length,
                    format!("length {len} is longer than {max}"),
                );
            }
        }
        if let Some(p) = &n.pattern
            && !p.is_match(s)
        {
            self.push(
                at,
                v,
                Category::Pattern,
                format!("does not match pattern {}", p.as_str()),
            );
        }
        if !n.format.string_ok(s) {
            self.push(
                at,
                v,
                Category::Format,
                format!("is not a valid {}", n.format.name()),
            );
        }
    }

    fn array(
        &mut self,
        n: &Node,
        items: &'d [Json<'d>],
        v: &'d Json<'d>,
        at: &mut String,
        depth: usize,
    ) {
        let len = items.len() as u64;
        if let Some(min) = n.min_items.filter(|m| len < *m) {
            self.push(
                at,
                v,
                Category::Length,
                format!("{len} items, fewer than {min}"),
            );
        }
        if let Some(max) = n.max_items.filter(|m| len > *m) {
            self.push(
                at,
                v,
                Category::Length,
                format!("{len} items, more than {max}"),
            );
        }
        // Pairwise, so bounded: longer arrays are not checked for duplicates.
        if n.unique_items && items.len() <= 1000 {
            let dup = (1..items.len()).find(|&i| items[..i].iter().any(|x| x.same(&items[i])));
            if let Some(i) = dup {
                self.push(
                    at,
                    v,
                    Category::Structure,
                    format!("item {i} is a duplicate (uniqueItems)"),
                );
            }
        }
        if let Some(item) = n.items {
            for (i, elem) in items.iter().enumerate() {
                let mark = at.len();
                at.push('/');
                let _ = write!(at, "{i}");
                self.check(item, elem, at, depth + 1);
                at.truncate(mark);
                if self.full() {
                    return;
                }
            }
        }
    }

    fn object(
        &mut self,
        n: &Node,
        pairs: &'d [(Cow<'d, str>, Json<'d>)],
        v: &'d Json<'d>,
        at: &mut String,
        depth: usize,
    ) {
        let count = pairs.len() as u64;
        if let Some(min) = n.min_properties.filter(|m| count < *m) {
            self.push(
                at,
                v,
                Category::Length,
                format!("{count} properties, fewer than {min}"),
            );
        }
        if let Some(max) = n.max_properties.filter(|m| count > *m) {
            self.push(
                at,
                v,
                Category::Length,
                format!("{count} properties, more than {max}"),
            );
        }
        if !n.required.is_empty() {
            self.required(n, pairs, v, at);
        }
        for (key, value) in pairs {
            let mark = at.len();
            at.push('/');
            super::load::push_escaped(at, key);
            match self.prop(n, key) {
                Some(p) if self.schemas.node(p).read_only => {
                    self.push(
                        at,
                        value,
                        Category::Structure,
                        format!("property \"{key}\" is read-only"),
                    );
                }
                Some(p) => self.check(p, value, at, depth + 1),
                None => match n.additional {
                    Additional::Any => {}
                    Additional::Deny => {
                        self.push(
                            at,
                            value,
                            Category::Structure,
                            format!("additional property \"{key}\" is not allowed"),
                        );
                    }
                    Additional::Schema(s) => self.check(s, value, at, depth + 1),
                },
            }
            at.truncate(mark);
            if self.full() {
                return;
            }
        }
    }

    /// Missing `required` properties, in the schema's order: one look-up per key of the object in
    /// the names sorted at compile time, marking a bit per required name, so a hostile object
    /// with many keys costs n log r, not n × r.
    fn required(
        &mut self,
        n: &Node,
        pairs: &[(Cow<'_, str>, Json<'_>)],
        v: &'d Json<'d>,
        at: &str,
    ) {
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
        for (key, _) in pairs {
            let from = order.partition_point(|&i| *n.required[i as usize] < **key);
            for &i in order[from..]
                .iter()
                .take_while(|&&i| *n.required[i as usize] == **key)
            {
                seen[i as usize / WORD] |= 1 << (i as usize % WORD);
            }
        }
        for (i, name) in n.required.iter().enumerate() {
            if seen[i / WORD] & (1 << (i % WORD)) != 0 {
                continue;
            }
            let read_only = self
                .prop(n, name)
                .is_some_and(|p| self.schemas.node(p).read_only);
            if !read_only {
                self.push(
                    at,
                    v,
                    Category::Structure,
                    format!("missing required property \"{name}\""),
                );
            }
        }
    }

    fn prop(&self, n: &Node, name: &str) -> Option<SchemaId> {
        n.properties
            .binary_search_by(|(k, _)| (**k).cmp(name))
            .ok()
            .map(|i| n.properties[i].1)
    }
}
