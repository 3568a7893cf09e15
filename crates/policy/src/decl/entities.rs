//! The declaration's entity lists: URLs, parameters, headers, cookies, file types, character sets,
//! JSON/XML profiles, response pages and the override items they carry. Serde mirror of the JSON;
//! see `decl` for the conventions.

use serde::Deserialize;
use serde_json::Value;

use super::lenient::{self, Limit};
use super::{
    Base64Mode, CharsetType, DataType, Delete, EntityType, Level, PageAction, PageType,
    ParamLocation, Protocol, ValueType,
};

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureOverride {
    #[serde(default, deserialize_with = "lenient::uint")]
    pub signature_id: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    pub tag: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetacharOverride {
    pub metachar: String,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub is_allowed: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MethodOverride {
    pub method: String,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allowed: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContentProfileRef {
    pub name: Option<String>,
}

/// A parameter's `contentProfile` (valueType json/xml): `{"name": …}`, or `{"contentProfile":
/// {"name": …}}` as the format's schema nests it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamContentProfile {
    pub name: Option<String>,
    pub content_profile: Option<ContentProfileRef>,
}

impl ParamContentProfile {
    pub fn name(&self) -> Option<&str> {
        self.name
            .as_deref()
            .or_else(|| self.content_profile.as_ref()?.name.as_deref())
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlContentProfile {
    pub header_name: Option<String>,
    pub header_value: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub header_order: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub content_profile: Option<ContentProfileRef>,
}

/// One `crossDomainAllowedOrigin` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowedOrigin {
    #[serde(default, deserialize_with = "lenient::flag")]
    pub include_sub_domains: Option<bool>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub origin_name: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub origin_port: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub origin_protocol: Option<String>,
}

/// `urls[].html5CrossOriginRequestsEnforcement`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrossOrigin {
    #[serde(default, deserialize_with = "lenient::text")]
    pub enforcement_mode: Option<String>,
    pub cross_domain_allowed_origin: Option<Vec<AllowedOrigin>>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub allow_origins_enforcement_mode: Option<String>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_allowed_methods: Option<bool>,
    pub allowed_methods: Option<Vec<Value>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PositionalParameter {
    #[serde(default, deserialize_with = "lenient::uint")]
    pub url_segment_index: Option<u64>,
    pub parameter: Option<Parameter>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Url {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
    pub method: Option<String>,
    pub protocol: Option<Protocol>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub is_allowed: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub wildcard_order: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub wildcard_includes_slash: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub attack_signatures_check: Option<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub metachars_on_url_check: Option<bool>,
    pub metachar_overrides: Option<Vec<MetacharOverride>>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub methods_override_on_url_check: Option<bool>,
    pub method_overrides: Option<Vec<MethodOverride>>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub mandatory_body: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub perform_staging: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub disallow_file_upload_of_executables: Option<bool>,
    #[serde(rename = "html5CrossOriginRequestsEnforcement")]
    pub html5_cross_origin_requests_enforcement: Option<CrossOrigin>,
    pub url_content_profiles: Option<Vec<UrlContentProfile>>,
    pub positional_parameters: Option<Vec<PositionalParameter>>,
    pub operation_id: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: Option<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlRef {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    pub method: Option<String>,
    pub protocol: Option<Protocol>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parameter {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
    pub level: Option<Level>,
    pub url: Option<UrlRef>,
    pub parameter_location: Option<ParamLocation>,
    pub value_type: Option<ValueType>,
    /// The JSON/XML profile of a json/xml-valued parameter.
    pub content_profile: Option<ParamContentProfile>,
    pub data_type: Option<DataType>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub mandatory: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allow_empty_value: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allow_repeated_parameter_name: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_min_value_length: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_max_value_length: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub minimum_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub maximum_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_min_value: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_max_value: Option<bool>,
    #[serde(default, deserialize_with = "lenient::num")]
    pub minimum_value: Option<f64>,
    #[serde(default, deserialize_with = "lenient::num")]
    pub maximum_value: Option<f64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub exclusive_min: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub exclusive_max: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_multiple_of_value: Option<bool>,
    #[serde(default, deserialize_with = "lenient::num")]
    pub multiple_of: Option<f64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub enable_regular_expression: Option<bool>,
    pub regular_expression: Option<String>,
    pub static_values: Option<Vec<Value>>,
    pub parameter_enum_values: Option<Vec<Value>>,
    pub decode_value_as_base64: Option<Base64Mode>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub sensitive_parameter: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub attack_signatures_check: Option<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub metachars_on_parameter_value_check: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_metachars: Option<bool>,
    pub value_metachar_overrides: Option<Vec<MetacharOverride>>,
    pub name_metachar_overrides: Option<Vec<MetacharOverride>>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub wildcard_order: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub perform_staging: Option<bool>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: Option<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Named {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub mandatory: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allow_repeated_occurrences: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_signatures: Option<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    pub decode_value_as_base64: Option<Base64Mode>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub percent_decoding: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub url_normalization: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub html_normalization: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub normalization_violations: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub mask_value_in_logs: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allow_empty_value: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub wildcard_order: Option<u64>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cookie {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
    pub enforcement_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub attack_signatures_check: Option<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    pub decode_value_as_base64: Option<Base64Mode>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub mask_value_in_logs: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub wildcard_order: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub perform_staging: Option<bool>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filetype {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allowed: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_url_length: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub url_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_query_string_length: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub query_string_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_post_data_length: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub post_data_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub check_request_length: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub request_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub response_check: Option<bool>,
    #[serde(default, deserialize_with = "lenient::uint")]
    pub wildcard_order: Option<u64>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub perform_staging: Option<bool>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CharacterSet {
    pub character_set_type: Option<CharsetType>,
    pub character_set: Option<Vec<MetacharOverride>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDefense {
    pub maximum_array_length: Option<Limit>,
    pub maximum_structure_depth: Option<Limit>,
    #[serde(rename = "maximumTotalLengthOfJSONData")]
    pub maximum_total_length: Option<Limit>,
    pub maximum_value_length: Option<Limit>,
    #[serde(
        rename = "tolerateJSONParsingWarnings",
        default,
        deserialize_with = "lenient::flag"
    )]
    pub tolerate_parsing_warnings: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonProfile {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    pub defense_attributes: Option<JsonDefense>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub attack_signatures_check: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub metachar_element_check: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub handle_json_values_as_parameters: Option<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    pub metachar_overrides: Option<Vec<MetacharOverride>>,
    pub validation_files: Option<Vec<Value>>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub has_validation_files: Option<bool>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: Option<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct XmlDefense {
    #[serde(rename = "allowDTDs", default, deserialize_with = "lenient::flag")]
    pub allow_dtds: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allow_external_references: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub allow_processing_instructions: Option<bool>,
    #[serde(rename = "allowCDATA", default, deserialize_with = "lenient::flag")]
    pub allow_cdata: Option<bool>,
    pub maximum_document_depth: Option<Limit>,
    pub maximum_document_size: Option<Limit>,
    pub maximum_attribute_value_length: Option<Limit>,
    pub maximum_attributes_per_element: Option<Limit>,
    pub maximum_children_per_element: Option<Limit>,
    pub maximum_elements: Option<Limit>,
    pub maximum_name_length: Option<Limit>,
    pub maximum_namespace_length: Option<Limit>,
    #[serde(rename = "maximumNSDeclarations")]
    pub maximum_ns_declarations: Option<Limit>,
    pub maximum_leaf_text_length: Option<Limit>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub tolerate_leading_white_space: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub tolerate_close_tag_shorthand: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub tolerate_numeric_names: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct XmlProfile {
    #[serde(default, deserialize_with = "lenient::text")]
    pub name: Option<String>,
    pub defense_attributes: Option<XmlDefense>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub attack_signatures_check: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub metachar_element_check: Option<bool>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub metachar_attribute_check: Option<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    pub metachar_overrides: Option<Vec<MetacharOverride>>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub use_xml_response_page: Option<bool>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: Option<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponsePage {
    pub response_page_type: Option<PageType>,
    pub response_action_type: Option<PageAction>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub response_content: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub response_header: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub response_redirect_url: Option<String>,
    #[serde(default, deserialize_with = "lenient::flag")]
    pub ajax_enabled: Option<bool>,
    pub ajax_action_type: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub ajax_custom_content: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub ajax_popup_message: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub ajax_redirect_url: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub grpc_status_code: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub grpc_status_message: Option<String>,
}
