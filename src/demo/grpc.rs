//! The demo gRPC service of `policies/demo/demo.proto`: `demo.v1.Greeter` (unary) and
//! `demo.v1.Inventory` (unary, client-streaming, bidirectional) over an in-memory stock list.
//!
//! The service logic is transport-free: [`DemoGrpc::start`] opens a call, [`DemoCall::on_message`]
//! takes each request message (protobuf bytes) and returns the response messages to send now,
//! [`DemoCall::on_end`] runs when the client half-closes. [`server`] serves it over HTTP/2 (h2c) with
//! hyper so `portcullis demo` can mount it; the integration tests also mount it inside tonic.

pub(crate) mod server;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use prost::Message as _;
use prost_reflect::{DynamicMessage, MessageDescriptor, Value};

use crate::waf::MemResolver;
use crate::waf::grpc::{
    CompiledGrpcProfile, GrpcError, GrpcProfile, GrpcProfileSpec, IdlFileEntry,
};

/// The IDL of the demo service, as shipped under `policies/demo/`.
pub const DEMO_PROTO: &str = include_str!("../../policies/demo/demo.proto");

/// Items the demo stock may hold (memory bound of a public demo).
pub const MAX_STOCK: usize = 1000;

/// gRPC status codes the demo answers with.
pub(crate) mod code {
    pub const OK: u32 = 0;
    pub const INVALID_ARGUMENT: u32 = 3;
    pub const NOT_FOUND: u32 = 5;
    pub const RESOURCE_EXHAUSTED: u32 = 8;
    pub const UNIMPLEMENTED: u32 = 12;
    pub const INTERNAL: u32 = 13;
}

/// A gRPC status: `grpc-status` and `grpc-message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcStatus {
    pub code: u32,
    pub message: String,
}

impl GrpcStatus {
    pub fn new(code: u32, message: impl Into<String>) -> Self {
        GrpcStatus {
            code,
            message: message.into(),
        }
    }
}

#[derive(Clone, Debug)]
struct StockItem {
    name: String,
    description: String,
    quantity: i32,
    price_cents: i64,
}

/// The demo service: its descriptors and its stock.
pub struct DemoGrpc {
    idl: CompiledGrpcProfile,
    stock: Mutex<BTreeMap<String, StockItem>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    SayHello,
    GetItem,
    AddItems,
    Lookup,
}

/// One call in progress.
pub struct DemoCall {
    demo: Arc<DemoGrpc>,
    method: Method,
    input: MessageDescriptor,
    received: u32,
    added: i32,
    total_quantity: i32,
    skus: Vec<String>,
}

impl DemoGrpc {
    /// The service with its initial stock (SKU-1 keyboard, SKU-2 mouse, SKU-3 monitor).
    pub fn new() -> Result<Arc<Self>, GrpcError> {
        let link = "demo.proto";
        let spec = GrpcProfileSpec {
            name: "demo".into(),
            idl_files: vec![IdlFileEntry {
                is_primary: true,
                ..IdlFileEntry::with_link(link)
            }],
            ..GrpcProfileSpec::default()
        };
        let files = MemResolver(HashMap::from([(
            link.to_string(),
            DEMO_PROTO.as_bytes().to_vec(),
        )]));
        let idl = GrpcProfile::compile(&spec, &files, "")?;
        let item = |name: &str, description: &str, quantity, price_cents| StockItem {
            name: name.into(),
            description: description.into(),
            quantity,
            price_cents,
        };
        let stock = BTreeMap::from([
            (
                "SKU-1".to_string(),
                item("Keyboard", "Mechanical keyboard, blue switches", 12, 8_999),
            ),
            (
                "SKU-2".to_string(),
                item("Mouse", "Wireless mouse", 40, 2_499),
            ),
            (
                "SKU-3".to_string(),
                item("Monitor", "27 inch monitor", 5, 24_900),
            ),
        ]);
        Ok(Arc::new(DemoGrpc {
            idl,
            stock: Mutex::new(stock),
        }))
    }

    /// The compiled demo IDL.
    pub fn idl(&self) -> &CompiledGrpcProfile {
        &self.idl
    }

    /// Opens a call of `path` (`/demo.v1.Greeter/SayHello`...); UNIMPLEMENTED for other paths.
    pub fn start(self: &Arc<Self>, path: &str) -> Result<DemoCall, GrpcStatus> {
        let method = match path {
            "/demo.v1.Greeter/SayHello" => Method::SayHello,
            "/demo.v1.Inventory/GetItem" => Method::GetItem,
            "/demo.v1.Inventory/AddItems" => Method::AddItems,
            "/demo.v1.Inventory/Lookup" => Method::Lookup,
            _ => {
                return Err(GrpcStatus::new(
                    code::UNIMPLEMENTED,
                    format!("unknown method {path}"),
                ));
            }
        };
        let input = self.idl.method(path).map(|m| m.input()).ok_or_else(|| {
            GrpcStatus::new(code::INTERNAL, format!("{path} is not in demo.proto"))
        })?;
        Ok(DemoCall {
            demo: self.clone(),
            method,
            input,
            received: 0,
            added: 0,
            total_quantity: 0,
            skus: Vec::new(),
        })
    }

