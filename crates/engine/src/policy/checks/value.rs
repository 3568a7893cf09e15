//! Parameter `valueType` json / xml: the value of such a parameter is a document, parsed with the
//! JSON or XML profile the parameter names (`contentProfile`, written `{"name": …}` or, as the
//! format's schema has it, `{"contentProfile": {"name": …}}`; the `Default` profile when absent).
//!
//! - JSON: unparsable → VIOL_JSON_MALFORMED (and the raw value still goes through the signatures);
//!   the profile's schema (`json_schema`) → VIOL_JSON_SCHEMA; the profile's limits (total length, depth, array length, value length) → VIOL_JSON_FORMAT;
//!   every key and scalar checked by the profile's meta-characters
//!   (VIOL_PARAMETER_VALUE_METACHAR) and by the signatures (keys as parameter names, values as
//!   JSON values), minus the parameter's and the profile's `signatureOverrides`.
//! - XML: not well formed → VIOL_XML_MALFORMED; DTD / external reference / processing instruction
//!   / CDATA the profile refuses → VIOL_XML_FORMAT; the document scanned by the XML signatures,
//!   each text and attribute value by the profile's meta-characters.
//!
//! Violations are named `<parameter><JSON pointer>` (`filter/user/name`) and masked when the
//! parameter is sensitive. These replace the user-input value checks (static values, length, data
//! type, numeric range, regex, base64, meta-characters and signatures of the raw value); the
//! entity checks before them (location, repetition, empty value, name meta-characters) still apply.
//! Only parameters with these value types pay anything (`CompiledParam::value_profile`).

use crate::parse::{json, xml};
use crate::policy::PolicyError;
use crate::policy::compile::compiled::{
    CompiledJson, CompiledParam, CompiledPolicy, CompiledXml, MAX_ITEMS, Scratch,
};
use crate::policy::decl::{self, ValueType};
use crate::signatures::{SignatureDb, Target};
use crate::violation::{Context, Violation, ViolationKind as K};

/// Compile time: the index of the profile that parses a json/xml-valued parameter (`None` for
/// every other value type). A name not declared is an error naming `path`, except `Default`,
/// which the templates declare (a policy that deleted it gets the profile defaults: no limits,
/// signatures on).
pub(in crate::policy) fn value_profile(
    p: &decl::Parameter,
    path: &str,
    json: &[CompiledJson],
    xml: &[CompiledXml],
) -> Result<Option<usize>, PolicyError> {
    let names: Vec<&str> = match p.value_type {
        Some(ValueType::Json) => json.iter().map(|j| j.name.as_str()).collect(),
        Some(ValueType::Xml) => xml.iter().map(|x| x.name.as_str()).collect(),
        _ => return Ok(None),
    };
    let name = p
        .content_profile
        .as_ref()
        .and_then(|c| c.name())
        .unwrap_or("Default");
    match names.iter().position(|n| *n == name) {
        Some(i) => Ok(Some(i)),
        None if name == "Default" => Ok(Some(usize::MAX)),
        None => {
            let kind = if p.value_type == Some(ValueType::Json) {
                "json"
            } else {
                "xml"
            };
            Err(PolicyError::invalid(
                format!("{path}.contentProfile.name"),
                format!(
                    "unknown {kind} profile \"{name}\" (the {kind}-profiles of the policy: {})",
                    names.join(", ")
                ),
            ))
        }
    }
}

