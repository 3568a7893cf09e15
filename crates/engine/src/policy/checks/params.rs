//! Parameter checks (query, form, multipart, JSON-as-parameters, header and cookie locations):
//! entity lookup (URL-level before global), location, repetition, empty values, lengths, data
//! types, numeric ranges, static/enum values, regular expressions, base64, metacharacters and
//! signatures.

use std::borrow::Cow;

use base64::Engine as _;

use crate::parse::query;
use crate::policy::checks::staging::mark_staged;
use crate::policy::compile::compiled::{CompiledParam, CompiledPolicy, Scratch, pick};
use crate::policy::decl::{Base64Mode, DataType, ParamLocation, ValueType};
use crate::signatures::{MemoUse, SignatureDb, Target};
use crate::violation::{Context, Violation, ViolationKind as K};

fn loc_name(l: ParamLocation) -> &'static str {
    match l {
        ParamLocation::Any => "any",
        ParamLocation::Query => "query",
        ParamLocation::FormData => "form-data",
        ParamLocation::Path => "path",
        ParamLocation::Header => "header",
        ParamLocation::Cookie => "cookie",
    }
}

impl CompiledPolicy {
    /// The parameter entity for `name` on the current URL: URL-level first, then global.
    pub(in crate::policy) fn param_for(&self, s: &Scratch, name: &[u8]) -> Option<&CompiledParam> {
        let fold = self.fold;
        let mut url_level = self
            .params
            .iter()
            .filter(|p| p.url.as_ref().is_some_and(|u| u.matches(&s.path, fold)))
            .peekable();
        // Most requests' URLs have no parameter of their own: no pick over an empty list.
        let own = url_level.peek().is_some();
        own.then(|| pick(url_level, |p| &p.m, name, fold))
            .flatten()
            .or_else(|| {
                pick(
                    self.params.iter().filter(|p| p.url.is_none()),
                    |p| &p.m,
                    name,
                    fold,
                )
            })
    }

    /// Header/cookie values are parameters only when an explicit entity claims them.
    pub(in crate::policy) fn check_named_location(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        name: &[u8],
        value: &[u8],
        loc: ParamLocation,
    ) {
        if self
            .params
            .iter()
            .any(|p| p.location == loc && p.m.glob.is_none() && p.m.matches(name, true))
        {
            self.check_param(s, out, name, value, loc, false);
        }
    }

    /// Checks one parameter; `encoded` says the name and value are still percent-encoded. What the
    /// checks of a staged parameter entity raise is marked staged (`staging`).
    pub fn check_param(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        raw_name: &[u8],
        raw_value: &[u8],
        loc: ParamLocation,
        encoded: bool,
    ) {
        s.param_count += 1;
        if s.param_count == self.max_params + 1 {
            self.protocol(out, "Check maximum number of parameters");
        }
        let (name, value) = if encoded {
            let mut f = query::DecodeFlags::default();
            let n = query::decode(raw_name, true, self.passes, &mut f);
            let v = query::decode(raw_value, true, self.passes, &mut f);
            let ctx = if loc == ParamLocation::Query {
                Context::Query
            } else {
                Context::Parameter
            };
            self.flag_evasions(&f, ctx, raw_value, out);
            if loc == ParamLocation::Query {
                self.check_controls(out, &n, &v);
            } else {
                self.check_line_break_in_name(out, &n);
            }
            (n, v)
        } else {
            (Cow::Borrowed(raw_name), Cow::Borrowed(raw_value))
        };
        self.check_redirect(s, out, Context::Parameter, &name, raw_value, &value);
        if !matches!(loc, ParamLocation::Header | ParamLocation::Cookie) {
            if encoded && self.passes > 1 && !(value.is_ascii() && name.is_ascii()) {
                // The character set is about the text the application reads, which is decoded
                // once: `%25C9%25EE` is the ASCII `%C9%EE` there, whatever bytes a second pass
                // (there to find double-encoded attacks) makes of it.
                let mut f = query::DecodeFlags::default();
                let n = query::decode(raw_name, true, 1, &mut f);
                let v = query::decode(raw_value, true, 1, &mut f);
                self.check_encoding(out, Context::Parameter, Some(&n), &v);
            } else {
                self.check_encoding(out, Context::Parameter, Some(&name), &value);
            }
        }
        let pname = as_text(&name);
        let Some(p) = self.param_for(s, &name) else {
            self.push(
                out,
                Violation::new(K::Parameter, Context::Parameter)
                    .named(pname)
                    .snippet(&value),
            );
            return;
        };
        let mark = out.len();
        self.check_param_value(s, out, p, &name, &value, loc);
        if p.staged {
            mark_staged(out, mark);
        }
    }

