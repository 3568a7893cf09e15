//! Checks on the user's own entities, before layering, so error paths index the user's document:
//! names, methods, regular expressions, lengths, metacharacters, XFF header names, staging time.

use crate::policy::PolicyError;
use crate::policy::decl;

/// Checks the user's own entities (paths index the user's document, not the merged one).
pub fn check_body_entities(b: &decl::Policy) -> Result<(), PolicyError> {
    for (i, u) in b.urls.iter().flatten().enumerate() {
        let p = format!("policy.urls[{i}]");
        let name = u
            .name
            .as_deref()
            .ok_or_else(|| PolicyError::invalid(format!("{p}.name"), "missing"))?;
        if u.action.is_none() {
            if name.is_empty() {
                return Err(PolicyError::invalid(format!("{p}.name"), "empty URL"));
            }
            if let Some(m) = &u.method
                && !valid_method(m)
            {
                return Err(PolicyError::invalid(
                    format!("{p}.method"),
                    format!("invalid method \"{m}\""),
                ));
            }
        }
    }
    for (i, p) in b.parameters.iter().flatten().enumerate() {
        let path = format!("policy.parameters[{i}]");
        if p.name.is_none() {
            return Err(PolicyError::invalid(format!("{path}.name"), "missing"));
        }
        if p.level == Some(decl::Level::Url)
            && p.url.as_ref().and_then(|u| u.name.as_ref()).is_none()
        {
            return Err(PolicyError::invalid(
                format!("{path}.url"),
                "a parameter with \"level\": \"url\" needs \"url\": {\"name\": ...}",
            ));
        }
        if let Some(re) = &p.regular_expression
            && p.enable_regular_expression.or(false)
            && let Err(e) = regex::RegexBuilder::new(re).size_limit(1 << 20).build()
        {
            return Err(PolicyError::invalid(
                format!("{path}.regularExpression"),
                format!("invalid regular expression: {e}"),
            ));
        }
        if let (Some(min), Some(max)) = (p.minimum_length.get(), p.maximum_length.get())
            && p.check_min_value_length.or(false)
            && p.check_max_value_length.or(false)
            && min > max
        {
            return Err(PolicyError::invalid(
                path,
                format!("minimumLength {min} is above maximumLength {max}"),
            ));
        }
    }
    for (i, m) in b.methods.iter().flatten().enumerate() {
        match m.name.as_ref() {
            Some(n) if valid_method(n) => {}
            Some(n) => {
                return Err(PolicyError::invalid(
                    format!("policy.methods[{i}].name"),
                    format!("invalid method \"{n}\""),
                ));
            }
            None => {
                return Err(PolicyError::invalid(
                    format!("policy.methods[{i}].name"),
                    "missing",
                ));
            }
        }
    }
    for (i, s) in b.signatures.iter().flatten().enumerate() {
        if s.signature_id.is_none() && s.name.is_none() && s.tag.is_none() {
            return Err(PolicyError::invalid(
                format!("policy.signatures[{i}].signatureId"),
                "missing",
            ));
        }
    }
    for (i, c) in b.character_sets.iter().flatten().enumerate() {
        for (j, m) in c.character_set.iter().flatten().enumerate() {
            if crate::policy::compile::charset::parse_metachar(&m.metachar).is_none() {
                return Err(PolicyError::invalid(
                    format!("policy.character-sets[{i}].characterSet[{j}].metachar"),
                    format!(
                        "invalid value \"{}\" (expected 0xNN or one character)",
                        m.metachar
                    ),
                ));
            }
        }
    }
    if let Some(general) = &b.general {
        for (i, h) in general.custom_xff_headers.iter().flatten().enumerate() {
            if http::HeaderName::from_bytes(h.as_bytes()).is_err() {
                return Err(PolicyError::invalid(
                    format!("policy.general.customXffHeaders[{i}]"),
                    format!("invalid header name \"{h}\""),
                ));
            }
        }
    }
    if let Some(dt) = b
        .signature_settings
        .as_ref()
        .and_then(|s| s.staging_certification_datetime.as_deref())
        && !dt.is_empty()
        && !looks_like_iso8601(dt)
    {
        return Err(PolicyError::invalid(
            "policy.signature-settings.stagingCertificationDatetime",
            format!("invalid value \"{dt}\" (expected ISO 8601, e.g. 2024-01-31T00:00:00Z)"),
        ));
    }
    Ok(())
}

fn valid_method(m: &str) -> bool {
    m == "*"
        || (!m.is_empty()
            && m.len() <= 32
            && m.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
}

fn looks_like_iso8601(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10 && b[4] == b'-' && b[7] == b'-' && b[..4].iter().all(u8::is_ascii_digit)
}
