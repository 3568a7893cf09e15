//! Inspecting call bodies: paths of string fields, unknown fields, sizes, framing, compression,
//! streaming and chunking.

use std::io::Write as _;

use super::*;

const GET: &str = "/test.v1.Users/Get";
const UPLOAD: &str = "/test.v1.Users/Upload";

fn stream_for(p: &CompiledGrpcProfile, path: &str, enc: Encoding) -> GrpcStream {
    p.stream(p.method(path).expect("method"), enc)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("in-memory gzip");
    e.finish().expect("in-memory gzip")
}

fn compressed_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::encode_frame(true, payload, &mut out);
    out
}

#[test]
fn a_valid_message_passes_and_every_string_is_checked_with_its_path() {
    let p = profile(serde_json::json!({"allowUnknownFields": false}));
    let body = frame(&rich_user(&p));
    let seen = run(&mut stream_for(&p, GET, Encoding::Identity), &[&body]);
    assert!(seen.violations.is_empty(), "{:?}", seen.violations);
    assert_eq!(seen.results[0].release, body.len() as u64);
    assert_eq!(seen.results[0].messages, 1);
    let mut paths: Vec<(&str, &str)> = seen
        .strings
        .iter()
        .map(|(p, v)| (p.as_str(), v.as_str()))
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        vec![
            ("address.city", "Paris"),
            ("address.lines[0]", "1 rue X"),
            ("attrs", "role"),
            ("attrs[\"role\"]", "admin"),
            ("history[0].city", "Oslo"),
            ("history[1].city", "Rome"),
            ("history[1].lines[0]", "via Y"),
            ("name", "alice"),
            ("places[7].city", "Lyon"),
            ("tags[0]", "a"),
            ("tags[1]", "b"),
            ("tags[2]", "c"),
        ]
    );
}

#[test]
fn an_injection_in_a_nested_string_is_reported_with_the_field_path() {
    let p = profile(serde_json::json!({}));
    let addr = message(
        &p,
        "test.v1.Address",
        &[("lines", list(&["ok", "<script>alert(1)</script>"]))],
    );
    let user = message(
        &p,
        "test.v1.User",
        &[("history", Value::List(vec![Value::Message(addr)]))],
    );
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&frame(&user.encode_to_vec())],
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::AttackSignature]);
    assert_eq!(seen.names(), vec!["history[0].lines[1]"]);
}

#[test]
fn unknown_fields_top_level_and_nested_are_format_violations() {
    let p = profile(serde_json::json!({"allowUnknownFields": false}));
    let addr = message(
        &p,
        "test.v1.AddressV2",
        &[("city", s("x")), ("extra", Value::I64(7))],
    );
    let v2 = message(
        &p,
        "test.v1.UserV2",
        &[
            ("name", s("bob")),
            ("extra", Value::I32(1)),
            ("address", Value::Message(addr)),
        ],
    );
    let body = frame(&v2.encode_to_vec());
    let seen = run(&mut stream_for(&p, GET, Encoding::Identity), &[&body]);
    assert_eq!(
        seen.kinds(),
        vec![ViolationKind::GrpcFormat, ViolationKind::GrpcFormat]
    );
    let mut names = seen.names();
    names.sort();
    assert_eq!(names, vec!["#99", "address.#50"]);
    assert!(seen.violations.iter().all(|v| v.context == Context::Grpc));
    // Still released: FORMAT alone is the verdict's business, the message was inspected.
    assert_eq!(seen.results[0].release, body.len() as u64);

    let lenient = profile(serde_json::json!({"allowUnknownFields": true}));
    let seen = run(&mut stream_for(&lenient, GET, Encoding::Identity), &[&body]);
    assert!(seen.violations.is_empty(), "{:?}", seen.violations);
}

#[test]
fn a_message_longer_than_maximum_data_length_is_format() {
    let p = profile(serde_json::json!({"maximumDataLength": 20}));
    let big = message(&p, "test.v1.User", &[("name", s(&"x".repeat(40)))]).encode_to_vec();
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&frame(&big)],
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcFormat]);
    assert!(
        seen.violations[0].detail.contains("maximumDataLength 20"),
        "{:?}",
        seen.violations
    );
    // The size is known from the prefix: the violation fires before the payload arrives.
    let mut st = stream_for(&p, GET, Encoding::Identity);
    let mut out = Vec::new();
    let r = st.feed(&frame(&big)[..5], &mut |_: &str, _: &str| None, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(r.release, 0);
    let small = message(&p, "test.v1.User", &[("name", s("ok"))]).encode_to_vec();
    assert!(
        run(
            &mut stream_for(&p, GET, Encoding::Identity),
            &[&frame(&small)]
        )
        .violations
        .is_empty()
    );
}

