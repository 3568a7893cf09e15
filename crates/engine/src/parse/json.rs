//! The JSON walks of the checks: a bounded walk that parses a body and visits every key and
//! string/number value with its JSON pointer, measuring depth, array lengths and value lengths for
//! the json-profile limits (serde_json's recursion limit (128) bounds the parser; the walk itself is
//! iterative); and the visit of the keys and scalars of a document already parsed, for the
//! signature scan.

use crate::openapi::Json;
use serde_json::Value;

/// Structure measurements of one JSON document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub depth: usize,
    pub longest_array: usize,
    pub longest_value: usize,
}

/// One scalar or key found in the document.
pub enum Item<'a> {
    Key { pointer: &'a str, key: &'a str },
    Value { pointer: &'a str, value: &'a str },
}

/// A malformed JSON document; the text (the violation's detail) names the line and column, and
/// for a sequence of documents which one.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("line {} column {}: {}", .0.line(), .0.column(), .0)]
    Syntax(#[source] serde_json::Error),
    /// Document `document` (counted from 1) of a sequence.
    #[error("document {document}: line {} column {}: {source}", .source.line(), .source.column())]
    InDocument {
        document: usize,
        source: serde_json::Error,
    },
}

/// Parses `body`; on success visits every key and scalar (strings as-is, numbers and booleans as
/// text) and returns the shape. The error carries the line and column.
pub fn walk(body: &[u8], mut visit: impl FnMut(Item)) -> Result<Shape, JsonError> {
    let root: Value = serde_json::from_slice(body).map_err(JsonError::Syntax)?;
    let mut shape = Shape::default();
    let mut stack: Vec<(String, &Value, usize)> = vec![(String::new(), &root, 0)];
    let mut text = String::new();
    while let Some((pointer, v, depth)) = stack.pop() {
        shape.depth = shape.depth.max(depth);
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    visit(Item::Key {
                        pointer: &pointer,
                        key: k,
                    });
                    stack.push((format!("{pointer}/{}", escape(k)), child, depth + 1));
                }
            }
            Value::Array(items) => {
                shape.longest_array = shape.longest_array.max(items.len());
                for (i, child) in items.iter().enumerate() {
                    stack.push((format!("{pointer}/{i}"), child, depth + 1));
                }
            }
            Value::String(s) => {
                shape.longest_value = shape.longest_value.max(s.len());
                visit(Item::Value {
                    pointer: &pointer,
                    value: s,
                });
            }
            Value::Number(n) => {
                text.clear();
                text.push_str(&n.to_string());
                shape.longest_value = shape.longest_value.max(text.len());
                visit(Item::Value {
                    pointer: &pointer,
                    value: &text,
                });
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
    Ok(shape)
}

/// [`walk`] over a sequence of documents, one a line (NDJSON, JSON Lines; the record separator of
/// JSON text sequences counts as a line break). The shape is the largest of the documents'.
pub fn walk_lines(body: &[u8], mut visit: impl FnMut(Item)) -> Result<Shape, JsonError> {
    let mut shape = Shape::default();
    let lines = body.split(|b| matches!(b, b'\n' | 0x1e));
    for (n, doc) in lines
        .enumerate()
        .filter(|(_, d)| !d.trim_ascii().is_empty())
    {
        let s = walk(doc, &mut visit).map_err(|e| match e {
            JsonError::Syntax(source) | JsonError::InDocument { source, .. } => {
                JsonError::InDocument {
                    document: n + 1,
                    source,
                }
            }
        })?;
        shape.depth = shape.depth.max(s.depth);
        shape.longest_array = shape.longest_array.max(s.longest_array);
        shape.longest_value = shape.longest_value.max(s.longest_value);
    }
    Ok(shape)
}

