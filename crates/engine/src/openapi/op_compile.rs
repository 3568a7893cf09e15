//! One operation of a spec compiled: parameters (path-level merged into operation-level, `$ref`s
//! followed, 2.0 inline schemas, 3.x style/explode), request bodies per content type (JSON schema,
//! form fields) and the query API keys of `apiKey` security schemes.

use super::OpenApiError;
use super::compile::PendingOp;
use super::load::ApiSpec;
use super::load::SpecVersion;
use super::operation::{BodyKind, Content};
use super::param::{Location, Param, Style, type_label};
use super::schema::{SchemaCompiler, T_ARR, T_OBJ};
use serde_json::Value;

#[allow(clippy::too_many_arguments)]
pub(crate) fn compile_op(
    sc: &mut SchemaCompiler<'_>,
    doc: usize,
    at: &str,
    template: &str,
    method: &str,
    op: &Value,
    shared: Option<&Value>,
    item_at: &str,
    root: &Value,
) -> Result<PendingOp, OpenApiError> {
    let spec = sc.spec;
    let v2 = spec.version == SpecVersion::Swagger2;
    // Operation parameters override path-level ones with the same (name, in).
    let mut raw: Vec<(usize, String, &Value)> = Vec::new();
    for (list, list_at) in [
        (shared, format!("{item_at}/parameters")),
        (op.get("parameters"), format!("{at}/parameters")),
    ] {
        let Some(Value::Array(list)) = list else {
            continue;
        };
        for (i, p) in list.iter().enumerate() {
            let (pdoc, pat, p) = spec.deref(doc, &format!("{list_at}/{i}"), p)?;
            raw.retain(|(_, _, q)| (q.get("name"), q.get("in")) != (p.get("name"), p.get("in")));
            raw.push((pdoc, pat, p));
        }
    }
    let mut params = Vec::new();
    let mut form_fields = Vec::new();
    let mut body_schema = None;
    let mut body_required = false;
    for (pdoc, pat, p) in raw {
        let link = spec.doc_link(pdoc);
        let name = p
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| OpenApiError::new(link, &pat, "parameter without a name"))?;
        let loc = p.get("in").and_then(Value::as_str).unwrap_or("");
        if v2 && loc == "body" {
            body_required = p.get("required") == Some(&Value::Bool(true));
            if let Some(s) = p.get("schema") {
                body_schema = Some(sc.compile(pdoc, &format!("{pat}/schema"), s)?);
            }
            continue;
        }
        // OpenAPI 3: these header parameters "SHALL be ignored" (content negotiation and auth).
        let ignored = ["accept", "content-type", "authorization"];
        if !v2 && loc == "header" && ignored.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            continue;
        }
        let location = Location::parse(loc).ok_or_else(|| {
            OpenApiError::new(
                link,
                &format!("{pat}/in"),
                format!("unknown parameter location {loc:?}"),
            )
        })?;
        let param = compile_param(sc, pdoc, &pat, name, location, p)?;
        if location == Location::Form {
            form_fields.push(param);
        } else {
            params.extend(explode_object(sc, param));
        }
    }
    let mut contents = Vec::new();
    if v2 {
        let consumes = op
            .get("consumes")
            .or_else(|| root.get("consumes"))
            .and_then(Value::as_array);
        let mut types: Vec<String> = consumes
            .map(|c| {
                c.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_ascii_lowercase)
                    .collect()
            })
            .unwrap_or_default();
        // formData travels as a form (urlencoded or multipart), a body parameter as anything else.
        let is_form_type = |t: &String| is_form(t) || t == "multipart/form-data";
        let has_form = !form_fields.is_empty();
        types.retain(|t| is_form_type(t) == has_form);
        if types.is_empty() {
            let default = if has_form {
                "application/x-www-form-urlencoded"
            } else {
                "application/json"
            };
            types.push(default.into());
        }
        body_required |= form_fields.iter().any(|f| f.required);
        if body_schema.is_some() || !form_fields.is_empty() {
            for media in types {
                let kind = body_kind(&media, body_schema, &form_fields, false);
                contents.push(Content { media, kind });
            }
        }
    } else if let Some(rb) = op.get("requestBody") {
        let (rdoc, rat, rb) = spec.deref(doc, &format!("{at}/requestBody"), rb)?;
        body_required = rb.get("required") == Some(&Value::Bool(true));
        if let Some(Value::Object(content)) = rb.get("content") {
            for (media, mt) in content {
                let mat = format!(
                    "{rat}/content/{}",
                    media.replace('~', "~0").replace('/', "~1")
                );
                let schema = match mt.get("schema") {
                    Some(s) => Some(sc.compile(rdoc, &format!("{mat}/schema"), s)?),
                    None => None,
                };
                let media = media
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                let (fields, allow_unknown) = match (is_form(&media), mt.get("schema")) {
                    (true, Some(s)) => form_from_schema(sc, rdoc, &format!("{mat}/schema"), s)?,
                    _ => (Vec::new(), true),
                };
                let kind = body_kind(&media, schema, &fields, allow_unknown);
                contents.push(Content { media, kind });
            }
        }
    }
    Ok(PendingOp {
        method: method.to_string(),
        template: template.to_string(),
        operation_id: op
            .get("operationId")
            .and_then(Value::as_str)
            .map(str::to_string),
        params,
        body_required,
        contents,
    })
}

fn is_form(media: &str) -> bool {
    media == "application/x-www-form-urlencoded"
}

fn body_kind(media: &str, schema: Option<u32>, fields: &[Param], allow_unknown: bool) -> BodyKind {
    if media == "application/json" || media.ends_with("+json") || media == "text/json" {
        BodyKind::Json(schema)
    } else if is_form(media) {
        BodyKind::Form {
            fields: fields.to_vec(),
            allow_unknown,
        }
    } else {
        BodyKind::Opaque
    }
}

