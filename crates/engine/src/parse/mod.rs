//! Request structure extraction with bounds: query strings and form bodies, cookies, multipart,
//! a JSON walk and a basic XML well-formedness walk. Each parser returns borrowed slices or small
//! owned values and never panics on input. The decoders here are the minimum the policy checks need;
//! `waf::normalize` (signatures work) owns the full normalisation pipeline.

pub(crate) mod coding;
pub(crate) mod cookie;
pub(crate) mod json;
pub(crate) mod multipart;
pub(crate) mod query;
pub(crate) mod xml;

/// The fuzz entry point (`fuzz/fuzz_targets/request_parsers.rs`): runs every parser of this module
/// over `data`; none may panic or run unbounded.
#[cfg(any(test, fuzzing))]
pub fn fuzz_all(data: &[u8]) {
    let mut flags = query::DecodeFlags::default();
    let _ = query::decode(data, true, 5, &mut flags);
    let _ = query::pairs(data, 1000).count();
    let _ = cookie::pairs(data).count();
    let _ = json::walk(data, |_| {});
    let _ = coding::inflate(coding::Coding::Gzip, data, 1 << 16);
    let _ = coding::inflate(coding::Coding::Deflate, data, 1 << 16);
    let _ = xml::walk(data, 64, |_| {});
    if let Some(split) = data.iter().position(|b| *b == b'\n') {
        let ct = String::from_utf8_lossy(&data[..split]);
        if let Some(b) = multipart::boundary(&ct) {
            let _ = multipart::parts(&data[split + 1..], b, 100);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fuzz_seeds_run_through_every_parser() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/seeds/request_parsers");
        let mut n = 0;
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            super::fuzz_all(&std::fs::read(e.path()).unwrap_or_default());
            n += 1;
        }
        assert!(n >= 4);
    }
}