/// One key or scalar of a document, as [`scalars`] visits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar<'a> {
    Key(&'a str),
    /// A key under an object's key, visited just before the key itself: the path `parent.key`
    /// a deep merge walks (as [`key_path`] joins it where the walk has pointers).
    KeyPath {
        parent: &'a str,
        key: &'a str,
    },
    /// A string as it reads unescaped, or a fraction as [`walk`] writes it; booleans and nulls
    /// carry no text and are not visited.
    Value(&'a str),
    /// An integer as [`walk`] writes it: its ASCII digits, with a `-` when negative. Carried as
    /// bytes because what reads it (the signature scan) reads bytes, and making them a `str`
    /// would check as UTF-8 what is ASCII by construction.
    Integer(&'a [u8]),
}

/// Visits every key and scalar of `doc` in document order, each key before what its value holds.
/// A document as written ([`crate::openapi::JsonBody::written`]) has every occurrence of a repeated key, each
/// visited (the applications behind do not agree on which one wins). Depth is bounded by the
/// parser's nesting limit.
pub fn scalars(doc: &Json<'_>, visit: &mut impl FnMut(Scalar<'_>)) {
    scalars_under(doc, None, visit);
}

/// [`scalars`] of a value found under the object key `parent` (none at the top level and under
/// an array element, as for [`key_path`]).
fn scalars_under(doc: &Json<'_>, parent: Option<&str>, visit: &mut impl FnMut(Scalar<'_>)) {
    match doc {
        Json::Object(pairs) => {
            for (k, v) in pairs.iter() {
                if let Some(parent) = parent {
                    visit(Scalar::KeyPath { parent, key: k });
                }
                visit(Scalar::Key(k));
                scalars_under(v, Some(k), visit);
            }
        }
        Json::Array(items) => items.iter().for_each(|v| scalars_under(v, None, visit)),
        Json::String(v) => visit(Scalar::Value(v)),
        Json::Number(n) => number(n, visit),
        Json::Bool(_) | Json::Null => {}
    }
}

