//! Every report format of a run with two scenarios, tagged targets and the warning tier: the
//! long fixtures (`tests/fixtures/results`, a clear regression) made into a run of a `browse`
//! scenario (two read targets) beside a `checkout` one (a write target), with a `warn` SLO on
//! `latency{kind:write}` that fails and the regressed rules marked `warn`: each format shows
//! the scenarios, the targets by tag (exact sums) and the warnings, and the run passes.

use std::collections::BTreeMap;

use loadgate::compare::{self, Comparison, RuleState};
use loadgate::plan::regression::ScopeKind;
use loadgate::plan::threshold::Severity;
use loadgate::report::{self, Format, Input};
use loadgate::result::{RunResult, ScenarioResult, SloVerdict, TargetResult};

use super::reports::fixture;

fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A scenario of `r` holding `targets`, its total the first of them renamed.
fn scenario(
    r: &RunResult,
    name: &str,
    executor: &str,
    start: f64,
    targets: &[&str],
) -> ScenarioResult {
    let first = r.targets.iter().find(|t| t.name == targets[0]).unwrap();
    let mut total = first.clone();
    total.name = name.to_string();
    ScenarioResult {
        name: name.to_string(),
        executor: executor.to_string(),
        start_time_s: start,
        tags: tags(&[("scenario", name)]),
        load: r.load.clone(),
        duration_s: r.duration_s - start,
        iterations: total.requests,
        total,
        targets: targets.iter().map(|t| t.to_string()).collect(),
        flows: Vec::new(),
        time_series: Vec::new(),
        health: r.health.clone(),
    }
}

/// `r` as a run of two scenarios: `browse` (targets `list` and `list2`, a copy of `list`,
/// tagged `kind: read`) from 0 s and `checkout` (target `pay`, `kind: write`) from 2 s; a
/// tag `owner` with hostile values, a tag `team` with one value; `with_slo` adds a failing
/// `warn` SLO on `latency{kind:write}` and a passing SLO of the `checkout` scenario.
fn scenario_run(mut r: RunResult, with_slo: bool) -> RunResult {
    r.targets[0].name = "list".to_string();
    r.targets[1].name = "pay".to_string();
    let mut list2 = r.targets[0].clone();
    list2.name = "list2".to_string();
    r.targets.insert(1, list2);
    let owner = ["<script>x</script>", "<script>x</script>", "a|b&c"];
    let kinds = [
        ("read", "browse"),
        ("read", "browse"),
        ("write", "checkout"),
    ];
    for ((t, owner), (kind, scenario)) in r.targets.iter_mut().zip(owner).zip(kinds) {
        t.tags = tags(&[
            ("kind", kind),
            ("scenario", scenario),
            ("owner", owner),
            ("team", "shop"),
        ]);
    }
    r.scenarios = vec![
        scenario(
            &r,
            "browse",
            "constant-arrival-rate",
            0.0,
            &["list", "list2"],
        ),
        scenario(&r, "checkout", "ramping-vus", 2.0, &["pay"]),
    ];
    if with_slo {
        let base = r.slo[0].clone();
        r.slo.push(SloVerdict {
            scope: "total".to_string(),
            threshold: "p(95) < 1ms".to_string(),
            limit: 1000.0,
            measured: Some(r.targets[2].latency_us.as_ref().unwrap().p95_us as f64),
            passed: false,
            scope_kind: Some(ScopeKind::Total),
            tags: tags(&[("kind", "write")]),
            severity: Severity::Warn,
            ..base.clone()
        });
        r.slo.push(SloVerdict {
            scope: "checkout".to_string(),
            threshold: "p(99) < 10s".to_string(),
            limit: 10_000_000.0,
            passed: true,
            scope_kind: Some(ScopeKind::Scenario),
            tags: tags(&[("owner", "a|b&c")]),
            ..base
        });
        assert!(r.passed, "the fixture's own SLOs pass");
    }
    r
}

