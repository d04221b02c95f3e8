//! The self-contained HTML report: `templates/report.html` with inline SVG charts.

use std::path::Path;

use anyhow::Context as _;

use super::history::Trend;
use super::view::View;
use super::{Input, templates};

/// Renders the HTML report.
pub fn render(
    view: &View,
    _input: &Input<'_>,
    trend: Option<&Trend>,
    templates_dir: Option<&Path>,
) -> anyhow::Result<String> {
    let env = templates::environment(templates_dir);
    env.get_template(templates::HTML)?
        .render(minijinja::context! { view => view, history => trend })
        .context("cannot render the HTML report")
}
