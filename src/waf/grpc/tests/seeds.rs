//! Replays the fuzz seeds (fuzz/seeds/grpc_frame, fuzz/seeds/grpc_message) through the functions
//! the fuzz targets call, so `cargo test` exercises them on stable.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("seed directory") {
        let path = entry.expect("seed entry").path();
        if path
            .file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        run(&std::fs::read(&path).expect("seed file"));
        n += 1;
    }
    assert!(n >= 5, "{target}: only {n} seeds");
}

#[test]
fn grpc_frame_seeds() {
    replay("grpc_frame", crate::waf::grpc::fuzzing::frames);
}

#[test]
fn grpc_message_seeds() {
    replay("grpc_message", crate::waf::grpc::fuzzing::message);
}

#[test]
fn the_seeds_mean_what_their_names_say() {
    use crate::waf::grpc::{Encoding, GrpcStream};
    use crate::waf::violation::ViolationKind;
    let p = crate::waf::grpc::fuzzing::demo_profile();
    let read = |name: &str| {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fuzz/seeds/grpc_message")
                .join(name),
        )
        .expect("seed")
    };
    let run = |path: &str, body: &[u8], enc: Encoding| {
        let mut st = GrpcStream::new(p.method(path).expect("method").clone(), p.limits().clone())
            .with_encoding(enc);
        let mut out = Vec::new();
        st.feed(body, &mut |_: &str, _: &str| None, &mut out);
        st.finish(&mut out);
        out.into_iter().map(|v| v.kind).collect::<Vec<_>>()
    };
    assert!(
        run(
            "/demo.v1.Greeter/SayHello",
            &read("hello_unary")[1..],
            Encoding::Identity
        )
        .is_empty()
    );
    assert_eq!(
        run(
            "/demo.v1.Greeter/SayHello",
            &read("hello_unknown_field")[1..],
            Encoding::Identity
        ),
        vec![ViolationKind::GrpcFormat]
    );
    assert!(
        run(
            "/demo.v1.Inventory/AddItems",
            &read("items_stream")[1..],
            Encoding::Identity
        )
        .is_empty()
    );
    assert!(
        run(
            "/demo.v1.Inventory/AddItems",
            &read("gzip_item")[1..],
            Encoding::Gzip
        )
        .is_empty()
    );
    assert_eq!(
        run(
            "/demo.v1.Inventory/GetItem",
            &read("bad_utf8")[1..],
            Encoding::Identity
        ),
        vec![ViolationKind::GrpcMalformed]
    );
}
