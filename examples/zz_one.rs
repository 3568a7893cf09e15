use portcullis::waf::signatures::{SignatureDb, Target};
use std::hint::black_box;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let t = match args[1].as_str() {
        "h" => Target::Header,
        "n" => Target::ParamName,
        "j" => Target::Json,
        _ => Target::ParamValue,
    };
    let v = args[2].as_bytes();
    let n: usize = args[3].parse().unwrap();
    let db = SignatureDb::builtin();
    let mut hits = Vec::new();
    for _ in 0..=n {
        hits.clear();
        db.scan(t, black_box(v), &mut hits);
    }
    println!("{:?}", hits);
}
