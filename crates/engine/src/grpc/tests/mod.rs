//! Unit tests of the gRPC module with real encoded messages, built with prost-reflect from
//! [`TEST_PROTO`]. Shared fixtures live here; the cases are in `compile.rs` and `stream.rs`.

mod compile;
mod seeds;
mod stream;

use std::collections::HashMap;

use prost::Message as _;
use prost_reflect::{DynamicMessage, MapKey, Value};

use super::*;
use crate::resolver::MemResolver;
use crate::violation::{Context, Violation, ViolationKind};

pub const TEST_PROTO: &str = r#"syntax = "proto3";
package test.v1;

import "google/protobuf/timestamp.proto";

message Address {
  string city = 1;
  repeated string lines = 2;
}

message User {
  string name = 1;
  repeated string tags = 2;
  Address address = 3;
  map<string, string> attrs = 4;
  map<int32, Address> places = 5;
  bytes blob = 6;
  int32 age = 7;
  google.protobuf.Timestamp seen = 8;
  repeated Address history = 9;
}

// The same shapes with fields the server does not know: for unknown-field cases.
message AddressV2 {
  string city = 1;
  repeated string lines = 2;
  int64 extra = 50;
}

message UserV2 {
  string name = 1;
  repeated string tags = 2;
  AddressV2 address = 3;
  int32 extra = 99;
}

message Reply { string text = 1; }

service Users {
  rpc Get (User) returns (Reply);
  rpc Upload (stream User) returns (Reply);
  rpc Chat (stream User) returns (stream Reply);
}
"#;

pub const LINK: &str = "file:///p/test.proto";

/// A resolver holding `files` (link → text).
pub fn resolver(files: &[(&str, &str)]) -> MemResolver {
    MemResolver(
        files
            .iter()
            .map(|(l, t)| (l.to_string(), t.as_bytes().to_vec()))
            .collect::<HashMap<_, _>>(),
    )
}

/// A profile spec over `links` (the first is primary) with `extra` JSON fields merged in.
pub fn spec(links: &[&str], extra: serde_json::Value) -> GrpcProfileSpec {
    let files: Vec<_> = links
        .iter()
        .enumerate()
        .map(|(i, l)| serde_json::json!({"idlFile": {"$ref": l}, "isPrimary": i == 0}))
        .collect();
    let mut doc = serde_json::json!({"name": "test", "idlFiles": files});
    if let (Some(d), Some(e)) = (doc.as_object_mut(), extra.as_object()) {
        d.extend(e.clone());
    }
    serde_json::from_value(doc).expect("test spec")
}

/// The test profile with `defenseAttributes` given.
pub fn profile(defense: serde_json::Value) -> CompiledGrpcProfile {
    let s = spec(&[LINK], serde_json::json!({"defenseAttributes": defense}));
    GrpcProfile::compile(&s, &resolver(&[(LINK, TEST_PROTO)]), "").expect("test proto compiles")
}

/// A message of type `name` with `fields` set.
pub fn message(p: &CompiledGrpcProfile, name: &str, fields: &[(&str, Value)]) -> DynamicMessage {
    let desc = p.pool().get_message_by_name(name).expect("message type");
    let mut m = DynamicMessage::new(desc);
    for (f, v) in fields {
        m.set_field_by_name(f, v.clone());
    }
    m
}

pub fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

pub fn list(items: &[&str]) -> Value {
    Value::List(items.iter().map(|t| s(t)).collect())
}

/// A rich valid `User`: strings at every nesting level.
pub fn rich_user(p: &CompiledGrpcProfile) -> Vec<u8> {
    let addr = |city: &str, lines: &[&str]| {
        Value::Message(message(
            p,
            "test.v1.Address",
            &[("city", s(city)), ("lines", list(lines))],
        ))
    };
    let attrs = HashMap::from([(MapKey::String("role".into()), s("admin"))]);
    let places = HashMap::from([(MapKey::I32(7), addr("Lyon", &[]))]);
    let u = message(
        p,
        "test.v1.User",
        &[
            ("name", s("alice")),
            ("tags", list(&["a", "b", "c"])),
            ("address", addr("Paris", &["1 rue X"])),
            ("attrs", Value::Map(attrs)),
            ("places", Value::Map(places)),
            ("blob", Value::Bytes(b"\x00\x01not text".to_vec().into())),
            ("age", Value::I32(42)),
            (
                "history",
                Value::List(vec![addr("Oslo", &[]), addr("Rome", &["via Y"])]),
            ),
        ],
    );
    u.encode_to_vec()
}

/// One uncompressed frame around `payload`.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_frame(false, payload, &mut out);
    out
}

/// What a stream run saw: violations and every `(path, value)` checked.
#[derive(Debug, Default)]
pub struct StreamOutcome {
    pub violations: Vec<Violation>,
    pub strings: Vec<(String, String)>,
    /// One result per fed chunk.
    pub results: Vec<FeedResult>,
    /// The result of `finish`.
    pub end: Option<FeedResult>,
}

impl StreamOutcome {
    pub fn kinds(&self) -> Vec<ViolationKind> {
        self.violations.iter().map(|v| v.kind).collect()
    }
    pub fn names(&self) -> Vec<&str> {
        self.violations
            .iter()
            .filter_map(|v| v.name.as_deref())
            .collect()
    }
}

/// Feeds `chunks` then ends the body; strings containing `<script` get an attack violation.
pub fn run(stream: &mut GrpcStream, chunks: &[&[u8]]) -> StreamOutcome {
    let mut seen = StreamOutcome::default();
    let mut strings = Vec::new();
    {
        let mut check = |path: &str, value: &str| {
            strings.push((path.to_string(), value.to_string()));
            value.contains("<script").then(|| {
                Violation::new(ViolationKind::AttackSignature, Context::Grpc)
                    .named(path)
                    .snippet(value.as_bytes())
            })
        };
        for c in chunks {
            let r = stream.feed(c, &mut check, &mut seen.violations);
            seen.results.push(r);
        }
    }
    seen.end = Some(stream.finish(&mut seen.violations));
    seen.strings = strings;
    seen
}