/// The long pair as scenario runs, compared, every regressed rule marked `warn`.
fn runs() -> (RunResult, RunResult, Comparison) {
    let baseline = scenario_run(fixture("long-baseline.json"), false);
    let current = scenario_run(fixture("long-current.json"), true);
    let mut comparison = compare::compare(&baseline, &current).unwrap();
    assert!(comparison.regressed(), "the long pair regressed");
    for rule in &mut comparison.rules {
        if rule.verdict == RuleState::Regressed {
            rule.severity = Severity::Warn;
        }
    }
    (baseline, current, comparison)
}

fn render(format: Format) -> String {
    let (baseline, current, comparison) = runs();
    let input = Input {
        current: &current,
        baseline: Some(&baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: None,
    };
    report::render(format, &input, None).unwrap()
}

/// How many warnings the comparison has: the warn SLO and every regressed (warn) rule.
fn warnings() -> usize {
    let (_, _, comparison) = runs();
    1 + comparison
        .rules
        .iter()
        .filter(|r| r.verdict == RuleState::Regressed)
        .count()
}

fn target<'a>(r: &'a RunResult, name: &str) -> &'a TargetResult {
    r.targets.iter().find(|t| t.name == name).unwrap()
}

#[test]
fn markdown_shows_scenarios_tags_and_warnings_and_passes() {
    let md = render(Format::Md);
    let (_, current, _) = runs();
    let n = warnings();
    assert!(
        md.starts_with(&format!("### ⚠️ loadgate long: PASSED with {n} warnings:")),
        "{md}"
    );
    // The scenario table right after the headline, before the SLOs.
    let scenarios = md.find("| scenario | executor | start |").expect(&md);
    assert!(scenarios < md.find("| SLO |").unwrap());
    let list = target(&current, "list").requests;
    let pay = target(&current, "pay").requests;
    assert!(
        md.contains(&format!(
            "| browse | constant-arrival-rate | 0.0 s | {list} requests |"
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "| checkout | ramping-vus | 2.0 s | {pay} requests |"
        )),
        "{md}"
    );
    // Tags beside the targets; by tag: `kind` summed exactly (two copies of `list`), the
    // hostile `owner` values escaped, no `scenario` (the scenario table has it), no `team`.
    assert!(
        md.contains(
            "| kind: read, owner: &lt;script&gt;x&lt;/script&gt;, scenario: browse, team: shop |"
        ),
        "{md}"
    );
    assert!(md.contains("| by tag kind | targets |"), "{md}");
    assert!(md.contains(&format!("| read | 2 | {} |", 2 * list)), "{md}");
    assert!(md.contains(&format!("| write | 1 | {pay} |")), "{md}");
    assert!(md.contains("| a\\|b&amp;c | 1 |"), "{md}");
    assert!(
        !md.contains("by tag scenario") && !md.contains("by tag team"),
        "{md}"
    );
    assert!(!md.contains("<script>"), "{md}");
    // The warn SLO, with its selector, a warning; the scenario's SLO named by its scenario.
    assert!(
        md.contains("| total latency{kind:write}: p(95) &lt; 1ms (warn only) |"),
        "{md}"
    );
    assert!(
        md.contains("| 1.00ms |") && md.contains("⚠️ warning |"),
        "{md}"
    );
    assert!(
        md.contains("| scenario checkout latency{owner:a\\|b&amp;c}: p(99) &lt; 10s |"),
        "{md}"
    );
    assert!(md.contains("⚠️ warning (regressed)"), "{md}");
    assert!(!md.contains("❌"), "{md}");
}

