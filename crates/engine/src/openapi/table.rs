//! The URL table a spec produced (`portcullis policy check --urls`): one row per operation with
//! its method, URL pattern and parameters, and a `Display` that prints it as aligned text.

use super::compile::CompiledApi;
use super::operation::BodyKind;
use super::param::Location;
use std::fmt;

/// One row of the URL table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRow {
    pub method: String,
    /// URL pattern with the server prefix, e.g. `/v1/pets/{petId}`.
    pub url: String,
    /// `in:name:type`, with `*` after mandatory ones, e.g. `path:petId:integer(int64)*`.
    pub parameters: Vec<String>,
    /// Declared request content types (`+` after them when the body is required).
    pub content_types: Vec<String>,
}

impl CompiledApi {
    /// One row per operation, sorted by URL then method.
    pub fn url_table(&self) -> UrlTable {
        let mut rows: Vec<UrlRow> = self
            .operations
            .iter()
            .map(|op| {
                let mut parameters: Vec<String> = op
                    .params
                    .iter()
                    .map(|p| {
                        format!(
                            "{}:{}:{}{}",
                            p.location.name(),
                            p.name,
                            p.type_label,
                            if p.required { "*" } else { "" }
                        )
                    })
                    .collect();
                for c in &op.contents {
                    if let BodyKind::Form { fields, .. } = &c.kind {
                        for f in fields.iter().filter(|f| f.location == Location::Form) {
                            let entry = format!(
                                "form:{}:{}{}",
                                f.name,
                                f.type_label,
                                if f.required { "*" } else { "" }
                            );
                            if !parameters.contains(&entry) {
                                parameters.push(entry);
                            }
                        }
                    }
                }
                let req = if op.body_required { "+" } else { "" };
                UrlRow {
                    method: op.method.clone(),
                    url: op.url.clone(),
                    parameters,
                    content_types: op
                        .contents
                        .iter()
                        .map(|c| format!("{}{req}", c.media))
                        .collect(),
                }
            })
            .collect();
        rows.sort_by(|a, b| (&a.url, &a.method).cmp(&(&b.url, &b.method)));
        UrlTable(rows)
    }
}

/// The rows, printable as a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlTable(pub Vec<UrlRow>);

impl fmt::Display for UrlTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mw = self
            .0
            .iter()
            .map(|r| r.method.len())
            .max()
            .unwrap_or(0)
            .max(6);
        let uw = self.0.iter().map(|r| r.url.len()).max().unwrap_or(0).max(3);
        writeln!(f, "{:mw$}  {:uw$}  PARAMETERS / BODY", "METHOD", "URL")?;
        for r in &self.0 {
            let mut cols = r.parameters.join(" ");
            if !r.content_types.is_empty() {
                if !cols.is_empty() {
                    cols.push(' ');
                }
                cols.push_str(&format!("body:{}", r.content_types.join(",")));
            }
            writeln!(f, "{:mw$}  {:uw$}  {}", r.method, r.url, cols.trim_end())?;
        }
        write!(f, "{} operations", self.0.len())
    }
}
