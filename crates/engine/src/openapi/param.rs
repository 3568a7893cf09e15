//! One parameter (path, query, header, cookie or form field) compiled from a spec: where it lives,
//! whether it is mandatory, how arrays are serialised (style/explode, 2.0 collectionFormat), and
//! its schema. Validates the string values a request carries, coercing them to the schema type.

use super::OpenApiLimits;
use super::formats::Format;
use super::json::{Arena, Json};
use super::keywords::{Category, type_names};
use super::schema::{Node, SchemaId, Schemas, T_ARR, T_BOOL, T_INT, T_NUM, T_OBJ, T_STR};
use super::validate::validate;
use crate::{Context, Violation, ViolationKind};

/// Where a parameter lives in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Location {
    Path,
    Query,
    Header,
    Cookie,
    /// A field of an `application/x-www-form-urlencoded` (or 2.0 `formData`) body.
    Form,
}

impl Location {
    pub fn name(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
            Location::Form => "form",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Location> {
        Some(match s {
            "path" => Location::Path,
            "query" => Location::Query,
            "header" => Location::Header,
            "cookie" => Location::Cookie,
            "formData" => Location::Form,
            _ => return None,
        })
    }

    fn context(self) -> Context {
        match self {
            Location::Header => Context::Header,
            Location::Cookie => Context::Cookie,
            _ => Context::Parameter,
        }
    }
}

/// How an array value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// One occurrence per item (`form` + explode, 2.0 `multi`).
    Repeat,
    /// One occurrence, items joined by this byte.
    Delimited(u8),
    /// `deepObject` (`name[key]=v`) or exploded form objects: keys checked, values not typed.
    Object,
}

/// A compiled parameter.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub location: Location,
    pub required: bool,
    pub allow_empty: bool,
    pub(crate) style: Style,
    pub(crate) schema: Option<SchemaId>,
    /// Short type description for the URL table, e.g. `integer(int32)`, `array<string>`.
    pub type_label: String,
}

impl Param {
    /// Whether the parameter takes several occurrences (exploded arrays).
    pub fn repeatable(&self) -> bool {
        self.style == Style::Repeat
    }

    /// Validates the occurrences of this parameter (already percent-decoded).
    pub(crate) fn check(
        &self,
        schemas: &Schemas,
        values: &[&str],
        limits: &OpenApiLimits,
        out: &mut Vec<Violation>,
    ) {
        if values.len() > 1 && !self.repeatable() {
            let detail = format!(
                "{} parameter occurs {} times",
                self.location.name(),
                values.len()
            );
            out.push(self.violation(ViolationKind::ParameterRepeated, values[1], detail));
        }
        let Some(id) = self.schema else { return };
        if self.style == Style::Object {
            return;
        }
        let empty_checked = matches!(self.location, Location::Query | Location::Form);
        if empty_checked && values.iter().all(|v| v.is_empty()) {
            if !self.allow_empty {
                let detail = format!("{} parameter has an empty value", self.location.name());
                out.push(self.violation(ViolationKind::ParameterEmptyValue, b"", detail));
            }
            return;
        }
        let hint = schemas.type_hint(id);
        if let [one] = values
            && plain_integer_valid(schemas.node(id), one)
        {
            return;
        }
        let arena = Arena::new();
        let value = if hint & T_ARR != 0 {
            let item = items_of(schemas, id, 0);
            let parts: Vec<&str> = match self.style {
                Style::Delimited(d) => values.iter().flat_map(|v| v.split(d as char)).collect(),
                _ => values.to_vec(),
            };
            let coerced = parts.iter().map(|p| match item {
                Some(i) => coerce(schemas, i, p, &arena),
                None => Json::String(p),
            });
            Json::Array(arena.slice(coerced))
        } else {
            coerce(schemas, id, values[0], &arena)
        };
        for e in validate(schemas, id, &value, limits.max_violations, limits.max_depth) {
            let kind = match e.category {
                Category::Type | Category::Format | Category::Structure => {
                    ViolationKind::ParameterDataType
                }
                Category::Numeric => ViolationKind::ParameterNumericValue,
                Category::Length => ViolationKind::ParameterValueLength,
                Category::Enum => ViolationKind::ParameterStaticValue,
                Category::Pattern => ViolationKind::ParameterValueRegexp,
            };
            let snippet = e.value.display();
            let at = if e.pointer.is_empty() {
                String::new()
            } else {
                format!(" item {}", &e.pointer[1..])
            };
            let detail = format!("{} parameter{at}: {}", self.location.name(), e.detail);
            out.push(self.violation(kind, &snippet, detail));
        }
    }

    pub(crate) fn violation(
        &self,
        kind: ViolationKind,
        value: impl AsRef<[u8]>,
        detail: String,
    ) -> Violation {
        Violation::new(kind, self.location.context())
            .named(self.name.clone())
            .snippet(value.as_ref())
            .detail(detail)
    }
}

/// The `items` schema of an array schema (looking through `$ref` wrappers).
pub(crate) fn items_of(schemas: &Schemas, id: SchemaId, depth: usize) -> Option<SchemaId> {
    let n = schemas.node(id);
    if depth > 8 {
        return None;
    }
    n.items.or_else(|| {
        n.all_of
            .iter()
            .find_map(|&c| items_of(schemas, c, depth + 1))
    })
}

