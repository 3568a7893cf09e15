//! [`Fields`] against `HeaderMap`: the same order, look-ups and changes.

use super::*;

/// (name, value) pairs of a map, in its order.
fn of_map(m: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    m.iter()
        .map(|(n, v)| (n.as_str().to_string(), v.as_bytes().to_vec()))
        .collect()
}

fn of_fields(f: &Fields) -> Vec<(String, Vec<u8>)> {
    f.iter()
        .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
        .collect()
}

const RAW: &[(&str, &str)] = &[
    ("Host", "a"),
    ("X-A", "1"),
    ("Accept", "*/*"),
    ("x-a", "2"),
    ("Cookie", "c=1"),
    ("X-A", "3"),
    ("cookie", "d=2"),
    ("Z", ""),
];

/// The same fields parsed into both, `Fields` sharing its values' buffer as the HTTP/1 path does.
fn both() -> (Fields, HeaderMap) {
    let text: String = RAW.iter().map(|(_, v)| *v).collect();
    let buf = Bytes::from(text);
    let mut fields = Fields::sharing(buf.clone(), RAW.len());
    let mut map = HeaderMap::new();
    let mut at = 0;
    for (n, v) in RAW {
        fields.append(n, &buf[at..at + v.len()]);
        at += v.len();
        map.append(
            HeaderName::from_bytes(n.as_bytes()).expect("name"),
            HeaderValue::from_str(v).expect("value"),
        );
    }
    (fields, map)
}

#[test]
fn fields_keep_the_header_map_order() {
    let (fields, map) = both();
    assert_eq!(of_fields(&fields), of_map(&map));
    assert_eq!(fields.len(), map.len());
    assert_eq!(of_fields(&Fields::from_map(&map)), of_map(&map));
    assert_eq!(fields.to_map(), map);
    // The values were not copied.
    assert_eq!(fields.values.len(), 13);
}

#[test]
fn look_ups_answer_as_the_map_does() {
    let (fields, map) = both();
    for name in ["host", "HOST", "x-a", "cookie", "z", "absent", "bad name"] {
        assert_eq!(
            fields.get(name).map(|v| v.as_bytes()),
            map.get(name).map(|v| v.as_bytes()),
            "{name}"
        );
        let all: Vec<&[u8]> = fields.get_all(name).map(|v| v.as_bytes()).collect();
        let theirs: Vec<&[u8]> = map.get_all(name).iter().map(|v| v.as_bytes()).collect();
        assert_eq!(all, theirs, "{name}");
        assert_eq!(fields.contains_key(name), map.contains_key(name), "{name}");
    }
    assert_eq!(fields.get(http::header::ACCEPT), Some(FieldValue(b"*/*")));
}

#[test]
fn changes_leave_the_order_a_map_would_have() {
    for name in ["host", "x-a", "cookie", "z", "absent"] {
        let (mut fields, mut map) = both();
        assert_eq!(fields.remove(name), map.remove(name).is_some(), "{name}");
        assert_eq!(of_fields(&fields), of_map(&map), "remove {name}");
        fields.insert(name, b"new");
        map.insert(
            HeaderName::from_bytes(name.as_bytes()).expect("name"),
            HeaderValue::from_static("new"),
        );
        assert_eq!(of_fields(&fields), of_map(&map), "insert {name}");
    }
    let (mut fields, mut map) = both();
    fields.insert("X-A", b"only");
    map.insert("x-a", HeaderValue::from_static("only"));
    fields.append("Cookie", b"e=3");
    map.append("cookie", HeaderValue::from_static("e=3"));
    fields.append("x-new", b"n");
    map.append("x-new", HeaderValue::from_static("n"));
    assert_eq!(of_fields(&fields), of_map(&map));
}

#[test]
fn text_is_what_header_value_calls_text() {
    for b in 0..=255u8 {
        let raw = [b'a', b, b'z'];
        let theirs = HeaderValue::from_bytes(&raw);
        let Ok(theirs) = theirs else { continue };
        assert_eq!(
            FieldValue(&raw).to_str().ok(),
            theirs.to_str().ok(),
            "byte {b}"
        );
    }
}

#[test]
fn a_head_goes_to_parts_and_back_unchanged() {
    let (_, map) = both();
    let mut req = http::Request::builder()
        .method("POST")
        .uri("http://h/p?q=1")
        .body(())
        .expect("request");
    *req.headers_mut() = map.clone();
    let head = RequestHead::from(req.into_parts().0);
    assert_eq!(head.method, Method::POST);
    let parts = head.clone().into_parts();
    assert_eq!(parts.headers, map);
    assert_eq!(parts.uri, head.uri);
}

/// Every field carries its name's kind, however the fields were built or changed.
#[test]
fn each_field_has_its_names_kind() {
    let kinds_match = |f: &Fields| f.iter_kinds().all(|(n, kind, _)| kind == FieldKind::of(n));
    let (mut fields, map) = both();
    assert!(kinds_match(&fields));
    assert!(kinds_match(&Fields::from_map(&map)));
    let kinds: Vec<FieldKind> = fields.iter_kinds().map(|(_, k, _)| k).collect();
    assert!(kinds.contains(&FieldKind::Host) && kinds.contains(&FieldKind::Cookie));
    fields.append("Transfer-Encoding", b"chunked");
    fields.insert("COOKIE", b"e=3");
    fields.remove("host");
    fields.append("x-a", b"4");
    assert!(kinds_match(&fields));
    assert_eq!(
        fields
            .iter_kinds()
            .find(|(n, _, _)| *n == "transfer-encoding")
            .map(|(_, k, _)| k),
        Some(FieldKind::TransferEncoding)
    );
    for (kind, name) in FieldKind::NAMED {
        assert_eq!(FieldKind::of(name), kind, "{name}");
    }
    assert_eq!(FieldKind::of("x-http-method"), FieldKind::HttpMethod);
    assert_eq!(
        FieldKind::of("Host"),
        FieldKind::Other,
        "names are given lower-case"
    );
}