/// A number as `Value`'s `Display` writes it (what [`walk`] visits), formatted on the stack
/// without the formatter: an integer's digits put in place ([`Scalar::Integer`]), a fraction by
/// the float formatter `Number`'s `Display` calls (a `Number` is always finite).
fn number(n: &serde_json::Number, visit: &mut impl FnMut(Scalar<'_>)) {
    if let Some(u) = n.as_u64().or_else(|| n.as_i64().map(i64::unsigned_abs)) {
        let mut buf = [0; portcullis_support::DECIMAL_MAX];
        let negative = n.is_i64() && !n.is_u64();
        visit(Scalar::Integer(portcullis_support::decimal_bytes(
            u, negative, &mut buf,
        )));
        return;
    }
    if let Some(f) = n.as_f64() {
        visit(Scalar::Value(zmij::Buffer::new().format_finite(f)));
    }
}

/// Whether `body` starts like a JSON object or array (after white space).
pub fn starts_like_json(body: &[u8]) -> bool {
    matches!(
        body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// The key path `parent.key` of `key`, found under `pointer`, when its parent is an object's
/// key; `None` at the top level and under an array (a numeric last segment is read as an
/// index), where the key alone is the whole path.
pub fn key_path(pointer: &str, key: &str) -> Option<String> {
    let (_, parent) = pointer.rsplit_once('/')?;
    if parent.is_empty() || parent.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(format!(
        "{}.{key}",
        parent.replace("~1", "/").replace("~0", "~")
    ))
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::{Arena, JsonBody};

    /// A visited scalar as the tests list it: an integer's digits read as the text they are, so
    /// it reads as the tree walk's value of the same number.
    fn shown(s: Scalar<'_>) -> String {
        match s {
            Scalar::Integer(d) => format!("Value({:?})", String::from_utf8_lossy(d)),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn key_paths_join_a_key_to_its_parent_object_key() {
        let doc = br#"{"constructor":{"prototype":{"x":1}},"a":[{"b":{"c/d":2}}]}"#;
        let mut paths = Vec::new();
        walk(doc, |i| {
            if let Item::Key { pointer, key } = i {
                paths.extend(key_path(pointer, key));
            }
        })
        .unwrap();
        paths.sort();
        assert_eq!(paths, ["b.c/d", "constructor.prototype", "prototype.x"]);
        // The visit of a parsed document (a JSON string inside a value, a cookie, an unlabelled
        // body) gives the same paths as the walk with pointers.
        let mut visited = Vec::new();
        let arena = Arena::new();
        scalars(JsonBody::new(doc, &arena).written().unwrap(), &mut |s| {
            if let Scalar::KeyPath { parent, key } = s {
                visited.push(format!("{parent}.{key}"));
            }
        });
        visited.sort();
        assert_eq!(visited, paths);
    }

    #[test]
    fn walks_keys_and_values_with_pointers() {
        let mut seen = Vec::new();
        let shape = walk(br#"{"a":[1,"x",{"b/c":"y"}]}"#, |i| match i {
            Item::Key { pointer, key } => seen.push(format!("K{pointer}:{key}")),
            Item::Value { pointer, value } => seen.push(format!("V{pointer}:{value}")),
        })
        .unwrap();
        assert!(seen.contains(&"V/a/2/b~1c:y".to_string()), "{seen:?}");
        assert_eq!(
            shape,
            Shape {
                depth: 3,
                longest_array: 3,
                longest_value: 1
            }
        );
        let e = walk(b"{\"a\":", |_| {}).unwrap_err().to_string();
        assert!(e.starts_with("line 1 column "), "{e}");
        let e = walk_lines(b"{}\n{\"a\":", |_| {}).unwrap_err();
        assert!(
            matches!(e, JsonError::InDocument { document: 2, .. }),
            "{e}"
        );
    }

    #[test]
    fn scalars_visit_what_walk_visits_in_document_order() {
        let doc =
            br#"{"a":[1,-2,"x\u0041",{"b/c":"y","n":null,"t":true}],"f":12.50,"e":1e3,"k":{}}"#;
        let arena = Arena::new();
        let body = JsonBody::new(doc, &arena);
        let mut seen = Vec::new();
        scalars(body.written().unwrap(), &mut |s| {
            if !matches!(s, Scalar::KeyPath { .. }) {
                seen.push(shown(s))
            }
        });
        assert_eq!(
            seen,
            [
                "Key(\"a\")",
                "Value(\"1\")",
                "Value(\"-2\")",
                "Value(\"xA\")",
                "Key(\"b/c\")",
                "Value(\"y\")",
                "Key(\"n\")",
                "Key(\"t\")",
                "Key(\"f\")",
                "Value(\"12.5\")",
                "Key(\"e\")",
                "Value(\"1000.0\")",
                "Key(\"k\")",
            ]
        );
        // The same keys and scalars as the tree walk (which visits in its own order).
        let mut from_tree = Vec::new();
        walk(doc, |i| match i {
            Item::Key { key, .. } => from_tree.push(format!("Key({key:?})")),
            Item::Value { value, .. } => from_tree.push(format!("Value({value:?})")),
        })
        .unwrap();
        from_tree.sort();
        seen.sort();
        assert_eq!(seen, from_tree);
        // The scalars of `doc` as this reader writes them and as the tree walk does.
        let ours_and_theirs = |doc: &[u8]| {
            let mut ours = Vec::new();
            scalars(JsonBody::new(doc, &arena).written().unwrap(), &mut |s| {
                ours.push(shown(s))
            });
            let mut theirs = Vec::new();
            walk(doc, |i| {
                if let Item::Value { value, .. } = i {
                    theirs.push(format!("Value({value:?})"));
                }
            })
            .unwrap();
            theirs.reverse();
            (ours, theirs)
        };
        // Integers at the ends of their ranges read as the tree walk writes them.
        let (ours, theirs) = ours_and_theirs(
            br#"[0,-0,18446744073709551615,-9223372036854775808,9223372036854775807,-1]"#,
        );
        assert_eq!(ours, theirs);
        // Fractions and exponents, tiny, huge and negative zero, read as the tree walk's
        // `Display` writes them.
        let (ours, theirs) = ours_and_theirs(
            br#"[0.1,-0.0,12.50,1e300,5e-324,1.7976931348623157e308,-2.5e-7,123456789.125]"#,
        );
        assert_eq!(ours.len(), 8);
        assert_eq!(ours, theirs);
        // Malformed documents and trailing text are errors, as for the tree walk.
        for bad in [
            &b"{\"a\":"[..],
            b"{\"a\":1} x",
            b"[1,]",
            b"{1:2}",
            b"[\"\xff\"]",
        ] {
            assert!(
                JsonBody::new(bad, &arena).written().is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
            assert!(walk(bad, |_| {}).is_err());
        }
    }

    #[test]
    fn every_occurrence_of_a_repeated_key_is_visited_as_written() {
        let arena = Arena::new();
        let body = JsonBody::new(br#"{"q":"<script>","q":"x","o":{"k":1,"k":2}}"#, &arena);
        let mut seen = Vec::new();
        scalars(body.written().unwrap(), &mut |s| seen.push(shown(s)));
        assert_eq!(
            seen,
            [
                "Key(\"q\")",
                "Value(\"<script>\")",
                "Key(\"q\")",
                "Value(\"x\")",
                "Key(\"o\")",
                "KeyPath { parent: \"o\", key: \"k\" }",
                "Key(\"k\")",
                "Value(\"1\")",
                "KeyPath { parent: \"o\", key: \"k\" }",
                "Key(\"k\")",
                "Value(\"2\")",
            ]
        );
        // The schema's reading of the same parse merges them as `serde_json::Value` does.
        let merged = body.document().unwrap().render();
        assert_eq!(merged, r#"{"q":"x","o":{"k":2}}"#);
    }
}
