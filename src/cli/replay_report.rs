//! The tallies of `portcullis replay` and their two renderings (text tables, one JSON document):
//! attacks blocked per category and per source, benign requests blocked per source (the false
//! alarms), what caused the false alarms (violation and signature id), the missed attacks, and
//! the time per request.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::replay::Record;
use super::replay_wire::{Outcome, Replayed};
use crate::waf::{Violation, ViolationKind};

/// What a record says should happen to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Block,
    Pass,
    Unlabelled,
}

/// Outcomes of a group of requests.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    n: u64,
    blocked: u64,
    rejected: u64,
    incomplete: u64,
}

impl Counts {
    fn add(&mut self, o: &Outcome) {
        self.n += 1;
        match o {
            Outcome::Blocked => self.blocked += 1,
            Outcome::Rejected(..) => self.rejected += 1,
            Outcome::Incomplete(_) => self.incomplete += 1,
            Outcome::Passed => {}
        }
    }

    fn rate(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            100.0 * self.blocked as f64 / self.n as f64
        }
    }

    fn json(&self) -> Value {
        json!({"n": self.n, "blocked": self.blocked, "rate": round2(self.rate()),
               "rejected": self.rejected, "incomplete": self.incomplete})
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A request whose outcome was not the expected one.
struct Listed {
    id: String,
    source: String,
    category: String,
    outcome: Outcome,
    violations: Vec<Violation>,
}

/// Everything `replay` prints.
pub struct Report {
    corpus: String,
    policy: String,
    attacks_by_category: BTreeMap<String, Counts>,
    attacks_by_source: BTreeMap<String, Counts>,
    benign_by_source: BTreeMap<String, Counts>,
    unlabelled_by_source: BTreeMap<String, Counts>,
    /// False alarms per cause (`VIOL_ATTACK_SIGNATURE 300001011`, `VIOL_EVASION Bad unescape`).
    causes: BTreeMap<String, u64>,
    false_alarms: Vec<Listed>,
    misses: Vec<Listed>,
    micros: Vec<f64>,
}

/// The causes a blocked request's violations name, once each.
fn causes(violations: &[Violation]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in violations {
        let mut push = |c: String| {
            if !out.contains(&c) {
                out.push(c);
            }
        };
        match v.kind {
            ViolationKind::AttackSignature => {
                for id in &v.signature_ids {
                    push(format!("{} {id}", v.kind.name()));
                }
            }
            ViolationKind::RatingThreat | ViolationKind::RatingNeedExamination => {}
            k if v.detail.is_empty() => push(k.name().to_string()),
            k => push(format!("{} {}", k.name(), without_numbers(&v.detail))),
        }
    }
    out
}

/// A detail with its decimal numbers written `N`, so that `10941 bytes` and `4252 bytes` are
/// one cause.
fn without_numbers(detail: &str) -> String {
    detail
        .split(' ')
        .map(|w| {
            let digits = w.trim_end_matches([':', ',', ')']);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                format!("N{}", &w[digits.len()..])
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn violation_json(v: &Violation) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn outcome_name(o: &Outcome) -> String {
    match o {
        Outcome::Blocked => "blocked".into(),
        Outcome::Passed => "passed".into(),
        Outcome::Rejected(s, why) => format!("rejected {s} ({why})"),
        Outcome::Incomplete(what) => format!("incomplete {what}"),
    }
}

impl Report {
    pub fn new(corpus: String, policy: String) -> Self {
        Report {
            corpus,
            policy,
            attacks_by_category: BTreeMap::new(),
            attacks_by_source: BTreeMap::new(),
            benign_by_source: BTreeMap::new(),
            unlabelled_by_source: BTreeMap::new(),
            causes: BTreeMap::new(),
            false_alarms: Vec::new(),
            misses: Vec::new(),
            micros: Vec::new(),
        }
    }

    /// The line `--results` writes for one request.
    pub fn result_line(rec: &Record, done: &Replayed) -> Value {
        let (outcome, status) = match &done.outcome {
            Outcome::Blocked => ("blocked", None),
            Outcome::Passed => ("passed", None),
            Outcome::Rejected(s, _) => ("rejected", Some(*s)),
            Outcome::Incomplete(_) => ("incomplete", None),
        };
        json!({
            "id": rec.id, "source": rec.source, "category": rec.category,
            "expect": match rec.expect { Expect::Block => "block", Expect::Pass => "pass", Expect::Unlabelled => "" },
            "outcome": outcome, "status": status,
            "violations": done.violations.iter().map(violation_json).collect::<Vec<_>>(),
            "us": round2(done.micros),
        })
    }

    pub fn add(&mut self, rec: &Record, done: Replayed) {
        self.micros.push(done.micros);
        let o = &done.outcome;
        let listed = || Listed {
            id: rec.id.clone(),
            source: rec.source.clone(),
            category: rec.category.clone(),
            outcome: o.clone(),
            violations: done.violations.clone(),
        };
        match rec.expect {
            Expect::Block => {
                self.attacks_by_category
                    .entry(rec.category.clone())
                    .or_default()
                    .add(o);
                self.attacks_by_source
                    .entry(rec.source.clone())
                    .or_default()
                    .add(o);
                if *o != Outcome::Blocked {
                    self.misses.push(listed());
                }
            }
            Expect::Pass => {
                self.benign_by_source
                    .entry(rec.source.clone())
                    .or_default()
                    .add(o);
                if *o == Outcome::Blocked {
                    for c in causes(&done.violations) {
                        *self.causes.entry(c).or_default() += 1;
                    }
                    self.false_alarms.push(listed());
                }
            }
            Expect::Unlabelled => {
                let key = format!("{}/{}", rec.source, rec.category);
                self.unlabelled_by_source.entry(key).or_default().add(o);
            }
        }
    }

    fn total(groups: &BTreeMap<String, Counts>) -> Counts {
        groups.values().fold(Counts::default(), |mut t, c| {
            t.n += c.n;
            t.blocked += c.blocked;
            t.rejected += c.rejected;
            t.incomplete += c.incomplete;
            t
        })
    }

    /// Mean, median and 99th percentile of the time per request, in µs.
    fn timing(&self) -> (f64, f64, f64) {
        if self.micros.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let mut m = self.micros.clone();
        m.sort_by(f64::total_cmp);
        let at = |q: f64| m[((m.len() - 1) as f64 * q) as usize];
        (m.iter().sum::<f64>() / m.len() as f64, at(0.5), at(0.99))
    }

    fn table(out: &mut String, title: &str, rate: &str, groups: &BTreeMap<String, Counts>) {
        if groups.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title}");
        let _ = writeln!(
            out,
            "  {:<28} {:>7} {:>8} {:>7} {:>9} {:>11}",
            "group", "n", "blocked", rate, "rejected", "incomplete"
        );
        let total = Self::total(groups);
        for (k, c) in groups.iter().chain([(&"ALL".to_string(), &total)]) {
            let _ = writeln!(
                out,
                "  {:<28} {:>7} {:>8} {:>6.1}% {:>9} {:>11}",
                k,
                c.n,
                c.blocked,
                c.rate(),
                c.rejected,
                c.incomplete
            );
        }
    }

    fn list(out: &mut String, title: &str, items: &[Listed], max: usize) {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title} ({}, first {}):", items.len(), max);
        for l in items.iter().take(max) {
            let why: Vec<String> = l.violations.iter().map(describe).collect();
            let _ = writeln!(
                out,
                "  {} [{}/{}] {}: {}",
                l.id,
                l.source,
                l.category,
                outcome_name(&l.outcome),
                why.join("; ")
            );
        }
    }

    /// The text report.
    pub fn text(&self, max: usize) -> String {
        let mut out = String::new();
        let (mean, p50, p99) = self.timing();
        let _ = writeln!(
            out,
            "replay of {} with {}: {} requests, {mean:.1} µs per request (median {p50:.1}, p99 {p99:.1})",
            self.corpus,
            self.policy,
            self.micros.len()
        );
        Self::table(
            &mut out,
            "Attacks by category",
            "TP",
            &self.attacks_by_category,
        );
        Self::table(&mut out, "Attacks by source", "TP", &self.attacks_by_source);
        Self::table(&mut out, "Benign by source", "FP", &self.benign_by_source);
        Self::table(
            &mut out,
            "Unlabelled by source/category",
            "rate",
            &self.unlabelled_by_source,
        );
        if !self.causes.is_empty() {
            let _ = writeln!(
                out,
                "\nFalse alarms by cause (a request counts once per cause):"
            );
            let mut causes: Vec<_> = self.causes.iter().collect();
            causes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (c, n) in causes {
                let _ = writeln!(out, "  {n:>6}  {c}");
            }
        }
        Self::list(&mut out, "False alarms", &self.false_alarms, max);
        Self::list(&mut out, "Missed attacks", &self.misses, max);
        let (a, b) = (
            Self::total(&self.attacks_by_source),
            Self::total(&self.benign_by_source),
        );
        let _ = writeln!(
            out,
            "\nREPLAY {}: attacks {} blocked {} TP {:.2}% | benign {} blocked {} FP {:.2}% | rejected {}/{} | {mean:.1} µs/request",
            self.corpus,
            a.n,
            a.blocked,
            a.rate(),
            b.n,
            b.blocked,
            b.rate(),
            a.rejected,
            b.rejected
        );
        out
    }

    /// The JSON report: the same figures, every false alarm and missed attack.
    pub fn json(&self) -> Value {
        let groups = |g: &BTreeMap<String, Counts>| -> Value {
            g.iter().map(|(k, c)| (k.clone(), c.json())).collect()
        };
        let listed = |items: &[Listed]| -> Value {
            items
                .iter()
                .map(|l| {
                    json!({"id": l.id, "source": l.source, "category": l.category,
                       "outcome": outcome_name(&l.outcome),
                       "violations": l.violations.iter().map(violation_json).collect::<Vec<_>>()})
                })
                .collect()
        };
        let (mean, p50, p99) = self.timing();
        json!({
            "corpus": self.corpus,
            "policy": self.policy,
            "requests": self.micros.len(),
            "micros_per_request": {"mean": round2(mean), "median": round2(p50), "p99": round2(p99)},
            "attacks": Self::total(&self.attacks_by_source).json(),
            "benign": Self::total(&self.benign_by_source).json(),
            "attacks_by_category": groups(&self.attacks_by_category),
            "attacks_by_source": groups(&self.attacks_by_source),
            "benign_by_source": groups(&self.benign_by_source),
            "unlabelled": groups(&self.unlabelled_by_source),
            "false_alarm_causes": self.causes,
            "false_alarms": listed(&self.false_alarms),
            "misses": listed(&self.misses),
        })
    }
}

/// One violation in a line: kind, detail, where, signature ids.
fn describe(v: &Violation) -> String {
    let mut s = v.kind.name().to_string();
    if !v.detail.is_empty() {
        let _ = write!(s, " {}", v.detail);
    }
    if let Some(n) = &v.name {
        let _ = write!(s, " in {n}");
    }
    if !v.signature_ids.is_empty() {
        let _ = write!(s, " {:?}", v.signature_ids);
    }
    if !v.snippet.is_empty() {
        let snip: String = v.snippet.chars().take(80).collect();
        let _ = write!(s, " <{}>", snip.escape_debug());
    }
    s
}
