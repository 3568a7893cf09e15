//! The WAF policies of a tenant, through `mgmt::asm` (no policy store or fetcher of our own):
//! before the tenant's object write, declared `WAF_Policy` items are pulled (`url` through
//! `support::fetch`, unless `ignoreChanges` and already deployed; `file` from the downloads
//! directory; inline `policy`) and stored with `asm::put_policy`, which compiles them; after the
//! write, each is applied and attached to exactly its virtuals, `bigip` policies gain the
//! tenant's virtuals, and policies the tenant no longer declares are deleted.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::classes::WafSource;
use super::plan::Plan;
use crate::asm;
use portcullis_admin::MgmtState;
use portcullis_store::Table;
use portcullis_support::fetch::fetch_blocking;
use portcullis_support::links::UnreadableLink;

/// Why a tenant's WAF policies cannot be deployed; the tenant's AS3 result carries the text.
#[derive(Debug, thiserror::Error)]
pub enum WafError {
    /// `policyWAF` names a policy the tenant does not declare and that does not exist.
    #[error("policyWAF {policy}: {message}")]
    UnknownPolicy { policy: String, message: String },
    #[error("{full_path}: {source}")]
    Pull {
        full_path: String,
        source: UnreadableLink,
    },
    #[error("{full_path}: {link} is not a JSON policy: {source}")]
    NotJson {
        full_path: String,
        link: String,
        source: serde_json::Error,
    },
    /// The policy does not store (it does not compile, or the store refused it).
    #[error("{message}")]
    Store { full_path: String, message: String },
    /// The policy cannot be applied or attached to its virtual servers.
    #[error("{full_path}: {message}")]
    Activate { full_path: String, message: String },
}

/// A declared policy ready to store.
#[derive(Debug)]
pub struct Prepared {
    pub full_path: String,
    /// The document to store; `None` keeps the deployed one (`ignoreChanges`).
    doc: Option<Value>,
    /// The URL the document came from (its relative links resolve against it).
    base: String,
    /// What the document's content hashes to (redeploys compare it).
    digest: String,
}

