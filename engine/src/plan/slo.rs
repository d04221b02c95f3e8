//! Service level objectives: a spec's `slo` blocks parsed into thresholds, and the default
//! `errors` threshold of the whole run ([`DEFAULT_ERRORS`]).

use super::Errors;
use super::tags::TagSelector;
use super::threshold::{Metric, Scope, Severity, Threshold};
use crate::spec;

/// The whole run's `errors` threshold when the spec's top-level `slo` has none: a run in which
/// every request failed fails (and so does one in which no request ended, see
/// `result/slo.rs`), instead of passing for want of a threshold. Marked
/// [`Threshold::default`] so that the verdict and the reports say loadgate added it.
pub(crate) const DEFAULT_ERRORS: &str = "rate < 100%";

/// Parses the thresholds of one `slo` block (at `path`, applying to `scope`) and their options;
/// every problem goes to `errors`. Tagged keys (`latency{kind:write}`) give thresholds with
/// their selector, after the plain lists; they are refused in a target's (or a flow step's)
/// block, whose requests all carry the same tags. The whole run's block (`scope`
/// [`Scope::Total`]) without an `errors` threshold gets [`DEFAULT_ERRORS`], last.
pub(super) fn build_slo(
    slo: &spec::Slo,
    path: &str,
    scope: Scope,
    errors: &mut Errors,
) -> Vec<Threshold> {
    let mut out = build_thresholds(
        &[
            (Metric::Latency, "latency", &slo.latency),
            (Metric::Errors, "errors", &slo.errors),
            (Metric::Responses, "requests", &slo.requests),
            (Metric::Checks, "checks", &slo.checks),
        ],
        path,
        scope,
        errors,
    );
    for (key, list) in &slo.tagged {
        let field = format!("{path}.{key}");
        if matches!(scope, Scope::Target(_) | Scope::Flow(_)) {
            errors.push(&field, TAGS_IN_A_TARGET);
            continue;
        }
        let Some((metric, tags)) = selector(&field, key, errors) else {
            continue;
        };
        for (i, entry) in list.iter().enumerate() {
            let entry_path = format!("{field}[{i}]");
            let of = Of {
                metric,
                scope,
                tags: &tags,
            };
            out.extend(build_threshold(entry, &entry_path, &of, errors));
        }
    }
    if scope == Scope::Total && slo.errors.is_empty() {
        let mut default = Threshold::parse(scope, Metric::Errors, DEFAULT_ERRORS)
            .expect("the default errors threshold parses");
        default.default = true;
        out.push(default);
    }
    out
}

/// Why a target's (or a flow step's) block may not select by tags.
pub(super) const TAGS_IN_A_TARGET: &str = "a target's requests all carry the same tags (a flow \
    step's too), so a selector picks all or none of them: select by tags in the whole run's \
    or a scenario's block, or leave the braces out";

/// The metric and selector of the tagged key `key` (the field at `field`); `None` (and an
/// error) when it is wrong.
pub(super) fn selector(
    field: &str,
    key: &str,
    errors: &mut Errors,
) -> Option<(Metric, TagSelector)> {
    if !errors.printable(field, key) {
        return None;
    }
    Metric::parse_tagged(key)
        .map_err(|e| errors.push(field, e))
        .ok()
}

/// Parses the lists of thresholds of one block (at `path`, applying to `scope`): each is
/// the metric it measures, the list's field name and the list. Every problem goes to
/// `errors`.
pub(super) fn build_thresholds(
    lists: &[(Metric, &str, &Vec<spec::ThresholdSpec>)],
    path: &str,
    scope: Scope,
    errors: &mut Errors,
) -> Vec<Threshold> {
    let mut out = Vec::new();
    let tags = TagSelector::default();
    for &(metric, field, list) in lists {
        let of = Of {
            metric,
            scope,
            tags: &tags,
        };
        for (i, entry) in list.iter().enumerate() {
            out.extend(build_threshold(
                entry,
                &format!("{path}.{field}[{i}]"),
                &of,
                errors,
            ));
        }
    }
    out
}

/// What a threshold of a list measures: its metric, scope and tag selector.
struct Of<'a> {
    metric: Metric,
    scope: Scope,
    tags: &'a TagSelector,
}

/// One threshold (at `path`) with its options; `None` (and an error) when its expression is
/// wrong. A wrong option is an error, and the threshold is kept.
fn build_threshold(
    entry: &spec::ThresholdSpec,
    path: &str,
    of: &Of<'_>,
    errors: &mut Errors,
) -> Option<Threshold> {
    let (text, options) = match entry {
        spec::ThresholdSpec::Expression(text) => (text, None),
        spec::ThresholdSpec::Detailed(d) => (&d.threshold, Some(d)),
    };
    if !errors.printable(path, text) {
        return None;
    }
    let mut threshold = Threshold::parse(of.scope, of.metric, text)
        .map_err(|e| errors.push(path, e))
        .ok()?;
    threshold.tags = of.tags.clone();
    if let Some(options) = options {
        apply_options(&mut threshold, options, path, errors);
    }
    Some(threshold)
}

