//! The JUnit XML report: `templates/junit.xml`, each SLO and each regression rule a test case.

use anyhow::Context as _;

use super::{Render, Report, templates};

/// The JUnit XML renderer.
pub(super) struct Junit;

impl Render for Junit {
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String> {
        let env = templates::environment(report.templates_dir);
        env.get_template(templates::JUNIT)?
            .render(minijinja::context! { view => report.view })
            .context("cannot render the JUnit report")
    }
}