fn declared(stored: Option<&Value>) -> Vec<(String, String)> {
    stored
        .and_then(|r| r["policies"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    Some((
                        p["fullPath"].as_str()?.to_string(),
                        p["digest"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn attached(stored: Option<&Value>) -> Vec<(String, String)> {
    stored
        .and_then(|r| r["attached"].as_array())
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn stored_url(stored: Option<&Value>, full_path: &str) -> Option<String> {
    stored?["policies"]
        .as_array()?
        .iter()
        .find(|p| p["fullPath"] == full_path)
        .and_then(|p| p["url"].as_str().map(str::to_string))
}

/// Whether the virtual server still exists (a policy's list may name one deleted since).
fn virtual_exists(st: &MgmtState, full_path: &str) -> bool {
    let key = format!("/mgmt/tm/ltm/virtual/{}", full_path.replace('/', "~"));
    st.store.get(Table::Objects, &key).ok().flatten().is_some()
}

/// Pulls the declared policies and checks the `bigip` ones exist; the error names the policy.
pub fn prepare(
    st: &MgmtState,
    plan: &Plan,
    stored: Option<&Value>,
) -> Result<Vec<Prepared>, WafError> {
    let declared_paths: BTreeSet<&str> =
        plan.policies.iter().map(|p| p.full_path.as_str()).collect();
    for (policy, _) in &plan.attachments {
        if !declared_paths.contains(policy.as_str()) {
            asm::policies::by_path(st, policy).map_err(|e| WafError::UnknownPolicy {
                policy: policy.clone(),
                message: e.message,
            })?;
        }
    }
    let old = declared(stored);
    let mut out = Vec::new();
    for p in &plan.policies {
        let full_path = &p.full_path;
        let pull = |link: &str| {
            let bytes =
                fetch_blocking(&st.cfg.fetch, &st.cfg.data_dir, link).map_err(|source| {
                    WafError::Pull {
                        full_path: full_path.clone(),
                        source,
                    }
                })?;
            serde_json::from_slice::<Value>(&bytes).map_err(|source| WafError::NotJson {
                full_path: full_path.clone(),
                link: link.to_string(),
                source,
            })
        };
        let (doc, base) = match &p.source {
            WafSource::Url {
                url,
                ignore_changes: true,
            } if stored_url(stored, full_path).as_deref() == Some(url) => {
                let digest = old
                    .iter()
                    .find(|(f, _)| f == full_path)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_default();
                out.push(Prepared {
                    full_path: full_path.clone(),
                    doc: None,
                    base: url.clone(),
                    digest,
                });
                continue;
            }
            WafSource::Url { url, .. } => (pull(url)?, url.clone()),
            WafSource::File(path) => (pull(&format!("file:{path}"))?, String::new()),
            WafSource::Inline(doc) => (doc.clone(), String::new()),
        };
        let mut doc = doc;
        if let Some(mode) = p.enforcement
            && let Some(pol) = doc.get_mut("policy").and_then(Value::as_object_mut)
        {
            pol.insert("enforcementMode".into(), json!(mode));
        }
        let digest: String = Sha256::digest(doc.to_string().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.push(Prepared {
            full_path: full_path.clone(),
            doc: Some(doc),
            base,
            digest,
        });
    }
    Ok(out)
}

/// Whether the deployed policies are exactly these, with the same content.
pub fn unchanged(prepared: &[Prepared], stored: Option<&Value>) -> bool {
    let old = declared(stored);
    old.len() == prepared.len()
        && prepared
            .iter()
            .all(|p| old.iter().any(|(f, d)| *f == p.full_path && *d == p.digest))
}

/// Stores (and compiles) the prepared policies; on failure the policies this call created are
/// removed again and the error is returned.
pub fn put(st: &MgmtState, prepared: &[Prepared], stored: Option<&Value>) -> Result<(), WafError> {
    let old = declared(stored);
    let mut created = Vec::new();
    for p in prepared {
        let Some(doc) = &p.doc else { continue };
        let existed = old.iter().any(|(f, _)| *f == p.full_path)
            || asm::policies::by_path(st, &p.full_path).is_ok();
        if let Err(e) = asm::policies::put_policy_linked(st, &p.full_path, doc, &p.base) {
            for full_path in created {
                let _ = asm::delete_policy(st, full_path);
            }
            return Err(WafError::Store {
                full_path: p.full_path.clone(),
                message: e.message,
            });
        }
        if !existed {
            created.push(&p.full_path);
        }
    }
    Ok(())
}

/// What the tenant record keeps about its policies.
pub fn record(plan: &Plan, prepared: &[Prepared]) -> (Value, Value) {
    let policies: Vec<Value> = prepared
        .iter()
        .map(|p| {
            let url = plan
                .policies
                .iter()
                .find(|x| x.full_path == p.full_path)
                .and_then(|x| match &x.source {
                    WafSource::Url { url, .. } => Some(url.clone()),
                    _ => None,
                });
            json!({"fullPath": p.full_path, "digest": p.digest, "url": url})
        })
        .collect();
    (json!(policies), json!(plan.attachments))
}

/// After the tenant's objects are written: applies and attaches the declared policies, adds the
/// tenant's virtuals to `bigip` policies, and drops what the previous deploy had and this one
/// does not.
pub fn activate(
    st: &MgmtState,
    plan: &Plan,
    prepared: &[Prepared],
    stored: Option<&Value>,
) -> Result<(), WafError> {
    let err = |full_path: &str, e: portcullis_admin::MgmtError| WafError::Activate {
        full_path: full_path.to_string(),
        message: e.message,
    };
    for p in prepared {
        // Virtuals of other tenants that point to this policy (`use: /Common/Shared/...`) keep it.
        let tenant = format!("/{}/", p.full_path.split('/').nth(1).unwrap_or_default());
        let mut virtuals: Vec<String> = asm::policies::by_path(st, &p.full_path)
            .map(|o| asm::policies::virtuals_of(&o))
            .unwrap_or_default()
            .into_iter()
            .filter(|v| !v.starts_with(&tenant) && virtual_exists(st, v))
            .collect();
        virtuals.extend(
            plan.attachments
                .iter()
                .filter(|(pol, _)| *pol == p.full_path)
                .map(|(_, v)| v.clone()),
        );
        if p.doc.is_some() {
            asm::apply_policy(st, &p.full_path).map_err(|e| err(&p.full_path, e))?;
        }
        asm::attach_policy(st, &p.full_path, &virtuals).map_err(|e| err(&p.full_path, e))?;
    }
    let ours: Vec<&str> = plan.attachments.iter().map(|(_, v)| v.as_str()).collect();
    let old_attached = attached(stored);
    let old_declared = declared(stored);
    let existing: BTreeSet<&str> = plan
        .attachments
        .iter()
        .chain(old_attached.iter())
        .map(|(p, _)| p.as_str())
        .filter(|p| !prepared.iter().any(|d| d.full_path == *p))
        .filter(|p| !old_declared.iter().any(|(d, _)| d == p))
        .collect();
    for policy in existing {
        let Ok(obj) = asm::policies::by_path(st, policy) else {
            continue;
        };
        let mut list: Vec<String> = asm::policies::virtuals_of(&obj)
            .into_iter()
            .filter(|v| virtual_exists(st, v))
            .filter(|v| {
                !old_attached.iter().any(|(p, ov)| p == policy && ov == v)
                    || ours.contains(&v.as_str())
            })
            .collect();
        for (_, v) in plan.attachments.iter().filter(|(p, _)| p == policy) {
            if !list.contains(v) {
                list.push(v.clone());
            }
        }
        asm::attach_policy(st, policy, &list).map_err(|e| err(policy, e))?;
    }
    for (full_path, _) in old_declared {
        if !prepared.iter().any(|p| p.full_path == full_path) {
            let _ = asm::delete_policy(st, &full_path);
        }
    }
    Ok(())
}

/// After a tenant is removed: its declared policies go, `bigip` policies lose its virtuals.
pub fn release(st: &MgmtState, stored: &Value) {
    activate(st, &Plan::default(), &[], Some(stored)).unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot release the WAF policies of a removed AS3 tenant");
    });
}
