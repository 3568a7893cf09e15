//! Signature selection (waf-semantics §5, §8.4–8.5): which signatures of the database a policy
//! enables, and with what action. Sets select by explicit membership or by the derived names
//! (`All Signatures`, `High Accuracy Signatures`, `Generic Detection Signatures`, `<attack type>
//! Signatures`, custom filter sets); server technologies add system-specific signatures (with the
//! implied technologies); `signatures[]` enable or disable one id; staging keeps a signature from
//! blocking and from the rating. Imports: `decl`, `waf::signatures`.

use std::collections::HashMap;

use super::decl;
use crate::waf::signatures::{Level, SignatureDb, SignatureInfo};

/// How one enabled signature acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigAction {
    pub alarm: bool,
    pub block: bool,
    pub staged: bool,
    pub accuracy: Level,
}

/// Technologies that imply others (waf-semantics §5).
const IMPLIED: &[(&str, &[&str])] = &[
    ("ASP.NET", &["Microsoft IIS", "Microsoft Windows"]),
    ("Microsoft IIS", &["Microsoft Windows"]),
    ("Apache Tomcat", &["Java Servlets/JSP"]),
    ("JBoss", &["Java Servlets/JSP"]),
    ("Apache Struts", &["Java Servlets/JSP"]),
    ("Spring Boot", &["Java Servlets/JSP"]),
    ("WordPress", &["PHP"]),
    ("Drupal", &["PHP"]),
    ("Joomla", &["PHP"]),
    ("Laravel", &["PHP"]),
    ("Express.js", &["Node.js"]),
    (
        "Microsoft SharePoint",
        &["ASP.NET", "Microsoft IIS", "Microsoft Windows"],
    ),
    ("Oracle", &["Oracle Application Server"]),
    ("Unix/Linux", &[]),
];

/// The technologies with their implied ones, lower-cased.
pub fn expand_technologies(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut todo: Vec<String> = names.to_vec();
    while let Some(n) = todo.pop() {
        let l = n.to_ascii_lowercase();
        if out.contains(&l) {
            continue;
        }
        if let Some((_, implied)) = IMPLIED.iter().find(|(k, _)| k.eq_ignore_ascii_case(&n)) {
            todo.extend(implied.iter().map(|s| s.to_string()));
        }
        out.push(l);
    }
    out
}

fn level(s: &str) -> Option<Level> {
    match s.to_ascii_lowercase().as_str() {
        "low" => Some(Level::Low),
        "medium" => Some(Level::Medium),
        "high" => Some(Level::High),
        _ => None,
    }
}

fn cmp_filter(op: Option<&str>, v: Level, want: Option<&str>) -> bool {
    let Some(w) = want.and_then(level) else {
        return true;
    };
    match op.unwrap_or("eq") {
        "ge" => v >= w,
        "le" => v <= w,
        "all" => true,
        _ => v == w,
    }
}

/// True when signature `s` belongs to set `set`.
pub fn in_set(s: &SignatureInfo, set: &decl::SignatureSet) -> bool {
    if let Some(custom) = &set.signature_set {
        if custom
            .signatures
            .iter()
            .flatten()
            .any(|o| o.signature_id == Some(u64::from(s.id)))
        {
            return true;
        }
        if let Some(f) = &custom.filter {
            let attack_ok = match &f.attack_type {
                Some(serde_json::Value::Object(o)) => o
                    .get("name")
                    .and_then(|n| n.as_str())
                    .is_none_or(|n| n.eq_ignore_ascii_case(&s.attack_type)),
                Some(serde_json::Value::String(n)) => n.eq_ignore_ascii_case(&s.attack_type),
                _ => true,
            };
            return attack_ok
                && cmp_filter(
                    f.accuracy_filter.as_deref(),
                    s.accuracy,
                    f.accuracy_value.as_deref(),
                )
                && cmp_filter(f.risk_filter.as_deref(), s.risk, f.risk_value.as_deref());
        }
        return false;
    }
    let Some(name) = set.name.as_deref() else {
        return false;
    };
    if s.sets.iter().any(|n| n.eq_ignore_ascii_case(name)) {
        return true;
    }
    let generic = s.systems.is_empty();
    match name {
        "All Signatures" | "Default" | "All Request Signatures" => true,
        "High Accuracy Signatures" => s.accuracy == Level::High,
        "Medium Accuracy Signatures" => s.accuracy == Level::Medium,
        "Low Accuracy Signatures" => s.accuracy == Level::Low,
        "Generic Detection Signatures" => generic,
        "Generic Detection Signatures (High Accuracy)" => generic && s.accuracy == Level::High,
        "Generic Detection Signatures (High/Medium Accuracy)" => {
            generic && s.accuracy >= Level::Medium
        }
        "High Accuracy Detection Evasion Signatures" => false,
        other => other
            .strip_suffix(" Signatures")
            .is_some_and(|t| attack_matches(t, &s.attack_type)),
    }
}

