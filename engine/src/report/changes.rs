//! The outputs of `loadgate history`: the list of a history's results (`list`) and the
//! change-point report (`show`) in text, Markdown (escaped as every Markdown report is) or JSON
//! (`history::ChangeReport` as it is).

use std::fmt::Write as _;

use crate::history::{
    Change, ChangeEvent, ChangeReport, Commit, DriftChange, Entry, GroupChanges, SeriesMetric,
};
use crate::spec::printable;
use crate::units::{Unit, format_relative};

use super::templates::escape_markdown;

/// The format of `loadgate history show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ChangeFormat {
    /// Plain text for a terminal.
    Text,
    /// Markdown for a job summary or an issue.
    #[value(alias = "md")]
    Markdown,
    /// The report's data as JSON (docs/history.md describes its fields).
    Json,
}

/// The results of a history as a table, in the order given: time, spec, branch, commit (12
/// digits), runner type, file; `-` for what a result does not record.
pub(crate) fn list(entries: &[Entry]) -> String {
    let mut rows = vec![[
        "time".to_string(),
        "spec".to_string(),
        "branch".to_string(),
        "commit".to_string(),
        "runner type".to_string(),
        "file".to_string(),
    ]];
    for e in entries {
        let source = e.result.source.as_ref();
        let part = |v: Option<&String>| v.map_or_else(|| "-".to_string(), |v| printable(v));
        rows.push([
            printable(&e.result.started_at),
            printable(&e.result.spec.name),
            part(source.and_then(|s| s.branch.as_ref())),
            part(source.and_then(|s| s.commit.as_ref()))
                .chars()
                .take(12)
                .collect(),
            printable(&e.result.environment.runner_type()),
            printable(&e.path.display().to_string()),
        ]);
    }
    let mut widths = [0; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    if entries.is_empty() {
        out.push_str("(no results)\n");
    }
    out
}

/// The change-point report in `format`. Errors: none in practice (JSON serialization).
pub(crate) fn render(report: &ChangeReport, format: ChangeFormat) -> anyhow::Result<String> {
    Ok(match format {
        ChangeFormat::Json => serde_json::to_string_pretty(report)? + "\n",
        ChangeFormat::Text => text(report),
        ChangeFormat::Markdown => markdown(report),
    })
}

/// The report for a terminal.
fn text(report: &ChangeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(report));
    for g in &report.groups {
        group_text(&mut out, g);
    }
    out
}

/// One spec and runner type for a terminal.
fn group_text(out: &mut String, g: &GroupChanges) {
    let _ = writeln!(
        out,
        "\n{} on {} ({} results, {} to {})",
        printable(&g.spec),
        printable(&g.runner_type),
        g.results,
        printable(&g.first),
        printable(&g.last)
    );
    for e in &g.events {
        let _ = writeln!(
            out,
            "  {}result {} of {}, {}: commits {}..{}",
            if e.new { "NEW " } else { "" },
            e.result,
            g.results,
            printable(&e.after.started_at),
            printable(&short(&e.before)),
            printable(&short(&e.after)),
        );
        for c in &e.changes {
            let _ = writeln!(out, "    {}", printable(&change_line(c)));
        }
    }
    for d in &g.drifts {
        let _ = writeln!(out, "  drift: {}", printable(&drift_line(d)));
    }
    if g.events.is_empty() && g.drifts.is_empty() {
        out.push_str("  no change points, no drift\n");
    }
}

/// The report as Markdown: every name escaped, commits linked when their pages are known.
fn markdown(report: &ChangeReport) -> String {
    let mut out = String::from("## loadgate history: change points\n\n");
    let _ = writeln!(out, "{}", escape_markdown(&headline(report)));
    for g in &report.groups {
        let _ = writeln!(
            out,
            "\n### {} · {}\n\n{} results, {} to {}.\n",
            escape_markdown(&g.spec),
            escape_markdown(&g.runner_type),
            g.results,
            escape_markdown(&g.first),
            escape_markdown(&g.last)
        );
        for e in &g.events {
            event_markdown(&mut out, e, g.results);
        }
        for d in &g.drifts {
            let _ = writeln!(out, "- Drift: {}", escape_markdown(&drift_line(d)));
        }
        if g.events.is_empty() && g.drifts.is_empty() {
            out.push_str("No change points, no drift.\n");
        }
    }
    out
}

/// One event as a Markdown list item with its changes beneath.
fn event_markdown(out: &mut String, e: &ChangeEvent, results: usize) {
    let _ = writeln!(
        out,
        "- {}result {} of {}, {}: commits {}..{}",
        if e.new { "**NEW** " } else { "" },
        e.result,
        results,
        escape_markdown(&e.after.started_at),
        commit_markdown(&e.before),
        commit_markdown(&e.after),
    );
    for c in &e.changes {
        let _ = writeln!(out, "  - {}", escape_markdown(&change_line(c)));
    }
}

