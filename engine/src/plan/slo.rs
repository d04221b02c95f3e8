//! Service level objectives: a spec's `slo` blocks parsed into thresholds.

use super::Errors;
use super::threshold::{Metric, Scope, Threshold};
use crate::spec;

/// Parses the thresholds of one `slo` block (at `path`, applying to `scope`) and their options;
/// every problem goes to `errors`.
pub(super) fn build_slo(
    slo: &spec::Slo,
    path: &str,
    scope: Scope,
    errors: &mut Errors,
) -> Vec<Threshold> {
    let mut out = Vec::new();
    for (metric, list) in [
        (Metric::Latency, &slo.latency),
        (Metric::Errors, &slo.errors),
        (Metric::Requests, &slo.requests),
        (Metric::Checks, &slo.checks),
    ] {
        for (i, entry) in list.iter().enumerate() {
            let path = format!("{path}.{}[{i}]", metric.name());
            let (text, options) = match entry {
                spec::ThresholdSpec::Expression(text) => (text, None),
                spec::ThresholdSpec::Detailed(d) => (&d.threshold, Some(d)),
            };
            if !errors.printable(&path, text) {
                continue;
            }
            let mut threshold = match Threshold::parse(scope, metric, text) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(path, e);
                    continue;
                }
            };
            if let Some(options) = options {
                threshold.abort_on_fail = options.abort_on_fail;
                if let Some(after) = &options.abort_after {
                    if !options.abort_on_fail {
                        errors.push(format!("{path}.abort_after"), "needs `abort_on_fail: true`");
                    }
                    threshold.abort_after = errors
                        .duration(&format!("{path}.abort_after"), after, true)
                        .unwrap_or_default();
                }
                if let Some(window) = &options.window {
                    let field = format!("{path}.window");
                    if scope != Scope::Total {
                        errors.push(
                            &field,
                            "windows apply to the whole run's `slo`, not per target",
                        );
                    } else if metric == Metric::Checks {
                        errors.push(&field, "`checks` thresholds have no windows");
                    } else if let Some(d) = errors.duration(&field, window, false) {
                        if d.subsec_nanos() != 0 {
                            errors.push(&field, "a window is a whole number of seconds");
                        } else {
                            threshold.window_s = Some(d.as_secs().min(u64::from(u32::MAX)) as u32);
                        }
                    }
                }
                if options.abort_on_fail && scope != Scope::Total {
                    errors.push(
                        format!("{path}.abort_on_fail"),
                        "aborting applies to the whole run's `slo`, not per target",
                    );
                }
            }
            out.push(threshold);
        }
    }
    out
}
