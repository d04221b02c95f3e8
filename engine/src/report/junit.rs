//! The JUnit XML report: `templates/junit.xml`, each SLO and each regression rule a test case,
//! with `time` in seconds on every suite and case (test-report actions read it) and the spec's
//! path as each case's `file` when it is known (so they annotate the spec).

use anyhow::Context as _;

use super::{Render, Report, templates};

/// The JUnit XML renderer.
pub(super) struct Junit;

impl Render for Junit {
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String> {
        // With `/` on every system: GitHub's annotations take repository paths.
        let spec_file = report
            .input
            .spec_path
            .map(|p| p.to_string_lossy().replace('\\', "/"));
        let env = templates::environment(report.templates_dir);
        env.get_template(templates::JUNIT)?
            .render(minijinja::context! { view => report.view, spec_file => spec_file })
            .context("cannot render the JUnit report")
    }
}