#[test]
fn junit_skips_the_warnings_with_their_values_and_fails_nothing() {
    let xml = render(Format::Junit);
    let n = warnings();
    assert!(
        xml.contains(&format!(r#"failures="0" skipped="{n}""#)),
        "{xml}"
    );
    assert!(!xml.contains("<failure"), "{xml}");
    let skipped = xml
        .lines()
        .find(|l| l.contains("<skipped message=\"warning: total latency{kind:write}"))
        .expect(&xml);
    assert!(
        skipped.contains("p(95) &lt; 1ms (warn only): measured ")
            && skipped.contains(", limit 1.00ms\"/>"),
        "{skipped}"
    );
    assert_eq!(
        xml.matches("<skipped message=\"warning: ").count(),
        n,
        "{xml}"
    );
    assert!(
        xml.contains("\nscenario browse (constant-arrival-rate, from 0.0 s): "),
        "{xml}"
    );
    assert!(
        xml.contains("\nscenario checkout (ramping-vus, from 2.0 s): "),
        "{xml}"
    );
    assert!(xml.contains("owner:a|b&amp;c"), "{xml}");
    assert!(
        xml.contains(r#"<testcase classname="loadgate.slo.scenario.checkout" name="scenario checkout latency{owner:a|b&amp;c}: p(99) &lt; 10s""#),
        "{xml}"
    );
}

#[test]
fn json_text_html_and_console_pass_with_the_warnings() {
    let json: serde_json::Value = serde_json::from_str(&render(Format::Json)).unwrap();
    assert_eq!(json["verdict"], "pass", "{json:#}");
    assert_eq!(json["exit_code"], 0);
    let n = warnings();
    assert_eq!(json["warnings"], n);
    assert_eq!(json["scenarios"][1]["name"], "checkout");
    assert_eq!(json["scenarios"][1]["executor"], "ramping-vus");
    assert_eq!(json["scenarios"][1]["start_time_s"], 2.0);
    assert_eq!(json["scenarios"][1]["valid"], true);
    let (_, current, _) = runs();
    let pay = target(&current, "pay");
    assert_eq!(json["scenarios"][1]["iterations"], pay.requests);
    assert_eq!(json["scenarios"][1]["headline"]["requests"], pay.requests);
    let warn = &json["slo"][2];
    assert_eq!(warn["severity"], "warn", "{json:#}");
    assert_eq!(warn["tags"]["kind"], "write");
    assert_eq!(warn["passed"], false);
    assert_eq!(json["slo"][3]["scope_kind"], "scenario");
    assert!(
        json["summary"]
            .as_str()
            .unwrap()
            .starts_with(&format!("PASSED with {n} warnings: ")),
        "{json:#}"
    );

    let text = render(Format::Text);
    assert!(text.contains("  scenario  executor"), "{text}");
    assert!(
        text.contains("  browse    constant-arrival-rate  "),
        "{text}"
    );
    assert!(text.contains("  by tag kind  targets"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("  warning      SLO total latency{kind:write}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("\nPASSED with {n} warnings: ")),
        "{text}"
    );

    let html = render(Format::Html);
    assert!(html.contains("<table id=\"scenarios\">"), "{html}");
    assert!(html.contains("<td>checkout</td><td class=\"text\">ramping-vus</td><td>2.0 s</td>"));
    assert!(html.contains("<td class=\"state warning\">⚠ warning</td>"));
    assert!(html.contains("<th>by tag kind</th>"));
    assert!(!html.contains("<script>x"), "tag values are escaped");

    let summary = report::console::summary(
        &current,
        loadgate::report::console::SummaryOptions::default(),
    );
    assert!(summary.contains("  scenario  executor"), "{summary}");
    assert!(
        summary.contains("  ⚠ warning  total latency{kind:write}: p(95) < 1ms (warn only)"),
        "{summary}"
    );
    assert!(summary.contains(", limit 1.00ms"), "{summary}");
    assert!(
        summary.contains("\n  pass       total errors: rate < 1%"),
        "{summary}"
    );
    assert!(summary.contains("PASSED with 1 warning: "), "{summary}");
    assert!(!summary.contains("FAIL"), "{summary}");
}