fn attack_matches(set_stem: &str, attack: &str) -> bool {
    let norm = |x: &str| x.to_ascii_lowercase().replace(['-', '_'], " ");
    let (a, b) = (norm(set_stem), norm(attack));
    a == b || (a.starts_with("xml external entities") && b.contains("xxe")) || b.starts_with(&a)
}

/// Computes the action of every enabled signature.
pub fn select(
    db: &SignatureDb,
    d: &decl::Policy,
    staging: bool,
    cutoff: Option<&str>,
) -> HashMap<u32, SigAction> {
    let techs: Vec<String> = d
        .server_technologies
        .iter()
        .flatten()
        .filter_map(|t| t.server_technology_name.clone())
        .collect();
    let techs = expand_technologies(&techs);
    let min_acc = d
        .signature_settings
        .as_ref()
        .and_then(|s| s.minimum_accuracy_for_auto_added_signatures)
        .map_or(Level::Medium, |a| match a {
            decl::Accuracy::Low => Level::Low,
            decl::Accuracy::Medium => Level::Medium,
            decl::Accuracy::High => Level::High,
        });
    let sets: Vec<&decl::SignatureSet> = d.signature_sets.iter().flatten().collect();
    let any_block = sets.iter().any(|s| s.block.unwrap_or(true));
    let mut out = HashMap::new();
    for s in db.signatures() {
        let (mut alarm, mut block) = (false, false);
        let system_specific = !s.systems.is_empty();
        let tech_hit = system_specific
            && s.systems
                .iter()
                .any(|sys| techs.contains(&sys.to_ascii_lowercase()));
        for set in &sets {
            if in_set(s, set) {
                // A system-specific signature in a generic set applies only to the policy's systems.
                if system_specific
                    && !tech_hit
                    && set.signature_set.is_none()
                    && !matches!(set.name.as_deref(), Some("All Signatures"))
                    && !s
                        .sets
                        .iter()
                        .any(|n| Some(n.as_str()) == set.name.as_deref())
                {
                    continue;
                }
                alarm |= set.alarm.unwrap_or(true);
                block |= set.block.unwrap_or(true);
            }
        }
        if tech_hit && s.accuracy >= min_acc {
            alarm = true;
            block |= any_block;
        }
        if alarm || block {
            out.insert(
                s.id,
                SigAction {
                    alarm,
                    block,
                    staged: staging && cutoff.is_none(),
                    accuracy: s.accuracy,
                },
            );
        }
    }
    for o in d.signatures.iter().flatten() {
        let Some(id) = o.signature_id.and_then(|i| u32::try_from(i).ok()) else {
            continue;
        };
        let Some(info) = db.get(id) else { continue };
        if o.enabled == Some(false) {
            out.remove(&id);
        } else {
            let e = out.entry(id).or_insert(SigAction {
                alarm: true,
                block: any_block,
                staged: false,
                accuracy: info.accuracy,
            });
            if let Some(p) = o.perform_staging {
                e.staged = p;
            }
        }
    }
    out
}
