//! Reading a `policy` object into the declaration: serde's errors turned into the path of the
//! member at fault and plain wording, and the members the declaration does not know reported as
//! warnings (unknown, or accepted but not enforced) instead of rejected.

use serde_json::Value;

use crate::{PolicyError, decl, sections};

/// Reads a `policy` object into the declaration, collecting unknown fields as warnings.
pub fn read_decl(
    v: &Value,
    root: &str,
    warnings: &mut Vec<String>,
) -> Result<decl::Policy, PolicyError> {
    let mut unknown = Vec::new();
    let mut track = |p: serde_ignored::Path| unknown.push(path_text(root, &p));
    let de = serde_ignored::Deserializer::new(v, &mut track);
    let policy: decl::Policy = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let msg = friendly(&e.inner().to_string());
        if path == "." {
            PolicyError::invalid(root, msg)
        } else {
            PolicyError::invalid(format!("{root}.{path}"), msg)
        }
    })?;
    for p in unknown {
        let key = p.rsplit(['.', ']']).next().unwrap_or(&p).to_string();
        let top = p.strip_prefix(&format!("{root}.")).unwrap_or(&p);
        if sections::is_unenforced(top) || sections::KNOWN_FIELDS.contains(&key.as_str()) {
            warnings.push(format!("{p}: accepted but not enforced by this engine"));
        } else {
            let hint = sections::suggest(&key, sections::enforced())
                .map(|s| format!(" (did you mean \"{s}\"?)"))
                .unwrap_or_default();
            warnings.push(format!("{p}: unknown field ignored{hint}"));
        }
    }
    Ok(policy)
}

fn path_text(root: &str, p: &serde_ignored::Path) -> String {
    use serde_ignored::Path as P;
    match p {
        P::Root => root.to_string(),
        P::Seq { parent, index } => format!("{}[{index}]", path_text(root, parent)),
        P::Map { parent, key } => format!("{}.{key}", path_text(root, parent)),
        P::Some { parent } | P::NewtypeStruct { parent } | P::NewtypeVariant { parent } => {
            path_text(root, parent)
        }
    }
}

