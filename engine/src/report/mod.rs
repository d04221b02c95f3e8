//! Reports: one renderer per format behind a small `Render` trait, all reading the same view
//! of a result (`view.rs`: every number already formatted) or, for JSON, the verdict document.
//! Each reads only result artifacts and their comparison; numbers are formatted by the crate's
//! `units` module.
//!
//! | format  | renderer                                                        |
//! |---------|-----------------------------------------------------------------|
//! | `text`  | `text.rs`: the terminal                                         |
//! | `md`    | [`markdown`]: `templates/report.md`, within GitHub's limit      |
//! | `html`  | `html.rs`: `templates/report.html` with SVG charts (`svg.rs`; the latency scales, `scales.rs`) |
//! | `junit` | `junit.rs`: `templates/junit.xml`                               |
//! | `json`  | [`verdict`]: the JSON verdict                                   |
//!
//! Over a history rather than one result: the dashboard (`dashboard.rs`: `templates/
//! dashboard.html`, each series' chart drawn by `series_chart.rs`), one page for all results.
//!
//! Beside them: the run's console summary ([`console`]; its insight lines `insight.rs`, its
//! histogram coloured by SLO level `levels.rs`; the optional measures'
//! sections `measures.rs`; the per-flow table `flows.rs`, the per-scenario and by-tag tables
//! `scenarios.rs` and the generator's health `health.rs`, shared by every format) and progress line (`progress.rs`), the trend
//! over several runs ([`history`]), the outputs of `loadgate history` (`changes.rs`: its list
//! and change-point report), the template environment (`templates.rs`) and the words
//! for how the rules were decided (`decisions.rs`: level, allowance, detectable effect, the
//! family of rules tested together).

pub(crate) mod changes;
pub mod console;
pub(crate) mod dashboard;
mod decisions;
mod flows;
mod health;
pub mod history;
mod html;
mod http3;
mod insight;
mod junit;
mod levels;
pub(crate) mod lines;
pub mod markdown;
mod markdown_escape;
mod measures;
#[cfg(test)]
mod messages_tests;
pub(crate) mod progress;
mod scales;
mod scenarios;
mod series_chart;
mod spec_lines;
mod svg;
mod target_view;
mod templates;
mod text;
pub mod verdict;
mod verdict_flows;
mod view;

use std::path::Path;

use anyhow::Context as _;

use crate::compare::Comparison;
use crate::result::RunResult;

pub use templates::TemplatesError;

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
    /// The result reported on.
    pub current: &'a RunResult,
    /// The result it is compared with, if any.
    pub baseline: Option<&'a RunResult>,
    /// The comparison of `current` with `baseline`, when there is a baseline.
    pub comparison: Option<&'a Comparison>,
    /// Earlier results in time order, oldest first, for a trend (the current one not
    /// included); empty for none.
    pub history: &'a [RunResult],
    /// The spec file the results came from, as the repository names it (e.g.
    /// `perf/api.loadgate.yaml`): the JUnit report gives it as each test case's `file`, so
    /// test-report actions annotate the spec. `None` when unknown.
    pub spec_path: Option<&'a Path>,
}

/// What every renderer reads: the input, its view with every number formatted, the trend
/// when there is a history, and the folder of overriding templates.
struct Report<'a> {
    input: &'a Input<'a>,
    view: view::View,
    trend: Option<history::Trend>,
    templates_dir: Option<&'a Path>,
}

/// One report format.
trait Render {
    /// The whole report as text.
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String>;
}

impl Format {
    fn renderer(self) -> &'static dyn Render {
        match self {
            Format::Text => &text::Text,
            Format::Md => &markdown::Markdown,
            Format::Html => &html::Html,
            Format::Junit => &junit::Junit,
            Format::Json => &verdict::Json,
        }
    }
}

/// Renders `input` in `format`; templates come from `templates_dir` when it has them.
/// Errors: `templates_dir` is given and is not a folder holding a template
/// ([`TemplatesError`]), a template fails to render.
pub fn render(
    format: Format,
    input: &Input<'_>,
    templates_dir: Option<&Path>,
) -> anyhow::Result<String> {
    if let Some(dir) = templates_dir {
        templates::check_folder(dir)?;
    }
    let report = Report {
        input,
        view: view::build(
            input.current,
            input.baseline,
            input.comparison,
            input.history.len(),
        ),
        trend: (!input.history.is_empty()).then(|| history::trend(input.history, input.current)),
        templates_dir,
    };
    format.renderer().render(&report)
}

/// Writes `text` to `path` whole or not at all (`crate::result::OutFile`: a temporary file
/// renamed onto it), or to stdout without a path. Errors: `path`'s folder cannot take a file
/// ([`crate::result::OutError`]), or writing failed (a full disk: `path` keeps what it had).
pub(crate) fn output(text: &str, path: Option<&Path>) -> anyhow::Result<()> {
    match path {
        Some(path) => crate::result::OutFile::create(path)?
            .write_bytes(text.as_bytes())
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
