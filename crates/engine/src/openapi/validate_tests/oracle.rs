//! The walker over `serde_json::Value` that validation used before the borrowed document, kept
//! as the differential tests' oracle: the production walker must report exactly what it reports.

use super::super::schema::{
    Additional, Node, SchemaId, Schemas, T_ARR, T_BOOL, T_INT, T_NULL, T_NUM, T_OBJ, T_STR,
};
use super::super::validate::{Category, type_names};
use serde_json::Value;
use std::cell::Cell;
use std::fmt::Write as _;

/// Most schema nodes one validation may visit (anyOf/oneOf over recursive schemas can branch).
const MAX_STEPS: usize = 200_000;

#[derive(Debug, Clone, PartialEq)]
struct SchemaError {
    pointer: String,
    category: Category,
    detail: String,
}

/// The walk's state: output, budget and the request/response direction.
struct Walk<'a> {
    schemas: &'a Schemas,
    out: &'a mut Vec<SchemaError>,
    max_errors: usize,
    max_depth: usize,
    steps: &'a Cell<usize>,
}

/// Validates `value` against schema `id`; pushes at most `max_errors` errors.
fn validate(
    schemas: &Schemas,
    id: SchemaId,
    value: &Value,
    max_errors: usize,
    max_depth: usize,
) -> Vec<SchemaError> {
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

fn kind_of(v: &Value) -> (u8, &'static str) {
    match v {
        Value::Null => (T_NULL, "null"),
        Value::Bool(_) => (T_BOOL, "boolean"),
        Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            (T_INT, "integer")
        }
        Value::Number(_) => (T_NUM, "number"),
        Value::String(_) => (T_STR, "string"),
        Value::Array(_) => (T_ARR, "array"),
        Value::Object(_) => (T_OBJ, "object"),
    }
}

