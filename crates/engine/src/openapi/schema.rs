//! JSON schemas compiled once into one arena per spec: `$ref`s become node ids (recursive schemas
//! work), OpenAPI dialects are normalised (3.0 `nullable` / boolean `exclusiveMinimum`, 3.1 type
//! arrays / numeric `exclusiveMinimum`, 2.0 `x-nullable` and inline parameter schemas).
//!
//! Why our own validator and not `jsonschema`: one compiler serves parameters (string values coerced
//! to the schema type) and bodies, refs span all spec documents without cloning `components` into
//! every operation, errors carry the category a WAF violation needs, and the GitHub spec compiles
//! in one pass over the arena.

use super::formats::Format;
use super::load::{ApiSpec, SpecVersion};
use super::{OpenApiError, OpenApiLimits};
use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;

pub(crate) type SchemaId = u32;

pub(crate) const T_NULL: u8 = 1;
pub(crate) const T_BOOL: u8 = 2;
pub(crate) const T_INT: u8 = 4;
pub(crate) const T_NUM: u8 = 8;
pub(crate) const T_STR: u8 = 16;
pub(crate) const T_ARR: u8 = 32;
pub(crate) const T_OBJ: u8 = 64;

/// What `additionalProperties` allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Additional {
    Any,
    Deny,
    Schema(SchemaId),
}

/// One compiled schema. `types == 0` means any type.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub types: u8,
    pub never: bool,
    pub format: Format,
    pub enumeration: Option<Vec<Value>>,
    pub minimum: Option<(f64, bool)>,
    pub maximum: Option<(f64, bool)>,
    pub multiple_of: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<Regex>,
    pub items: Option<SchemaId>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub properties: Vec<(Box<str>, SchemaId)>,
    /// `required` in the schema's order (the order of the violations)...
    pub required: Vec<Box<str>>,
    /// ...and its indices sorted by name, for one look-up per key of a validated object.
    pub required_sorted: Vec<u32>,
    pub additional: Additional,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub all_of: Vec<SchemaId>,
    pub any_of: Vec<SchemaId>,
    pub one_of: Vec<SchemaId>,
    pub not: Option<SchemaId>,
    pub read_only: bool,
}

impl Default for Node {
    fn default() -> Self {
        Node {
            types: 0,
            never: false,
            format: Format::None,
            enumeration: None,
            minimum: None,
            maximum: None,
            multiple_of: None,
            min_length: None,
            max_length: None,
            pattern: None,
            items: None,
            min_items: None,
            max_items: None,
            unique_items: false,
            properties: Vec::new(),
            required: Vec::new(),
            required_sorted: Vec::new(),
            additional: Additional::Any,
            min_properties: None,
            max_properties: None,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            read_only: false,
        }
    }
}

/// The arena: every schema of a spec.
#[derive(Debug, Default)]
pub(crate) struct Schemas {
    pub nodes: Vec<Node>,
}

impl Schemas {
    pub fn node(&self, id: SchemaId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Type bits a value may have, looking one level into `allOf`/`anyOf`/`oneOf`.
    pub fn type_hint(&self, id: SchemaId) -> u8 {
        let n = self.node(id);
        let mut t = n.types;
        for &c in n.all_of.iter().chain(&n.any_of).chain(&n.one_of) {
            t |= self.node(c).types;
        }
        t
    }
}

/// Compiles schema values into [`Schemas`], memoising `$ref` targets.
pub(crate) struct SchemaCompiler<'s> {
    pub spec: &'s ApiSpec,
    pub out: Schemas,
    memo: HashMap<(usize, String), SchemaId>,
    regexes: HashMap<String, Option<Regex>>,
    limits: &'s OpenApiLimits,
    pub warnings: Vec<String>,
}

impl<'s> SchemaCompiler<'s> {
    pub fn new(spec: &'s ApiSpec, limits: &'s OpenApiLimits) -> Self {
        SchemaCompiler {
            spec,
            out: Schemas::default(),
            memo: HashMap::new(),
            regexes: HashMap::new(),
            limits,
            warnings: Vec::new(),
        }
    }

