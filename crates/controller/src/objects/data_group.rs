//! `ltm data-group internal`: records `[{name, data}]` of type string, ip or integer, and the
//! tmsh-style PATCH `?options=records add { k { data v } }` / `records delete { k1 k2 }`
//! (the query is form-decoded, so `%20` and `+` both work; keys and values may be quoted).
//! A PATCH that names no property is a 400 (apiError 26214401).

use std::net::IpAddr;

use serde_json::{Map, Value, json};

use portcullis_admin::{KindSpec, PendingWrite, str_field};
use portcullis_admin::{MgmtError, MgmtResult};

pub static INTERNAL: KindSpec = KindSpec {
    path: "/mgmt/tm/ltm/data-group/internal",
    label: "Data Group",
    defaults: dg_defaults,
    prepare: prepare_dg,
    patch: Some(patch_dg),
    ..KindSpec::BASE
};

fn dg_defaults() -> Value {
    json!({"type": "string"})
}

/// Keys that do not count as "a property" in a PATCH.
const IDENTITY: &[&str] = &[
    "name",
    "partition",
    "subPath",
    "kind",
    "selfLink",
    "generation",
    "fullPath",
];

fn prepare_dg(p: &mut PendingWrite<'_, '_>) -> MgmtResult<()> {
    let ty = str_field(p.obj, "type")?.unwrap_or("string").to_string();
    if !matches!(ty.as_str(), "string" | "ip" | "integer") {
        return Err(MgmtError::bad_request(format!(
            "Data group type must be string, ip or integer, got '{ty}'."
        )));
    }
    let Some(records) = p.obj.get("records").cloned() else {
        return Ok(());
    };
    let Value::Array(records) = records else {
        return Err(MgmtError::bad_request(
            "records must be an array of {name, data}.",
        ));
    };
    let mut out: Vec<Value> = Vec::new();
    for r in records {
        let Value::Object(m) = r else {
            return Err(MgmtError::bad_request(
                "records must be an array of {name, data}.",
            ));
        };
        let name = str_field(&m, "name")?
            .ok_or_else(|| MgmtError::bad_request("each record needs a name."))?
            .to_string();
        check_key(&ty, &name)?;
        if out.iter().any(|o| o["name"] == name.as_str()) {
            return Err(MgmtError::bad_request(format!(
                "Duplicate data group record '{name}'."
            )));
        }
        let mut rec = Map::from_iter([("name".to_string(), json!(name))]);
        if let Some(d) = m.get("data") {
            let d = match d {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Err(MgmtError::bad_request("record data must be a string.")),
            };
            rec.insert("data".into(), json!(d));
        }
        out.push(Value::Object(rec));
    }
    p.obj.insert("records".into(), Value::Array(out));
    Ok(())
}

fn check_key(ty: &str, key: &str) -> MgmtResult<()> {
    let ok = match ty {
        "ip" => {
            let (a, len) = key.split_once('/').unwrap_or((key, "0"));
            a.parse::<IpAddr>().is_ok() && len.parse::<u8>().is_ok_and(|l| l <= 128)
        }
        "integer" => key.parse::<i64>().is_ok(),
        _ => !key.is_empty(),
    };
    if ok {
        Ok(())
    } else {
        Err(MgmtError::bad_request(format!(
            "Invalid {ty} data group record '{key}'."
        )))
    }
}

