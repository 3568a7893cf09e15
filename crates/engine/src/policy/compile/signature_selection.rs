//! Signature selection (`docs/policy.md`, "Signatures"): which signatures of the database a policy
//! enables, and with what action. Sets select by explicit membership or by the derived names
//! (`All Signatures`, `High Accuracy Signatures`, `Generic Detection Signatures`, `<attack type>
//! Signatures`, custom filter sets); server technologies add system-specific signatures (with the
//! implied technologies); `signatures[]` enable or disable one id; staging keeps a signature from
//! blocking and from the rating.

use std::collections::HashMap;

use crate::policy::decl;
use crate::signatures::{Level, SignatureDb, SignatureInfo};

/// How one enabled signature acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SigAction {
    pub alarm: bool,
    pub block: bool,
    pub staged: bool,
    pub accuracy: Level,
}

/// Technologies that imply others: a policy naming an application framework also gets the
/// signatures of the platform it runs on (ASP.NET: IIS and Windows; WordPress: PHP).
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
            .any(|o| o.signature_id.get() == Some(u64::from(s.id)))
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

/// The action of every enabled signature, by id, looked up for each signature a request matches.
/// The keys are the database's ids, never chosen by a client, so SipHash's resistance to chosen
/// keys buys nothing here and foldhash's fast hash does the lookup for a fraction of its cost.
pub type SigMap = HashMap<u32, SigAction, foldhash::fast::RandomState>;

/// Computes the action of every enabled signature.
pub fn select(db: &SignatureDb, d: &decl::Policy, staging: bool, cutoff: Option<&str>) -> SigMap {
    let techs: Vec<String> = d
        .server_technologies
        .iter()
        .flatten()
        .filter_map(|t| t.server_technology_name.cloned())
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
    let any_block = sets.iter().any(|s| s.block.or(true));
    let mut out = SigMap::default();
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
                alarm |= set.alarm.or(true);
                block |= set.block.or(true);
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
        let Some(id) = o.signature_id.get().and_then(|i| u32::try_from(i).ok()) else {
            continue;
        };
        let Some(info) = db.get(id) else { continue };
        if !o.enabled.or(true) {
            out.remove(&id);
        } else {
            let e = out.entry(id).or_insert(SigAction {
                alarm: true,
                block: any_block,
                staged: false,
                accuracy: info.accuracy,
            });
            if let Some(p) = o.perform_staging.get() {
                e.staged = p;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(attack: &str, acc: Level, systems: &[&str], sets: &[&str]) -> SignatureInfo {
        SignatureInfo {
            id: 1,
            name: "t".into(),
            attack_type: attack.into(),
            accuracy: acc,
            risk: Level::High,
            systems: systems.iter().map(|s| s.to_string()).collect(),
            sets: sets.iter().map(|s| s.to_string()).collect(),
            targets: Vec::new(),
            headers: Vec::new(),
        }
    }

    fn set(name: &str) -> decl::SignatureSet {
        decl::SignatureSet {
            name: name.to_string().into(),
            ..Default::default()
        }
    }

    #[test]
    fn derived_set_names_select_by_accuracy_system_and_attack_type() {
        let sqli = sig("SQL Injection", Level::High, &[], &[]);
        let php = sig(
            "Server Side Code Injection",
            Level::Medium,
            &["PHP"],
            &["My Set"],
        );
        assert!(in_set(&sqli, &set("All Signatures")));
        assert!(in_set(&sqli, &set("High Accuracy Signatures")));
        assert!(!in_set(&php, &set("High Accuracy Signatures")));
        assert!(in_set(&sqli, &set("Generic Detection Signatures")));
        assert!(!in_set(&php, &set("Generic Detection Signatures")));
        assert!(in_set(&sqli, &set("SQL Injection Signatures")));
        assert!(!in_set(&sqli, &set("Cross Site Scripting Signatures")));
        assert!(in_set(&php, &set("My Set")));
        assert!(in_set(&php, &set("Server Side Code Injection Signatures")));
    }

    #[test]
    fn custom_filter_sets() {
        let s = sig("Cross Site Scripting", Level::Medium, &[], &[]);
        let mut f = set("custom");
        f.signature_set = Some(decl::CustomSet {
            kind: Some("filter-based".into()),
            filter: Some(decl::SetFilter {
                accuracy_filter: Some("ge".into()),
                accuracy_value: Some("medium".into()),
                attack_type: Some(serde_json::json!({"name": "Cross Site Scripting"})),
                ..Default::default()
            }),
            ..Default::default()
        });
        assert!(in_set(&s, &f));
        let low = sig("Cross Site Scripting", Level::Low, &[], &[]);
        assert!(!in_set(&low, &f));
    }

    #[test]
    fn technologies_imply_others() {
        let t = expand_technologies(&["ASP.NET".into(), "Apache Tomcat".into()]);
        for want in [
            "asp.net",
            "microsoft iis",
            "microsoft windows",
            "apache tomcat",
            "java servlets/jsp",
        ] {
            assert!(t.contains(&want.to_string()), "{want} in {t:?}");
        }
    }
}
