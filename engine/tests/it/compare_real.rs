//! The regression verdict on real runs against the built-in target (`loadgate serve`, in
//! process) with a controlled delay: a 3-step flow with `p(50)`/`p(95)` rules on each step and
//! on the whole run, and one on the flow's iteration duration (9 rules).
//!
//! - Runs too short (3 s) are not judged: every rule inconclusive, saying so.
//! - An A/A pair of runs long enough (`stats::MIN_SECONDS`) finds no regression.
//! - A candidate whose every step is twice as slow (`?delay=` doubled) regresses, each rule
//!   stating its level and MDE, the family its size and method.
//! - `loadgate ab` judges each rule across its sub-runs (Holm over Student t).
//!
//! Runs one at a time (`support::turn`). The false-alarm rate over many A/A pairs is measured
//! by `bench/ab_noise.sh`, not here.

use std::sync::OnceLock;

use crate::support;

use loadgate::compare::{self, RuleState};
use loadgate::result::RunResult;
use loadgate::serve::spawn;

/// The flow spec against `url`, each step at `delay` (e.g. `4ms`), measuring `duration`.
fn flow_spec(url: &str, delay: &str, duration: &str) -> String {
    let steps: String = (0..3)
        .map(|i| {
            format!(
                "      - name: s{i}\n        path: /s{i}?delay={delay}\n        regression:\n\
                 \x20         latency: [\"p(50) +10% floor 1ms\", \"p(95) +10% floor 1ms\"]\n"
            )
        })
        .collect();
    format!(
        "version: 1\nname: steps\ndefaults:\n  base_url: {url}\n  timeout: 5s\n\
         flows:\n  - name: f\n    regression:\n      iteration_duration: [\"p(50) +10% floor 1ms\"]\n\
         \x20   steps:\n{steps}load:\n  connections: 4\n  duration: {duration}\n  warmup: 1s\n\
         regression:\n  latency: [\"p(50) +10% floor 1ms\", \"p(95) +10% floor 1ms\"]\n  \
         errors: []\n  requests: []\n"
    )
}

/// A run of [`flow_spec`] against a fresh server.
fn run(delay: &str, duration: &str) -> RunResult {
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let result = support::run_spec_text(dir.path(), &flow_spec(&server.url(), delay, duration));
    assert!(result.total.responses > 500, "{:?}", result.total);
    result
}

/// The baseline of the long comparisons: 21 s at 4 ms per step, made once.
fn long_baseline() -> &'static RunResult {
    static BASELINE: OnceLock<RunResult> = OnceLock::new();
    BASELINE.get_or_init(|| run("4ms", "21s"))
}

fn show(comparison: &compare::Comparison) {
    for r in &comparison.rules {
        eprintln!(
            "{:>12} {} {} {}: {:?} -> {:?}: {}",
            r.verdict.name(),
            r.scope,
            r.metric,
            r.rule,
            r.baseline,
            r.current,
            r.reason
        );
    }
}

#[test]
fn runs_of_3_seconds_are_too_short_to_judge() {
    let _turn = support::turn();
    let (baseline, current) = (run("4ms", "3s"), run("8ms", "3s"));
    let comparison = compare::compare(&baseline, &current).unwrap();
    show(&comparison);
    assert_eq!(comparison.rules.len(), 9);
    for r in &comparison.rules {
        assert_eq!(r.verdict, RuleState::Inconclusive, "{r:#?}");
        assert!(
            r.reason
                .starts_with("runs too short to judge: 3 and 3 complete seconds"),
            "{r:#?}"
        );
        assert_eq!((r.level, r.change_ci), (None, None));
    }
    assert_eq!(comparison.family, None, "no rule tested");
}