#[test]
fn broken_frames_and_messages_are_malformed() {
    let p = profile(serde_json::json!({}));
    // compressed-flag 7.
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&[7, 0, 0, 0, 1, 0]],
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcMalformed]);
    assert!(seen.results[0].passthrough);
    // A payload that is not a User: field 1 (string) with a length running past the end.
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&frame(&[0x0a, 0x10, b'a'])],
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcMalformed]);
    assert_eq!(seen.results[0].release, 0);
    // Invalid UTF-8 in a string field.
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&frame(&[0x0a, 0x02, 0xff, 0xfe])],
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcMalformed]);
    // Body ends inside a frame.
    let body = frame(&rich_user(&p));
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&body[..body.len() - 3]],
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcMalformed]);
    assert!(
        seen.violations[0].detail.contains("ended inside a frame"),
        "{:?}",
        seen.violations
    );
    assert_eq!(seen.end.map(|e| e.release), Some(0));
}

#[test]
fn frames_cut_anywhere_give_the_same_result() {
    let p = profile(serde_json::json!({}));
    let one = rich_user(&p);
    let mut body = frame(&one);
    body.extend(frame(&one));
    let whole = run(&mut stream_for(&p, UPLOAD, Encoding::Identity), &[&body]);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let split = run(&mut stream_for(&p, UPLOAD, Encoding::Identity), &bytes);
    assert_eq!(split.strings, whole.strings);
    assert!(split.violations.is_empty());
    // Release moves only at message ends: after the first message, then after the second.
    let releases: Vec<u64> = split.results.iter().map(|r| r.release).collect();
    let first = frame(&one).len() as u64;
    assert!(releases[..first as usize - 1].iter().all(|&r| r == 0));
    assert_eq!(releases[first as usize - 1], first);
    assert_eq!(*releases.last().expect("fed"), 2 * first);
}

#[test]
fn client_streaming_inspects_each_message_and_unary_refuses_a_second() {
    let p = profile(serde_json::json!({}));
    let msg = |n: &str| frame(&message(&p, "test.v1.User", &[("name", s(n))]).encode_to_vec());
    let body = [msg("a"), msg("<script>x"), msg("c")].concat();
    let seen = run(&mut stream_for(&p, UPLOAD, Encoding::Identity), &[&body]);
    assert_eq!(seen.results[0].messages, 3);
    assert_eq!(seen.strings.len(), 3);
    assert_eq!(seen.kinds(), vec![ViolationKind::AttackSignature]);
    let two = [msg("a"), msg("b")].concat();
    let seen = run(&mut stream_for(&p, GET, Encoding::Identity), &[&two]);
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcMalformed]);
    assert_eq!(seen.results[0].release, msg("a").len() as u64);
}

#[test]
fn gzip_messages_are_inflated_and_inspected() {
    let p = profile(serde_json::json!({"allowUnknownFields": false}));
    let user = message(&p, "test.v1.User", &[("name", s("<script>zip"))]).encode_to_vec();
    let body = compressed_frame(&gzip(&user));
    let seen = run(
        &mut stream_for(&p, GET, Encoding::from_header(Some("gzip"))),
        &[&body],
    );
    assert_eq!(
        seen.strings,
        vec![("name".to_string(), "<script>zip".to_string())]
    );
    assert_eq!(seen.kinds(), vec![ViolationKind::AttackSignature]);
    // Compressed without grpc-encoding, with an unsupported codec, or corrupt: malformed.
    for enc in [Encoding::Identity, Encoding::from_header(Some("snappy"))] {
        assert_eq!(
            run(&mut stream_for(&p, GET, enc), &[&body]).kinds(),
            vec![ViolationKind::GrpcMalformed]
        );
    }
    let corrupt = compressed_frame(b"\x1f\x8b\x08\x00garbage");
    assert_eq!(
        run(&mut stream_for(&p, GET, Encoding::Gzip), &[&corrupt]).kinds(),
        vec![ViolationKind::GrpcMalformed]
    );
}

#[test]
fn inflated_size_is_capped_and_counted_against_maximum_data_length() {
    let p = profile(serde_json::json!({"maximumDataLength": 1000}));
    let big = message(&p, "test.v1.User", &[("name", s(&"a".repeat(5000)))]).encode_to_vec();
    let body = compressed_frame(&gzip(&big));
    assert!(body.len() < 1000, "compresses well");
    let seen = run(&mut stream_for(&p, GET, Encoding::Gzip), &[&body]);
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcFormat]);
    let limits = GrpcLimits {
        inspect_cap: 4096,
        ..GrpcLimits::default()
    };
    let mut bomb =
        GrpcStream::new(p.method(GET).expect("Get").clone(), limits).with_encoding(Encoding::Gzip);
    let seen = run(&mut bomb, &[&body]);
    assert_eq!(seen.kinds(), vec![ViolationKind::GrpcMalformed]);
    assert!(
        seen.violations[0].detail.contains("inspection cap"),
        "{:?}",
        seen.violations
    );
}

