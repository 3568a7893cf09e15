//! A bounded JSON walk: parses a body and visits every key and string/number value with its JSON
//! pointer, measuring depth, array lengths and value lengths for the json-profile limits.
//! serde_json's recursion limit (128) bounds the parser; the walk itself is iterative.

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

/// Parses `body`; on success visits every key and scalar (strings as-is, numbers and booleans as
/// text) and returns the shape. The error carries the line and column.
pub fn walk(body: &[u8], mut visit: impl FnMut(Item)) -> Result<Shape, String> {
    let root: Value = serde_json::from_slice(body)
        .map_err(|e| format!("line {} column {}: {}", e.line(), e.column(), e))?;
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
pub fn walk_lines(body: &[u8], mut visit: impl FnMut(Item)) -> Result<Shape, String> {
    let mut shape = Shape::default();
    let lines = body.split(|b| matches!(b, b'\n' | 0x1e));
    for (n, doc) in lines
        .enumerate()
        .filter(|(_, d)| !d.trim_ascii().is_empty())
    {
        let s = walk(doc, &mut visit).map_err(|e| format!("document {}: {e}", n + 1))?;
        shape.depth = shape.depth.max(s.depth);
        shape.longest_array = shape.longest_array.max(s.longest_array);
        shape.longest_value = shape.longest_value.max(s.longest_value);
    }
    Ok(shape)
}

/// Whether `body` starts like a JSON object or array (after white space).
pub fn starts_like_json(body: &[u8]) -> bool {
    matches!(
        body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(walk(b"{\"a\":", |_| {}).unwrap_err().contains("line 1"));
    }
}
