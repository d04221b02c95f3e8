//! The commands that read result files: `loadgate compare` (a result against a baseline),
//! `loadgate report` (a result, a trend, or a `loadgate ab` document) and `loadgate merge`
//! (the shards of one run into one result).

use std::path::{Path, PathBuf};

use crate::compare::gate::Outcome;
use crate::options::{CompareOptions, ReportOptions};
use crate::report::verdict::Verdict;
use crate::{compare, history, report, result};

/// `loadgate compare`: prints the comparison and ends by its verdict.
pub(crate) fn compare_files(options: &CompareOptions) -> anyhow::Result<Outcome> {
    let baseline = result::read(&options.baseline)?;
    let current = result::read(&options.current)?;
    let history = history::read(&options.baseline_history)?;
    let comparison = compare::compare_with_history(&baseline, &current, &history)?;
    let input = report::Input {
        current: &current,
        baseline: Some(&baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: options.spec.as_deref(),
    };
    let text = report::render(options.format, &input, options.templates.as_deref())?;
    report::output(&text, options.output.as_deref())?;
    Ok(Verdict::of(&current, Some(&comparison)).outcome())
}

/// `loadgate report`: renders the latest result, compared with a baseline when given, with a
/// trend when there are several. Succeeds whatever the verdict (the gate is `run`/`compare`).
pub(crate) fn report_files(options: &ReportOptions) -> anyhow::Result<Outcome> {
    if let Some(dir) = &options.dashboard {
        return report_dashboard(options, dir);
    }
    if let [path] = options.results.as_slice()
        && path.is_file()
        && let Some(ab) = result::ab::read(path)?
    {
        return report_ab(options, &ab);
    }
    let mut results = history::read(&options.results)?;
    let current = results.pop().expect("at least one result");
    if let Some(other) = results.iter().find(|r| r.spec.name != current.spec.name) {
        return Err(compare::CompareError::DifferentSpecs {
            baseline: other.spec.name.clone(),
            current: current.spec.name.clone(),
        }
        .into());
    }
    let keep = options.window.max(1) - 1;
    let history = &results[results.len().saturating_sub(keep)..];
    let baseline = options.baseline.as_deref().map(result::read).transpose()?;
    let earlier = history::read(&options.baseline_history)?;
    let comparison = baseline
        .as_ref()
        .map(|b| compare::compare_with_history(b, &current, &earlier))
        .transpose()?;
    let input = report::Input {
        current: &current,
        baseline: baseline.as_ref(),
        comparison: comparison.as_ref(),
        history,
        spec_path: options.spec.as_deref(),
    };
    let text = report::render(options.format, &input, options.templates.as_deref())?;
    report::output(&text, options.output.as_deref())?;
    Ok(Outcome::Passed)
}

/// `loadgate report AB.json`: the paired report of a `loadgate ab --out` document (the
/// candidate against the baseline, the rules judged on the pairs).
fn report_ab(options: &ReportOptions, ab: &result::ab::AbResult) -> anyhow::Result<Outcome> {
    if let Some(path) = &options.baseline {
        anyhow::bail!(result::ReadError::Invalid {
            path: path.display().to_string(),
            reason: "`--baseline` does not apply to a `loadgate ab` document, which holds its \
                     own baseline: leave it out"
                .to_string(),
        });
    }
    let comparison = compare::compare_paired(ab)?;
    let input = report::Input {
        current: &ab.candidate,
        baseline: Some(&ab.baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: options.spec.as_deref(),
    };
    let text = report::render(options.format, &input, options.templates.as_deref())?;
    report::output(&text, options.output.as_deref())?;
    Ok(Outcome::Passed)
}

/// `loadgate merge`: merges the shards' `results` into `out` (`allow_missing`: shards may be
/// missing), prints its summary and judges it as `run` judges one: by its SLOs (a shard's are
/// not).
pub(crate) fn merge_files(
    results: &[PathBuf],
    out: &Path,
    allow_missing: bool,
) -> anyhow::Result<Outcome> {
    let results = results
        .iter()
        .map(|p| result::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = result::merge::merge(&results, result::merge::MergeOptions { allow_missing })?;
    result::write(&merged, out)?;
    eprintln!(
        "loadgate: merged {} results into `{}`",
        results.len(),
        out.display()
    );
    print!(
        "{}",
        report::console::summary(
            &merged,
            report::console::SummaryOptions {
                color: report::console::color(false),
                verbose: false,
            }
        )
    );
    Ok(Verdict::of(&merged, None).outcome())
}

/// `loadgate report --dashboard DIR`: the dashboard of the history in `dir` (its series, of
/// `options.branch` and of the spec named `options.spec` when given). Errors: `dir` holds no
/// result, or none of that branch and spec (`ReadError::Invalid`, naming the specs it holds).
fn report_dashboard(options: &ReportOptions, dir: &Path) -> anyhow::Result<Outcome> {
    let results = history::read(&[dir.to_path_buf()])?;
    let spec = options
        .spec
        .as_deref()
        .map(|p| p.to_string_lossy().into_owned());
    let branch = options.branch.as_deref();
    let mut series = history::series(&results, branch);
    if let Some(name) = &spec {
        series.retain(|s| &s.spec == name);
    }
    if series.is_empty() {
        let mut specs: Vec<&str> = results.iter().map(|r| r.spec.name.as_str()).collect();
        specs.sort_unstable();
        specs.dedup();
        let chosen = match (&spec, branch) {
            (Some(s), Some(b)) => format!("of spec `{s}` on branch `{b}`"),
            (Some(s), None) => format!("of spec `{s}`"),
            (None, Some(b)) => format!("on branch `{b}`"),
            (None, None) => "that measured the service (valid, not interrupted, whole runs)".into(),
        };
        anyhow::bail!(result::ReadError::Invalid {
            path: dir.display().to_string(),
            reason: format!(
                "it holds no result {chosen}; its specs: {}",
                specs.join(", ")
            ),
        });
    }
    let shown: std::collections::BTreeSet<(&str, &str)> = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| (s.spec.as_str(), p.started_at.as_str()))
        })
        .collect();
    let dashboard = report::dashboard::Dashboard {
        source: &dir.display().to_string(),
        branch,
        results: shown.len(),
        series: &series,
    };
    let html = report::dashboard::render(&dashboard, options.templates.as_deref())?;
    report::output(&html, options.output.as_deref())?;
    Ok(Outcome::Passed)
}