/// Rewrites serde's wording: "unknown variant `x`, expected `a` or `b`" →
/// `unknown value "x" (expected a or b)`.
fn friendly(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("unknown variant `")
        && let Some((value, expected)) = rest.split_once("`, expected ")
    {
        let expected = expected.replace('`', "");
        let expected = expected.strip_prefix("one of ").unwrap_or(&expected);
        return format!("unknown value \"{value}\" (expected {expected})");
    }
    msg.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_errors_name_the_path_and_the_choices() {
        let v = serde_json::json!({"name": "p", "enforcementMode": "sometimes"});
        let e = read_decl(&v, "policy", &mut Vec::new()).unwrap_err();
        assert_eq!(
            e,
            PolicyError::invalid(
                "policy.enforcementMode",
                "unknown value \"sometimes\" (expected blocking or transparent)"
            )
        );
        assert_eq!(
            e.to_string(),
            "policy.enforcementMode: unknown value \"sometimes\" (expected blocking or transparent)"
        );
    }

    #[test]
    fn unknown_fields_are_warnings_with_paths() {
        let v = serde_json::json!({"name": "p", "urls": [{"name": "/a", "colour": 1}], "bot-defense": {}});
        let mut w = Vec::new();
        read_decl(&v, "policy", &mut w).unwrap();
        assert!(
            w.iter()
                .any(|w| w.starts_with("policy.urls[0].colour: unknown field")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| w.starts_with("policy.bot-defense: accepted but not enforced")),
            "{w:?}"
        );
    }

    #[test]
    fn nested_type_errors_name_the_field() {
        let v = serde_json::json!({"name": "p", "filetypes": [{"name": "bak", "type": "bak"}]});
        let e = read_decl(&v, "policy", &mut Vec::new()).unwrap_err();
        assert_eq!(e.path(), Some("policy.filetypes[0].type"));
        assert!(
            e.to_string()
                .starts_with("policy.filetypes[0].type: unknown value \"bak\""),
            "{e}"
        );
    }

    #[test]
    fn limits_are_read_leniently_and_name_the_field_when_wrong() {
        use crate::decl::lenient::Limit;
        let limit = |v: serde_json::Value| {
            let doc =
                serde_json::json!({"name": "p", "header-settings": {"maximumHttpHeaderLength": v}});
            read_decl(&doc, "policy", &mut Vec::new())
                .map(|d| d.header_settings.and_then(|h| h.maximum_http_header_length))
        };
        assert_eq!(limit(serde_json::json!(8192)), Ok(Some(Limit::Max(8192))));
        assert_eq!(limit(serde_json::json!("8192")), Ok(Some(Limit::Max(8192))));
        assert_eq!(limit(serde_json::json!(" Any ")), Ok(Some(Limit::Any)));
        assert_eq!(limit(serde_json::Value::Null), Ok(None));
        assert_eq!(
            limit(serde_json::json!("big")),
            Err(PolicyError::invalid(
                "policy.header-settings.maximumHttpHeaderLength",
                "invalid limit \"big\" (expected a number or \"any\")"
            ))
        );
        assert_eq!(
            limit(serde_json::json!(-1)).map_err(|e| e.to_string()),
            Err("policy.header-settings.maximumHttpHeaderLength: negative limit -1".into())
        );
    }

    #[test]
    fn scalars_are_read_leniently_and_name_the_field_when_wrong() {
        let url = |member: serde_json::Value| {
            let doc = serde_json::json!({"name": "p", "urls": [member]});
            read_decl(&doc, "policy", &mut Vec::new()).map(|d| d.urls.unwrap().remove(0))
        };
        let read = |k: &str, v: serde_json::Value| url(serde_json::json!({ k: v }));
        let error = |k: &str, v: serde_json::Value| read(k, v).err().map(|e| e.to_string());
        for (v, want) in [
            (serde_json::json!(true), Some(true)),
            (serde_json::json!("false"), Some(false)),
            (serde_json::json!(" TRUE "), Some(true)),
            (serde_json::Value::Null, None),
        ] {
            let u = read("isAllowed", v.clone()).unwrap();
            assert_eq!(u.is_allowed.get(), want, "{v}");
        }
        assert_eq!(url(serde_json::json!({})).unwrap().is_allowed.get(), None);
        assert_eq!(
            error("isAllowed", serde_json::json!(1)),
            Some("policy.urls[0].isAllowed: invalid type: integer `1`, expected a boolean".into())
        );
        assert_eq!(
            error("isAllowed", serde_json::json!("yes")),
            Some("policy.urls[0].isAllowed: invalid value \"yes\" (expected true or false)".into())
        );
        for v in [
            serde_json::json!(3),
            serde_json::json!("3"),
            serde_json::json!(3.0),
        ] {
            let u = read("wildcardOrder", v.clone()).unwrap();
            assert_eq!(u.wildcard_order.get(), Some(3), "{v}");
        }
        assert_eq!(
            error("wildcardOrder", serde_json::json!(1.5)),
            Some(
                "policy.urls[0].wildcardOrder: invalid value 1.5 (expected a non-negative integer)"
                    .into()
            )
        );
        for (v, want) in [
            (serde_json::json!("/a"), "/a"),
            (serde_json::json!(1), "1"),
            (serde_json::json!(false), "false"),
        ] {
            let u = read("name", v.clone()).unwrap();
            assert_eq!(u.name.as_deref(), Some(want), "{v}");
        }
        assert_eq!(
            error("name", serde_json::json!(["/a"])),
            Some("policy.urls[0].name: invalid value [\"/a\"] (expected a string)".into())
        );
        let p = |v: serde_json::Value| {
            let doc =
                serde_json::json!({"name": "p", "parameters": [{"name": "n", "minimumValue": v}]});
            read_decl(&doc, "policy", &mut Vec::new())
                .map(|d| d.parameters.unwrap()[0].minimum_value.get())
                .map_err(|e| e.to_string())
        };
        assert_eq!(p(serde_json::json!("-2.5")), Ok(Some(-2.5)));
        assert_eq!(
            p(serde_json::json!("inf")),
            Err("policy.parameters[0].minimumValue: invalid number \"inf\"".into())
        );
    }
}
