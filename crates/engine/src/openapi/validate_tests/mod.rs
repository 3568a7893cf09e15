//! Differential test of the validator: generated documents, valid and invalid against a schema
//! using every keyword the walker implements, must get exactly the violations (pointer, category,
//! detail, snippet) the former `serde_json::Value` walker gave them.

mod oracle;

use super::OpenApiLimits;
use super::json::{Arena, Json};
use super::load::load_with;
use super::schema::{SchemaCompiler, SchemaId, Schemas};
use super::validate::validate;
use crate::resolver::NoResolver;
use serde_json::Value;

const SCHEMA: &str = r##"{"openapi": "3.1.0", "paths": {},
  "type": "object", "required": ["name", "kind", "tags", "name"], "additionalProperties": false,
  "allOf": [{"properties": {"name": {"not": {"const": "root"}}}}],
  "properties": {
    "id": {"type": "integer", "format": "int32", "minimum": 1, "readOnly": true},
    "name": {"type": "string", "minLength": 2, "maxLength": 12, "pattern": "^[A-Za-z ]+$"},
    "kind": {"enum": ["cat", "dog", 1, {"x": [1]}, null]},
    "born": {"type": "string", "format": "date"},
    "email": {"type": "string", "format": "email"},
    "weight": {"type": "number", "exclusiveMinimum": 0, "maximum": 100, "multipleOf": 0.5},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c", "d"]},
             "minItems": 1, "maxItems": 3, "uniqueItems": true},
    "owner": {"type": "object", "required": ["uid"], "additionalProperties": {"type": "integer"},
              "properties": {"uid": {"type": "string", "format": "uuid"},
                             "ip": {"anyOf": [{"type": "string", "format": "ipv4"},
                                              {"type": "string", "format": "ipv6"}]}}},
    "shape": {"oneOf": [
      {"type": "object", "required": ["r"], "properties": {"r": {"type": "number"}}},
      {"type": "object", "required": ["w", "h"], "properties": {"w": {"type": "number"}, "h": {"type": "number"}}}]},
    "kids": {"type": "array", "items": {"$ref": "#"}},
    "meta": {"type": "object", "minProperties": 1, "maxProperties": 3, "not": {"required": ["forbidden"]}},
    "when": {"type": ["string", "null"], "format": "date-time"},
    "flags": {"type": "array", "uniqueItems": true},
    "c": {"const": {"a": [1, 2]}},
    "a/b~c": {"type": "boolean"}
  }}"##;

/// xorshift64*: deterministic, so a failure names a reproducible document. `clean` documents
/// (the flag) take a wrong turn rarely, so that many of them are valid.
struct Rng(u64, bool);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// The first (valid) choice more often than the others.
    fn pick<'c>(&mut self, choices: &[&'c str]) -> &'c str {
        if self.wrong_turn() {
            choices[self.below(choices.len())]
        } else {
            choices[0]
        }
    }

    fn wrong_turn(&mut self) -> bool {
        self.below(if self.1 { 40 } else { 3 }) == 0
    }
}

const SCALARS: &[&str] = &[
    "1",
    "1.0",
    "\"a\"",
    "true",
    "null",
    "{\"a\":1,\"b\":2}",
    "{\"b\":2,\"a\":1}",
    "[1]",
    "[1.0]",
];

fn array(rng: &mut Rng, max: usize, item: &mut dyn FnMut(&mut Rng) -> String) -> String {
    let items: Vec<String> = (0..rng.below(max + 1)).map(|_| item(rng)).collect();
    format!("[{}]", items.join(","))
}

fn object(rng: &mut Rng, pairs: Vec<(String, String)>) -> String {
    let mut pairs = pairs;
    // Duplicate keys now and then: the later value wins, at the first position.
    if !pairs.is_empty() && rng.wrong_turn() && rng.below(2) == 0 {
        let (k, _) = pairs[rng.below(pairs.len())].clone();
        pairs.push((k, SCALARS[rng.below(SCALARS.len())].to_string()));
    }
    let text: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", text.join(","))
}

