//! Typed reading of call parameters from the element tree: arrays by structure (the children are
//! the entries, whatever they are named, `xsi:nil` is empty), structs by member name, booleans in
//! every spelling clients send (0/1/true/false/True/False), longs, and the iControl types
//! `ViewZone` and `ZoneInfo`. Every failure is an `InvalidArgument` fault naming the parameter.

use super::envelope::{Call, Node};
use super::fault::Fault;

/// A `Management.ViewZone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewZone {
    pub view: String,
    pub zone: String,
}

/// A `Management.ZoneInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneInfo {
    pub view: String,
    pub zone: String,
    pub zone_type: String,
    pub zone_file: String,
    pub options: Vec<String>,
}

/// The entries of an array parameter.
pub fn items(node: &Node) -> &[Node] {
    if node.nil { &[] } else { &node.children }
}

/// A required parameter.
pub fn param<'a>(call: &'a Call, name: &str, pos: usize) -> Result<&'a Node, Fault> {
    call.param(name, pos)
        .ok_or_else(|| Fault::invalid(format!("missing parameter {name}")))
}

/// A struct member's text (empty when absent).
pub fn member(node: &Node, name: &str) -> String {
    node.children
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.text.trim().to_string())
        .unwrap_or_default()
}

/// A required struct member's text.
pub fn required(node: &Node, name: &str, what: &str) -> Result<String, Fault> {
    let v = member(node, name);
    if v.is_empty() {
        Err(Fault::invalid(format!(
            "{what}: {name} is empty or missing"
        )))
    } else {
        Ok(v)
    }
}

/// A boolean in any spelling.
pub fn boolean(text: &str, what: &str) -> Result<bool, Fault> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        other => Err(Fault::invalid(format!(
            "{what}: \"{other}\" is not a boolean (use 0/1 or true/false)"
        ))),
    }
}

/// A long member (`ttl`, `preference`, ...).
pub fn long(node: &Node, name: &str, what: &str) -> Result<i64, Fault> {
    let v = member(node, name);
    v.parse()
        .map_err(|_| Fault::invalid(format!("{what}: {name} \"{v}\" is not an integer")))
}

/// The `view_zones` parameter (first position).
pub fn view_zones(call: &Call) -> Result<Vec<ViewZone>, Fault> {
    items(param(call, "view_zones", 0)?)
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let what = format!("view_zones[{i}]");
            Ok(ViewZone {
                view: required(n, "view_name", &what)?,
                zone: required(n, "zone_name", &what)?,
            })
        })
        .collect()
}

/// The `zone_records` / `zone_infos` parameter of `add_zone_text`.
pub fn zone_infos(node: &Node) -> Result<Vec<ZoneInfo>, Fault> {
    items(node)
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let what = format!("zone_records[{i}]");
            let options = n
                .children
                .iter()
                .find(|c| c.name == "option_seq")
                .map(|o| items(o).iter().map(|s| s.text.trim().to_string()).collect())
                .unwrap_or_default();
            Ok(ZoneInfo {
                view: required(n, "view_name", &what)?,
                zone: required(n, "zone_name", &what)?,
                zone_type: member(n, "zone_type"),
                zone_file: member(n, "zone_file"),
                options,
            })
        })
        .collect()
}

/// An array of arrays of strings (record texts per zone).
pub fn string_arrays(node: &Node) -> Vec<Vec<String>> {
    items(node)
        .iter()
        .map(|inner| {
            items(inner)
                .iter()
                .map(|s| s.text.trim().to_string())
                .collect()
        })
        .collect()
}

/// The `sync_ptrs` array: absent or empty means all false; one entry applies to every zone.
pub fn sync_ptrs(call: &Call, pos: usize, zones: usize) -> Result<Vec<bool>, Fault> {
    let Some(node) = call.param("sync_ptrs", pos) else {
        return Ok(vec![false; zones]);
    };
    let flags = items(node)
        .iter()
        .enumerate()
        .map(|(i, n)| boolean(&n.text, &format!("sync_ptrs[{i}]")))
        .collect::<Result<Vec<bool>, Fault>>()?;
    match flags.len() {
        0 => Ok(vec![false; zones]),
        1 => Ok(vec![flags[0]; zones]),
        n if n == zones => Ok(flags),
        n => Err(Fault::invalid(format!(
            "sync_ptrs has {n} entries but {zones} zones are addressed"
        ))),
    }
}

/// Checks that a per-zone array has one entry per zone.
pub fn same_len<T>(what: &str, v: &[T], zones: usize) -> Result<(), Fault> {
    if v.len() == zones {
        Ok(())
    } else {
        Err(Fault::invalid(format!(
            "{what} has {} entries but {zones} zones are addressed",
            v.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_in_every_spelling() {
        for t in ["1", "true", "True", "TRUE", " 1 "] {
            assert!(boolean(t, "x").unwrap());
        }
        for t in ["0", "false", "False"] {
            assert!(!boolean(t, "x").unwrap());
        }
        assert!(
            boolean("yes", "x")
                .unwrap_err()
                .message
                .contains("not a boolean")
        );
    }
}
