//! Reading and compiling the IDL text of a profile with protox: link → file name, the protox file
//! resolver that serves listed files, Google well-known types and records missing imports (fetched
//! relative to the primary file, then compiled again), and protox errors → file, line, column.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use prost_reflect::DescriptorPool;
use protox::file::{File, FileResolver, GoogleFileResolver};

use super::compile::{GrpcError, MAX_IDL_FILES};
use super::spec::GrpcProfileSpec;
use crate::resolver::Resolver;

pub(super) fn file_name(link: &str) -> &str {
    let link = link.split(['?', '#']).next().unwrap_or(link);
    link.rsplit('/').next().unwrap_or(link)
}

pub(super) fn dir_of(link: &str) -> &str {
    let link = link.split(['?', '#']).next().unwrap_or(link);
    link.rfind('/').map_or("", |i| &link[..=i])
}

pub(super) fn fetch_text(
    resolver: &dyn Resolver,
    base: &str,
    link: &str,
    profile: &str,
) -> Result<String, GrpcError> {
    let fetch_err = |reason: String| GrpcError::Fetch {
        profile: profile.into(),
        link: link.into(),
        reason,
    };
    let bytes = resolver
        .fetch(base, link)
        .map_err(|e| fetch_err(e.reason))?;
    String::from_utf8(bytes).map_err(|e| {
        fetch_err(format!(
            "not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Line and column of the `syntax` statement, or line 1 when the file has none (proto2 default).
pub(super) fn syntax_position(src: &str) -> (Option<usize>, Option<usize>) {
    for (i, line) in src.lines().enumerate() {
        if let Some(col) = line.find("syntax")
            && line.trim_start().starts_with("syntax")
        {
            return (Some(i + 1), Some(col + 1));
        }
    }
    (Some(1), Some(1))
}

/// Serves the listed files, then the Google well-known types, and records every other name asked
/// for so the caller can fetch it relative to the primary file and try again.
struct ProfileFiles {
    files: HashMap<String, String>,
    google: GoogleFileResolver,
    missing: Arc<Mutex<Vec<String>>>,
}

impl FileResolver for ProfileFiles {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if let Some(src) = self.files.get(name) {
            return File::from_source(name, src);
        }
        // An import written with a longer or shorter path than the listed file's name.
        let suffix = format!("/{name}");
        if let Some((_, src)) = self
            .files
            .iter()
            .find(|(n, _)| n.ends_with(&suffix) || name.ends_with(&format!("/{n}")))
        {
            return File::from_source(name, src);
        }
        match self.google.open_file(name) {
            Err(e) if e.is_file_not_found() => {
                self.missing.lock().push(name.to_string());
                Err(e)
            }
            other => other,
        }
    }
}

pub(super) fn compile_files(
    spec: &GrpcProfileSpec,
    resolver: &dyn Resolver,
    primary_link: &str,
    listed: &[String],
    sources: &mut HashMap<String, String>,
) -> Result<DescriptorPool, GrpcError> {
    loop {
        let missing = Arc::new(Mutex::new(Vec::new()));
        let files = ProfileFiles {
            files: sources.clone(),
            google: GoogleFileResolver::new(),
            missing: missing.clone(),
        };
        let mut compiler = protox::Compiler::with_file_resolver(files);
        compiler.include_imports(true);
        let result = listed
            .iter()
            .try_for_each(|name| compiler.open_file(name).map(|_| ()));
        let Err(err) = result else {
            return Ok(compiler.descriptor_pool());
        };
        let wanted: Vec<String> = std::mem::take(&mut *missing.lock());
        let new: Vec<String> = wanted
            .into_iter()
            .filter(|n| !sources.contains_key(n))
            .collect();
        if !err.is_file_not_found() || new.is_empty() {
            return Err(idl_error(&spec.name, &err, sources));
        }
        for name in new {
            if sources.len() >= MAX_IDL_FILES {
                return Err(GrpcError::Profile {
                    profile: spec.name.clone(),
                    reason: format!("more than {MAX_IDL_FILES} IDL files (imports included)"),
                });
            }
            // Not among the listed files: try relative to the primary file.
            match resolver
                .fetch(primary_link, &name)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
            {
                Some(text) => {
                    sources.insert(name, text);
                }
                None => return Err(idl_error(&spec.name, &err, sources)),
            }
        }
    }
}

/// Turns a protox error into file, line, column and reason.
fn idl_error(profile: &str, err: &protox::Error, sources: &HashMap<String, String>) -> GrpcError {
    use miette::Diagnostic;
    let file = err.file().unwrap_or("<idl>").to_string();
    let offset = err.labels().and_then(|mut l| l.next()).map(|l| l.offset());
    let (line, column) = match (offset, sources.get(&file)) {
        (Some(off), Some(src)) => {
            let before = &src.as_bytes()[..off.min(src.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            (Some(line), Some(col))
        }
        _ => (None, None),
    };
    let mut reason = err.to_string();
    if let Some(help) = err.help() {
        reason.push_str(&format!(" ({help})"));
    }
    GrpcError::Idl {
        profile: profile.into(),
        file,
        line,
        column,
        reason,
    }
}
