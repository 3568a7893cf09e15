//! Entry points for the cargo-fuzz targets `grpc_frame` (frames, and undescribed calls), `grpc_message` and `proto_idl` (see `fuzz/`), also
//! replayed over the seed files by a unit test so `cargo test` exercises them on stable. They
//! assert the invariants a caller relies on; any panic is a bug.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::frame::{FrameEvent, FrameParser, PREFIX_LEN};
use super::walk::{self, WalkOptions};
use super::{
    CompiledGrpcProfile, Encoding, GrpcLimits, GrpcProfile, GrpcProfileSpec, GrpcStream, OpaqueCall,
};
use crate::resolver::MemResolver;

/// The frame parser over `data[1..]` cut into chunks of `data[0] % 16 + 1` bytes: every message has
/// the length its prefix announced, and bytes are accounted for exactly. The same chunks go through
/// [`OpaqueCall`] (gzip when `data[0]` has its high bit set): what it releases only grows and never
/// passes what it was fed.
pub fn frames(data: &[u8]) {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let encoding = if cut & 0x80 != 0 {
        Encoding::Gzip
    } else {
        Encoding::Identity
    };
    let mut call = OpaqueCall::new(encoding);
    let (mut fed, mut released, mut out) = (0u64, 0u64, Vec::new());
    for chunk in body.chunks(usize::from(cut % 16) + 1) {
        fed += chunk.len() as u64;
        let r = call.feed(chunk, &mut |_| {}, &mut out);
        assert!(
            released <= r.release && r.release <= fed,
            "release out of order"
        );
        released = r.release;
        if r.passthrough {
            break;
        }
    }
    call.finish(&mut out);
    let mut parser = FrameParser::new(1 << 16);
    let mut announced = None;
    for chunk in body.chunks(usize::from(cut % 16) + 1) {
        let mut input = chunk;
        loop {
            match parser.next(&mut input) {
                Ok(Some(FrameEvent::Header { len, .. })) => announced = Some(len),
                Ok(Some(FrameEvent::Message { payload, .. })) => {
                    assert_eq!(
                        Some(payload.len() as u32),
                        announced.take(),
                        "payload length"
                    );
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
        assert!(input.is_empty(), "a chunk was not consumed");
    }
    assert_eq!(parser.consumed(), body.len() as u64);
    if parser.finish().is_ok() {
        assert!(parser.at_boundary());
        assert!(announced.is_none() || body.len() >= PREFIX_LEN);
    }
}

/// The demo profile (policies/demo/demo.proto), strict about unknown fields, compiled once.
pub fn demo_profile() -> &'static CompiledGrpcProfile {
    static P: OnceLock<CompiledGrpcProfile> = OnceLock::new();
    P.get_or_init(|| {
        let link = "file:///policies/demo/demo.proto";
        let spec: GrpcProfileSpec = serde_json::from_value(serde_json::json!({
            "name": "fuzz",
            "idlFiles": [{"idlFile": {"$ref": link}, "isPrimary": true}],
            "defenseAttributes": {"allowUnknownFields": false, "maximumDataLength": 4096},
            "decodeStringValuesAsBase64": true
        }))
        .unwrap_or_default();
        let demo = include_bytes!("../../../../policies/demo/demo.proto").to_vec();
        let files = MemResolver(HashMap::from([(link.to_string(), demo)]));
        match GrpcProfile::compile(&spec, &files, "") {
            Ok(p) => p,
            Err(e) => panic!("the demo IDL must compile: {e}"),
        }
    })
}

/// A call body against the demo IDL: `data[0]` picks the method, the encoding and the chunk size;
/// the rest is fed as the body. Release offsets never move backwards nor past what was fed.
pub fn message(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let p = demo_profile();
    let mut methods: Vec<_> = p.methods().collect();
    methods.sort_by(|a, b| a.path().cmp(b.path()));
    let method = methods[usize::from(sel) % methods.len()].clone();
    let encoding = if sel & 0x80 != 0 {
        Encoding::Gzip
    } else {
        Encoding::Identity
    };
    let limits = GrpcLimits {
        inspect_cap: 1 << 16,
        ..p.limits().clone()
    };
    let mut stream = GrpcStream::new(method.clone(), limits).with_encoding(encoding);
    let mut out = Vec::new();
    let mut fed = 0u64;
    let mut last = 0u64;
    let mut check = |path: &str, _value: &str| {
        assert!(!path.is_empty(), "every string value has a field path");
        None
    };
    // The body as one bare message of the method's input type: the in-place walk and
    // prost-reflect must agree on whether it decodes, on its unknown fields and on its strings.
    differential(&method, body);
    if let Some(payload) = body.get(PREFIX_LEN..) {
        differential(&method, payload);
    }
    out.clear();
    for chunk in body.chunks(usize::from(sel >> 4 & 0x7) * 7 + 1) {
        fed += chunk.len() as u64;
        let r = stream.feed(chunk, &mut check, &mut out);
        assert!(
            r.release >= last && r.release <= fed,
            "release {} of {fed}",
            r.release
        );
        last = r.release;
    }
    let end = stream.finish(&mut out);
    assert!(end.release == last);
}

/// An IDL file of arbitrary text compiled as a profile's only file: an error or a profile, never a
/// panic; a profile always has at least one service and every method path is `/<service>/<name>`.
pub fn idl(data: &[u8]) {
    let link = "file:///fuzz/input.proto";
    let spec = GrpcProfileSpec {
        name: "fuzz".into(),
        idl_files: vec![super::IdlFileEntry {
            is_primary: true,
            ..super::IdlFileEntry::with_link(link)
        }],
        ..GrpcProfileSpec::default()
    };
    let files = MemResolver(HashMap::from([(link.to_string(), data.to_vec())]));
    if let Ok(p) = GrpcProfile::compile(&spec, &files, "") {
        assert!(!p.service_names().is_empty());
        for m in p.methods() {
            assert!(p.covers(m.path()), "{}", m.path());
            assert!(p.method(m.path()).is_some());
        }
    }
}

/// Inspects `payload` with [`walk::inspect`] and [`walk::inspect_reflect`] and asserts they agree:
/// same decode outcome, same unknown field numbers, and every string prost-reflect keeps is checked.
pub fn differential(method: &super::GrpcMethod, payload: &[u8]) {
    let desc = &method.input();
    let (schema, input) = method.schema();
    use std::collections::BTreeSet;
    type Run = (
        Result<(), String>,
        BTreeSet<String>,
        Vec<crate::violation::Violation>,
    );
    let run = |reflect: bool| -> Run {
        let opts = WalkOptions {
            allow_unknown_fields: false,
            decode_base64: false,
        };
        let (mut path, mut out, mut strings) = (String::new(), Vec::new(), BTreeSet::new());
        let mut check = |p: &str, v: &str| {
            assert!(!p.is_empty(), "every string value has a field path");
            if !v.is_empty() {
                strings.insert(v.to_string());
            }
            None
        };
        let w = walk::Walker::new(opts, &mut path, &mut check, &mut out);
        // The two decoders fail with different types; the texts are what a reader compares.
        let r = if reflect {
            walk::inspect_reflect(desc, payload, w).map_err(|e| e.to_string())
        } else {
            walk::inspect(schema, input, payload, w).map_err(|e| e.to_string())
        };
        (r, strings, out)
    };
    let (fast, fast_strings, fast_out) = run(false);
    let (slow, slow_strings, slow_out) = run(true);
    assert_eq!(
        fast.is_ok(),
        slow.is_ok(),
        "in-place walk {fast:?} vs prost-reflect {slow:?}"
    );
    if fast.is_err() {
        return;
    }
    assert!(
        slow_strings.is_subset(&fast_strings),
        "strings {slow_strings:?} not all in {fast_strings:?}"
    );
    let numbers = |out: &[crate::violation::Violation]| -> BTreeSet<String> {
        out.iter()
            .filter_map(|v| v.name.as_deref())
            .map(|n| n.rsplit('#').next().unwrap_or(n).to_string())
            .collect()
    };
    let cap = walk::MAX_VIOLATIONS_PER_MESSAGE;
    if fast_out.len() < cap && slow_out.len() < cap {
        assert_eq!(numbers(&fast_out), numbers(&slow_out), "unknown fields");
    }
}
