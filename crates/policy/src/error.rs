//! Why a policy document cannot be used: the one error type of loading and compiling a policy,
//! which the controller, `policy check` and `portcullis proxy` each turn into their own output.
//! `Display` is the text users see: the JSON path of the member at fault, then the problem.

use crate::resolver::FetchError;

/// Why a policy document cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The document (or a document it links to, see [`PolicyError::Invalid`]) is not JSON or YAML.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// The member at `path` (`policy.urls[2].name`, or `document` for the root) is missing,
    /// mistyped, unknown or out of range.
    #[error("{path}: {problem}")]
    Invalid { path: String, problem: String },
    /// The file the link at `path` names could not be read through the resolver.
    #[error("{path}: cannot read {source}")]
    Link { path: String, source: FetchError },
}

impl PolicyError {
    /// The member at `path` is wrong, for this reason.
    pub fn invalid(path: impl Into<String>, problem: impl Into<String>) -> PolicyError {
        PolicyError::Invalid {
            path: path.into(),
            problem: problem.into(),
        }
    }

    /// The JSON path of the member at fault (`None` when the document itself does not parse).
    pub fn path(&self) -> Option<&str> {
        match self {
            PolicyError::Syntax(_) => None,
            PolicyError::Invalid { path, .. } | PolicyError::Link { path, .. } => Some(path),
        }
    }
}

/// Why bytes are not a JSON or YAML document; the position is 1-based, as editors show it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    #[error("not UTF-8: {0}")]
    NotUtf8(std::str::Utf8Error),
    #[error("JSON error at line {line} column {column}: {detail}")]
    Json {
        line: usize,
        column: usize,
        detail: String,
    },
    #[error("YAML error at line {line} column {column}: {detail}")]
    Yaml {
        line: usize,
        column: usize,
        detail: String,
    },
    /// A YAML error the parser gives no position for.
    #[error("YAML error: {0}")]
    YamlUnplaced(String),
}
