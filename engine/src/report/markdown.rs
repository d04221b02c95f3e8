//! The Markdown report (pull-request comment, job summary): `templates/report.md`, kept within
//! GitHub's size limit. The one place the engine cuts Markdown.

use std::path::Path;

use anyhow::Context as _;

use super::history::Trend;
use super::view::View;
use super::{Render, Report, templates};

/// GitHub's limit on a comment body and a job summary, in characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;
/// The Markdown report's budget, in characters: GitHub's limit less room for what the Action
/// adds around it (a marker, a link to the full report).
const MARKDOWN_BUDGET: usize = 60_000;

/// The Markdown renderer.
pub(super) struct Markdown;

impl Render for Markdown {
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String> {
        render(&report.view, report.trend.as_ref(), report.templates_dir)
    }
}

/// Renders the Markdown report within [`MARKDOWN_BUDGET`] characters: first whole; when too
/// long, with fewer targets' details, then fewer rows in the targets table (each with a note);
/// as a last resort cut at a line with a note.
fn render(
    view: &View,
    trend: Option<&Trend>,
    templates_dir: Option<&Path>,
) -> anyhow::Result<String> {
    let env = templates::environment(templates_dir);
    let template = env.get_template(templates::MARKDOWN)?;
    let n = view.targets.len();
    let mut last = String::new();
    for (rows, details) in plans(n) {
        let text = template
            .render(minijinja::context! {
                view => view,
                history => trend,
                table_targets => &view.targets[..rows],
                detail_targets => &view.targets[..details],
                omitted_rows => n - rows,
                omitted_details => n - details,
            })
            .context("cannot render the Markdown report")?;
        if text.chars().count() <= MARKDOWN_BUDGET {
            return Ok(text);
        }
        last = text;
    }
    Ok(truncate_markdown(&last, MARKDOWN_BUDGET))
}

/// What to show of `n` targets, from most to least: (rows in the targets table, targets with
/// details).
fn plans(n: usize) -> Vec<(usize, usize)> {
    let mut plans = vec![(n, n)];
    for details in [50, 20, 10, 5, 0] {
        if details < n {
            plans.push((n, details));
        }
    }
    for rows in [500, 200, 100, 50, 20, 0] {
        if rows < n {
            plans.push((rows, 0));
        }
    }
    plans
}

/// Cuts `text` at a line break so that it, the `</details>` closing any section left open and
/// a note fit in `budget` characters, and adds them.
pub fn truncate_markdown(text: &str, budget: usize) -> String {
    const NOTE: &str = "\n\n*This report was cut to stay under GitHub's size limit; the HTML and JSON reports are complete.*\n";
    const CLOSE: &str = "\n</details>";
    // Lines that fit on their own, then fewer until the closing tags and the note fit too.
    let mut used = 0;
    let mut lines: Vec<&str> = text
        .lines()
        .take_while(|l| {
            used += l.chars().count() + 1;
            used <= budget
        })
        .collect();
    loop {
        let body = lines.join("\n");
        // An open <details> would swallow the note.
        let open = body
            .matches("<details>")
            .count()
            .saturating_sub(body.matches("</details>").count());
        let out = format!("{body}{}{NOTE}", CLOSE.repeat(open));
        if out.chars().count() <= budget || lines.is_empty() {
            return out;
        }
        lines.pop();
    }
}
