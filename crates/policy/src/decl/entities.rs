//! The declaration's entity lists: URLs, parameters, headers, cookies, file types, character sets,
//! JSON/XML profiles, response pages and the override items they carry. Serde mirror of the JSON;
//! see `decl` for the conventions.

use serde::Deserialize;
use serde_json::Value;

use super::lenient::{Lenient, Limit};
use super::{
    Base64Mode, CharsetType, DataType, Delete, EntityType, Level, PageAction, PageType,
    ParamLocation, Protocol, ValueType,
};

/// An item of an entity list (`urls`, `parameters`, `headers`, `cookies`, `filetypes`): the
/// members every entity has (its name, explicit or wildcard and then its order among wildcards,
/// the `$action` that deletes it in a later layer) and its own. A macro rather than a struct
/// flattened into each: under serde's `flatten` the members go through a buffer, from which
/// unknown ones are dropped silently instead of reported as warnings.
macro_rules! entity {
    (pub struct $name:ident { $($own:tt)* }) => {
        #[derive(Clone, Debug, Default, Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            pub name: Lenient<String>,
            #[serde(rename = "type")]
            pub kind: Option<EntityType>,
            pub wildcard_order: Lenient<u64>,
            #[serde(rename = "$action")]
            pub action: Option<Delete>,
            $($own)*
        }
    };
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureOverride {
    pub signature_id: Lenient<u64>,
    pub enabled: Lenient<bool>,
    pub name: Lenient<String>,
    pub tag: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetacharOverride {
    pub metachar: String,
    pub is_allowed: Lenient<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MethodOverride {
    pub method: String,
    pub allowed: Lenient<bool>,
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
    pub header_order: Lenient<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub content_profile: Option<ContentProfileRef>,
}

/// One `crossDomainAllowedOrigin` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowedOrigin {
    pub include_sub_domains: Lenient<bool>,
    pub origin_name: Lenient<String>,
    pub origin_port: Lenient<String>,
    pub origin_protocol: Lenient<String>,
}

/// `urls[].html5CrossOriginRequestsEnforcement`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrossOrigin {
    pub enforcement_mode: Lenient<String>,
    pub cross_domain_allowed_origin: Option<Vec<AllowedOrigin>>,
    pub allow_origins_enforcement_mode: Lenient<String>,
    pub check_allowed_methods: Lenient<bool>,
    pub allowed_methods: Option<Vec<Value>>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PositionalParameter {
    pub url_segment_index: Lenient<u64>,
    pub parameter: Option<Parameter>,
}

entity! {
    pub struct Url {
        pub method: Option<String>,
        pub protocol: Option<Protocol>,
        pub is_allowed: Lenient<bool>,
        pub wildcard_includes_slash: Lenient<bool>,
        pub attack_signatures_check: Lenient<bool>,
        pub signature_overrides: Option<Vec<SignatureOverride>>,
        pub metachars_on_url_check: Lenient<bool>,
        pub metachar_overrides: Option<Vec<MetacharOverride>>,
        pub methods_override_on_url_check: Lenient<bool>,
        pub method_overrides: Option<Vec<MethodOverride>>,
        pub mandatory_body: Lenient<bool>,
        pub perform_staging: Lenient<bool>,
        pub disallow_file_upload_of_executables: Lenient<bool>,
        #[serde(rename = "html5CrossOriginRequestsEnforcement")]
        pub html5_cross_origin_requests_enforcement: Option<CrossOrigin>,
        pub url_content_profiles: Option<Vec<UrlContentProfile>>,
        pub positional_parameters: Option<Vec<PositionalParameter>>,
        pub operation_id: Option<String>,
        pub description: Lenient<String>,
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlRef {
    pub name: Lenient<String>,
    pub method: Option<String>,
    pub protocol: Option<Protocol>,
    #[serde(rename = "type")]
    pub kind: Option<EntityType>,
}

entity! {
    pub struct Parameter {
        pub level: Option<Level>,
        pub url: Option<UrlRef>,
        pub parameter_location: Option<ParamLocation>,
        pub value_type: Option<ValueType>,
        /// The JSON/XML profile of a json/xml-valued parameter.
        pub content_profile: Option<ParamContentProfile>,
        pub data_type: Option<DataType>,
        pub mandatory: Lenient<bool>,
        pub allow_empty_value: Lenient<bool>,
        pub allow_repeated_parameter_name: Lenient<bool>,
        pub check_min_value_length: Lenient<bool>,
        pub check_max_value_length: Lenient<bool>,
        pub minimum_length: Lenient<u64>,
        pub maximum_length: Lenient<u64>,
        pub check_min_value: Lenient<bool>,
        pub check_max_value: Lenient<bool>,
        pub minimum_value: Lenient<f64>,
        pub maximum_value: Lenient<f64>,
        pub exclusive_min: Lenient<bool>,
        pub exclusive_max: Lenient<bool>,
        pub check_multiple_of_value: Lenient<bool>,
        pub multiple_of: Lenient<f64>,
        pub enable_regular_expression: Lenient<bool>,
        pub regular_expression: Option<String>,
        pub static_values: Option<Vec<Value>>,
        pub parameter_enum_values: Option<Vec<Value>>,
        pub decode_value_as_base64: Option<Base64Mode>,
        pub sensitive_parameter: Lenient<bool>,
        pub attack_signatures_check: Lenient<bool>,
        pub signature_overrides: Option<Vec<SignatureOverride>>,
        pub metachars_on_parameter_value_check: Lenient<bool>,
        pub check_metachars: Lenient<bool>,
        pub value_metachar_overrides: Option<Vec<MetacharOverride>>,
        pub name_metachar_overrides: Option<Vec<MetacharOverride>>,
        pub perform_staging: Lenient<bool>,
        pub description: Lenient<String>,
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Named {
    pub name: Lenient<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

entity! {
    pub struct Header {
        pub mandatory: Lenient<bool>,
        pub allow_repeated_occurrences: Lenient<bool>,
        pub check_signatures: Lenient<bool>,
        pub signature_overrides: Option<Vec<SignatureOverride>>,
        pub decode_value_as_base64: Option<Base64Mode>,
        pub percent_decoding: Lenient<bool>,
        pub url_normalization: Lenient<bool>,
        pub html_normalization: Lenient<bool>,
        pub normalization_violations: Lenient<bool>,
        pub mask_value_in_logs: Lenient<bool>,
        pub allow_empty_value: Lenient<bool>,
    }
}

entity! {
    pub struct Cookie {
        pub enforcement_type: Option<String>,
        pub attack_signatures_check: Lenient<bool>,
        pub signature_overrides: Option<Vec<SignatureOverride>>,
        pub decode_value_as_base64: Option<Base64Mode>,
        pub mask_value_in_logs: Lenient<bool>,
        pub perform_staging: Lenient<bool>,
    }
}

entity! {
    pub struct Filetype {
        pub allowed: Lenient<bool>,
        pub check_url_length: Lenient<bool>,
        pub url_length: Lenient<u64>,
        pub check_query_string_length: Lenient<bool>,
        pub query_string_length: Lenient<u64>,
        pub check_post_data_length: Lenient<bool>,
        pub post_data_length: Lenient<u64>,
        pub check_request_length: Lenient<bool>,
        pub request_length: Lenient<u64>,
        pub response_check: Lenient<bool>,
        pub perform_staging: Lenient<bool>,
    }
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
    #[serde(rename = "tolerateJSONParsingWarnings")]
    pub tolerate_parsing_warnings: Lenient<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonProfile {
    pub name: Lenient<String>,
    pub defense_attributes: Option<JsonDefense>,
    pub attack_signatures_check: Lenient<bool>,
    pub metachar_element_check: Lenient<bool>,
    pub handle_json_values_as_parameters: Lenient<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    pub metachar_overrides: Option<Vec<MetacharOverride>>,
    pub validation_files: Option<Vec<Value>>,
    pub has_validation_files: Lenient<bool>,
    pub description: Lenient<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct XmlDefense {
    #[serde(rename = "allowDTDs")]
    pub allow_dtds: Lenient<bool>,
    pub allow_external_references: Lenient<bool>,
    pub allow_processing_instructions: Lenient<bool>,
    #[serde(rename = "allowCDATA")]
    pub allow_cdata: Lenient<bool>,
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
    pub tolerate_leading_white_space: Lenient<bool>,
    pub tolerate_close_tag_shorthand: Lenient<bool>,
    pub tolerate_numeric_names: Lenient<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct XmlProfile {
    pub name: Lenient<String>,
    pub defense_attributes: Option<XmlDefense>,
    pub attack_signatures_check: Lenient<bool>,
    pub metachar_element_check: Lenient<bool>,
    pub metachar_attribute_check: Lenient<bool>,
    pub signature_overrides: Option<Vec<SignatureOverride>>,
    pub metachar_overrides: Option<Vec<MetacharOverride>>,
    pub use_xml_response_page: Lenient<bool>,
    pub description: Lenient<String>,
    #[serde(rename = "$action")]
    pub action: Option<Delete>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponsePage {
    pub response_page_type: Option<PageType>,
    pub response_action_type: Option<PageAction>,
    pub response_content: Lenient<String>,
    pub response_header: Lenient<String>,
    pub response_redirect_url: Lenient<String>,
    pub ajax_enabled: Lenient<bool>,
    pub ajax_action_type: Option<String>,
    pub ajax_custom_content: Lenient<String>,
    pub ajax_popup_message: Lenient<String>,
    pub ajax_redirect_url: Lenient<String>,
    pub grpc_status_code: Lenient<String>,
    pub grpc_status_message: Lenient<String>,
}