#[test]
fn an_a_a_pair_of_long_runs_finds_no_regression() {
    let _turn = support::turn();
    let baseline = long_baseline();
    let current = run("4ms", "21s");
    let comparison = compare::compare(baseline, &current).unwrap();
    show(&comparison);
    assert!(!comparison.regressed(), "{:#?}", comparison.rules);
    let family = comparison.family.as_ref().expect("rules tested");
    // The whole run's and the steps' rules; the flow's has no per-second series.
    assert_eq!((family.tested, family.method.as_str()), (8, "max-t"));
    assert_eq!(family.alpha, 0.05);
    let flow = comparison.rules.iter().find(|r| r.scope == "f").unwrap();
    assert_eq!(flow.verdict, RuleState::Inconclusive);
    assert!(
        flow.reason.contains("no per-second series"),
        "{}",
        flow.reason
    );
    // The medians are steady: unchanged (their upper bounds within +10%), not merely not
    // regressed.
    let total_p50 = &comparison.rules[0];
    assert_eq!(total_p50.rule, "p(50) +10% floor 1ms");
    assert_eq!(total_p50.verdict, RuleState::Unchanged, "{total_p50:#?}");
    assert!(total_p50.samples[0] >= 20, "{total_p50:#?}");
}

#[test]
fn a_candidate_twice_as_slow_regresses_with_its_level_and_mde() {
    let _turn = support::turn();
    let baseline = long_baseline();
    let current = run("8ms", "21s");
    let comparison = compare::compare(baseline, &current).unwrap();
    show(&comparison);
    assert!(comparison.regressed());
    let family = comparison.family.as_ref().expect("rules tested");
    assert_eq!(family.tested, 8);
    for r in comparison.rules.iter().filter(|r| r.scope != "f") {
        // Each step's median doubles, from about 4 ms to 8 ms: far beyond +10%.
        if r.rule.starts_with("p(50)") {
            assert_eq!(r.verdict, RuleState::Regressed, "{r:#?}");
        }
        assert_ne!(r.verdict, RuleState::Improved, "{r:#?}");
        let level = r.level.expect("a level");
        assert!(level > 0.0 && level <= family.alpha, "{r:#?}");
        let (mde, relative_mde) = (r.mde.unwrap(), r.relative_mde.unwrap());
        // The MDE is at least the allowance.
        assert!(
            mde >= r.allowed_change.unwrap() && relative_mde >= 0.1 - 1e-9,
            "{r:#?}"
        );
        let [low, _] = r.relative_change_ci.unwrap();
        if r.verdict == RuleState::Regressed {
            assert!(low > r.relative_allowed_change.unwrap(), "{r:#?}");
            assert!(
                r.reason.starts_with("worse by more than the allowed"),
                "{r:#?}"
            );
        }
    }
}

/// `loadgate ab --out` of the flow spec, both sides at 4 ms but the candidate's steps at
/// `candidate_delay`: each rule is judged across the sub-runs.
#[test]
fn ab_judges_each_rule_across_its_sub_runs() {
    let _turn = support::turn();
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, flow_spec(&server.url(), "${DELAY}", "4s")).unwrap();
    let out = dir.path().join("ab.json");
    let output = support::loadgate(&[
        "ab",
        spec.to_str().unwrap(),
        "--baseline",
        "DELAY=4ms",
        "--candidate",
        "DELAY=8ms",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        matches!(output.status.code(), Some(4 | 5)),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let ab = loadgate::result::ab::read(&out)
        .expect("a whole document")
        .expect("an ab document");
    let comparison = compare::compare_paired(&ab).unwrap();
    show(&comparison);
    let paired = comparison.paired.as_ref().expect("the sub-runs' changes");
    let used = paired.sub_runs;
    assert_eq!(used + paired.late, ab.sub_runs.len());
    // A busy machine may make sub-runs late: with fewer than 4 left (`stats::MIN_SUB_RUNS`)
    // there is nothing to judge across.
    if used < 4 {
        return;
    }
    let family = comparison.family.as_ref().expect("rules tested");
    assert_eq!(family.method, "holm");
    // Every scope is judged across sub-runs, the flow's iterations too.
    assert_eq!(family.tested, 9);
    for (r, changes) in comparison.rules.iter().zip(&paired.rules) {
        assert_eq!(r.samples, [used, used], "{r:#?}");
        assert_eq!(changes.changes.len(), used, "{r:#?}");
        assert!(r.level.is_some() && r.mde.is_some(), "{r:#?}");
        if r.rule.starts_with("p(50)") {
            assert_eq!(r.verdict, RuleState::Regressed, "{r:#?}");
            // Each sub-run's median about doubled.
            assert!(
                changes.changes.iter().all(|c| c.change > 0.3),
                "{changes:#?}"
            );
        }
    }
}