/// Turns a parameter string into the JSON value its schema expects, when it parses as one.
pub(crate) fn coerce<'a>(
    schemas: &Schemas,
    id: SchemaId,
    s: &'a str,
    arena: &'a Arena,
) -> Json<'a> {
    let hint = schemas.type_hint(id);
    if hint & (T_INT | T_NUM) != 0 {
        if let Ok(i) = s.parse::<i64>() {
            return Json::Number(i.into());
        }
        if let Ok(u) = s.parse::<u64>() {
            return Json::Number(u.into());
        }
        let numeric = s
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'e' | b'E'));
        if numeric && let Some(n) = s.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
            return Json::Number(n);
        }
    }
    if hint & T_BOOL != 0 && (s == "true" || s == "false") {
        return Json::Bool(s == "true");
    }
    if hint & T_OBJ != 0
        && hint & T_STR == 0
        && s.starts_with('{')
        && let Ok(v) = Json::parse(s.as_bytes(), arena)
    {
        return v;
    }
    Json::String(s)
}

/// Whether `s` is a short decimal integer that `n` finds valid with nothing to walk: `n` types it
/// as a number and bounds it at most by an integer format and a range, which are compared here as
/// [`super::keywords::number`] compares them. An id, a page size, a count: most parameter values of an
/// API. `false` says nothing: the value is then coerced and validated.
fn plain_integer_valid(n: &Node, s: &str) -> bool {
    // Up to 18 digits always parse as an `i64`: `coerce` makes the same number of it.
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let plain = n.types & (T_INT | T_NUM) != 0
        && n.types & T_ARR == 0
        && !n.never
        && n.enumeration.is_none()
        && n.multiple_of.is_none()
        && n.all_of.is_empty()
        && n.any_of.is_empty()
        && n.one_of.is_empty()
        && n.not.is_none()
        && matches!(n.format, Format::None | Format::Int32 | Format::Int64);
    let Ok(i) = s.parse::<i64>() else {
        return false;
    };
    let num = serde_json::Number::from(i);
    let Some(f) = num.as_f64() else {
        return false;
    };
    plain
        && n.format.number_ok(&num)
        && n.minimum
            .is_none_or(|(min, excl)| !(f < min || (excl && f == min)))
        && n.maximum
            .is_none_or(|(max, excl)| !(f > max || (excl && f == max)))
}

/// A short type label for the URL table.
pub(crate) fn type_label(schemas: &Schemas, id: Option<SchemaId>) -> String {
    label(schemas, id, 0)
}

fn label(schemas: &Schemas, id: Option<SchemaId>, depth: usize) -> String {
    let Some(id) = id.filter(|_| depth < 4) else {
        return "any".into();
    };
    let hint = schemas.type_hint(id);
    let name = type_names(hint);
    let base = if name.is_empty() {
        "any".to_string()
    } else {
        name
    };
    let fmt = std::iter::once(id)
        .chain(schemas.node(id).all_of.iter().copied())
        .map(|i| schemas.node(i).format.name())
        .find(|f| !f.is_empty());
    if hint & T_ARR != 0 {
        let item = label(schemas, items_of(schemas, id, 0), depth + 1);
        return format!("array<{item}>");
    }
    match fmt {
        Some(f) => format!("{base}({f})"),
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_integers_are_valid_only_where_validation_finds_them_so() {
        let node = |types, format, minimum, maximum| Node {
            types,
            format,
            minimum,
            maximum,
            ..Node::default()
        };
        let nodes = vec![
            node(
                T_INT,
                Format::Int64,
                Some((1.0, false)),
                Some((100.0, false)),
            ),
            node(T_INT, Format::Int32, None, None),
            node(T_NUM, Format::None, Some((1.0, true)), Some((100.0, true))),
            node(T_INT | T_STR, Format::None, None, Some((9.5, false))),
            node(T_STR, Format::None, None, None),
            Node {
                multiple_of: Some(3.0),
                ..node(T_INT, Format::None, None, None)
            },
            Node {
                never: true,
                ..node(T_INT, Format::None, None, None)
            },
        ];
        let schemas = Schemas { nodes };
        let values = [
            "",
            "0",
            "1",
            "9",
            "10",
            "007",
            "100",
            "101",
            "-1",
            "+5",
            "1e3",
            "1.5",
            " 1",
            "2147483647",
            "2147483648",
            "999999999999999999",
            "9999999999999999999",
        ];
        let mut fast = 0;
        for id in 0..schemas.nodes.len() as SchemaId {
            for v in values {
                let arena = Arena::new();
                let value = coerce(&schemas, id, v, &arena);
                let valid = validate(&schemas, id, &value, 8, 8);
                if plain_integer_valid(schemas.node(id), v) {
                    fast += 1;
                    assert!(valid.is_empty(), "schema {id}, {v:?}: {}", valid.len());
                }
            }
        }
        assert!(plain_integer_valid(schemas.node(0), "10"));
        assert!(!plain_integer_valid(schemas.node(0), "101"));
        assert!(!plain_integer_valid(schemas.node(1), "2147483648"));
        assert!(fast >= 10, "{fast}");
    }
}
