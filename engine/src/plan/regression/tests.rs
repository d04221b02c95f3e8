//! The rules' grammar, defaults, severities, tag selectors and refusals, block by block.

use super::*;

#[test]
fn scopes_name_their_kind() {
    let shop = RuleScope::Flow("shop".into());
    assert_eq!(
        (RuleScope::Total.kind(), RuleScope::Total.name()),
        (ScopeKind::Total, "total")
    );
    assert_eq!((shop.kind(), shop.name()), (ScopeKind::Flow, "shop"));
    assert_eq!(RuleScope::of(shop.kind(), shop.name()), shop);
    assert_eq!(
        serde_json::to_string(&ScopeKind::Target).unwrap(),
        "\"target\""
    );
}

#[test]
fn valid_rules() {
    let cases = [
        (
            Metric::Latency,
            "p(95) +10%",
            Aggregation::Percentile(95.0),
            0.10,
            2_000.0,
        ),
        (
            Metric::Latency,
            " p(99.9) 25% floor 5ms ",
            Aggregation::Percentile(99.9),
            0.25,
            5_000.0,
        ),
        (
            Metric::Latency,
            "mean +0% floor 0us",
            Aggregation::Mean,
            0.0,
            0.0,
        ),
        (
            Metric::Latency,
            "med +5%",
            Aggregation::Median,
            0.05,
            2_000.0,
        ),
        (
            Metric::Errors,
            "rate +50% floor 0.5%",
            Aggregation::Rate,
            0.5,
            0.005,
        ),
        (Metric::Responses, "rate -10%", Aggregation::Rate, 0.10, 0.0),
        (
            Metric::Responses,
            "rate -5% floor 20/s",
            Aggregation::Rate,
            0.05,
            20.0,
        ),
    ];
    for (metric, text, aggregation, change, floor) in cases {
        let rule = RegressionRule::parse(metric, text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rule.aggregation, aggregation, "{text}");
        assert!((rule.max_change - change).abs() < 1e-12, "{text}");
        assert!((rule.floor - floor).abs() < 1e-9, "{text}");
        assert_eq!(rule.expression, text.trim());
    }
}

#[test]
fn invalid_rules_say_why() {
    let cases = [
        (Metric::Latency, "p(75) +10%", "takes p(50), p(90)"),
        (Metric::Latency, "max +10%", "not `max`"),
        (Metric::Latency, "p(95) -10%", "write `+10%`"),
        (Metric::Latency, "p(95) +10", "in %"),
        (Metric::Latency, "p(95) +x%", "not a percentage"),
        (Metric::Latency, "p(95) +10% floor 2", "has no unit"),
        (Metric::Latency, "p(95) +10% 2ms", "expected `floor`"),
        (Metric::Errors, "count +10%", "takes rate"),
        (Metric::Errors, "rate +10% floor 0.1", "needs the unit `%`"),
        (
            Metric::Responses,
            "rate +10%",
            "a drop in throughput: write `-10%`",
        ),
        (
            Metric::Responses,
            "rate -10% floor 5",
            "needs the unit `/s`",
        ),
    ];
    for (metric, text, want) in cases {
        let err = RegressionRule::parse(metric, text).expect_err(text);
        assert!(err.contains(want), "{text}: {err}");
    }
}

#[test]
fn alpha_is_a_percentage_above_0_and_below_50_and_5_by_default() {
    let alpha = |text: Option<&str>| {
        build_alpha(&spec::Regression {
            alpha: text.map(str::to_string),
            ..Default::default()
        })
    };
    assert_eq!(alpha(None), Ok(DEFAULT_ALPHA));
    assert_eq!(alpha(Some("10%")), Ok(0.1));
    assert_eq!(alpha(Some("0.5%")), Ok(0.005));
    for bad in ["0%", "50%", "75%", "5", "x%", "-1%"] {
        let (path, e) = alpha(Some(bad)).expect_err(bad);
        assert_eq!(path, "regression.alpha");
        assert!(e.contains("above 0% and below 50%"), "{bad}: {e}");
    }
}

#[test]
fn absent_lists_get_defaults_and_empty_lists_none() {
    let mut errors = Errors::default();
    let rules = build(&spec::Regression::default(), &mut errors);
    assert!(errors.0.is_empty());
    let names: Vec<&str> = rules.iter().map(|r| r.expression.as_str()).collect();
    assert_eq!(
        names,
        [
            "p(50) +10% floor 2ms",
            "p(95) +10% floor 2ms",
            "p(99) +20% floor 2ms",
            "rate +10% floor 0.1%",
            "rate -10%"
        ]
    );
    let block = spec::Regression {
        latency: Some(vec![
            spec::RuleSpec::Expression("p(90) +5%".into()),
            spec::RuleSpec::Expression("p(42) +1%".into()),
        ]),
        errors: Some(vec![]),
        requests: None,
        alpha: None,
        tagged: Default::default(),
    };
    let rules = build(&block, &mut errors);
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert_eq!(rules[1].metric, Metric::Responses);
    assert_eq!(errors.0.len(), 1);
    assert_eq!(errors.0[0].path, "regression.latency[1]");
}

/// The rules of the block `json`: the whole run's (`scope` `None`) or one at `path` for
/// `scope`; the errors as `(path, message)`.
fn try_build(
    json: serde_json::Value,
    at: Option<(&str, RuleScope)>,
) -> (Vec<RegressionRule>, Vec<(String, String)>) {
    let block: spec::Regression = serde_json::from_value(json).unwrap();
    let mut errors = Errors::default();
    let rules = match at {
        None => build(&block, &mut errors),
        Some((path, scope)) => build_scoped(&block, path, &scope, &mut errors),
    };
    let errors = errors.0.into_iter().map(|e| (e.path, e.message)).collect();
    (rules, errors)
}

