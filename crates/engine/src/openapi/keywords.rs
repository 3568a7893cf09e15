//! The schema keywords as rules on what one node sees (a number, a string, a count, whether the
//! value matches a sub-schema), independent of how the document is held: the validation walk
//! ([`super::validate`]) applies them to the borrowed document, and the tests' reference walk over
//! `serde_json::Value` applies the same rules and keeps the same books ([`Tally`]), so that the
//! two differ only in the walk.

use std::cell::Cell;

use crate::signatures::same_bytes;

use super::schema::{
    Additional, Node, SchemaId, Schemas, T_ARR, T_BOOL, T_INT, T_NULL, T_NUM, T_OBJ, T_STR,
};

/// Most schema nodes one validation may visit (anyOf/oneOf over recursive schemas can branch).
pub(crate) const MAX_STEPS: usize = 200_000;

/// Longest array checked for `uniqueItems`: the check is pairwise, so longer arrays are not.
const UNIQUE_MAX: usize = 1000;

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

/// One broken rule: its category and what to say about it.
pub(crate) type Broken = (Category, String);

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

/// The type bit and name of a number: integral values are integers, whatever their spelling.
pub(crate) fn number_kind(n: &serde_json::Number) -> (u8, &'static str) {
    if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
        (T_INT, "integer")
    } else {
        (T_NUM, "number")
    }
}

/// The bookkeeping of one validation, whoever walks the document: the errors found so far (at
/// most `max_errors`), the nesting bound, and the step budget, which the probes of
/// `anyOf`/`oneOf`/`not` spend from too, so that branching over recursive schemas stays bounded.
pub(crate) struct Tally<'a, E> {
    pub(crate) schemas: &'a Schemas,
    pub(crate) max_depth: usize,
    steps: &'a Cell<usize>,
    max_errors: usize,
    errors: Vec<E>,
}

