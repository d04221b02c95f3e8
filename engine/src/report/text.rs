//! The comparison as plain text for a terminal (`loadgate compare`, `run --baseline`, `ab`):
//! the checks with their numbers (a rule's with its minimum detectable change, and in a paired
//! comparison its per-epoch changes in brief), the targets, the verdict last.

use std::fmt::Write as _;

use super::history::Trend;
use super::view::{CheckKind, CheckRow, View};
use super::{Render, Report};
use crate::spec::printable;

/// The plain-text renderer.
pub(super) struct Text;

impl Render for Text {
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String> {
        Ok(render(&report.view, report.trend.as_ref()))
    }
}

/// Renders `view` as text; names with control and hidden characters escaped (`spec::printable`).
fn render(view: &View, trend: Option<&Trend>) -> String {
    let mut out = String::new();
    let command = if view.paired { "ab" } else { "compare" };
    let _ = writeln!(out, "\nloadgate {command}: {}", printable(&view.spec));
    for note in &view.notes {
        let _ = writeln!(out, "  note: {}", printable(note));
    }
    let _ = writeln!(
        out,
        "\n  {:<12}{:>12}{:>12}{:>9}",
        "", view.current_label, "baseline", "change"
    );
    for row in &view.headline {
        let _ = writeln!(
            out,
            "  {:<12}{:>12}{:>12}{:>9}",
            row.label, row.current, row.baseline, row.change
        );
    }
    let checks: Vec<&CheckRow> = view.slo.iter().chain(&view.rules).collect();
    if !checks.is_empty() {
        let width = checks
            .iter()
            .map(|c| c.kind.word().len() + 1 + c.name.chars().count())
            .max()
            .unwrap_or(0);
        let _ = writeln!(out);
        for c in checks {
            let name = format!("{} {}", c.kind.word(), printable(&c.name));
            let detectable = if c.kind == CheckKind::Rule {
                format!("; detectable: {}", c.detectable)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<12} {name:<width$}  {:>10} (baseline {}, {}{detectable})",
                c.verdict, c.measured, c.baseline, c.change
            );
            if c.kind == CheckKind::Rule {
                let _ = writeln!(out, "  {:<12} {}", "", printable(&c.reason));
                if let Some(e) = &c.epochs {
                    let _ = writeln!(out, "  {:<12} per epoch {} {}", "", e.sparkline, e.summary);
                }
            }
        }
    }
    if view.targets.len() > 1 {
        let width = view
            .targets
            .iter()
            .map(|t| t.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        let _ = writeln!(
            out,
            "\n  {:<width$}  {:>12} {:>9} {:>10} {:>9}",
            "target", "throughput", "errors", "p95", "change"
        );
        for t in &view.targets {
            let _ = writeln!(
                out,
                "  {:<width$}  {:>12} {:>9} {:>10} {:>9}",
                printable(&t.name),
                t.rps,
                t.error_rate,
                t.p95,
                t.p95_change
            );
        }
    }
    out.push_str(&super::flows::text_table(&view.flows));
    if let Some(trend) = trend {
        let _ = writeln!(out, "\n  trend over {} runs", trend.runs.len());
        for m in &trend.metrics {
            let _ = writeln!(
                out,
                "  {:<12} {}  (vs previous {}, vs median {})",
                m.label,
                m.values.join("  "),
                m.vs_previous,
                m.vs_median
            );
        }
    }
    let _ = writeln!(out, "\n{}", view.summary);
    out
}
