//! A line diff for "pending changes": the applied and the edited policy documents, pretty-printed,
//! compared by their longest common subsequence of lines. Documents longer than [`MAX_LINES`] are
//! compared by their common head and tail only (the part between shows as removed and added), so a
//! huge document costs a bounded amount of work.

/// Lines compared by the full algorithm (its table has MAX_LINES² cells at most).
pub const MAX_LINES: usize = 3000;

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    Same(String),
    Removed(String),
    Added(String),
}

impl Line {
    pub fn class(&self) -> &'static str {
        match self {
            Line::Same(_) => "same",
            Line::Removed(_) => "del",
            Line::Added(_) => "add",
        }
    }
    pub fn text(&self) -> String {
        match self {
            Line::Same(t) => format!("  {t}"),
            Line::Removed(t) => format!("- {t}"),
            Line::Added(t) => format!("+ {t}"),
        }
    }
}

/// The diff from `old` to `new`, with at most `context` unchanged lines around each change.
pub fn diff(old: &str, new: &str, context: usize) -> Vec<Line> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut mid = Vec::new();
    if ma.len() <= MAX_LINES && mb.len() <= MAX_LINES {
        // lcs[i][j]: the longest common subsequence of ma[i..] and mb[j..].
        let (n, m) = (ma.len(), mb.len());
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * (m + 1) + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                mid.push(Line::Same(ma[i].to_string()));
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i * (m + 1) + j + 1] > lcs[(i + 1) * (m + 1) + j]) {
                mid.push(Line::Added(mb[j].to_string()));
                j += 1;
            } else {
                mid.push(Line::Removed(ma[i].to_string()));
                i += 1;
            }
        }
    } else {
        mid.extend(ma.iter().map(|l| Line::Removed(l.to_string())));
        mid.extend(mb.iter().map(|l| Line::Added(l.to_string())));
    }
    let mut all: Vec<Line> = a[..head]
        .iter()
        .map(|l| Line::Same(l.to_string()))
        .collect();
    all.extend(mid);
    all.extend(
        a[a.len() - tail..]
            .iter()
            .map(|l| Line::Same(l.to_string())),
    );
    // Keep the changes and `context` lines around them.
    let changed: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, Line::Same(_)))
        .map(|(i, _)| i)
        .collect();
    all.into_iter()
        .enumerate()
        .filter(|(i, _)| changed.iter().any(|c| c.abs_diff(*i) <= context))
        .map(|(_, l)| l)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_with_context() {
        let d = diff("a\nb\nc\nd\ne\n", "a\nb\nX\nd\ne\nf\n", 1);
        assert_eq!(
            d,
            vec![
                Line::Same("b".into()),
                Line::Removed("c".into()),
                Line::Added("X".into()),
                Line::Same("d".into()),
                Line::Same("e".into()),
                Line::Added("f".into()),
            ]
        );
        assert!(diff("same\n", "same\n", 3).is_empty());
        let big: String = (0..5000).map(|i| format!("{i}\n")).collect();
        let big2 = big.replace("2500\n", "changed\n");
        let d = diff(&big, &big2, 0);
        assert_eq!(
            d,
            vec![Line::Removed("2500".into()), Line::Added("changed".into())]
        );
    }
}