impl CompiledPolicy {
    /// The value of a json/xml-valued parameter (non-empty).
    pub(in crate::policy) fn check_structured_value(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        p: &CompiledParam,
        pname: &str,
        value: &[u8],
        sensitive: bool,
    ) {
        if !self.sigs.is_empty() {
            // The whole-query-string scan leaves what this value carries to this parameter.
            s.hits.clear();
            SignatureDb::builtin().scan(Target::ParamValue, value, &mut s.hits);
            s.param_hits.extend_from_slice(&s.hits);
        }
        let idx = p.value_profile.unwrap_or(usize::MAX);
        let snip = |v: Violation| {
            if sensitive {
                v.snippet(b"********")
            } else {
                v.snippet(value)
            }
        };
        let named = |k: K| Violation::new(k, Context::Parameter).named(pname.to_string());
        if p.value_type == ValueType::Xml {
            return self.xml_value(s, out, p, self.xml.get(idx), pname, value, sensitive);
        }
        let prof = self.json.get(idx);
        let mut items: Vec<(String, Vec<u8>, Target)> = Vec::new();
        let shape = json::walk(value, |it| {
            if items.len() < MAX_ITEMS {
                match it {
                    json::Item::Key { pointer, key } => {
                        let name = format!("{pointer}/{key}");
                        if let Some(path) = json::key_path(pointer, key) {
                            items.push((name.clone(), path.into_bytes(), Target::KeyPath));
                        }
                        items.push((name, key.as_bytes().to_vec(), Target::ParamName));
                    }
                    json::Item::Value { pointer, value } => {
                        items.push((pointer.to_string(), value.as_bytes().to_vec(), Target::Json));
                    }
                }
            }
        });
        let overrides: Vec<(u32, bool)> = p
            .overrides
            .iter()
            .chain(prof.map(|j| &j.overrides).into_iter().flatten())
            .copied()
            .collect();
        let sig = p.sig_check && prof.is_none_or(|j| j.sig_check);
        let shape = match shape {
            Ok(shape) => shape,
            Err(e) => {
                self.push(out, snip(named(K::JsonMalformed)).detail(e.to_string()));
                if sig {
                    let t = Target::ParamValue;
                    let name = Some(pname);
                    let ctx = Context::Parameter;
                    self.scan(s, out, t, ctx, name, value, &overrides, sensitive);
                }
                return;
            }
        };
        self.check_json_schema(idx, value, pname, s, out);
        if let Some(j) = prof {
            let bad = j.max_total.exceeded(value.len() as u64)
                || j.max_depth.exceeded(shape.depth as u64)
                || j.max_array.exceeded(shape.longest_array as u64)
                || j.max_value.exceeded(shape.longest_value as u64);
            if bad {
                self.push(
                    out,
                    named(K::JsonFormat).detail(format!(
                        "{} bytes, depth {}, longest array {}, longest value {}",
                        value.len(),
                        shape.depth,
                        shape.longest_array,
                        shape.longest_value
                    )),
                );
            }
        }
        for (pointer, item, target) in items {
            let name = format!("{pname}{pointer}");
            if let Some(j) = prof.filter(|j| j.meta_check && target != Target::KeyPath)
                && let Some(c) = j.table.first_bad(&item)
            {
                let v = Violation::new(K::ParameterValueMetachar, Context::Parameter)
                    .named(name.clone())
                    .metachar(c);
                self.push(out, if sensitive { v } else { v.snippet(&item) });
            }
            if sig {
                let ctx = Context::Parameter;
                self.scan(
                    s,
                    out,
                    target,
                    ctx,
                    Some(&name),
                    &item,
                    &overrides,
                    sensitive,
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn xml_value(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        p: &CompiledParam,
        prof: Option<&CompiledXml>,
        pname: &str,
        value: &[u8],
        sensitive: bool,
    ) {
        let named = |k: K| {
            let v = Violation::new(k, Context::Parameter).named(pname.to_string());
            if sensitive {
                v.snippet(b"********")
            } else {
                v.snippet(value)
            }
        };
        let mut texts: Vec<Vec<u8>> = Vec::new();
        let depth = prof.map_or(256, |x| x.max_depth);
        match xml::walk(value, depth, |t| {
            if texts.len() < MAX_ITEMS && !t.iter().all(u8::is_ascii_whitespace) {
                texts.push(t.to_vec());
            }
        }) {
            Err(e) => self.push(out, named(K::XmlMalformed).detail(e.to_string())),
            Ok(f) => {
                let refused = prof.is_some_and(|x| {
                    (f.has_doctype && !x.allow_dtd)
                        || (f.has_external_ref && !x.allow_external)
                        || (f.has_pi && !x.allow_pi)
                        || (f.has_cdata && !x.allow_cdata)
                });
                if refused {
                    self.push(
                        out,
                        named(K::XmlFormat).detail(
                            "DTD, external reference, CDATA or processing instruction not allowed",
                        ),
                    );
                }
            }
        }
        if let Some(x) = prof.filter(|x| x.meta_check) {
            for t in &texts {
                if let Some(c) = x.table.first_bad(t) {
                    self.push(
                        out,
                        Violation::new(K::ParameterValueMetachar, Context::Parameter)
                            .named(pname.to_string())
                            .metachar(c),
                    );
                }
            }
        }
        if p.sig_check && prof.is_none_or(|x| x.sig_check) {
            let overrides: Vec<(u32, bool)> = p
                .overrides
                .iter()
                .chain(prof.map(|x| &x.overrides).into_iter().flatten())
                .copied()
                .collect();
            let (t, ctx) = (Target::Xml, Context::Parameter);
            self.scan(s, out, t, ctx, Some(pname), value, &overrides, sensitive);
        }
    }
}
