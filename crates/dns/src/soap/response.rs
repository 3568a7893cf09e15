//! Response envelopes, written strictly in the BIG-IP style suds parses: fixed prefixes
//! (`E` envelope, `A` SOAP-ENC, `s` xsi, `y` xsd, `iControl`), the `<op>Response` wrapper in the
//! interface namespace, an unqualified `return` part, `A:arrayType` on every array (nested ones
//! included, `y:string[][N]` outside, `y:string[M]` inside), booleans as 0/1, text escaped.

use quick_xml::escape::escape;

/// A value to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    Bool(bool),
    Long(i64),
    /// An enum member with its schema type (`iControl:Management.ZoneType`).
    Enum(&'static str, String),
    /// An array whose elements have the type `elem` (`y:string`, `y:string[]` for nested arrays,
    /// `iControl:Management.ZoneInfo`).
    Array {
        elem: String,
        items: Vec<Value>,
    },
    /// A struct: members in schema order.
    Struct(Vec<(&'static str, Value)>),
}

impl Value {
    /// An array of strings.
    pub fn strings(items: impl IntoIterator<Item = String>) -> Value {
        Value::Array {
            elem: "y:string".into(),
            items: items.into_iter().map(Value::Str).collect(),
        }
    }

    /// An array of arrays of strings.
    pub fn string_arrays(items: impl IntoIterator<Item = Vec<String>>) -> Value {
        Value::Array {
            elem: "y:string[]".into(),
            items: items.into_iter().map(Value::strings).collect(),
        }
    }

    /// An array of booleans (written 0/1).
    pub fn bools(items: impl IntoIterator<Item = bool>) -> Value {
        Value::Array {
            elem: "y:boolean".into(),
            items: items.into_iter().map(Value::Bool).collect(),
        }
    }

    /// An array of structs of the schema type `ty` (`Management.ZoneInfo`).
    pub fn structs(ty: &str, items: Vec<Value>) -> Value {
        Value::Array {
            elem: format!("iControl:{ty}"),
            items,
        }
    }
}

const ENVELOPE_OPEN: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8"?>"#,
    "\n",
    r#"<E:Envelope xmlns:E="http://schemas.xmlsoap.org/soap/envelope/""#,
    r#" xmlns:A="http://schemas.xmlsoap.org/soap/encoding/""#,
    r#" xmlns:s="http://www.w3.org/2001/XMLSchema-instance""#,
    r#" xmlns:y="http://www.w3.org/2001/XMLSchema""#,
    r#" xmlns:iControl="urn:iControl""#,
    r#" E:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><E:Body>"#
);
const ENVELOPE_CLOSE: &str = "</E:Body></E:Envelope>";

/// The envelope of a successful call; `ret` is `None` for void methods.
pub fn envelope(namespace: &str, method: &str, ret: Option<&Value>) -> String {
    let mut out = String::from(ENVELOPE_OPEN);
    let ns = escape(namespace);
    match ret {
        None => out.push_str(&format!(r#"<m:{method}Response xmlns:m="{ns}"/>"#)),
        Some(v) => {
            out.push_str(&format!(r#"<m:{method}Response xmlns:m="{ns}">"#));
            write_value(&mut out, "return", v, true);
            out.push_str(&format!("</m:{method}Response>"));
        }
    }
    out.push_str(ENVELOPE_CLOSE);
    out
}

/// The envelope of a fault (`code` is `Server` or `Client`).
pub fn fault_envelope(code: &str, text: &str) -> String {
    format!(
        "{ENVELOPE_OPEN}<E:Fault><faultcode>E:{code}</faultcode><faultstring>{}</faultstring></E:Fault>{ENVELOPE_CLOSE}",
        escape(text)
    )
}

fn write_value(out: &mut String, tag: &str, v: &Value, top: bool) {
    match v {
        Value::Str(s) => out.push_str(&format!(
            r#"<{tag} s:type="y:string">{}</{tag}>"#,
            escape(s.as_str())
        )),
        Value::Long(n) => out.push_str(&format!(r#"<{tag} s:type="y:long">{n}</{tag}>"#)),
        Value::Bool(b) => out.push_str(&format!(
            r#"<{tag} s:type="y:boolean">{}</{tag}>"#,
            u8::from(*b)
        )),
        Value::Enum(ty, s) => out.push_str(&format!(
            r#"<{tag} s:type="{ty}">{}</{tag}>"#,
            escape(s.as_str())
        )),
        Value::Array { elem, items } => {
            let ty = if top { r#" s:type="A:Array""# } else { "" };
            if items.is_empty() {
                out.push_str(&format!(r#"<{tag}{ty} A:arrayType="{elem}[0]"/>"#));
                return;
            }
            out.push_str(&format!(
                r#"<{tag}{ty} A:arrayType="{elem}[{}]">"#,
                items.len()
            ));
            for item in items {
                write_value(out, "item", item, false);
            }
            out.push_str(&format!("</{tag}>"));
        }
        Value::Struct(fields) => {
            out.push_str(&format!("<{tag}>"));
            for (name, fv) in fields {
                write_value(out, name, fv, false);
            }
            out.push_str(&format!("</{tag}>"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_arrays_carry_array_type_at_every_level() {
        let v = Value::string_arrays(vec![vec!["a<b".to_string(), "c".to_string()], vec![]]);
        let xml = envelope(
            "urn:iControl:Management/ResourceRecord",
            "get_rrs",
            Some(&v),
        );
        assert!(xml.contains(r#"<m:get_rrsResponse xmlns:m="urn:iControl:Management/ResourceRecord"><return s:type="A:Array" A:arrayType="y:string[][2]"><item A:arrayType="y:string[2]"><item s:type="y:string">a&lt;b</item>"#), "{xml}");
        assert!(xml.contains(r#"<item A:arrayType="y:string[0]"/>"#));
        let b = envelope(
            "urn:iControl:Management/Zone",
            "zone_exist",
            Some(&Value::bools([true, false])),
        );
        assert!(
            b.contains(r#"<item s:type="y:boolean">1</item><item s:type="y:boolean">0</item>"#)
        );
        assert!(envelope("urn:x", "add_a", None).contains(r#"<m:add_aResponse xmlns:m="urn:x"/>"#));
    }
}
