//! Block replies from `response-pages` (default, ajax, grpc; custom status line, headers and body
//! with the support-id placeholder; redirects).

use crate::policy::PolicyError;
use crate::policy::decl;
use crate::policy::decl::templates::TemplateId;
use crate::response::default_grpc_reply;
use crate::verdict::BlockReply;

/// The block replies from `response-pages` (default, ajax, grpc).
pub fn pages(
    d: &decl::Policy,
    t: TemplateId,
) -> Result<(BlockReply, Option<BlockReply>, BlockReply), PolicyError> {
    let mut default = if t == TemplateId::ApiSecurity {
        BlockReply::ApiJson
    } else {
        BlockReply::DefaultPage
    };
    let mut ajax = None;
    let mut grpc = default_grpc_reply();
    for (i, p) in d.response_pages.iter().flatten().enumerate() {
        let path = format!("policy.response-pages[{i}]");
        let action = p.response_action_type.unwrap_or(decl::PageAction::Default);
        match p.response_page_type.unwrap_or(decl::PageType::Default) {
            decl::PageType::Default => {
                if let Some(r) = custom(p, action, &path)? {
                    default = r;
                }
            }
            decl::PageType::Ajax if p.ajax_enabled.or(false) => {
                let body = p
                    .ajax_custom_content
                    .cloned()
                    .or_else(|| p.ajax_popup_message.cloned())
                    .unwrap_or_default();
                ajax = Some(match p.ajax_action_type.as_deref() {
                    Some("redirect") => BlockReply::Redirect {
                        location: p.ajax_redirect_url.cloned().unwrap_or_default(),
                    },
                    _ => BlockReply::Custom {
                        status: 200,
                        headers: vec![(
                            "content-type".into(),
                            "application/json; charset=utf-8".into(),
                        )],
                        body,
                    },
                });
            }
            decl::PageType::Grpc => {
                if let Some(code) = p.grpc_status_code.as_ref() {
                    let status = grpc_code(code).ok_or_else(|| PolicyError::invalid(format!("{path}.grpcStatusCode"), format!("unknown value \"{code}\" (expected a gRPC status name or number 0-16)")))?;
                    let message = p.grpc_status_message.cloned().unwrap_or_else(|| {
                        "Request Rejected. Your support ID is: <%TS.request.ID()%>".into()
                    });
                    grpc = BlockReply::Grpc { status, message };
                }
            }
            _ => {}
        }
    }
    Ok((default, ajax, grpc))
}

fn custom(
    p: &decl::ResponsePage,
    action: decl::PageAction,
    path: &str,
) -> Result<Option<BlockReply>, PolicyError> {
    Ok(match action {
        decl::PageAction::Custom => {
            let (status, headers) = parse_header_block(p.response_header.as_deref().unwrap_or(""))
                .map_err(|e| {
                    PolicyError::invalid(format!("{path}.responseHeader"), e.to_string())
                })?;
            Some(BlockReply::Custom {
                status,
                headers,
                body: p.response_content.cloned().unwrap_or_default(),
            })
        }
        decl::PageAction::Redirect => Some(BlockReply::Redirect {
            location: p.response_redirect_url.cloned().ok_or_else(|| {
                PolicyError::invalid(
                    format!("{path}.responseRedirectUrl"),
                    "missing for a redirect page",
                )
            })?,
        }),
        _ => None,
    })
}

/// `HTTP/1.1 403 Forbidden\r\nContent-Type: ...` → status and headers.
fn parse_header_block(s: &str) -> Result<(u16, Vec<(String, String)>), String> {
    let mut status = 200;
    let mut headers = Vec::new();
    for (i, line) in s.split("\r\n").flat_map(|l| l.split('\n')).enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if i == 0 && line.starts_with("HTTP/") {
            status = line
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .filter(|c| (100..600).contains(c))
                .ok_or_else(|| format!("invalid status line \"{line}\""))?;
            continue;
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("invalid header line \"{line}\""))?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok((status, headers))
}

fn grpc_code(s: &str) -> Option<u32> {
    const NAMES: &[&str] = &[
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    s.parse::<u32>().ok().filter(|n| *n <= 16).or_else(|| {
        NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(s))
            .map(|p| p as u32)
    })
}