impl Walk<'_> {
    fn full(&self) -> bool {
        self.out.len() >= self.max_errors
    }

    fn push(&mut self, at: &str, category: Category, detail: String) {
        if !self.full() {
            self.out.push(SchemaError {
                pointer: at.to_string(),
                category,
                detail,
            });
        }
    }

    fn valid(&self, id: SchemaId, v: &Value, depth: usize) -> bool {
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

    fn check(&mut self, id: SchemaId, v: &Value, at: &mut String, depth: usize) {
        if self.full() {
            return;
        }
        let left = self.steps.get();
        if left == 0 {
            return self.push(
                at,
                Category::Structure,
                "schema validation budget exhausted".into(),
            );
        }
        self.steps.set(left - 1);
        if depth > self.max_depth {
            return self.push(
                at,
                Category::Structure,
                format!("nesting deeper than {}", self.max_depth),
            );
        }
        let n: &Node = self.schemas.node(id);
        if n.never {
            return self.push(at, Category::Structure, "no value is allowed here".into());
        }
        let (kind, kind_name) = kind_of(v);
        if n.types != 0 {
            let ok = n.types & kind != 0 || (kind == T_INT && n.types & T_NUM != 0);
            if !ok {
                return self.push(
                    at,
                    Category::Type,
                    format!("expected {}, got {kind_name}", type_names(n.types)),
                );
            }
        }
        if let Some(e) = &n.enumeration
            && !e.iter().any(|x| json_eq(x, v))
        {
            self.push(
                at,
                Category::Enum,
                "value is not one of the allowed values".into(),
            );
        }
        match v {
            Value::Number(num) => self.number(n, num, at),
            Value::String(s) => self.string(n, s, at),
            Value::Array(items) => self.array(n, items, at, depth),
            Value::Object(map) => self.object(n, map, at, depth),
            _ => {}
        }
        for &c in &n.all_of {
            self.check(c, v, at, depth + 1);
        }
        if !n.any_of.is_empty() && !n.any_of.iter().any(|&c| self.valid(c, v, depth + 1)) {
            self.push(
                at,
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
                Category::Structure,
                "value matches a forbidden (not) schema".into(),
            );
        }
    }

    fn number(&mut self, n: &Node, num: &serde_json::Number, at: &str) {
        if !n.format.number_ok(num) {
            self.push(
                at,
                Category::Format,
                format!("{num} is out of the {} range", n.format.name()),
            );
        }
        let Some(f) = num.as_f64() else { return };
        if let Some((min, excl)) = n.minimum
            && (f < min || (excl && f == min))
        {
            let op = if excl { ">" } else { ">=" };
            self.push(at, Category::Numeric, format!("{num} is not {op} {min}"));
        }
        if let Some((max, excl)) = n.maximum
            && (f > max || (excl && f == max))
        {
            let op = if excl { "<" } else { "<=" };
            self.push(at, Category::Numeric, format!("{num} is not {op} {max}"));
        }
        if let Some(m) = n.multiple_of {
            let q = f / m;
            if !q.is_finite() || (q - q.round()).abs() > 1e-9 {
                self.push(
                    at,
                    Category::Numeric,
                    format!("{num} is not a multiple of {m}"),
                );
            }
        }
    }

    fn string(&mut self, n: &Node, s: &str, at: &str) {
        let needs_len = n.min_length.is_some() || n.max_length.is_some();
        if needs_len {
            let len = s.chars().count() as u64;
            if let Some(min) = n.min_length.filter(|m| len < *m) {
                self.push(
                    at,
                    Category::Length,
                    format!("length {len} is shorter than {min}"),
                );
            }
            if let Some(max) = n.max_length.filter(|m| len > *m) {
                self.push(
                    at,
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
                Category::Pattern,
                format!("does not match pattern {}", p.as_str()),
            );
        }
        if !n.format.string_ok(s) {
            self.push(
                at,
                Category::Format,
                format!("is not a valid {}", n.format.name()),
            );
        }
    }

    fn array(&mut self, n: &Node, items: &[Value], at: &mut String, depth: usize) {
        let len = items.len() as u64;
        if let Some(min) = n.min_items.filter(|m| len < *m) {
            self.push(
                at,
                Category::Length,
                format!("{len} items, fewer than {min}"),
            );
        }
        if let Some(max) = n.max_items.filter(|m| len > *m) {
            self.push(
                at,
                Category::Length,
                format!("{len} items, more than {max}"),
            );
        }
        // Pairwise, so bounded: longer arrays are not checked for duplicates.
        if n.unique_items && items.len() <= 1000 {
            let dup = (1..items.len()).find(|&i| items[..i].iter().any(|x| json_eq(x, &items[i])));
            if let Some(i) = dup {
                self.push(
                    at,
                    Category::Structure,
                    format!("item {i} is a duplicate (uniqueItems)"),
                );
            }
        }
        if let Some(item) = n.items {
            for (i, v) in items.iter().enumerate() {
                let mark = at.len();
                at.push('/');
                let _ = write!(at, "{i}");
                self.check(item, v, at, depth + 1);
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
        map: &serde_json::Map<String, Value>,
        at: &mut String,
        depth: usize,
    ) {
        let count = map.len() as u64;
        if let Some(min) = n.min_properties.filter(|m| count < *m) {
            self.push(
                at,
                Category::Length,
                format!("{count} properties, fewer than {min}"),
            );
        }
        if let Some(max) = n.max_properties.filter(|m| count > *m) {
            self.push(
                at,
                Category::Length,
                format!("{count} properties, more than {max}"),
            );
        }
        for name in &n.required {
            if !map.contains_key(&**name) {
                let read_only = self
                    .prop(n, name)
                    .is_some_and(|p| self.schemas.node(p).read_only);
                if !read_only {
                    self.push(
                        at,
                        Category::Structure,
                        format!("missing required property \"{name}\""),
                    );
                }
            }
        }
        for (key, v) in map {
            let mark = at.len();
            at.push('/');
            super::super::load::push_escaped(at, key);
            match self.prop(n, key) {
                Some(p) if self.schemas.node(p).read_only => {
                    self.push(
                        at,
                        Category::Structure,
                        format!("property \"{key}\" is read-only"),
                    );
                }
                Some(p) => self.check(p, v, at, depth + 1),
                None => match n.additional {
                    Additional::Any => {}
                    Additional::Deny => {
                        self.push(
                            at,
                            Category::Structure,
                            format!("additional property \"{key}\" is not allowed"),
                        );
                    }
                    Additional::Schema(s) => self.check(s, v, at, depth + 1),
                },
            }
            at.truncate(mark);
            if self.full() {
                return;
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

/// JSON Schema equality: numbers compare by value (1 == 1.0).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// What the old walker reported for `value`: pointer, category, detail and the violation's snippet
/// (the value at the pointer as compact JSON).
pub(super) fn report(
    schemas: &Schemas,
    id: SchemaId,
    value: &Value,
    max_errors: usize,
    max_depth: usize,
) -> Vec<(String, Category, String, String)> {
    validate(schemas, id, value, max_errors, max_depth)
        .into_iter()
        .map(|e| {
            let snippet = value
                .pointer(&e.pointer)
                .map(Value::to_string)
                .unwrap_or_default();
            (e.pointer, e.category, e.detail, snippet)
        })
        .collect()
}
