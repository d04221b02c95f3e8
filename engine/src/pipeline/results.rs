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
        report::console::summary(&merged, report::console::color(false))
    );
    Ok(Verdict::of(&merged, None).outcome())
}