/// The first line of the report: what it covers and what NEW means.
fn headline(report: &ChangeReport) -> String {
    let results: usize = report.groups.iter().map(|g| g.results).sum();
    let new: usize = report
        .groups
        .iter()
        .map(|g| g.events.iter().filter(|e| e.new).count())
        .sum();
    format!(
        "{results} results in {} group(s) of one spec on one runner type; {new} new change \
         point(s) (NEW: within the last {} results of its group).",
        report.groups.len(),
        report.recent
    )
}

/// A commit as 12 digits, `unknown` when not recorded.
fn short(commit: &Commit) -> String {
    commit
        .commit
        .as_deref()
        .map_or_else(|| "unknown".to_string(), |c| c.chars().take(12).collect())
}

/// A commit as Markdown code, linked to its page when that is an `http(s)` URL.
fn commit_markdown(commit: &Commit) -> String {
    let code = format!("`{}`", short(commit).replace('`', "'"));
    match commit.commit_url.as_deref().and_then(link_target) {
        Some(url) => format!("[{code}]({url})"),
        None => code,
    }
}

/// `url` as a Markdown link target: only `http://` and `https://` URLs, with the characters
/// that would end or break the target (spaces, parentheses, angle brackets, quotes,
/// backslashes, control characters) percent-encoded; `None` for any other scheme.
fn link_target(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) {
        return None;
    }
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        if c.is_control() || crate::spec::is_hidden(c) || " ()<>\"'\\`[]".contains(c) {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// `total p95: +20.0% (95% interval +15.1% to +25.0%), 1.20ms → 1.44ms`.
fn change_line(c: &Change) -> String {
    let unit = unit(c.metric);
    format!(
        "{} {}: {} (95% interval {} to {}), {} → {}",
        c.scope,
        c.metric,
        shown(c.relative, c.change),
        shown(c.relative, c.low),
        shown(c.relative, c.high),
        unit.format(c.before),
        unit.format(c.after),
    )
}

/// `total p50: +1.0% a result over the last 10 (95% interval +0.6% to +1.4%)`.
fn drift_line(d: &DriftChange) -> String {
    format!(
        "{} {}: {} a result over the last {} (95% interval {} to {})",
        d.scope,
        d.metric,
        shown(d.relative, d.per_result),
        d.results,
        shown(d.relative, d.low),
        shown(d.relative, d.high),
    )
}

/// A change: `+20.0%` when relative, else a difference of fractions (`+0.500%`).
fn shown(relative: bool, value: f64) -> String {
    if relative {
        format_relative(Some(value))
    } else {
        Unit::Ratio.format_signed(value)
    }
}

/// The unit of a metric's values.
fn unit(metric: SeriesMetric) -> Unit {
    match metric {
        SeriesMetric::P50 | SeriesMetric::P95 | SeriesMetric::P99 => Unit::Micros,
        SeriesMetric::Throughput => Unit::PerSecond,
        SeriesMetric::ErrorRate => Unit::Ratio,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_every_name_and_links_only_web_pages() {
        let hostile = "<img src=x onerror=alert(1)>|*@team";
        let commit = |c: &str, url: &str| Commit {
            started_at: "2026-11-12T02:00:00Z".to_string(),
            branch: Some(hostile.to_string()),
            commit: Some(c.to_string()),
            commit_url: Some(url.to_string()),
        };
        let report = ChangeReport {
            recent: 5,
            groups: vec![GroupChanges {
                spec: hostile.to_string(),
                runner_type: "linux-x86_64, A, 4 CPUs".to_string(),
                results: 12,
                first: "2026-11-01T02:00:00Z".to_string(),
                last: "2026-11-12T02:00:00Z".to_string(),
                events: vec![ChangeEvent {
                    new: true,
                    result: 12,
                    before: commit("`x`", "javascript:alert(1)"),
                    after: commit("abc", "https://example.com/c/abc)"),
                    changes: vec![Change {
                        scope: hostile.to_string(),
                        metric: SeriesMetric::P95,
                        relative: true,
                        change: 0.2,
                        low: 0.1,
                        high: 0.3,
                        before: 1000.0,
                        after: 1200.0,
                        p_value: 1e-6,
                    }],
                }],
                drifts: Vec::new(),
            }],
        };
        let md = render(&report, ChangeFormat::Markdown).unwrap();
        assert!(!md.contains("<img"), "{md}");
        assert!(!md.contains("javascript:"), "{md}");
        assert!(
            md.contains("&lt;img src=x onerror=alert(1)&gt;\\|\\*@\u{200B}team"),
            "{md}"
        );
        assert!(md.contains("[`abc`](https://example.com/c/abc%29)"), "{md}");
        assert!(md.contains("commits `'x'`..["), "{md}");
        assert!(
            md.contains("+20.0% (95% interval +10.0% to +30.0%), 1.00ms → 1.20ms"),
            "{md}"
        );
    }

    #[test]
    fn only_web_links_are_linked() {
        assert_eq!(link_target("javascript:alert(1)"), None);
        assert_eq!(
            link_target("https://example.com/c/a b)(x"),
            Some("https://example.com/c/a%20b%29%28x".to_string())
        );
    }
}