fn pet(rng: &mut Rng, depth: usize) -> String {
    let choices: &[(&str, &[&str])] = &[
        ("id", &["7", "0", "2147483648", "3.0", "\"7\"", "-1"]),
        (
            "name",
            &[
                "\"Rex\"",
                "\"R\"",
                "\"Rexxxxxxxxxxxxxxx\"",
                "\"R3x\"",
                "\"root\"",
                "\"Re\\u0078\"",
                // Characters of several bytes each, inside and outside the length bounds by
                // characters while their bytes say otherwise.
                "\"é\"",
                "\"Réxé\"",
                "\"éééééééééééé\"",
                "\"ééééééééééééé\"",
                "\"€𝄞\"",
                "42",
            ],
        ),
        (
            "kind",
            &[
                "\"cat\"",
                "\"cow\"",
                "1",
                "1.0",
                "{\"x\":[1]}",
                "{\"x\":[1.0]}",
                "null",
                "[]",
            ],
        ),
        ("born", &["\"2024-02-29\"", "\"2023-02-29\"", "\"x\"", "5"]),
        ("email", &["\"a@b.example\"", "\"nobody\"", "\"a b@c.d\""]),
        (
            "weight",
            &[
                "1.5",
                "0",
                "100",
                "100.5",
                "0.3",
                "\"1\"",
                "-1",
                "1e2",
                "18446744073709551615",
            ],
        ),
        (
            "shape",
            &[
                "{\"r\":1}",
                "{\"w\":1,\"h\":2}",
                "{\"r\":1,\"w\":1,\"h\":2}",
                "{}",
                "{\"r\":\"1\"}",
            ],
        ),
        (
            "meta",
            &[
                "{\"a\":1}",
                "{}",
                "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}",
                "{\"forbidden\":0}",
            ],
        ),
        (
            "when",
            &["\"2024-01-01T00:00:00Z\"", "null", "\"2024-01-01\"", "1"],
        ),
        ("c", &["{\"a\":[1,2]}", "{\"a\":[1,2.0]}", "{\"a\":[2,1]}"]),
        ("a~1b~0c", &["true", "1"]),
        ("na\\u006de", &["\"Escaped\"", "\"X\""]),
        ("zzz", &["1"]),
    ];
    let mut pairs = Vec::new();
    for (key, values) in choices {
        // Required properties are there more often than the optional ones.
        let keep = if matches!(*key, "name" | "kind") {
            9
        } else {
            3
        };
        if rng.below(10) < keep && !(rng.1 && *key == "zzz") {
            pairs.push((
                key.replace("~1", "/").replace("~0", "~"),
                rng.pick(values).to_string(),
            ));
        }
    }
    if rng.1 {
        let tags = ["\"a\"", "\"b\"", "\"c\""][..1 + rng.below(3)].join(",");
        pairs.push(("tags".into(), format!("[{tags}]")));
    } else if rng.below(10) < 8 {
        let tag = &["\"a\"", "\"b\"", "\"c\"", "\"e\"", "1"];
        pairs.push((
            "tags".into(),
            array(rng, 4, &mut |r| r.pick(tag).to_string()),
        ));
    }
    if rng.below(3) == 0 {
        let uid = rng.pick(&["\"123e4567-e89b-12d3-a456-426614174000\"", "\"nope\""]);
        let mut owner = vec![("uid".to_string(), uid.to_string())];
        if rng.below(2) == 0 {
            let ip = rng.pick(&["\"10.0.0.1\"", "\"::1\"", "\"300.0.0.1\"", "7"]);
            owner.push(("ip".into(), ip.to_string()));
        }
        if rng.below(3) == 0 {
            owner.push(("n".into(), rng.pick(&["3", "\"3\""]).to_string()));
        }
        if rng.wrong_turn() {
            owner.remove(0);
        }
        let text = object(rng, owner);
        pairs.push(("owner".into(), text));
    }
    if rng.below(4) == 0 && !rng.1 {
        pairs.push((
            "flags".into(),
            array(rng, 4, &mut |r| SCALARS[r.below(SCALARS.len())].to_string()),
        ));
    }
    if depth < 3 && rng.below(4) == 0 {
        pairs.push(("kids".into(), array(rng, 2, &mut |r| pet(r, depth + 1))));
    }
    // Document order is not the schema's.
    for i in (1..pairs.len()).rev() {
        pairs.swap(i, rng.below(i + 1));
    }
    object(rng, pairs)
}

fn compiled() -> (Schemas, SchemaId) {
    let limits = OpenApiLimits::default();
    let spec = load_with(SCHEMA.as_bytes(), "pet.json", &NoResolver, &limits).expect("spec");
    let mut c = SchemaCompiler::new(&spec, &limits);
    let id = c.compile(0, "", spec.root()).expect("schema");
    (c.out, id)
}

#[test]
fn borrowed_walker_reports_what_the_value_walker_reported() {
    let (schemas, root) = compiled();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15, false);
    let (mut valid, mut invalid) = (0, 0);
    for n in 0..600 {
        rng.1 = n % 2 == 0;
        let doc = match n % 50 {
            0 => "[]".to_string(),
            1 => "\"x\"".to_string(),
            _ => pet(&mut rng, 0),
        };
        let value: Value = serde_json::from_str(&doc).expect("generated JSON");
        let arena = Arena::new();
        let json = Json::parse(doc.as_bytes(), &arena).expect("generated JSON");
        // Default budgets, a tight error cap (which errors come first matters), a shallow depth.
        for (max_errors, max_depth) in [(20, 64), (2, 64), (20, 2)] {
            let want = oracle::report(&schemas, root, &value, max_errors, max_depth);
            let got: Vec<_> = validate(&schemas, root, &json, max_errors, max_depth)
                .into_iter()
                .map(|e| (e.pointer, e.category, e.detail, e.value.render()))
                .collect();
            assert_eq!(
                got, want,
                "document {n}: {doc} (max {max_errors}, depth {max_depth})"
            );
            if (max_errors, max_depth) == (20, 64) {
                if want.is_empty() {
                    valid += 1;
                } else {
                    invalid += 1;
                }
            }
        }
    }
    assert!(
        valid >= 50 && invalid >= 200,
        "valid {valid}, invalid {invalid}"
    );
}
