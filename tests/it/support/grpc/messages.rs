//! Demo messages built and read with prost-reflect against policies/demo/demo.proto.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use portcullis::demo::DemoGrpc;
use prost::Message as _;
use prost_reflect::{DynamicMessage, MapKey, Value};

pub const SAY_HELLO: &str = "/demo.v1.Greeter/SayHello";
pub const GET_ITEM: &str = "/demo.v1.Inventory/GetItem";
pub const ADD_ITEMS: &str = "/demo.v1.Inventory/AddItems";
pub const LOOKUP: &str = "/demo.v1.Inventory/Lookup";

pub fn demo() -> Arc<DemoGrpc> {
    static DEMO: OnceLock<Arc<DemoGrpc>> = OnceLock::new();
    DEMO.get_or_init(|| DemoGrpc::new().expect("demo.proto compiles"))
        .clone()
}

pub fn new(name: &str) -> DynamicMessage {
    DynamicMessage::new(
        demo()
            .idl()
            .pool()
            .get_message_by_name(name)
            .expect("message in demo.proto"),
    )
}

fn s(t: &str) -> Value {
    Value::String(t.to_string())
}

/// `HelloRequest{name, tags, attributes}`.
pub fn hello(name: &str) -> Bytes {
    let mut m = new("demo.v1.HelloRequest");
    m.set_field_by_name("name", s(name));
    m.set_field_by_name("tags", Value::List(vec![s("t1"), s("t2")]));
    let attrs = HashMap::from([(MapKey::String("lang".into()), s("en"))]);
    m.set_field_by_name("attributes", Value::Map(attrs));
    m.encode_to_vec().into()
}

/// A `HelloRequest` carrying field number 99, which demo.proto does not declare.
pub fn hello_with_unknown_field(name: &str) -> Bytes {
    let mut b = hello(name).to_vec();
    b.extend_from_slice(&[0x98, 0x06, 0x01]); // field 99, varint, value 1
    b.into()
}

/// A `HelloRequest` whose address (nested message) carries unknown field 50.
pub fn hello_with_nested_unknown_field(name: &str) -> Bytes {
    let mut addr = new("demo.v1.Address");
    addr.set_field_by_name("city", s("Paris"));
    let mut a = addr.encode_to_vec();
    a.extend_from_slice(&[0x90, 0x03, 0x07]); // field 50, varint, value 7
    let mut b = hello(name).to_vec();
    b.push(0x22); // field 4 (address), length-delimited
    b.push(u8::try_from(a.len()).expect("short"));
    b.extend_from_slice(&a);
    b.into()
}

pub fn item(sku: &str, quantity: i32) -> Bytes {
    let mut m = new("demo.v1.Item");
    m.set_field_by_name("sku", s(sku));
    m.set_field_by_name("name", s("Widget"));
    m.set_field_by_name("quantity", Value::I32(quantity));
    m.encode_to_vec().into()
}

pub fn get_item(sku: &str) -> Bytes {
    let mut m = new("demo.v1.GetItemRequest");
    m.set_field_by_name("sku", s(sku));
    m.encode_to_vec().into()
}

fn decode(name: &str, bytes: &[u8]) -> DynamicMessage {
    let desc = demo()
        .idl()
        .pool()
        .get_message_by_name(name)
        .expect("message in demo.proto");
    DynamicMessage::decode(desc, bytes).expect("a valid reply")
}

pub fn text_field(name: &str, bytes: &[u8], field: &str) -> String {
    let m = decode(name, bytes);
    m.get_field_by_name(field)
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

pub fn int_field(name: &str, bytes: &[u8], field: &str) -> i64 {
    let m = decode(name, bytes);
    m.get_field_by_name(field)
        .and_then(|v| v.as_i32())
        .map(i64::from)
        .unwrap_or_default()
}

/// The text of a `HelloReply`.
pub fn hello_reply(bytes: &[u8]) -> String {
    text_field("demo.v1.HelloReply", bytes, "message")
}
