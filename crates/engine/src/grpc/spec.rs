//! The declaration of one gRPC profile: a serde mirror of a `grpc-profiles[]` entry, field for
//! field as the declarative policy writes it. Nothing here is validated beyond
//! JSON shape; [`super::GrpcProfile::compile`] turns it into a usable profile.

use serde::{Deserialize, Deserializer, Serialize};

/// One `grpc-profiles[]` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GrpcProfileSpec {
    pub name: String,
    pub description: Option<String>,
    pub idl_files: Vec<IdlFileEntry>,
    /// When true, `/<package>.<service>/*` is a URL of the policy for every service of the IDL.
    #[serde(default = "yes")]
    pub associate_urls: bool,
    pub defense_attributes: DefenseAttributes,
    #[serde(default = "yes")]
    pub attack_signatures_check: bool,
    pub signature_overrides: Vec<SignatureOverride>,
    /// `metacharElementCheck` in the schema; the docs example writes `metacharCheck`. Either is
    /// accepted, and either false turns the check off.
    #[serde(default = "yes")]
    pub metachar_check: bool,
    #[serde(default = "yes")]
    pub metachar_element_check: bool,
    /// Also inspect the base64-decoded text of string values that are valid base64.
    pub decode_string_values_as_base64: bool,
}

fn yes() -> bool {
    true
}

impl GrpcProfileSpec {
    /// Whether meta-characters of string values are checked (both spellings must allow it).
    pub fn metachars_enabled(&self) -> bool {
        self.metachar_check && self.metachar_element_check
    }
}

/// One `idlFiles[]` entry: `{"idlFile": {"$ref": "file://..."}, "isPrimary": true}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IdlFileEntry {
    pub idl_file: IdlFileRef,
    pub is_primary: bool,
    /// The name other files use to import this one (defaults to the path relative to the primary).
    pub import_url: Option<String>,
}

impl IdlFileEntry {
    /// An entry referring to `link` (not primary).
    pub fn with_link(link: &str) -> Self {
        IdlFileEntry {
            idl_file: IdlFileRef {
                reference: Some(link.to_string()),
                file_name: None,
            },
            is_primary: false,
            import_url: None,
        }
    }
}

/// The reference to the IDL text: a link (`$ref`, `file://` or `https://`) or the name of a
/// top-level `idl-files[]` entry already resolved by the caller into a link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IdlFileRef {
    #[serde(rename = "$ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(rename = "fileName", skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

impl IdlFileRef {
    /// The link to fetch: `$ref`, else `fileName`.
    pub fn link(&self) -> Option<&str> {
        self.reference.as_deref().or(self.file_name.as_deref())
    }
}

/// `defenseAttributes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DefenseAttributes {
    pub maximum_data_length: DataLength,
    pub allow_unknown_fields: bool,
}

impl Default for DefenseAttributes {
    fn default() -> Self {
        DefenseAttributes {
            maximum_data_length: DataLength::Bytes(DEFAULT_MAXIMUM_DATA_LENGTH),
            allow_unknown_fields: true,
        }
    }
}

/// The default `maximumDataLength`: 4 MB per message.
pub const DEFAULT_MAXIMUM_DATA_LENGTH: u64 = 4_194_304;

/// `maximumDataLength`: bytes per message, or `"any"`. The policy writes it as a number or as a
/// string holding a number (`"4194304"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataLength {
    Any,
    Bytes(u64),
}

impl Default for DataLength {
    fn default() -> Self {
        DataLength::Bytes(DEFAULT_MAXIMUM_DATA_LENGTH)
    }
}

impl Serialize for DataLength {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DataLength::Any => s.serialize_str("any"),
            DataLength::Bytes(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for DataLength {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(u64),
            Text(String),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "maximumDataLength must be a non-negative integer (bytes per message) or \"any\"",
            )
        })? {
            Raw::Num(n) => Ok(DataLength::Bytes(n)),
            Raw::Text(t) if t.eq_ignore_ascii_case("any") => Ok(DataLength::Any),
            Raw::Text(t) => t.trim().parse().map(DataLength::Bytes).map_err(|_| {
                serde::de::Error::custom(format!(
                    "maximumDataLength {t:?} is neither an integer (bytes per message) nor \"any\""
                ))
            }),
        }
    }
}

/// `signatureOverrides[]`: a signature enabled or disabled inside this profile's messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SignatureOverride {
    pub signature_id: u32,
    #[serde(default = "yes")]
    pub enabled: bool,
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let spec: GrpcProfileSpec = serde_json::from_str(
            r#"{"name":"profile1","associateUrls":true,
                "defenseAttributes":{"allowUnknownFields":false,"maximumDataLength":"100000"},
                "attackSignaturesCheck":true,"metacharElementCheck":false,
                "signatureOverrides":[{"signatureId":200001213,"enabled":false}],
                "idlFiles":[{"idlFile":{"$ref":"file:///p/demo.proto"},"isPrimary":true}]}"#,
        )
        .expect("valid profile");
        assert_eq!(
            spec.defense_attributes.maximum_data_length,
            DataLength::Bytes(100_000)
        );
        assert!(!spec.defense_attributes.allow_unknown_fields);
        assert!(!spec.metachars_enabled());
        assert_eq!(
            spec.idl_files[0].idl_file.link(),
            Some("file:///p/demo.proto")
        );
        assert!(!spec.signature_overrides[0].enabled);
    }

    #[test]
    fn defaults_follow_the_schema() {
        let spec: GrpcProfileSpec = serde_json::from_str(r#"{"name":"p"}"#).expect("valid");
        assert!(spec.associate_urls && spec.attack_signatures_check && spec.metachars_enabled());
        assert!(spec.defense_attributes.allow_unknown_fields);
        assert_eq!(
            spec.defense_attributes.maximum_data_length,
            DataLength::Bytes(DEFAULT_MAXIMUM_DATA_LENGTH)
        );
    }

    #[test]
    fn data_length_accepts_any_and_rejects_garbage() {
        let any: DataLength = serde_json::from_str(r#""any""#).expect("any");
        assert_eq!(any, DataLength::Any);
        let n: DataLength = serde_json::from_str("512").expect("number");
        assert_eq!(n, DataLength::Bytes(512));
        let err = serde_json::from_str::<DataLength>(r#""lots""#).expect_err("garbage");
        assert!(err.to_string().contains("maximumDataLength"), "{err}");
        assert!(serde_json::from_str::<DataLength>("-1").is_err());
    }
}