#[test]
fn a_frame_over_the_inspection_cap_is_refused_from_its_prefix() {
    let p = profile(serde_json::json!({"maximumDataLength": "any"}));
    let limits = GrpcLimits {
        inspect_cap: 100,
        ..p.limits().clone()
    };
    let mut st = GrpcStream::new(p.method(GET).expect("Get").clone(), limits);
    let seen = run(&mut st, &[&[0, 0, 0, 1, 0]]);
    // Over the cap is also over the maximum request length, as the real system reports it.
    assert_eq!(
        seen.kinds(),
        vec![
            ViolationKind::RequestMaxLength,
            ViolationKind::GrpcMalformed
        ]
    );
    assert!(
        seen.violations[0]
            .detail
            .contains("256 bytes, over the inspection cap of 100")
    );
    assert!(seen.results[0].passthrough);
}

#[test]
fn base64_string_values_are_decoded_when_asked() {
    let mut s64 = spec(
        &[LINK],
        serde_json::json!({"decodeStringValuesAsBase64": true}),
    );
    s64.name = "b64".into();
    let p = GrpcProfile::compile(&s64, &resolver(&[(LINK, TEST_PROTO)]), "").expect("compiles");
    // "<script>alert(1)" in base64.
    let user = message(
        &p,
        "test.v1.User",
        &[("name", s("PHNjcmlwdD5hbGVydCgxKQ=="))],
    )
    .encode_to_vec();
    let seen = run(
        &mut stream_for(&p, GET, Encoding::Identity),
        &[&frame(&user)],
    );
    assert_eq!(seen.names(), vec!["name"]);
    let plain = profile(serde_json::json!({}));
    assert!(
        run(
            &mut stream_for(&plain, GET, Encoding::Identity),
            &[&frame(&user)]
        )
        .violations
        .is_empty()
    );
}

#[test]
fn an_empty_message_and_an_empty_body_are_fine() {
    let p = profile(serde_json::json!({"allowUnknownFields": false}));
    let seen = run(&mut stream_for(&p, GET, Encoding::Identity), &[&frame(&[])]);
    assert!(seen.violations.is_empty());
    assert_eq!(seen.results[0].release, 5);
    let seen = run(&mut stream_for(&p, GET, Encoding::Identity), &[]);
    assert!(seen.violations.is_empty());
}

#[test]
fn the_in_place_walk_agrees_with_prost_reflect() {
    let p = profile(serde_json::json!({}));
    let user = p.method(GET).expect("Get").clone();
    let v2 = message(
        &p,
        "test.v1.AddressV2",
        &[("city", s("x")), ("extra", Value::I64(-7))],
    );
    let unknown = message(
        &p,
        "test.v1.UserV2",
        &[("extra", Value::I32(5)), ("address", Value::Message(v2))],
    );
    let mut samples = vec![rich_user(&p), unknown.encode_to_vec(), Vec::new()];
    // A repeated field sent twice, a singular one sent twice, a packed int list, a bad wire type.
    let mut twice = rich_user(&p);
    twice.extend(rich_user(&p));
    samples.push(twice);
    samples.push(vec![0x38, 0x01, 0x38, 0x02]); // age = 1, age = 2
    samples.push(vec![0x3a, 0x02, 0x01, 0x02]); // age (varint) sent length-delimited
    samples.push(vec![0x0d, 0, 0, 0, 0]); // name (string) sent as fixed32
    // Nesting at and past prost's recursion limit (history -> Address has no nesting, so use
    // unknown groups, which prost-reflect also bounds).
    let group = |depth: usize| {
        let mut b = [0xa3, 0x06].repeat(depth); // field 100, start group
        b.extend([0xa4, 0x06].repeat(depth)); // field 100, end group
        b
    };
    samples.push(group(99));
    samples.push(group(101));
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..4000 {
        let base = &samples[i % samples.len()];
        let mut m = base.clone();
        if !m.is_empty() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state as usize) % m.len();
            match state % 3 {
                0 => m[at] ^= 1 << ((state >> 8) % 8),
                1 => m.truncate(at),
                _ => m.insert(at, (state >> 16) as u8),
            }
        }
        crate::grpc::fuzzing::differential(&user, if i < samples.len() { base } else { &m });
    }
}
