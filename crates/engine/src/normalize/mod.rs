//! Request normalisation before matching: percent-decoding (repeated, `%u`, overlong UTF-8), path
//! normalisation, HTML entities, JSON string escapes, de-obfuscation for signatures; each decoder
//! reports the evasion techniques it saw, named as the declarative policy's `evasions[].description`.

mod byteset;
mod embedded;
mod path;
mod percent;
mod shell;
mod text;
mod views;

pub use byteset::ByteSet;
pub use embedded::{base64_tokens, unsplit_words, utf16_text};
pub use path::normalize_path;
pub use percent::{decode_percent, decode_percent_once};
pub(crate) use text::has_pair;
pub use text::{
    UnescapeError, base64_text, contains_nul, decode_html_entities, decode_js_escapes,
    decoded_text, deobfuscate, fold_case, unescape_json_string,
};
pub use views::{inspection_views, views_free_below};

/// An evasion technique, as listed in the policy's `evasions` section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Evasion {
    PercentU,
    ApacheWhitespace,
    BadUnescape,
    BareByte,
    DirectoryTraversals,
    IisBackslashes,
    IisUnicodeCodepoints,
    MultipleDecoding,
    MultipleSlashes,
    SemicolonPathParameters,
    TrailingDot,
    TrailingSlash,
}

impl Evasion {
    /// Every technique, in the policy's alphabetical order.
    pub const ALL: &'static [Evasion] = &[
        Evasion::PercentU,
        Evasion::ApacheWhitespace,
        Evasion::BadUnescape,
        Evasion::BareByte,
        Evasion::DirectoryTraversals,
        Evasion::IisBackslashes,
        Evasion::IisUnicodeCodepoints,
        Evasion::MultipleDecoding,
        Evasion::MultipleSlashes,
        Evasion::SemicolonPathParameters,
        Evasion::TrailingDot,
        Evasion::TrailingSlash,
    ];

    /// The policy's `evasions[].description`.
    pub fn description(self) -> &'static str {
        match self {
            Evasion::PercentU => "%u decoding",
            Evasion::ApacheWhitespace => "Apache whitespace",
            Evasion::BadUnescape => "Bad unescape",
            Evasion::BareByte => "Bare byte decoding",
            Evasion::DirectoryTraversals => "Directory traversals",
            Evasion::IisBackslashes => "IIS backslashes",
            Evasion::IisUnicodeCodepoints => "IIS Unicode codepoints",
            Evasion::MultipleDecoding => "Multiple decoding",
            Evasion::MultipleSlashes => "Multiple slashes",
            Evasion::SemicolonPathParameters => "Semicolon path parameters",
            Evasion::TrailingDot => "Trailing dot",
            Evasion::TrailingSlash => "Trailing slash",
        }
    }

    /// Looks a description up (case-insensitive).
    pub fn from_description(d: &str) -> Option<Evasion> {
        Evasion::ALL
            .iter()
            .copied()
            .find(|e| e.description().eq_ignore_ascii_case(d))
    }
}

/// The set of evasions seen while normalising one value (a small bitset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evasions(u16);

impl Evasions {
    pub fn insert(&mut self, e: Evasion) {
        self.0 |= 1 << (e as u16);
    }
    pub fn contains(&self, e: Evasion) -> bool {
        self.0 & (1 << (e as u16)) != 0
    }
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
    pub fn extend(&mut self, other: Evasions) {
        self.0 |= other.0;
    }
    /// The techniques seen, in [`Evasion::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = Evasion> + '_ {
        Evasion::ALL.iter().copied().filter(|e| self.contains(*e))
    }
}

#[cfg(test)]
mod tests;
