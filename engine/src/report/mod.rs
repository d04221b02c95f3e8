//! Reports: one renderer per format, all reading the same [`view::View`] (or, for JSON, the
//! [`verdict::VerdictDoc`]). Each reads only result artifacts.
//!
//! | format  | renderer                                  |
//! |---------|-------------------------------------------|
//! | `text`  | [`text`]: the terminal                     |
//! | `md`    | `templates/report.md` ([`markdown`])       |
//! | `html`  | `templates/report.html` ([`html`])         |
//! | `junit` | `templates/junit.xml`                      |
//! | `json`  | [`verdict`]                                |

pub mod console;
pub mod history;
pub mod html;
pub mod progress;
pub mod svg;
pub mod templates;
pub mod text;
pub mod verdict;
pub mod view;

use std::path::Path;

use anyhow::Context as _;

use crate::compare::Comparison;
use crate::result::RunResult;

/// GitHub's limit on a comment body and a job summary, in characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;
/// The Markdown report's budget: GitHub's limit less room for what the Action adds around it
/// (a marker, a link to the full report).
pub const MARKDOWN_BUDGET: usize = 60_000;

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Plain text for a terminal.
    Text,
    /// Markdown for a pull-request comment or a job summary (under 65,536 characters).
    Md,
    /// One self-contained HTML file with charts.
    Html,
    /// JUnit XML: each SLO and regression rule a test case.
    Junit,
    /// The JSON verdict (`loadgate schema verdict`).
    Json,
}

/// What a report is about.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub current: &'a RunResult,
    pub baseline: Option<&'a RunResult>,
    pub comparison: Option<&'a Comparison>,
    /// Earlier results in time order, oldest first, for a trend (the current one not
    /// included); empty for none.
    pub history: &'a [RunResult],
}

/// Renders `input` in `format`; templates come from `templates_dir` when it has them.
pub fn render(
    format: Format,
    input: &Input<'_>,
    templates_dir: Option<&Path>,
) -> anyhow::Result<String> {
    let view = view::build(input.current, input.baseline, input.comparison);
    let trend = (!input.history.is_empty()).then(|| history::trend(input.history, input.current));
    match format {
        Format::Text => Ok(text::render(&view, trend.as_ref())),
        Format::Json => {
            let doc = verdict::build(input.current, input.baseline, input.comparison, trend);
            Ok(serde_json::to_string_pretty(&doc)? + "\n")
        }
        Format::Md => markdown(&view, trend.as_ref(), templates_dir),
        Format::Junit => {
            let env = templates::environment(templates_dir);
            env.get_template(templates::JUNIT)?
                .render(minijinja::context! { view => view })
                .context("cannot render the JUnit report")
        }
        Format::Html => html::render(&view, input, trend.as_ref(), templates_dir),
    }
}

/// Renders the Markdown report within [`MARKDOWN_BUDGET`] characters: first whole; when too
/// long, with fewer targets' details, then fewer rows in the targets table (each with a note);
/// as a last resort cut at a line with a note.
pub fn markdown(
    view: &view::View,
    trend: Option<&history::Trend>,
    templates_dir: Option<&Path>,
) -> anyhow::Result<String> {
    let env = templates::environment(templates_dir);
    let template = env.get_template(templates::MARKDOWN)?;
    let n = view.targets.len();
    // (rows in the targets table, targets with details), most to least.
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
    let mut last = String::new();
    for (rows, details) in plans {
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

/// Writes `text` to `path`, or to stdout without a path.
pub fn output(text: &str, path: Option<&Path>) -> anyhow::Result<()> {
    match path {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write the report to `{}`", path.display())),
        None => {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}