impl<'a, E> Tally<'a, E> {
    /// Runs `walk` with a fresh budget; the errors it found.
    pub(crate) fn run(
        schemas: &Schemas,
        max_errors: usize,
        max_depth: usize,
        walk: impl FnOnce(&mut Tally<'_, E>),
    ) -> Vec<E> {
        let steps = Cell::new(MAX_STEPS);
        let mut t = Tally {
            schemas,
            max_depth,
            steps: &steps,
            max_errors,
            errors: Vec::new(),
        };
        walk(&mut t);
        t.errors
    }

    /// Whether `walk`, a walk of the value against a sub-schema, finds it valid: it stops at the
    /// first error and spends from the same budget.
    pub(crate) fn probe(&self, walk: impl FnOnce(&mut Tally<'a, E>)) -> bool {
        let mut t = Tally {
            schemas: self.schemas,
            max_depth: self.max_depth,
            steps: self.steps,
            max_errors: 1,
            errors: Vec::new(),
        };
        walk(&mut t);
        t.errors.is_empty()
    }

    pub(crate) fn full(&self) -> bool {
        self.errors.len() >= self.max_errors
    }

    /// Records the error `make` builds, unless the walk already has all it may report.
    pub(crate) fn push(&mut self, make: impl FnOnce() -> E) {
        if !self.full() {
            self.errors.push(make());
        }
    }

    /// Spends one step on entering node `n` at `depth`; the reason the walk must stop there
    /// instead (budget spent, nesting too deep, a schema that allows no value).
    pub(crate) fn enter(&self, n: &Node, depth: usize) -> Result<(), String> {
        let left = self.steps.get();
        if left == 0 {
            return Err("schema validation budget exhausted".into());
        }
        self.steps.set(left - 1);
        if depth > self.max_depth {
            return Err(format!("nesting deeper than {}", self.max_depth));
        }
        if n.never {
            return Err("no value is allowed here".into());
        }
        Ok(())
    }
}

/// `type`: what a value of type bit `kind` breaks; an integer is also a number.
pub(crate) fn type_mismatch(n: &Node, kind: u8, kind_name: &str) -> Option<String> {
    let ok = n.types == 0 || n.types & kind != 0 || (kind == T_INT && n.types & T_NUM != 0);
    (!ok).then(|| format!("expected {}, got {kind_name}", type_names(n.types)))
}

/// `enum`, given whether the value is one of the listed ones.
pub(crate) fn enum_mismatch(listed: bool) -> Option<Broken> {
    (!listed).then(|| {
        (
            Category::Enum,
            "value is not one of the allowed values".into(),
        )
    })
}

/// `format`, `minimum`/`maximum` (exclusive or not) and `multipleOf` of a number.
pub(crate) fn number(n: &Node, num: &serde_json::Number, broken: &mut impl FnMut(Broken)) {
    if !n.format.number_ok(num) {
        let detail = format!("{num} is out of the {} range", n.format.name());
        broken((Category::Format, detail));
    }
    let Some(f) = num.as_f64() else { return };
    if let Some((min, excl)) = n.minimum
        && (f < min || (excl && f == min))
    {
        let op = if excl { ">" } else { ">=" };
        broken((Category::Numeric, format!("{num} is not {op} {min}")));
    }
    if let Some((max, excl)) = n.maximum
        && (f > max || (excl && f == max))
    {
        let op = if excl { "<" } else { "<=" };
        broken((Category::Numeric, format!("{num} is not {op} {max}")));
    }
    if let Some(m) = n.multiple_of {
        let q = f / m;
        if !q.is_finite() || (q - q.round()).abs() > 1e-9 {
            broken((Category::Numeric, format!("{num} is not a multiple of {m}")));
        }
    }
}

/// `minLength`/`maxLength` (in characters), `pattern` and `format` of a string.
pub(crate) fn string(n: &Node, s: &str, broken: &mut impl FnMut(Broken)) {
    // A string has at most one character a byte and at least one every four: bounds its byte
    // length already meets need no count of its characters (most strings are well inside them).
    let bytes = s.len() as u64;
    let decided = n.max_length.is_none_or(|m| bytes <= m)
        && n.min_length.is_none_or(|m| bytes.div_ceil(4) >= m);
    if !decided {
        let len = s.chars().count() as u64;
        if let Some(min) = n.min_length.filter(|m| len < *m) {
            broken((
                Category::Length,
                format!("length {len} is shorter than {min}"),
            ));
        }
        if let Some(max) = n.max_length.filter(|m| len > *m) {
            broken((
                Category::Length,
                format!("length {len} is longer than {max}"),
            ));
        }
    }
    if let Some(p) = &n.pattern
        && !p.is_match(s)
    {
        let detail = format!("does not match pattern {}", p.as_str());
        broken((Category::Pattern, detail));
    }
    if !n.format.string_ok(s) {
        let detail = format!("is not a valid {}", n.format.name());
        broken((Category::Format, detail));
    }
}

/// `minItems`/`maxItems` of an array of `len` items, and `uniqueItems` given `same(i, j)`, whether
/// items `i` and `j` are equal.
pub(crate) fn array(
    n: &Node,
    len: usize,
    same: impl Fn(usize, usize) -> bool,
    broken: &mut impl FnMut(Broken),
) {
    count(len as u64, n.min_items, n.max_items, "items", broken);
    if n.unique_items
        && len <= UNIQUE_MAX
        && let Some(i) = (1..len).find(|&i| (0..i).any(|j| same(j, i)))
    {
        let detail = format!("item {i} is a duplicate (uniqueItems)");
        broken((Category::Structure, detail));
    }
}

/// `minProperties`/`maxProperties` of an object of `len` properties.
pub(crate) fn object(n: &Node, len: usize, broken: &mut impl FnMut(Broken)) {
    count(
        len as u64,
        n.min_properties,
        n.max_properties,
        "properties",
        broken,
    );
}

fn count(
    len: u64,
    min: Option<u64>,
    max: Option<u64>,
    what: &str,
    broken: &mut impl FnMut(Broken),
) {
    if let Some(min) = min.filter(|m| len < *m) {
        broken((Category::Length, format!("{len} {what}, fewer than {min}")));
    }
    if let Some(max) = max.filter(|m| len > *m) {
        broken((Category::Length, format!("{len} {what}, more than {max}")));
    }
}

/// `required`: what the absence of the required property `name` breaks (nothing when it is
/// read-only: a request need not send it).
pub(crate) fn missing(schemas: &Schemas, n: &Node, name: &str) -> Option<String> {
    let read_only = property(n, name).is_some_and(|p| schemas.node(p).read_only);
    (!read_only).then(|| format!("missing required property \"{name}\""))
}

/// What `properties`, `readOnly` and `additionalProperties` make of the property `key`.
pub(crate) enum Property {
    /// Its value is checked against this schema.
    Check(SchemaId),
    /// Anything goes.
    Any,
    /// The property itself breaks a rule.
    Refused(String),
}

pub(crate) fn property_rule(schemas: &Schemas, n: &Node, key: &str) -> Property {
    match property(n, key) {
        Some(p) if schemas.node(p).read_only => {
            Property::Refused(format!("property \"{key}\" is read-only"))
        }
        Some(p) => Property::Check(p),
        None => match n.additional {
            Additional::Any => Property::Any,
            Additional::Deny => {
                Property::Refused(format!("additional property \"{key}\" is not allowed"))
            }
            Additional::Schema(s) => Property::Check(s),
        },
    }
}

/// Lists up to this long are searched in order, names compared inline (most differ in length,
/// and those that do not are mostly short: a call to `memcmp` for each would cost more than the
/// comparison); longer ones by binary search on the sorted names, so that a schema with hundreds
/// of properties costs log n per key.
pub(crate) const SCAN_NAMES: usize = 16;

fn property(n: &Node, name: &str) -> Option<SchemaId> {
    let props = &n.properties;
    if props.len() <= SCAN_NAMES {
        return props
            .iter()
            .find(|(k, _)| same_bytes(k.as_bytes(), name.as_bytes()))
            .map(|(_, id)| *id);
    }
    props
        .binary_search_by(|(k, _)| (**k).cmp(name))
        .ok()
        .map(|i| props[i].1)
}

/// `anyOf`, `oneOf` and `not`, in that order, given `valid(schema)`, whether the value matches a
/// sub-schema (each called as the rule needs it: the calls spend the walk's budget).
pub(crate) fn applicators(
    n: &Node,
    mut valid: impl FnMut(SchemaId) -> bool,
) -> [Option<String>; 3] {
    let any_of = (!n.any_of.is_empty() && !n.any_of.iter().any(|&c| valid(c)))
        .then(|| "value matches none of the anyOf schemas".to_string());
    let one_of = if n.one_of.is_empty() {
        None
    } else {
        let matched = n.one_of.iter().filter(|&&c| valid(c)).count();
        (matched != 1).then(|| format!("value matches {matched} oneOf schemas, expected exactly 1"))
    };
    let not = n
        .not
        .filter(|&c| valid(c))
        .map(|_| "value matches a forbidden (not) schema".to_string());
    [any_of, one_of, not]
}