    fn message(&self, name: &str) -> Result<DynamicMessage, GrpcStatus> {
        self.idl
            .pool()
            .get_message_by_name(name)
            .map(DynamicMessage::new)
            .ok_or_else(|| GrpcStatus::new(code::INTERNAL, format!("{name} is not in demo.proto")))
    }

    fn item(&self, sku: &str) -> Result<Vec<u8>, GrpcStatus> {
        let found = self.stock.lock().get(sku).cloned();
        let it =
            found.ok_or_else(|| GrpcStatus::new(code::NOT_FOUND, format!("no item {sku:?}")))?;
        let mut m = self.message("demo.v1.Item")?;
        m.set_field_by_name("sku", Value::String(sku.into()));
        m.set_field_by_name("name", Value::String(it.name));
        m.set_field_by_name("description", Value::String(it.description));
        m.set_field_by_name("quantity", Value::I32(it.quantity));
        m.set_field_by_name("price_cents", Value::I64(it.price_cents));
        Ok(m.encode_to_vec())
    }
}

fn text(m: &DynamicMessage, field: &str) -> String {
    m.get_field_by_name(field)
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn int(m: &DynamicMessage, field: &str) -> i64 {
    m.get_field_by_name(field)
        .and_then(|v| v.as_i32().map(i64::from).or_else(|| v.as_i64()))
        .unwrap_or_default()
}

impl DemoCall {
    /// Whether the client may send more than one message.
    pub fn client_streaming(&self) -> bool {
        matches!(self.method, Method::AddItems | Method::Lookup)
    }

    /// One request message; returns the response messages to send now.
    pub fn on_message(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, GrpcStatus> {
        self.received += 1;
        if self.received > 1 && !self.client_streaming() {
            return Err(GrpcStatus::new(
                code::UNIMPLEMENTED,
                "unary call with more than one message",
            ));
        }
        let req = DynamicMessage::decode(self.input.clone(), bytes)
            .map_err(|e| GrpcStatus::new(code::INTERNAL, format!("cannot decode request: {e}")))?;
        match self.method {
            Method::SayHello => {
                let name = text(&req, "name");
                if name.is_empty() {
                    return Err(GrpcStatus::new(code::INVALID_ARGUMENT, "name is required"));
                }
                let mut reply = self.demo.message("demo.v1.HelloReply")?;
                reply.set_field_by_name("message", Value::String(format!("Hello, {name}!")));
                Ok(vec![reply.encode_to_vec()])
            }
            Method::GetItem | Method::Lookup => Ok(vec![self.demo.item(&text(&req, "sku"))?]),
            Method::AddItems => {
                let sku = text(&req, "sku");
                if sku.is_empty() {
                    return Err(GrpcStatus::new(code::INVALID_ARGUMENT, "sku is required"));
                }
                let quantity = i32::try_from(int(&req, "quantity").max(0)).unwrap_or(i32::MAX);
                let mut stock = self.demo.stock.lock();
                if !stock.contains_key(&sku) && stock.len() >= MAX_STOCK {
                    return Err(GrpcStatus::new(
                        code::RESOURCE_EXHAUSTED,
                        "the demo stock is full",
                    ));
                }
                let entry = stock.entry(sku.clone()).or_insert_with(|| StockItem {
                    name: text(&req, "name"),
                    description: text(&req, "description"),
                    quantity: 0,
                    price_cents: int(&req, "price_cents"),
                });
                entry.quantity = entry.quantity.saturating_add(quantity);
                self.added += 1;
                self.total_quantity = self.total_quantity.saturating_add(quantity);
                if self.skus.len() < 100 {
                    self.skus.push(sku);
                }
                Ok(Vec::new())
            }
        }
    }

    /// The client half-closed; returns the last response messages.
    pub fn on_end(&mut self) -> Result<Vec<Vec<u8>>, GrpcStatus> {
        match self.method {
            Method::AddItems => {
                let mut summary = self.demo.message("demo.v1.AddSummary")?;
                summary.set_field_by_name("added", Value::I32(self.added));
                summary.set_field_by_name("total_quantity", Value::I32(self.total_quantity));
                let skus = self.skus.iter().map(|s| Value::String(s.clone())).collect();
                summary.set_field_by_name("skus", Value::List(skus));
                Ok(vec![summary.encode_to_vec()])
            }
            _ if self.received == 0 && !self.client_streaming() => Err(GrpcStatus::new(
                code::INVALID_ARGUMENT,
                "unary call without a request message",
            )),
            _ => Ok(Vec::new()),
        }
    }
}
