//! Policy templates shipped as data under `policies/templates/`: the first layer of every
//! policy. Known template names of the systems we stand in for map to the nearest shipped
//! template with a warning; any other name is an error (a typo must not silently change the
//! policy's defaults).

use serde_json::{Map, Value};

use crate::PolicyError;

/// One shipped template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateId {
    NginxBase,
    ApiSecurity,
    RapidDeployment,
    Fundamental,
    Comprehensive,
}

impl TemplateId {
    #[inline]
    pub fn name(self) -> &'static str {
        match self {
            TemplateId::NginxBase => "POLICY_TEMPLATE_NGINX_BASE",
            TemplateId::ApiSecurity => "POLICY_TEMPLATE_API_SECURITY",
            TemplateId::RapidDeployment => "POLICY_TEMPLATE_RAPID_DEPLOYMENT",
            TemplateId::Fundamental => "POLICY_TEMPLATE_FUNDAMENTAL",
            TemplateId::Comprehensive => "POLICY_TEMPLATE_COMPREHENSIVE",
        }
    }

    fn source(self) -> &'static str {
        match self {
            TemplateId::NginxBase => {
                include_str!("../../../policies/templates/nginx_base.json")
            }
            TemplateId::ApiSecurity => {
                include_str!("../../../policies/templates/api_security.json")
            }
            TemplateId::RapidDeployment => {
                include_str!("../../../policies/templates/rapid_deployment.json")
            }
            TemplateId::Fundamental => {
                include_str!("../../../policies/templates/fundamental.json")
            }
            TemplateId::Comprehensive => {
                include_str!("../../../policies/templates/comprehensive.json")
            }
        }
    }

    /// The template's `policy` object.
    pub fn policy(self) -> Map<String, Value> {
        serde_json::from_str::<Value>(self.source())
            .ok()
            .and_then(|v| v.get("policy").and_then(Value::as_object).cloned())
            .unwrap_or_default()
    }
}

/// The templates shipped under `policies/templates/`.
pub const SHIPPED: &[TemplateId] = &[
    TemplateId::NginxBase,
    TemplateId::ApiSecurity,
    TemplateId::RapidDeployment,
    TemplateId::Fundamental,
    TemplateId::Comprehensive,
];

/// Other template names of the systems we stand in for, and the shipped template nearest to each.
const MAPPED: &[(&str, TemplateId)] = &[
    (
        "POLICY_TEMPLATE_RAPID_DEPLOYMENT_HTTP",
        TemplateId::RapidDeployment,
    ),
    (
        "POLICY_TEMPLATE_RAPID_DEPLOYMENT_HTTPS",
        TemplateId::RapidDeployment,
    ),
    (
        "POLICY_TEMPLATE_RAPID_DEPLOYMENT_PB",
        TemplateId::RapidDeployment,
    ),
    ("POLICY_TEMPLATE_PASSIVE", TemplateId::RapidDeployment),
    ("POLICY_TEMPLATE_BLANK", TemplateId::RapidDeployment),
    (
        "POLICY_TEMPLATE_MINIMAL_SECURITY",
        TemplateId::RapidDeployment,
    ),
    ("POLICY_TEMPLATE_BEHAVIORAL_WAF", TemplateId::Fundamental),
    ("POLICY_TEMPLATE_RATING_BASED", TemplateId::NginxBase),
    ("POLICY_TEMPLATE_OWASP_TOP10", TemplateId::Fundamental),
    ("POLICY_TEMPLATE_PCI_COMPLIANCE", TemplateId::Comprehensive),
    (
        "POLICY_TEMPLATE_VULNERABILITY_ASSESSMENT",
        TemplateId::Fundamental,
    ),
    ("POLICY_TEMPLATE_GRAPHQL", TemplateId::ApiSecurity),
];

/// The application-ready templates of the systems we stand in for (`POLICY_TEMPLATE_<family>…`,
/// one per application and version): all map to the fundamental template.
const APPLICATION_FAMILIES: &[&str] = &[
    "ACTIVESYNC",
    "DOTNETNUKE",
    "DRUPAL",
    "JOOMLA",
    "LOTUSDOMINO",
    "ORACLE",
    "OWA_EXCHANGE",
    "PEOPLESOFT",
    "SAP_NETWEAVER",
    "SHAREPOINT",
    "WORDPRESS",
];

/// Picks the template for `name`; the second value is a warning when the name was mapped.
/// An unknown name is an error naming the templates there are.
pub fn select(name: Option<&str>) -> Result<(TemplateId, Option<String>), PolicyError> {
    let Some(name) = name else {
        return Ok((TemplateId::NginxBase, None));
    };
    if let Some(t) = SHIPPED.iter().find(|t| t.name() == name) {
        return Ok((*t, None));
    }
    let mapped = MAPPED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
    let application = name.strip_prefix("POLICY_TEMPLATE_").is_some_and(|rest| {
        APPLICATION_FAMILIES
            .iter()
            .any(|f| rest == *f || rest.starts_with(&format!("{f}_")))
    });
    if let Some(t) = mapped.or(application.then_some(TemplateId::Fundamental)) {
        return Ok((
            t,
            Some(format!(
                "policy.template.name: template \"{name}\" is not shipped; using {} instead",
                t.name()
            )),
        ));
    }
    let known = SHIPPED
        .iter()
        .map(|t| t.name())
        .chain(MAPPED.iter().map(|(n, _)| *n));
    let hint = crate::sections::suggest(name, known)
        .map(|s| format!("did you mean {s}? "))
        .unwrap_or_default();
    Err(PolicyError::invalid(
        "policy.template.name",
        format!(
            "unknown template \"{name}\" ({hint}shipped: {})",
            SHIPPED
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_template_parses_and_names_itself() {
        for t in SHIPPED {
            let p = t.policy();
            assert_eq!(p["template"]["name"], t.name(), "{t:?}");
            assert!(p["urls"].as_array().is_some_and(|u| u.len() == 2));
        }
    }

    #[test]
    fn mapped_names_warn() {
        assert_eq!(
            select(Some("POLICY_TEMPLATE_NGINX_BASE")),
            Ok((TemplateId::NginxBase, None))
        );
        let (t, w) = select(Some("POLICY_TEMPLATE_PASSIVE")).expect("mapped");
        assert_eq!(t, TemplateId::RapidDeployment);
        assert!(w.is_some_and(|w| w.contains("POLICY_TEMPLATE_PASSIVE")));
        let (t, _) = select(Some("POLICY_TEMPLATE_SHAREPOINT_2016_HTTPS")).expect("application");
        assert_eq!(t, TemplateId::Fundamental);
    }

    #[test]
    fn a_misspelt_template_is_an_error_with_a_suggestion() {
        let e = select(Some("POLICY_TEMPLATE_API_SECURTY")).expect_err("typo");
        assert_eq!(e.path(), Some("policy.template.name"));
        assert!(
            e.to_string().starts_with("policy.template.name: unknown template \"POLICY_TEMPLATE_API_SECURTY\" (did you mean POLICY_TEMPLATE_API_SECURITY?"),
            "{e}"
        );
        assert!(select(Some("nginx")).is_err());
    }
}
