//! The declarative policy language, load-time code only: the serde mirror of a policy document
//! ([`decl`]) read with lenient scalars and precise paths ([`read_decl`]), its links resolved
//! ([`resolve_policy`], through the caller's [`Resolver`]), layered over a shipped template
//! ([`layers`], [`templates`], [`sections`] for the merge keys), and the sections accepted but not
//! enforced ([`check_unenforced`]). What a request meets is compiled from it by `portcullis-engine`.
//! No IO.

pub mod decl;
mod error;
pub mod layers;
mod read;
mod refs;
pub mod resolver;
pub mod sections;
pub mod templates;
mod unenforced;

pub use error::{PolicyError, SyntaxError};
pub use read::read_decl;
pub use refs::{RefCtx, resolve_policy};
pub use resolver::{FetchError, MemResolver, NoResolver, Resolver};
pub use unenforced::check as check_unenforced;

use serde_json::Value;

/// Parses a document as JSON, or as YAML when it is not JSON-shaped or named `.yaml`/`.yml`.
pub fn parse_document(bytes: &[u8], name: &str) -> Result<Value, SyntaxError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let yaml_name = name.ends_with(".yaml") || name.ends_with(".yml");
    if yaml_name || !matches!(first, Some(b'{') | Some(b'[') | None) {
        let text = std::str::from_utf8(bytes).map_err(SyntaxError::NotUtf8)?;
        return serde_yaml_ng::from_str::<Value>(text).map_err(|e| match e.location() {
            Some(l) => SyntaxError::Yaml {
                line: l.line(),
                column: l.column(),
                detail: e.to_string(),
            },
            None => SyntaxError::YamlUnplaced(e.to_string()),
        });
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let detail = match e.classify() {
            serde_json::error::Category::Eof => {
                "unexpected end of input (truncated JSON?)".to_string()
            }
            _ => strip_position(&e.to_string()),
        };
        SyntaxError::Json {
            line: e.line(),
            column: e.column(),
            detail,
        }
    })
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}
