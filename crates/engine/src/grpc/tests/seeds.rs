//! Replays the fuzz seeds (fuzz/seeds/{grpc_frame,grpc_message,proto_idl}) through the functions
//! the fuzz targets call, so `cargo test` exercises them on stable.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
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
    replay("grpc_frame", crate::grpc::fuzzing::frames);
}

#[test]
fn grpc_message_seeds() {
    replay("grpc_message", crate::grpc::fuzzing::message);
}

#[test]
fn proto_idl_seeds() {
    replay("proto_idl", crate::grpc::fuzzing::idl);
}

#[test]
fn the_seeds_mean_what_their_names_say() {
    use crate::grpc::{Encoding, GrpcStream};
    use crate::violation::ViolationKind;
    let p = crate::grpc::fuzzing::demo_profile();
    let read = |name: &str| {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fuzz/seeds/grpc_message")
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

/// Seeds mutated by a fixed pseudo-random sequence (byte flips, insertions, deletions, cuts,
/// splices): a stable-toolchain taste of what the fuzzer does, run by every `cargo test`.
#[test]
fn mutated_seeds_never_panic() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (target, run) in [
        ("grpc_frame", crate::grpc::fuzzing::frames as fn(&[u8])),
        ("grpc_message", crate::grpc::fuzzing::message),
        ("proto_idl", crate::grpc::fuzzing::idl),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds")
            .join(target);
        let seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .expect("seed directory")
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| std::fs::read(e.path()).expect("seed"))
            .collect();
        for i in 0..3000 {
            let mut input = seeds[i % seeds.len()].clone();
            for _ in 0..=(rand() % 4) {
                let at = if input.is_empty() {
                    0
                } else {
                    (rand() as usize) % input.len()
                };
                match rand() % 5 {
                    0 if !input.is_empty() => input[at] ^= 1 << (rand() % 8),
                    1 => input.insert(at, rand() as u8),
                    2 if !input.is_empty() => {
                        input.remove(at);
                    }
                    3 => input.truncate(at),
                    _ => {
                        let other = &seeds[(rand() as usize) % seeds.len()];
                        input.extend_from_slice(&other[other.len() / 2..]);
                    }
                }
            }
            run(&input);
        }
    }
}