fn compile_param(
    sc: &mut SchemaCompiler<'_>,
    doc: usize,
    at: &str,
    name: &str,
    location: Location,
    p: &Value,
) -> Result<Param, OpenApiError> {
    let v2 = sc.spec.version == SpecVersion::Swagger2;
    let required = location == Location::Path || p.get("required") == Some(&Value::Bool(true));
    let allow_empty = p.get("allowEmptyValue") == Some(&Value::Bool(true));
    let schema = if v2 {
        // 2.0: the parameter object itself carries type, format, items, enum, minimum, ...
        Some(sc.compile(doc, at, p)?)
    } else if let Some(s) = p.get("schema") {
        Some(sc.compile(doc, &format!("{at}/schema"), s)?)
    } else {
        None // `content`-encoded parameter: presence only
    };
    let style = if v2 {
        match p.get("collectionFormat").and_then(Value::as_str) {
            Some("multi") => Style::Repeat,
            Some("ssv") => Style::Delimited(b' '),
            Some("tsv") => Style::Delimited(b'\t'),
            Some("pipes") => Style::Delimited(b'|'),
            _ => Style::Delimited(b','),
        }
    } else {
        let default = if matches!(location, Location::Query | Location::Cookie) {
            "form"
        } else {
            "simple"
        };
        let style = p.get("style").and_then(Value::as_str).unwrap_or(default);
        let explode = p
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(style == "form");
        match style {
            "deepObject" => Style::Object,
            "form" if explode => Style::Repeat,
            "spaceDelimited" => Style::Delimited(b' '),
            "pipeDelimited" => Style::Delimited(b'|'),
            _ => Style::Delimited(b','),
        }
    };
    // Only arrays (and exploded objects) may repeat; a repeated scalar is VIOL_PARAMETER_REPEATED.
    let hint = schema.map_or(0, |id| sc.out.type_hint(id));
    let style = match style {
        Style::Repeat if hint & (T_ARR | T_OBJ) == 0 => Style::Delimited(b','),
        other => other,
    };
    let type_label = type_label(&sc.out, schema);
    Ok(Param {
        name: name.to_string(),
        location,
        required,
        allow_empty,
        style,
        schema,
        type_label,
    })
}

/// An exploded `form` object parameter is sent as one query pair per property.
fn explode_object(sc: &SchemaCompiler<'_>, p: Param) -> Vec<Param> {
    let Some(id) = p.schema else { return vec![p] };
    let hint = sc.out.type_hint(id);
    if p.style != Style::Repeat || hint & T_OBJ == 0 || p.location != Location::Query {
        return vec![p];
    }
    let node = sc.out.node(id);
    let node = node
        .all_of
        .first()
        .filter(|_| node.properties.is_empty())
        .map_or(node, |&c| sc.out.node(c));
    if node.properties.is_empty() {
        return vec![Param {
            style: Style::Object,
            ..p
        }];
    }
    node.properties
        .iter()
        .map(|(name, sid)| Param {
            name: name.to_string(),
            location: p.location,
            required: p.required && node.required.iter().any(|r| r == name),
            allow_empty: p.allow_empty,
            style: Style::Delimited(b','),
            schema: Some(*sid),
            type_label: type_label(&sc.out, Some(*sid)),
        })
        .collect()
}

/// Form fields from an object schema: one parameter per property.
fn form_from_schema(
    sc: &mut SchemaCompiler<'_>,
    doc: usize,
    at: &str,
    schema: &Value,
) -> Result<(Vec<Param>, bool), OpenApiError> {
    let (sdoc, sat, s) = sc.spec.deref(doc, at, schema)?;
    let mut fields = Vec::new();
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = s.get("properties") {
        for (name, ps) in props {
            let pat = format!(
                "{sat}/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            );
            let id = sc.compile(sdoc, &pat, ps)?;
            let style = if sc.out.type_hint(id) & T_ARR != 0 {
                Style::Repeat
            } else {
                Style::Delimited(b',')
            };
            fields.push(Param {
                name: name.clone(),
                location: Location::Form,
                required: required.contains(&name.as_str()),
                allow_empty: true,
                style,
                schema: Some(id),
                type_label: type_label(&sc.out, Some(id)),
            });
        }
    }
    let allow_unknown = matches!(
        s.get("additionalProperties"),
        Some(Value::Bool(true)) | Some(Value::Object(_))
    ) || (fields.is_empty() && s.get("properties").is_none());
    Ok((fields, allow_unknown))
}

/// Names of `apiKey` security schemes sent in the query: legal on every operation.
pub(crate) fn query_api_keys(spec: &ApiSpec) -> Vec<String> {
    let root = spec.root();
    let schemes = match spec.version {
        SpecVersion::Swagger2 => root.get("securityDefinitions"),
        _ => root
            .get("components")
            .and_then(|c| c.get("securitySchemes")),
    };
    let Some(Value::Object(schemes)) = schemes else {
        return Vec::new();
    };
    let mut names: Vec<String> = schemes
        .values()
        .filter(|s| s.get("type").and_then(Value::as_str) == Some("apiKey"))
        .filter(|s| s.get("in").and_then(Value::as_str) == Some("query"))
        .filter_map(|s| s.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

pub(crate) fn api_key_param(name: &str) -> Param {
    Param {
        name: name.to_string(),
        location: Location::Query,
        required: false,
        allow_empty: false,
        style: Style::Delimited(b','),
        schema: None,
        type_label: "apiKey".into(),
    }
}
