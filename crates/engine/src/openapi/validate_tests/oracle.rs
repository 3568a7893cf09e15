//! The walk over `serde_json::Value` that validation used before the borrowed document, kept as
//! the differential test's oracle: the production walker must report exactly what it reports.
//! Only the walk is the oracle's own (recursion, pointers, value equality, which rule comes
//! first); the rules at each node and the bookkeeping (the error cap, the step budget its probes
//! share: `keywords::Tally`) are the production's, so the test is of the walk.

use super::super::keywords::{self, Broken, Category, Property, Tally};
use super::super::schema::{Node, SchemaId, Schemas, T_ARR, T_BOOL, T_NULL, T_OBJ, T_STR};
use serde_json::Value;
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq)]
struct SchemaError {
    pointer: String,
    category: Category,
    detail: String,
}

/// The walk over `serde_json::Value`; its bookkeeping is the production [`Tally`]'s.
struct Walk<'t, 'a>(&'t mut Tally<'a, SchemaError>);

fn kind_of(v: &Value) -> (u8, &'static str) {
    match v {
        Value::Null => (T_NULL, "null"),
        Value::Bool(_) => (T_BOOL, "boolean"),
        Value::Number(n) => keywords::number_kind(n),
        Value::String(_) => (T_STR, "string"),
        Value::Array(_) => (T_ARR, "array"),
        Value::Object(_) => (T_OBJ, "object"),
    }
}

impl Walk<'_, '_> {
    fn push(&mut self, at: &str, category: Category, detail: String) {
        self.0.push(|| SchemaError {
            pointer: at.to_string(),
            category,
            detail,
        });
    }

    fn valid(&self, id: SchemaId, v: &Value, depth: usize) -> bool {
        self.0
            .probe(|t| Walk(t).check(id, v, &mut String::new(), depth))
    }

    /// The walk: recursion into items, properties and sub-schemas, in the order the production
    /// walker must keep; the rules applied at each node are `keywords`', shared.
    fn check(&mut self, id: SchemaId, v: &Value, at: &mut String, depth: usize) {
        if self.0.full() {
            return;
        }
        let n: &Node = self.0.schemas.node(id);
        if let Err(detail) = self.0.enter(n, depth) {
            return self.push(at, Category::Structure, detail);
        }
        let (kind, kind_name) = kind_of(v);
        if let Some(detail) = keywords::type_mismatch(n, kind, kind_name) {
            return self.push(at, Category::Type, detail);
        }
        if let Some(e) = &n.enumeration
            && let Some((c, detail)) = keywords::enum_mismatch(e.iter().any(|x| json_eq(x, v)))
        {
            self.push(at, c, detail);
        }
        let mut broken = |(c, detail): Broken| self.push(at, c, detail);
        match v {
            Value::Number(num) => keywords::number(n, num, &mut broken),
            Value::String(s) => keywords::string(n, s, &mut broken),
            Value::Array(items) => {
                keywords::array(
                    n,
                    items.len(),
                    |a, b| json_eq(&items[a], &items[b]),
                    &mut broken,
                );
                if let Some(item) = n.items {
                    for (i, v) in items.iter().enumerate() {
                        let mark = at.len();
                        at.push('/');
                        let _ = write!(at, "{i}");
                        self.check(item, v, at, depth + 1);
                        at.truncate(mark);
                        if self.0.full() {
                            break;
                        }
                    }
                }
            }
            Value::Object(map) => {
                keywords::object(n, map.len(), &mut broken);
                self.properties(n, map, at, depth);
            }
            _ => {}
        }
        for &c in &n.all_of {
            self.check(c, v, at, depth + 1);
        }
        let applicators = keywords::applicators(n, |c| self.valid(c, v, depth + 1));
        for detail in applicators.into_iter().flatten() {
            self.push(at, Category::Structure, detail);
        }
    }

    fn properties(
        &mut self,
        n: &Node,
        map: &serde_json::Map<String, Value>,
        at: &mut String,
        depth: usize,
    ) {
        for name in n.required.iter().filter(|r| !map.contains_key(&***r)) {
            if let Some(detail) = keywords::missing(self.0.schemas, n, name) {
                self.push(at, Category::Structure, detail);
            }
        }
        for (key, v) in map {
            let mark = at.len();
            at.push('/');
            super::super::load::push_escaped(at, key);
            match keywords::property_rule(self.0.schemas, n, key) {
                Property::Check(p) => self.check(p, v, at, depth + 1),
                Property::Any => {}
                Property::Refused(detail) => self.push(at, Category::Structure, detail),
            }
            at.truncate(mark);
            if self.0.full() {
                return;
            }
        }
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
    Tally::run(schemas, max_errors, max_depth, |t| {
        Walk(t).check(id, value, &mut String::new(), 0)
    })
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