/// Sets a threshold's options: `abort_on_fail`, `abort_after` and `window` (whole run's and
/// scenarios' thresholds only, without tags: those are judged once, at the end, on the sum
/// of the targets they select), `severity`.
fn apply_options(
    threshold: &mut Threshold,
    options: &spec::DetailedThreshold,
    path: &str,
    errors: &mut Errors,
) {
    const TAGGED: &str = "a threshold over tags is judged once, at the end of the run, on the \
        sum of the targets it selects";
    let (scope, metric) = (threshold.scope, threshold.metric);
    let live = matches!(scope, Scope::Total | Scope::Scenario(_));
    let tagged = !threshold.tags.is_empty();
    threshold.severity = options.severity.map(Severity::from).unwrap_or_default();
    threshold.abort_on_fail = options.abort_on_fail;
    if options.abort_on_fail {
        let field = format!("{path}.abort_on_fail");
        if tagged {
            errors.push(field, format!("{TAGGED}: it cannot abort the run"));
        } else if !live {
            errors.push(
                field,
                "aborting applies to the whole run's or a scenario's `slo`, not per target or \
                 flow",
            );
        }
    }
    if let Some(after) = &options.abort_after {
        let field = format!("{path}.abort_after");
        if !options.abort_on_fail {
            errors.push(&field, "needs `abort_on_fail: true`");
        }
        threshold.abort_after = errors.duration(&field, after, true).unwrap_or_default();
    }
    if let Some(window) = &options.window {
        let field = format!("{path}.window");
        if tagged {
            errors.push(&field, format!("{TAGGED}: it has no windows"));
        } else if !live {
            errors.push(
                &field,
                "windows apply to the whole run's or a scenario's `slo`, not per target or flow",
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slo(latency: &[&str], errors: &[&str]) -> spec::Slo {
        let list = |l: &[&str]| {
            l.iter()
                .map(|t| spec::ThresholdSpec::Expression(t.to_string()))
                .collect()
        };
        spec::Slo {
            latency: list(latency),
            errors: list(errors),
            ..spec::Slo::default()
        }
    }

    fn build(block: &spec::Slo, scope: Scope) -> Vec<Threshold> {
        let mut errors = Errors::default();
        let out = build_slo(block, "slo", scope, &mut errors);
        assert!(errors.0.is_empty(), "{:?}", errors.0);
        out
    }

    #[test]
    fn the_whole_run_gets_the_default_errors_threshold_only_without_one() {
        let added = build(&slo(&["p(99) < 1s"], &[]), Scope::Total);
        assert_eq!(added.len(), 2);
        let default = &added[1];
        assert!(default.default && !added[0].default);
        assert_eq!(
            (default.metric, default.expression.as_str()),
            (Metric::Errors, DEFAULT_ERRORS)
        );
        assert!(default.passes(0.999) && !default.passes(1.0));

        let written = build(&slo(&[], &["count < 5"]), Scope::Total);
        assert_eq!(written.len(), 1);
        assert!(!written[0].default);
        // A target's block never gets it: the whole run's default covers every target.
        assert!(build(&slo(&[], &[]), Scope::Target(0)).is_empty());
    }

    /// The thresholds of the block `json` at `path` for `scope`, and the errors as
    /// `(path, message)`.
    fn try_build(
        json: serde_json::Value,
        path: &str,
        scope: Scope,
    ) -> (Vec<Threshold>, Vec<(String, String)>) {
        let block: spec::Slo = serde_json::from_value(json).unwrap();
        let mut errors = Errors::default();
        let out = build_slo(&block, path, scope, &mut errors);
        let errors = errors.0.into_iter().map(|e| (e.path, e.message)).collect();
        (out, errors)
    }

    #[test]
    fn severity_is_planned_from_the_detailed_form_and_fail_by_default() {
        let (out, errors) = try_build(
            serde_json::json!({
                "latency": [
                    "p(95) < 1s",
                    { "threshold": "p(99) < 2s", "severity": "warn" },
                    { "threshold": "max < 3s" },
                    { "threshold": "max < 4s", "severity": "fail" },
                ],
                "errors{kind:write}": [{ "threshold": "rate < 1%", "severity": "warn" }],
                "requests{kind:write}": ["rate > 1/s"],
            }),
            "slo",
            Scope::Total,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let got: Vec<(&str, Severity)> = out
            .iter()
            .map(|t| (t.expression.as_str(), t.severity))
            .collect();
        use Severity::{Fail, Warn};
        assert_eq!(
            got,
            [
                ("p(95) < 1s", Fail),
                ("p(99) < 2s", Warn),
                ("max < 3s", Fail),
                ("max < 4s", Fail),
                ("rate < 1%", Warn),
                ("rate > 1/s", Fail),
                (DEFAULT_ERRORS, Fail),
            ]
        );
    }

    #[test]
    fn tagged_keys_give_thresholds_with_sorted_selectors_in_any_scope() {
        // Key, expression; the metric and the selector planned (names sorted, trimmed).
        let cases = [
            (
                "checks{kind:write}",
                "rate == 100%",
                Metric::Checks,
                "{kind:write}",
            ),
            ("errors{b:2,a:1}", "rate < 1%", Metric::Errors, "{a:1,b:2}"),
            (
                "latency{kind:write}",
                "p(95) < 50ms",
                Metric::Latency,
                "{kind:write}",
            ),
            (
                "latency{scenario:shop, kind : read}",
                "max < 1s",
                Metric::Latency,
                "{kind:read,scenario:shop}",
            ),
            (
                "requests{kind:}",
                "count > 10",
                Metric::Responses,
                "{kind:}",
            ),
        ];
        let json: serde_json::Map<String, serde_json::Value> = cases
            .iter()
            .map(|(key, text, ..)| (key.to_string(), serde_json::json!([text])))
            .collect();
        for scope in [Scope::Total, Scope::Scenario(2)] {
            let (out, errors) = try_build(json.clone().into(), "slo", scope);
            assert!(errors.is_empty(), "{errors:?}");
            // A scenario's block gets no default: the whole run's covers it.
            let tagged: Vec<&Threshold> = out.iter().filter(|t| !t.default).collect();
            assert_eq!(tagged.len(), cases.len(), "{scope:?}");
            for (t, (key, text, metric, selector)) in tagged.iter().zip(&cases) {
                assert_eq!(t.scope, scope, "{key}");
                assert_eq!(t.metric, *metric, "{key}");
                assert_eq!(t.expression, *text, "{key}");
                assert_eq!(t.tags.to_string(), *selector, "{key}");
            }
            assert_eq!(out.len() - tagged.len(), usize::from(scope == Scope::Total));
        }
    }

    #[test]
    fn refused_thresholds_name_their_field() {
        let tagged_window = serde_json::json!({
            "latency{kind:write}": [{ "threshold": "p(95) < 1s", "window": "10s" }]
        });
        let tagged_abort = serde_json::json!({
            "errors{kind:write}": [{ "threshold": "rate < 1%", "abort_on_fail": true }]
        });
        let tagged = serde_json::json!({ "latency{kind:write}": ["p(95) < 1s"] });
        let cases = [
            (
                tagged_window.clone(),
                "slo",
                Scope::Total,
                "slo.latency{kind:write}[0].window",
                "judged once, at the end of the run",
            ),
            (
                tagged_window,
                "scenarios[1].slo",
                Scope::Scenario(1),
                "scenarios[1].slo.latency{kind:write}[0].window",
                "it has no windows",
            ),
            (
                tagged_abort,
                "slo",
                Scope::Total,
                "slo.errors{kind:write}[0].abort_on_fail",
                "it cannot abort the run",
            ),
            (
                tagged.clone(),
                "targets[0].slo",
                Scope::Target(0),
                "targets[0].slo.latency{kind:write}",
                "a target's requests all carry the same tags",
            ),
            (
                tagged,
                "flows[0].steps[1].slo",
                Scope::Target(3),
                "flows[0].steps[1].slo.latency{kind:write}",
                "a flow step's too",
            ),
            (
                serde_json::json!({ "errors{a:b,a:c}": ["rate < 1%"] }),
                "slo",
                Scope::Total,
                "slo.errors{a:b,a:c}",
                "the tag `a` is given twice",
            ),
            (
                serde_json::json!({ "requests{kind:read}": ["rate > 5"] }),
                "slo",
                Scope::Total,
                "slo.requests{kind:read}[0]",
                "needs the unit `/s`",
            ),
            (
                serde_json::json!({ "latency": [{ "threshold": "max < 1s", "window": "5s" }] }),
                "targets[0].slo",
                Scope::Target(0),
                "targets[0].slo.latency[0].window",
                "whole run's or a scenario's `slo`",
            ),
        ];
        for (json, path, scope, want_path, want) in cases {
            let (_, errors) = try_build(json, path, scope);
            assert_eq!(errors.len(), 1, "{want_path}: {errors:?}");
            assert_eq!(errors[0].0, want_path);
            assert!(errors[0].1.contains(want), "{want_path}: {}", errors[0].1);
        }
    }

    #[test]
    fn a_scenario_watches_its_thresholds_live_as_the_whole_run_does() {
        let (out, errors) = try_build(
            serde_json::json!({
                "latency": [
                    { "threshold": "p(99) < 1s", "window": "10s" },
                    { "threshold": "max < 2s", "abort_on_fail": true, "abort_after": "5s" },
                ]
            }),
            "scenarios[0].slo",
            Scope::Scenario(0),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(out[0].window_s, Some(10));
        assert!(out[1].abort_on_fail);
        assert_eq!(out[1].abort_after, std::time::Duration::from_secs(5));
    }
}
