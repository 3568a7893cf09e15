//! Instruction-count probe of the engine's hot paths, for before/after comparisons on a shared
//! machine where wall time is noise: runs one scenario N times on the inputs of the criterion
//! benches (`benches/common`). `benches/instructions.sh` runs it under `perf stat` and prints
//! instructions per iteration.
//!
//! `cargo run --profile dist --example engine_cost -- SCENARIO ITERATIONS`, SCENARIO one of
//! `get` (typical GET through the engine), `get_params` and `get_cold` (the same with new query
//! values, or every value new, each iteration: `common::Fresh`), `api_get` (the request of `benches/load.sh` under the
//! demo policy, every phase the proxy runs), `post1k`, `post100k` (JSON POST through the engine),
//! `sigs_get` (the signature scans of a typical GET's values), `body100k` (one raw 100 KB body scan).

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;

use portcullis::waf::signatures::{SignatureDb, Target};

/// Request variants cycled through by `get_params` and `get_cold`: more than the scan memo's slots
/// hold values of, so none is answered from the memo when its turn comes again.
const VARIANTS: usize = 4096;

fn cycle(iteration: u64) -> usize {
    iteration as usize % VARIANTS
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scenario = args.get(1).map_or("get", String::as_str);
    let n: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let db = SignatureDb::builtin();
    let pol = common::policy();
    let body1k = common::json_body(1024);
    let body100k = common::json_body(100 * 1024);
    let get = common::typical_get();
    let get_params = common::typical_get_variants(VARIANTS, common::Fresh::Params);
    let get_cold = common::typical_get_variants(VARIANTS, common::Fresh::All);
    let post1k = common::json_post(body1k.len());
    let post100k = common::json_post(body100k.len());
    let demo = common::demo_policy();
    let api_get = common::api_get();
    let mut passed = 0u64;
    // One warm-up iteration, also run when N is 0: first-use costs (lazy-DFA caches, allocator
    // pools) are not part of the per-request figure.
    for iteration in 0..=n {
        let ok = match scenario {
            "get" => common::run(&pol, black_box(&get), b""),
            "get_params" => common::run(&pol, black_box(&get_params[cycle(iteration)]), b""),
            "get_cold" => common::run(&pol, black_box(&get_cold[cycle(iteration)]), b""),
            "api_get" => common::run_exchange(&demo, black_box(&api_get)),
            "post1k" => common::run(&pol, black_box(&post1k), black_box(&body1k)),
            "post100k" => common::run(&pol, black_box(&post100k), black_box(&body100k)),
            "sigs_get" => {
                let mut hits = Vec::new();
                common::scan_get_values(db, &mut hits);
                black_box(hits).is_empty()
            }
            "body100k" => {
                let mut hits = Vec::new();
                db.scan(Target::Body, black_box(&body100k), &mut hits);
                black_box(hits).is_empty()
            }
            other => {
                eprintln!("unknown scenario {other}");
                std::process::exit(2);
            }
        };
        if iteration > 0 {
            passed += u64::from(ok);
        }
    }
    println!("{scenario}: {n} iterations, {passed} let through");
}