#[test]
fn severity_is_planned_from_the_detailed_form_and_fail_by_default() {
    use crate::plan::threshold::Severity::{Fail, Warn};
    let json = serde_json::json!({
        "latency": ["p(95) +20%", { "rule": "p(95) +5%", "severity": "warn" }],
        "errors": [{ "rule": "rate +10%", "severity": "fail" }, { "rule": "rate +50%" }],
        "requests{kind:read}": [{ "rule": "rate -5%", "severity": "warn" }],
    });
    let scopes = [
        None,
        Some(("scenarios[0].regression", RuleScope::Scenario("a".into()))),
    ];
    for at in scopes {
        let (rules, errors) = try_build(json.clone(), at);
        assert!(errors.is_empty(), "{errors:?}");
        let got: Vec<_> = rules
            .iter()
            .map(|r| (r.expression.as_str(), r.severity))
            .collect();
        let mut want = vec![
            ("p(95) +20%", Fail),
            ("p(95) +5%", Warn),
            ("rate +10%", Fail),
            ("rate +50%", Fail),
        ];
        // The whole run's absent `requests` list keeps its default rule.
        if rules[0].scope == RuleScope::Total {
            want.push(("rate -10%", Fail));
        }
        want.push(("rate -5%", Warn));
        assert_eq!(got, want);
    }
}

#[test]
fn tagged_keys_give_rules_with_sorted_selectors_in_the_run_and_scenarios() {
    let json = serde_json::json!({
        "latency": [],
        "errors": [],
        "requests": [],
        "errors{kind:write}": ["rate +10%"],
        "latency{b:2,a:1}": ["p(99) +20%", "med +5%"],
        "requests{ kind : read }": ["rate -10%"],
    });
    let want = [
        (Metric::Errors, "rate +10%", "{kind:write}"),
        (Metric::Latency, "p(99) +20%", "{a:1,b:2}"),
        (Metric::Latency, "med +5%", "{a:1,b:2}"),
        (Metric::Responses, "rate -10%", "{kind:read}"),
    ];
    let shop = RuleScope::Scenario("shop".into());
    for at in [None, Some(("scenarios[0].regression", shop))] {
        let scope = at.as_ref().map_or(RuleScope::Total, |(_, s)| s.clone());
        let (rules, errors) = try_build(json.clone(), at);
        assert!(errors.is_empty(), "{errors:?}");
        let got: Vec<_> = rules
            .iter()
            .map(|r| (r.metric, r.expression.as_str(), r.tags.to_string()))
            .collect();
        let want: Vec<_> = want
            .iter()
            .map(|(m, e, t)| (*m, *e, t.to_string()))
            .collect();
        assert_eq!(got, want);
        assert!(rules.iter().all(|r| r.scope == scope));
    }
}

#[test]
fn a_target_or_steps_block_gives_only_its_rules_written() {
    let scope = RuleScope::Target("home".into());
    let (rules, errors) = try_build(
        serde_json::json!({ "latency": [{ "rule": "p(95) +5%", "severity": "warn" }] }),
        Some(("targets[0].regression", scope.clone())),
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(rules.len(), 1, "no defaults: {rules:?}");
    assert_eq!(rules[0].scope, scope);
    assert!(
        rules[0].severity == crate::plan::threshold::Severity::Warn && rules[0].tags.is_empty()
    );
}

#[test]
fn refused_rules_name_their_field() {
    let target = || Some(("targets[1].regression", RuleScope::Target("t".into())));
    let cases = [
        (
            serde_json::json!({ "latency{kind:write}": ["p(95) +10%"] }),
            target(),
            "targets[1].regression.latency{kind:write}",
            "a target's requests all carry the same tags",
        ),
        (
            serde_json::json!({ "alpha": "1%" }),
            target(),
            "targets[1].regression.alpha",
            "top-level `regression` block",
        ),
        (
            serde_json::json!({ "alpha": "1%" }),
            Some(("scenarios[0].regression", RuleScope::Scenario("s".into()))),
            "scenarios[0].regression.alpha",
            "top-level `regression` block",
        ),
        (
            serde_json::json!({ "checks{kind:write}": ["rate +10%"] }),
            None,
            "regression.checks{kind:write}",
            "checks have no regression rules",
        ),
        (
            serde_json::json!({ "latency{kind:write}": [{ "rule": "p(75) +10%" }] }),
            None,
            "regression.latency{kind:write}[0]",
            "takes p(50), p(90)",
        ),
        (
            serde_json::json!({ "errors{a:1,a:2}": ["rate +10%"] }),
            None,
            "regression.errors{a:1,a:2}",
            "given twice",
        ),
        (
            serde_json::json!({ "requests": [{ "rule": "rate -10%\u{1b}" }] }),
            target(),
            "targets[1].regression.requests[0]",
            "control character",
        ),
    ];
    for (json, at, want_path, want) in cases {
        let (_, errors) = try_build(json, at);
        assert_eq!(errors.len(), 1, "{want_path}: {errors:?}");
        assert_eq!(errors[0].0, want_path);
        assert!(errors[0].1.contains(want), "{want_path}: {}", errors[0].1);
    }
}
