//! SVG charts drawn on the server (no script needed, nothing to vendor): a line chart of a few
//! series over time and a horizontal bar chart of top values (each bar a link). Colours and
//! fonts come from the console's stylesheet through classes, so the strict Content-Security-Policy
//! (no inline style) holds. Every text is escaped.

use std::fmt::Write as _;

use askama::filters::Escaper as _;

/// Text escaped for XML text and attributes, as the templates escape it.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Writing into a String cannot fail.
    let _ = askama::filters::Html.write_escaped_str(&mut out, s);
    out
}

const W: f64 = 1100.0;
const H: f64 = 240.0;
const LEFT: f64 = 48.0;
/// Width of a bar chart (two sit side by side).
const BAR_W: f64 = 720.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 10.0;

/// A line chart: `labels[i]` is the x label of point i, `series` are (name, values) with one
/// value per point. Series are styled by class `s0`, `s1`, ...
pub fn lines(title: &str, labels: &[String], series: &[(&str, Vec<f64>)]) -> String {
    let n = labels.len().max(2);
    let max = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max);
    // Four ticks of a round step (1, 2 or 5 times a power of ten).
    let step = nice(max / 4.0);
    let top = step * 4.0;
    let x = |i: usize| LEFT + (W - LEFT - 8.0) * i as f64 / (n - 1) as f64;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - v / top);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart lines" viewBox="0 0 {W} {H}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
    for k in 0..=4 {
        let v = top * f64::from(k) / 4.0;
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{x2}" y1="{yy:.1}" y2="{yy:.1}"/><text class="axis" x="{tx}" y="{ty:.1}" text-anchor="end">{v}</text>"#,
            x2 = W - 8.0,
            yy = y(v),
            tx = LEFT - 4.0,
            ty = y(v) + 4.0,
            v = short(v),
        );
    }
    for i in [0, labels.len() / 2, labels.len().saturating_sub(1)] {
        if let Some(l) = labels.get(i) {
            let anchor = if i == 0 {
                "start"
            } else if i + 1 == labels.len() {
                "end"
            } else {
                "middle"
            };
            let _ = write!(
                s,
                r#"<text class="axis" x="{:.1}" y="{}" text-anchor="{anchor}">{}</text>"#,
                x(i),
                H - 6.0,
                esc(l)
            );
        }
    }
    for (k, (name, values)) in series.iter().enumerate() {
        let pts: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{:.1},{:.1}", x(i), y(*v)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline class="s{k}" fill="none" points="{}"><title>{}</title></polyline>"#,
            pts.join(" "),
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}

/// A horizontal bar chart of (label, value, link) rows, longest bar = largest value.
pub fn bars(title: &str, rows: &[(String, u64, Option<String>)]) -> String {
    let row_h = 22.0;
    let h = row_h * rows.len().max(1) as f64 + 4.0;
    let label_w = 300.0;
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0).max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart bars" viewBox="0 0 {BAR_W} {h}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
    if rows.is_empty() {
        let _ = write!(
            s,
            r#"<text class="axis" x="4" y="16">nothing in this window</text>"#
        );
    }
    for (i, (label, value, link)) in rows.iter().enumerate() {
        let top = 2.0 + row_h * i as f64;
        let width = (BAR_W - label_w - 70.0) * (*value as f64 / max);
        let shown: String = if label.chars().count() > 44 {
            label.chars().take(43).chain(['…']).collect()
        } else {
            label.clone()
        };
        let body = format!(
            r#"<text class="label" x="{x}" y="{ty:.1}" text-anchor="end">{l}<title>{full}</title></text><rect class="bar" x="{bx}" y="{top:.1}" width="{width:.1}" height="{bh}"/><text class="value" x="{vx:.1}" y="{ty:.1}">{v}</text>"#,
            x = label_w - 6.0,
            ty = top + 15.0,
            l = esc(&shown),
            full = esc(label),
            bx = label_w,
            bh = row_h - 6.0,
            vx = label_w + width + 6.0,
            v = value,
        );
        match link {
            Some(href) => {
                let _ = write!(s, r#"<a href="{}">{body}</a>"#, esc(href));
            }
            None => s.push_str(&body),
        }
    }
    s.push_str("</svg>");
    s
}

/// A round upper bound for an axis (1, 2 or 5 times a power of ten).
fn nice(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|v| *v >= max)
        .unwrap_or(10.0 * p)
}

fn short(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_escape_and_scale() {
        let l = lines(
            "a<b",
            &["00:00".into(), "00:01".into(), "00:02".into()],
            &[("req", vec![0.0, 5.0, 10.0])],
        );
        assert!(l.contains("a&#60;b") && !l.contains("a<b"));
        assert!(l.contains(r#"<polyline class="s0""#));
        assert!(!l.contains("style="), "no inline style under the CSP");
        let b = bars(
            "top",
            &[
                ("<script>".into(), 3, Some("/ui/events?url=%2Fa".into())),
                ("b".into(), 1, None),
            ],
        );
        assert!(b.contains("&#60;script&#62;") && !b.contains("<script>"));
        assert!(b.contains(r#"<a href="/ui/events?url=%2Fa">"#));
        assert!(l.contains(">2.5<") || l.contains(">5<"), "round ticks: {l}");
        assert_eq!(nice(0.0), 1.0);
        assert_eq!(nice(7.0), 10.0);
        assert_eq!(nice(120.0), 200.0);
        assert_eq!(short(1500.0), "1.5k");
    }
}