fn patch_dg(
    p: &PendingWrite<'_, '_>,
    body: &Map<String, Value>,
    options: Option<&str>,
) -> MgmtResult<Option<Map<String, Value>>> {
    let mut obj = p.obj.clone();
    match options {
        Some(o) => {
            let op = parse_options(o)?;
            let mut records = obj
                .get("records")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            match op {
                RecordsOp::Add(adds) => {
                    for (k, v) in adds {
                        if records.iter().any(|r| r["name"] == k.as_str()) {
                            return Err(MgmtError::bad_request(format!(
                                "01020066:3: The requested data group record ({k}) already exists."
                            )));
                        }
                        records.push(match v {
                            Some(d) => json!({"name": k, "data": d}),
                            None => json!({"name": k}),
                        });
                    }
                }
                RecordsOp::Delete(keys) => {
                    for k in keys {
                        let before = records.len();
                        records.retain(|r| r["name"] != k.as_str());
                        if records.len() == before {
                            return Err(MgmtError::bad_request(format!(
                                "01020036:3: The requested data group record ({k}) was not found."
                            )));
                        }
                    }
                }
            }
            obj.insert("records".into(), Value::Array(records));
        }
        None => {
            if !body.keys().any(|k| !IDENTITY.contains(&k.as_str())) {
                return Err(
                    MgmtError::bad_request("one or more properties must be specified")
                        .api(26_214_401),
                );
            }
            for (k, v) in body {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Some(obj))
}

/// A parsed `records add/delete` option.
#[derive(Debug, PartialEq)]
pub enum RecordsOp {
    Add(Vec<(String, Option<String>)>),
    Delete(Vec<String>),
}

fn tokens(s: &str) -> MgmtResult<Vec<String>> {
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    while let Some(&c) = it.peek() {
        if c.is_whitespace() || c == ',' {
            it.next();
        } else if c == '{' || c == '}' {
            out.push(c.to_string());
            it.next();
        } else if c == '"' {
            it.next();
            let mut w = String::new();
            loop {
                match it.next() {
                    Some('\\') => w.extend(it.next()),
                    Some('"') => break,
                    Some(ch) => w.push(ch),
                    None => return Err(bad_options(s)),
                }
            }
            out.push(format!("\"{w}"));
        } else {
            let mut w = String::new();
            while let Some(&ch) = it.peek() {
                if ch.is_whitespace() || matches!(ch, '{' | '}' | '"' | ',') {
                    break;
                }
                w.push(ch);
                it.next();
            }
            out.push(w);
        }
    }
    Ok(out)
}

fn bad_options(s: &str) -> MgmtError {
    MgmtError::bad_request(format!("Invalid options value: {s}"))
}

fn word(t: &str) -> String {
    t.strip_prefix('"').unwrap_or(t).to_string()
}

/// Parses `records add { k { data v } k2 }` or `records delete { k1 k2 }`.
pub fn parse_options(s: &str) -> MgmtResult<RecordsOp> {
    let t = tokens(s)?;
    let bad = || bad_options(s);
    let (op, body) = match t.as_slice() {
        [r, op, open, body @ .., close] if r == "records" && open == "{" && close == "}" => {
            (op.as_str(), body)
        }
        _ => return Err(bad()),
    };
    let is_kw = |x: &String| x == "{" || x == "}";
    match op {
        "add" => {
            let mut out = Vec::new();
            let mut i = 0;
            while i < body.len() {
                let k = &body[i];
                if is_kw(k) {
                    return Err(bad());
                }
                i += 1;
                let mut data = None;
                if body.get(i).map(String::as_str) == Some("{") {
                    match &body[i + 1..] {
                        [close, ..] if close == "}" => i += 2,
                        [d, v, close, ..] if d == "data" && !is_kw(v) && close == "}" => {
                            data = Some(word(v));
                            i += 4;
                        }
                        _ => return Err(bad()),
                    }
                }
                out.push((word(k), data));
            }
            if out.is_empty() {
                Err(bad())
            } else {
                Ok(RecordsOp::Add(out))
            }
        }
        "delete" => {
            if body.is_empty() || body.iter().any(is_kw) {
                return Err(bad());
            }
            Ok(RecordsOp::Delete(body.iter().map(|k| word(k)).collect()))
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_forms() {
        assert_eq!(
            parse_options("records add { k2 { data v2 } }").unwrap(),
            RecordsOp::Add(vec![("k2".into(), Some("v2".into()))])
        );
        assert_eq!(
            parse_options("records add {\"k\"{data \"/Common/vs 1\"}}").unwrap(),
            RecordsOp::Add(vec![("k".into(), Some("/Common/vs 1".into()))])
        );
        assert_eq!(
            parse_options("records add { a b { } }").unwrap(),
            RecordsOp::Add(vec![("a".into(), None), ("b".into(), None)])
        );
        assert_eq!(
            parse_options("records delete { k1,k2 }").unwrap(),
            RecordsOp::Delete(vec!["k1".into(), "k2".into()])
        );
        for bad in [
            "records add { }",
            "records frob { a }",
            "records add { a { data } }",
            "records add { a",
            "add { a }",
            "records delete { {",
        ] {
            assert!(parse_options(bad).is_err(), "{bad}");
        }
    }
}
