//! The comparison as plain text for a terminal (`loadgate compare`, `run --baseline`, `ab`):
//! the checks with their numbers (a rule's with its effective allowance, its interval at its
//! one-sided level and its minimum detectable effect at 80% power, and in a paired comparison
//! its per-sub-run changes in brief), the number of rules tested together at the per-run
//! false-alarm rate, the scenarios (after the headline), the targets and their tags, the
//! verdict last; a `warn` check that failed is a `warning`.

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

/// A rule's numbers under its line: the effective allowance, the interval at its one-sided
/// level and the minimum detectable effect at 80% power; the reason; in a paired comparison its
/// changes per sub-run.
fn rule_lines(out: &mut String, c: &CheckRow) {
    if c.tested {
        let _ = writeln!(
            out,
            "  {:<12} allowed {}; interval {} at one-sided level {}; detectable at 80% power {}",
            "", c.allowed, c.interval, c.level, c.mde
        );
    } else {
        let _ = writeln!(out, "  {:<12} allowed {}; not tested", "", c.allowed);
    }
    let _ = writeln!(out, "  {:<12} {}", "", printable(&c.reason));
    if let Some(e) = &c.sub_runs {
        let _ = writeln!(
            out,
            "  {:<12} per sub-run {} {}",
            "", e.sparkline, e.summary
        );
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
    out.push_str(&super::scenarios::scenario_text(&view.scenarios));
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
            let state = if c.warning { "warning" } else { c.verdict };
            let _ = writeln!(
                out,
                "  {state:<12} {name:<width$}  {:>10} (baseline {}, {})",
                c.measured, c.baseline, c.change
            );
            if c.kind == CheckKind::Rule {
                rule_lines(&mut out, c);
            }
        }
        if !view.family.is_empty() {
            let _ = writeln!(out, "\n  {}", printable(&view.family));
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
    out.push_str(&super::scenarios::tag_text(&view.tag_groups));
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