    fn alloc(&mut self, doc: usize, at: &str) -> Result<SchemaId, OpenApiError> {
        if self.out.nodes.len() >= self.limits.max_schema_nodes {
            let link = self.spec.doc_link(doc);
            return Err(OpenApiError::new(link, at, "too many schema nodes"));
        }
        self.out.nodes.push(Node::default());
        Ok((self.out.nodes.len() - 1) as SchemaId)
    }

    /// Compiles the schema `v` found in document `doc` at pointer `at`.
    pub fn compile(&mut self, doc: usize, at: &str, v: &Value) -> Result<SchemaId, OpenApiError> {
        let link = self.spec.doc_link(doc).to_string();
        let map = match v {
            Value::Bool(b) => {
                let id = self.alloc(doc, at)?;
                self.out.nodes[id as usize].never = !b;
                return Ok(id);
            }
            Value::Object(map) => map,
            _ => return Err(OpenApiError::new(&link, at, "schema must be an object")),
        };
        if let Some(r) = map.get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| OpenApiError::new(&link, at, "$ref must be a string"))?;
            let target = self.compile_ref(doc, at, r)?;
            let siblings =
                self.spec.version == SpecVersion::OpenApi31 && map.keys().any(|k| is_assertion(k));
            if !siblings {
                return Ok(target);
            }
            let id = self.alloc(doc, at)?;
            let mut node = self.node_from(doc, at, map)?;
            node.all_of.push(target);
            self.out.nodes[id as usize] = node;
            return Ok(id);
        }
        let id = self.alloc(doc, at)?;
        let node = self.node_from(doc, at, map)?;
        self.out.nodes[id as usize] = node;
        Ok(id)
    }

    fn compile_ref(&mut self, doc: usize, at: &str, r: &str) -> Result<SchemaId, OpenApiError> {
        let (tdoc, tptr, target) = self.spec.resolve(doc, at, r)?;
        if let Some(&id) = self.memo.get(&(tdoc, tptr.clone())) {
            return Ok(id);
        }
        // Reserve the id first so that recursive schemas point back at it.
        let id = self.alloc(tdoc, &tptr)?;
        self.memo.insert((tdoc, tptr.clone()), id);
        match target {
            Value::Object(m) if !m.contains_key("$ref") => {
                let node = self.node_from(tdoc, &tptr, m)?;
                self.out.nodes[id as usize] = node;
            }
            _ => {
                let compiled = self.compile(tdoc, &tptr, target)?;
                let inner = &self.out.nodes[compiled as usize];
                self.out.nodes[id as usize] = Node {
                    read_only: inner.read_only,
                    types: inner.types,
                    all_of: vec![compiled],
                    ..Node::default()
                };
            }
        }
        Ok(id)
    }

    fn child(
        &mut self,
        doc: usize,
        at: &str,
        key: &str,
        v: &Value,
    ) -> Result<SchemaId, OpenApiError> {
        let ptr = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        self.compile(doc, &ptr, v)
    }

    fn node_from(
        &mut self,
        doc: usize,
        at: &str,
        map: &serde_json::Map<String, Value>,
    ) -> Result<Node, OpenApiError> {
        let link = self.spec.doc_link(doc).to_string();
        let v31 = self.spec.version == SpecVersion::OpenApi31;
        let mut n = Node::default();
        match map.get("type") {
            Some(Value::String(t)) => n.types = type_bit(t),
            Some(Value::Array(ts)) => {
                n.types = ts
                    .iter()
                    .filter_map(Value::as_str)
                    .map(type_bit)
                    .fold(0, |a, b| a | b)
            }
            _ => {}
        }
        let nullable = ["nullable", "x-nullable"]
            .iter()
            .any(|k| map.get(*k) == Some(&Value::Bool(true)));
        if nullable && n.types != 0 {
            n.types |= T_NULL;
        }
        if let Some(f) = map.get("format").and_then(Value::as_str) {
            n.format = Format::parse(f);
        }
        if let Some(Value::Array(e)) = map.get("enum") {
            let mut values = e.clone();
            if nullable && !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
            n.enumeration = Some(values);
        }
        if let Some(c) = map.get("const") {
            n.enumeration = Some(vec![c.clone()]);
        }
        let num = |k: &str| map.get(k).and_then(Value::as_f64);
        let uint = |k: &str| map.get(k).and_then(Value::as_u64);
        let flag = |k: &str| map.get(k) == Some(&Value::Bool(true));
        n.minimum = num("minimum").map(|m| (m, flag("exclusiveMinimum")));
        n.maximum = num("maximum").map(|m| (m, flag("exclusiveMaximum")));
        if let Some(m) = num("exclusiveMinimum") {
            n.minimum = Some((m, true));
        }
        if let Some(m) = num("exclusiveMaximum") {
            n.maximum = Some((m, true));
        }
        n.multiple_of = num("multipleOf").filter(|m| *m > 0.0);
        n.min_length = uint("minLength");
        n.max_length = uint("maxLength");
        n.min_items = uint("minItems");
        n.max_items = uint("maxItems");
        n.min_properties = uint("minProperties");
        n.max_properties = uint("maxProperties");
        n.read_only = flag("readOnly");
        n.unique_items = flag("uniqueItems");
        if let Some(p) = map.get("pattern").and_then(Value::as_str) {
            n.pattern = self.regex(&link, at, p);
        }
        if let Some(items) = map.get("items") {
            let items = match items {
                // Tuple form (2019 drafts): validate against the first item schema.
                Value::Array(list) if !v31 => list.first().unwrap_or(&Value::Bool(true)),
                other => other,
            };
            n.items = Some(self.child(doc, at, "items", items)?);
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            let ptr = format!("{at}/properties");
            for (name, schema) in props {
                let id = self.child(doc, &ptr, name, schema)?;
                n.properties.push((name.as_str().into(), id));
            }
            n.properties.sort_by(|a, b| a.0.cmp(&b.0));
        }
        if let Some(Value::Array(req)) = map.get("required") {
            n.required = req
                .iter()
                .filter_map(Value::as_str)
                .map(Into::into)
                .collect();
            n.required_sorted = (0..n.required.len() as u32).collect();
            n.required_sorted
                .sort_by(|&a, &b| n.required[a as usize].cmp(&n.required[b as usize]));
        }
        n.additional = match map.get("additionalProperties") {
            Some(Value::Bool(false)) => Additional::Deny,
            Some(v @ Value::Object(_)) => {
                Additional::Schema(self.child(doc, at, "additionalProperties", v)?)
            }
            _ => Additional::Any,
        };
        for (key, list) in [("allOf", 0), ("anyOf", 1), ("oneOf", 2)] {
            if let Some(Value::Array(items)) = map.get(key) {
                let ptr = format!("{at}/{key}");
                let mut ids = Vec::with_capacity(items.len());
                for (i, s) in items.iter().enumerate() {
                    ids.push(self.child(doc, &ptr, &i.to_string(), s)?);
                }
                match list {
                    0 => n.all_of = ids,
                    1 => n.any_of = ids,
                    _ => n.one_of = ids,
                }
            }
        }
        if let Some(not) = map.get("not") {
            n.not = Some(self.child(doc, at, "not", not)?);
        }
        Ok(n)
    }

    fn regex(&mut self, link: &str, at: &str, pattern: &str) -> Option<Regex> {
        if let Some(r) = self.regexes.get(pattern) {
            return r.clone();
        }
        let built = regex::RegexBuilder::new(pattern)
            .size_limit(self.limits.max_regex_bytes)
            .build();
        let r = match built {
            Ok(r) => Some(r),
            Err(e) => {
                let first = e
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                self.warnings
                    .push(format!("{link}#{at}: pattern not enforced ({first})"));
                None
            }
        };
        self.regexes.insert(pattern.to_string(), r.clone());
        r
    }
}

fn type_bit(t: &str) -> u8 {
    match t {
        "null" => T_NULL,
        "boolean" => T_BOOL,
        "integer" => T_INT,
        "number" => T_NUM,
        "string" => T_STR,
        "array" => T_ARR,
        "object" => T_OBJ,
        // Swagger 2.0 `type: file` (form upload): any value.
        _ => 0,
    }
}

fn is_assertion(k: &str) -> bool {
    !matches!(
        k,
        "$ref"
            | "description"
            | "summary"
            | "title"
            | "example"
            | "examples"
            | "$comment"
            | "deprecated"
    ) && !k.starts_with("x-")
}