    /// The checks of parameter entity `p` on one parameter (decoded `name` and `value`).
    fn check_param_value(
        &self,
        s: &mut Scratch,
        out: &mut Vec<Violation>,
        p: &CompiledParam,
        name: &[u8],
        value: &[u8],
        loc: ParamLocation,
    ) {
        let pname = as_text(name);
        let sensitive = p.sensitive
            || self
                .sensitive
                .iter()
                .any(|n| n.as_bytes().eq_ignore_ascii_case(name));
        let snip = |v: Violation| {
            if sensitive {
                v.snippet(b"********")
            } else {
                v.snippet(value)
            }
        };
        let key = name_key(name, self.fold);
        match s.params_seen.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n = n.saturating_add(1);
                if !p.allow_repeat && *n == 2 {
                    self.push(
                        out,
                        Violation::new(K::ParameterRepeated, Context::Parameter)
                            .named(pname.clone()),
                    );
                }
            }
            None => {
                if s.params_seen.len() < 256 {
                    s.params_seen.push((key, 1));
                }
            }
        }
        if p.location != ParamLocation::Any && p.location != loc && p.m.glob.is_none() {
            self.push(
                out,
                Violation::new(K::ParameterLocation, Context::Parameter)
                    .named(pname.clone())
                    .detail(format!(
                        "expected in {}, found in {}",
                        loc_name(p.location),
                        loc_name(loc)
                    )),
            );
        }
        if p.m.glob.is_some()
            && let Some(c) = p.name_table.first_bad(name)
        {
            self.push(
                out,
                Violation::new(K::ParameterNameMetachar, Context::Parameter)
                    .named(pname.clone())
                    .metachar(c),
            );
        }
        if p.value_type == ValueType::Ignore {
            return;
        }
        let named = |k: K| Violation::new(k, Context::Parameter).named(pname.clone());
        if value.is_empty() {
            if !p.allow_empty {
                self.push(out, named(K::ParameterEmptyValue));
            }
            if p.sig_check {
                // A parameter without a value carries what it carries in its name, and an
                // application that reads the raw query string or body (`?<payload>`) reads it
                // as a value.
                let ov = &p.overrides;
                for target in [Target::ParamName, Target::ParamValue] {
                    let ctx = Context::Parameter;
                    self.scan(s, out, target, ctx, Some(&pname), name, ov, false);
                }
            }
            return;
        }
        if p.value_profile.is_some() {
            return self.check_structured_value(s, out, p, &pname, value, sensitive);
        }
        let text = as_text(value);
        if (p.value_type == ValueType::StaticContent || !p.statics.is_empty())
            && !p.statics.iter().any(|v| *v == text)
        {
            self.push(out, snip(named(K::ParameterStaticValue)));
        }
        let len = || text.chars().count() as u64;
        if let Some(len) = (p.min_len.is_some() || p.max_len.is_some()).then(len)
            && (p.min_len.is_some_and(|m| len < m) || p.max_len.is_some_and(|m| len > m))
        {
            self.push(
                out,
                snip(named(K::ParameterValueLength)).detail(format!("length {len}")),
            );
        }
        self.check_data_type(p, value, &text, out, &pname, sensitive);
        if let Some(re) = &p.regex
            && !re.is_match(&text)
        {
            self.push(out, snip(named(K::ParameterValueRegexp)));
        }
        let mut scanned = Cow::Borrowed(value);
        if p.base64 != Base64Mode::Disabled {
            match base64::engine::general_purpose::STANDARD.decode(value) {
                Ok(d)
                    if d.iter()
                        .all(|b| !b.is_ascii_control() || b.is_ascii_whitespace()) =>
                {
                    scanned = Cow::Owned(d);
                }
                Ok(_) => {}
                _ if p.base64 == Base64Mode::Required => {
                    self.push(out, snip(named(K::ParameterValueBase64)))
                }
                _ => {}
            }
        }
        if p.meta_check
            && matches!(p.value_type, ValueType::UserInput | ValueType::AutoDetect)
            && let Some(c) = p.value_table.first_bad(value)
        {
            self.push(out, snip(named(K::ParameterValueMetachar)).metachar(c));
        }
        if p.sig_check {
            let ov = &p.overrides;
            self.scan(
                s,
                out,
                Target::ParamName,
                Context::Parameter,
                Some(&pname),
                name,
                ov,
                false,
            );
            self.scan(
                s,
                out,
                Target::ParamValue,
                Context::Parameter,
                Some(&pname),
                &scanned,
                ov,
                sensitive,
            );
        } else if !self.sigs.is_empty()
            && matches!(loc, ParamLocation::Query | ParamLocation::FormData)
        {
            // Exempt parameter: record what it carries so the scan of the whole query string or
            // form body does not flag it.
            let db = SignatureDb::builtin();
            s.hits.clear();
            db.scan_memoized(MemoUse::AtLookUp, Target::ParamName, name, &mut s.hits);
            let memo = if sensitive {
                MemoUse::Off
            } else {
                MemoUse::AtLookUp
            };
            db.scan_memoized(memo, Target::ParamValue, &scanned, &mut s.hits);
            s.param_hits.extend_from_slice(&s.hits);
        }
    }

    fn check_data_type(
        &self,
        p: &CompiledParam,
        value: &[u8],
        text: &str,
        out: &mut Vec<Violation>,
        pname: &str,
        sensitive: bool,
    ) {
        if matches!(p.data_type, DataType::AlphaNumeric | DataType::Binary) {
            return;
        }
        let t = text.trim();
        let bad = match p.data_type {
            DataType::Integer => t.parse::<i64>().is_err(),
            DataType::Decimal => t.parse::<f64>().map_or(true, |f| !f.is_finite()),
            DataType::Boolean => !matches!(t.to_ascii_lowercase().as_str(), "true" | "false"),
            DataType::Email => !is_email(t),
            DataType::Phone => {
                !t.bytes()
                    .all(|b| b.is_ascii_digit() || b" +-().".contains(&b))
                    || !t.bytes().any(|b| b.is_ascii_digit())
            }
            DataType::AlphaNumeric | DataType::Binary => false,
        };
        let v = |k: K| {
            let v = Violation::new(k, Context::Parameter).named(pname.to_string());
            if sensitive {
                v.snippet(b"********")
            } else {
                v.snippet(value)
            }
        };
        if bad {
            self.push(
                out,
                v(K::ParameterDataType)
                    .detail(format!("expected {:?}", p.data_type).to_lowercase()),
            );
            return;
        }
        if matches!(p.data_type, DataType::Integer | DataType::Decimal)
            && let Ok(n) = t.parse::<f64>()
        {
            let low = p.min.is_some_and(|(m, ex)| if ex { n <= m } else { n < m });
            let high = p.max.is_some_and(|(m, ex)| if ex { n >= m } else { n > m });
            let multiple = p.multiple_of.is_some_and(|m| (n / m).fract().abs() > 1e-9);
            if low || high || multiple {
                self.push(out, v(K::ParameterNumericValue));
            }
        }
    }

    /// Mandatory parameters of the current URL (and global ones) that never appeared.
    pub(in crate::policy) fn check_mandatory(
        &self,
        s: &Scratch,
        out: &mut Vec<Violation>,
        body_done: bool,
    ) {
        if s.expects_body && !body_done {
            return;
        }
        for p in self
            .params
            .iter()
            .filter(|p| p.mandatory && p.m.glob.is_none())
        {
            if p.url
                .as_ref()
                .is_some_and(|u| !u.matches(&s.path, self.fold))
            {
                continue;
            }
            let key = name_key(p.m.name.as_bytes(), self.fold);
            if !s.params_seen.iter().any(|(k, _)| *k == key) {
                self.push(
                    out,
                    Violation::new(K::MandatoryParameter, Context::Parameter)
                        .named(p.m.name.clone()),
                );
            }
        }
    }
}

/// `bytes` as text: borrowed when valid UTF-8 (the standard library's check reads ASCII a word at a
/// time), else with replacement characters.
pub(in crate::policy) fn as_text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// FNV-1a of a parameter name (lower-cased when the policy is case-insensitive): the key of
/// `Scratch::params_seen`, so counting repeats allocates nothing.
fn name_key(name: &[u8], fold: bool) -> u64 {
    name.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        let b = if fold { b.to_ascii_lowercase() } else { *b };
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@.-_+".contains(&b))
}
