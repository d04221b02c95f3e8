//! Every report format rendered from fixed result files (`tests/fixtures/results`: two real runs
//! of one spec, 5 ms then 6 ms of server delay (the p50 regressed; the baseline's p95 was
//! noisy, so the p95 improved), with targets named `<script>alert(1)</script>`
//! and `a|b`), compared with insta snapshots (`tests/snapshots`), plus the properties each
//! format must keep whatever the snapshot says. What the reports say of how the rules were
//! decided (levels, allowances, detectable effects, the family; a paired comparison's sub-runs)
//! is in `reports_decisions.rs`.

use crate::support;

use std::path::Path;

use loadgate::compare;
use loadgate::report::{self, Format, Input};
use loadgate::result::{self, RunResult};

/// The result file `name` of `tests/fixtures/results`.
pub(crate) fn fixture(name: &str) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name);
    result::read(&path).unwrap()
}

/// The long fixtures (24 s runs of `long.yaml`, 10 ms then 15 ms of server delay: long enough to
/// judge, and a clear regression), their targets renamed `<script>alert(1)</script>` and
/// `a|b`.
pub(crate) fn judged_pair() -> (RunResult, RunResult) {
    let rename = |mut r: RunResult| {
        r.targets[0].name = "<script>alert(1)</script>".to_string();
        r.targets[1].name = "a|b".to_string();
        r
    };
    (
        rename(fixture("long-baseline.json")),
        rename(fixture("long-current.json")),
    )
}

/// The 4 s fixtures (too short for the rules to be judged: each is inconclusive, and says so)
/// in `format`, compared when `with_baseline`.
fn render(format: Format, with_baseline: bool) -> String {
    render_pair(
        format,
        &fixture("baseline.json"),
        &fixture("current.json"),
        with_baseline,
    )
}

/// [`judged_pair`] compared, in `format`.
fn render_judged(format: Format) -> String {
    let (baseline, current) = judged_pair();
    render_pair(format, &baseline, &current, true)
}

fn render_pair(
    format: Format,
    baseline: &RunResult,
    current: &RunResult,
    with_baseline: bool,
) -> String {
    let comparison = compare::compare(baseline, current).unwrap();
    let input = Input {
        current,
        baseline: with_baseline.then_some(baseline),
        comparison: with_baseline.then_some(&comparison),
        history: &[],
        spec_path: None,
    };
    report::render(format, &input, None).unwrap()
}

#[test]
fn markdown_snapshot() {
    let md = render_judged(Format::Md);
    assert!(md.starts_with("### 📉 loadgate long: REGRESSED:"), "{md}");
    // Every rule tested, with its level and detectable change; the family once.
    assert!(
        md.contains(
            "\n4 rules tested together at a 5% false-alarm rate per run (max-T step-down).\n"
        ),
        "{md}"
    );
    assert!(!md.contains("not tested"), "{md}");
    // Names from the spec stay text.
    assert!(!md.contains("<script>"));
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(md.contains("| a\\|b |"));
    // Every table row has the header's number of cells (a `|` in a name would add one).
    for table_row in md.lines().filter(|l| l.starts_with("| a\\|b")) {
        assert_eq!(table_row.matches(" | ").count(), 7, "{table_row}");
    }
    insta::assert_snapshot!("markdown", md);
}

#[test]
fn markdown_without_a_baseline() {
    let md = render(Format::Md, false);
    assert!(md.contains("no baseline to compare with"), "{md}");
    assert!(!md.contains("| rule |"), "{md}");
    insta::assert_snapshot!("markdown_no_baseline", md);
}

#[test]
fn junit_snapshot() {
    let xml = render_judged(Format::Junit);
    assert!(xml.starts_with("<?xml"));
    // 2 SLOs and 4 rules: the p(50) (+42%) and the throughput (-29%) regressed, clearly; the
    // p(95) (+27%, noisier) too, near its bound.
    let failures = xml.matches("<failure ").count();
    assert!(failures >= 2, "{xml}");
    assert!(
        xml.contains(&format!(r#"tests="6" failures="{failures}""#)),
        "{xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 6);
    // Each failing latency rule with its detectable change.
    assert!(xml.contains("\ndetectable at 80% power: +"), "{xml}");
    assert_eq!(xml.matches(r#" time="24.000""#).count(), 1 + 2 + 6);
    assert!(!xml.contains("<script>"));
    insta::assert_snapshot!("junit", xml);
}

#[test]
fn json_verdict_snapshot() {
    let json = render_judged(Format::Json);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["verdict"], "regressed");
    assert_eq!(value["exit_code"], 4);
    assert!(value["rule_counts"]["regressed"].as_u64() >= Some(2));
    assert_eq!(value["rules"][0]["verdict"], "regressed", "the p(50)");
    assert_eq!(value["rule_counts"]["unchanged"], 1);
    assert_eq!(value["family"]["tested"], 4);
    assert_eq!(value["family"]["method"], "max-t");
    for rule in value["rules"].as_array().unwrap() {
        // Each rule tested at its share of the 5%, with a detectable change.
        let level = rule["level"].as_f64().unwrap();
        assert!(level > 0.0 && level <= 0.05, "{rule}");
        assert!(rule["mde"].as_f64().unwrap() > 0.0, "{rule}");
    }
    assert!(value["current"]["headline"]["p95_us"].is_u64());
    // Valid against its published schema.
    let schema = loadgate::report::verdict::schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    insta::assert_snapshot!("verdict_json", json);
}

#[test]
fn text_snapshot() {
    let text = render_judged(Format::Text);
    assert!(text.trim_end().ends_with("1 unchanged)"));
    assert!(text.contains("REGRESSED: 2/2 SLOs met; regression found (4 rules: "));
    assert!(text.contains("; detectable at 80% power +"), "{text}");
    insta::assert_snapshot!("text", text);
}

#[test]
fn html_snapshot() {
    let html = render_judged(Format::Html);
    assert!(html.starts_with("<!doctype html>"));
    assert!(!html.contains("<script>alert(1)</script>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    // Self-contained: nothing fetched at view time.
    for needle in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!html.contains(needle), "{needle}");
    }
    insta::assert_snapshot!("html", html);
}

/// Many targets with long names: the Markdown stays under GitHub's limit and says what it left
/// out.
#[test]
fn markdown_stays_under_the_comment_limit() {
    let baseline = fixture("baseline.json");
    let mut current = fixture("current.json");
    let template = current.targets[0].clone();
    current.targets = (0..3_000)
        .map(|i| {
            let mut t = template.clone();
            t.name = format!("target-{i:04}-{}", "x".repeat(60));
            t
        })
        .collect();
    let comparison = compare::compare(&baseline, &current).unwrap();
    for (with_baseline, n) in [(true, 3_000), (false, 3_000)] {
        let input = Input {
            current: &current,
            baseline: with_baseline.then_some(&baseline),
            comparison: with_baseline.then_some(&comparison),
            history: &[],
            spec_path: None,
        };
        let md = report::render(Format::Md, &input, None).unwrap();
        let chars = md.chars().count();
        assert!(chars <= report::markdown::GITHUB_COMMENT_LIMIT, "{chars}");
        assert!(chars > 10_000, "{chars}: summarised too much");
        assert!(md.contains("more targets are not listed"), "{n}");
        // The verdict line and the checks survive.
        assert!(md.starts_with("### "));
        assert_eq!(md.contains("| rule |"), with_baseline);
        assert!(md.contains("| SLO |"));
        assert!(md.contains("<summary>Environment</summary>"));
    }
}

#[test]
fn truncation_closes_open_details_and_says_so() {
    let text = format!("head\n<details>\n{}", "line\n".repeat(1_000));
    let cut = report::markdown::truncate_markdown(&text, 500);
    assert!(cut.chars().count() <= 500);
    assert!(cut.contains("</details>"));
    assert!(cut.ends_with("the HTML and JSON reports are complete.*\n"));
}

/// A trend over four runs: the latest against the one before and the median of the others.
#[test]
fn trend_compares_the_latest_with_the_previous_run_and_the_median() {
    let base = fixture("current.json");
    let runs: Vec<RunResult> = [10_000u64, 12_000, 30_000, 15_000]
        .iter()
        .enumerate()
        .map(|(i, p95)| {
            let mut r = base.clone();
            r.started_at = format!("2024-05-0{}T03:00:00.000Z", i + 1);
            r.total.latency_us.as_mut().unwrap().p95_us = *p95;
            r
        })
        .collect();
    let trend = loadgate::report::history::trend(&runs[..3], &runs[3]);
    assert_eq!(trend.runs.len(), 4);
    assert_eq!(trend.runs[0].label, "2024-05-01 03:00");
    let p95 = trend.metrics.iter().find(|m| m.key == "p95_us").unwrap();
    assert_eq!(p95.values, ["10.00ms", "12.00ms", "30.00ms", "15.00ms"]);
    // 15 ms against 30 ms before it, and against the median of 10, 12, 30 (12 ms).
    assert_eq!(p95.vs_previous, "-50.0%");
    assert_eq!(p95.vs_median, "+25.0%");
    let input = Input {
        current: &runs[3],
        baseline: None,
        comparison: None,
        history: &runs[..3],
        spec_path: None,
    };
    let md = report::render(Format::Md, &input, None).unwrap();
    assert!(md.contains("#### Trend over the last 4 runs"), "{md}");
    // Not "no baseline": the runs are compared with each other, and the rules need one.
    let first = md.lines().next().unwrap();
    assert!(
        first.ends_with(
            "PASSED: 2/2 SLOs met; trend over 4 runs (regression rules are judged against a --baseline)"
        ),
        "{first}"
    );
    assert!(!md.contains("no baseline"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&report::render(Format::Json, &input, None).unwrap()).unwrap();
    assert_eq!(json["summary"], first.split_once(": ").unwrap().1);
    assert!(
        md.contains("| p95 | 10.00ms | 12.00ms | 30.00ms | 15.00ms | -50.0% | +25.0% |"),
        "{md}"
    );
    let html = report::render(Format::Html, &input, None).unwrap();
    assert!(html.contains("Trend over the last 4 runs"));
    assert!(!html.contains("no baseline"));
    // The chart's x axis: each run's start date over its time, not 1, 2, 3, 4.
    let chart = svg_titled(&html, "p50 and p95 over the runs");
    let ticks = x_ticks(chart);
    assert_eq!(
        ticks,
        (1..=4)
            .map(|d| format!("2024-05-0{d} 03:00"))
            .collect::<Vec<_>>(),
        "{chart}"
    );
    assert!(chart.contains("run start (UTC)"));
}

/// The `<svg>` chart whose title is `title`.
fn svg_titled<'a>(html: &'a str, title: &str) -> &'a str {
    let at = html
        .find(&format!("<title>{title}</title>"))
        .unwrap_or_else(|| panic!("no chart {title}"));
    let start = html[..at].rfind("<svg ").unwrap();
    let end = start + html[start..].find("</svg>").unwrap();
    &html[start..end]
}

/// The x tick labels of a chart, the lines of each joined by a space.
fn x_ticks(svg: &str) -> Vec<String> {
    svg.split(r#"<text class="x-tick""#)
        .skip(1)
        .map(|t| {
            let t = &t[..t.find("</text>").unwrap()];
            t.split("<tspan")
                .skip(1)
                .map(|s| &s[s.find('>').unwrap() + 1..s.find("</tspan>").unwrap()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The points of each line of a chart (its `<path d="M..." fill="none">`s, not the markers),
/// in SVG units.
fn lines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split(r#"<path d="M"#)
        .skip(1)
        .filter(|p| p[p.find('"').unwrap()..].starts_with(r#"" fill="none""#))
        .map(|p| {
            p[..p.find('"').unwrap()]
                .split(" L")
                .map(|xy| {
                    let (x, y) = xy.trim().split_once(' ').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// Both charts over time leave out the last, partial second (the fixtures measured 4.0 s and
/// hold a sample of second 4, whose p50 would be a fake drop): a point per complete second,
/// 0 to 3, in each line of each chart, and no 4 s tick.
#[test]
fn charts_over_time_plot_complete_seconds_only() {
    let current = fixture("current.json");
    assert_eq!(current.duration_s, 4.0);
    assert!(current.time_series.iter().any(|s| s.second == 4));
    let html = render(Format::Html, true);
    for title in [
        "Latency over time (p50, p99 of each complete second)",
        "Throughput over time (complete seconds)",
    ] {
        let chart = svg_titled(&html, title);
        let lines = lines(chart);
        assert_eq!(
            lines.len(),
            if title.starts_with("Latency") { 4 } else { 2 }
        );
        for line in &lines {
            assert_eq!(line.len(), 4, "{title}: {line:?}");
        }
        // Every line ends at the same x, the last complete second's.
        let ends: Vec<f64> = lines.iter().map(|l| l.last().unwrap().0).collect();
        assert!(ends.iter().all(|x| *x == ends[0]), "{title}: {ends:?}");
        assert_eq!(x_ticks(chart).last().unwrap(), "3 s", "{title}");
    }
}

/// The end-of-line labels of a chart: (baseline y, name).
fn end_labels(svg: &str) -> Vec<(f64, String)> {
    svg.split(r#"<text class="end-label""#)
        .skip(1)
        .map(|t| {
            let y = &t[t.find(r#"y=""#).unwrap() + 3..];
            let y: f64 = y[..y.find('"').unwrap()].parse().unwrap();
            let name = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            (y, name.to_string())
        })
        .collect()
}

/// Labels at the lines' ends never overlap: "current" and "baseline" ending at one point
/// (the percentile chart's 100%) are drawn one above the other, at least a line (14 units)
/// apart.
#[test]
fn end_labels_are_moved_apart() {
    let html = render(Format::Html, true);
    for title in [
        "Latency by percentile",
        "Latency over time (p50, p99 of each complete second)",
        "Throughput over time (complete seconds)",
        "Latency histogram (share of responses, up to p99.9)",
    ] {
        let mut labels = end_labels(svg_titled(&html, title));
        assert!(labels.len() >= 2, "{title}");
        labels.sort_by(|a, b| a.0.total_cmp(&b.0));
        for pair in labels.windows(2) {
            assert!(
                pair[1].0 - pair[0].0 >= 14.0 - 1e-9,
                "{title}: {pair:?} overlap"
            );
        }
    }
}

/// An SLO judges one run against a fixed limit: its own table with the limit, and no empty
/// interval or allowance cells; the rules keep theirs.
#[test]
fn slos_show_their_limit_and_rules_their_interval_and_allowance() {
    let html = render(Format::Html, true);
    // 4 s runs: too short for any rule to be tested, and the report says so once.
    assert!(
        html.contains(r#"<p id="family">none of the 5 rules could be tested (each says why).</p>"#),
        "{html}"
    );
    let slo = &html[html.find(r#"<table id="slo">"#).unwrap()..];
    let slo = &slo[..slo.find("</table>").unwrap()];
    assert!(slo.contains("<th>limit</th>") && !slo.contains("interval"));
    assert!(
        slo.contains("<td>9.37ms</td><td>50.00ms</td><td>11.62ms</td><td>-19.4%</td>"),
        "{slo}"
    );
    let rules = &html[html.find(r#"<table id="rules">"#).unwrap()..];
    let rules = &rules[..rules.find("</table>").unwrap()];
    for table in [slo, rules] {
        assert!(!table.contains("<td></td>"), "an empty cell: {table}");
    }
    // The p(50) rule's effective allowance: 10% of the baseline's 7.29 ms.
    let p50 = rules
        .lines()
        .find(|l| l.starts_with("<tr><td>latency p(50)"))
        .unwrap();
    assert!(
        p50.contains("730us)</td>") || p50.contains("<td>+730us</td>"),
        "{p50}"
    );

    let md = render(Format::Md, true);
    let slo_rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| total ")).collect();
    assert_eq!(slo_rows.len(), 2, "{md}");
    for row in slo_rows {
        assert_eq!(row.matches(" | ").count(), 5, "{row}");
        assert!(!row.contains("|  |") && !row.contains("| |"), "{row}");
    }
    assert!(md.contains("| total latency: p(95) &lt; 50ms | 9.37ms | 50.00ms | 11.62ms |"));
}

/// Inside `<summary>` GitHub reads HTML, not Markdown, and shows a Markdown backslash as it
/// is: names there are HTML-escaped only, while table cells keep Markdown's escaping.
#[test]
fn markdown_summaries_escape_names_for_html_and_tables_for_markdown() {
    let mut current = fixture("current.json");
    current.targets[1].name = "*star* a|b_c @team".to_string();
    let input = Input {
        current: &current,
        baseline: None,
        comparison: None,
        history: &[],
        spec_path: None,
    };
    let md = report::render(Format::Md, &input, None).unwrap();
    let summary = md
        .lines()
        .find(|l| l.starts_with("<details><summary>*star*"))
        .unwrap_or_else(|| panic!("no summary of the renamed target: {md}"));
    assert_eq!(
        summary,
        "<details><summary>*star* a|b_c @\u{200B}team: GET \
         http://127.0.0.1:40907/b?delay=6ms&amp;status=200</summary>"
    );
    // In the targets table: Markdown's escaping, so that `|` does not split the cell.
    assert!(
        md.contains("| \\*star\\* a\\|b\\_c @\u{200B}team | "),
        "{md}"
    );
    // The tag-like name stays text in both.
    assert!(md.contains("<details><summary>&lt;script&gt;alert(1)&lt;/script&gt;: GET"));
    assert!(md.contains("| &lt;script&gt;alert(1)&lt;/script&gt; | "));
}

/// The JUnit report gives every suite and case a `time` in seconds (dorny/test-reporter shows
/// "NaNms" without one) and, given the spec's path, each case its `file`, so test-report
/// actions annotate the spec; without a path no `file` at all.
#[test]
fn junit_has_times_in_seconds_and_the_spec_as_file() {
    let (baseline, current) = judged_pair();
    let comparison = compare::compare(&baseline, &current).unwrap();
    let spec = Path::new("perf/api.loadgate.yaml");
    let render = |spec_path| {
        let input = Input {
            current: &current,
            baseline: Some(&baseline),
            comparison: Some(&comparison),
            history: &[],
            spec_path,
        };
        report::render(Format::Junit, &input, None).unwrap()
    };
    // minijinja's escaping writes `/` as `&#x2f;`, which every XML reader decodes.
    let xml = render(Some(spec)).replace("&#x2f;", "/");
    // The measured window of the current run: 24 s.
    assert_eq!(current.duration_s, 24.0);
    let opening = |tag: &str| -> Vec<String> {
        xml.match_indices(&format!("<{tag} "))
            .map(|(i, _)| xml[i..i + xml[i..].find('>').unwrap()].to_string())
            .collect()
    };
    let elements: Vec<String> = ["testsuites", "testsuite", "testcase"]
        .iter()
        .flat_map(|t| opening(t))
        .collect();
    assert_eq!(elements.len(), 1 + 2 + 6);
    for e in &elements {
        assert!(e.contains(r#" time="24.000""#), "{e}");
    }
    for case in opening("testcase") {
        assert!(case.contains(r#" file="perf/api.loadgate.yaml""#), "{case}");
    }
    // The first failing case (the regressed p50 rule) among them.
    let failing = xml.find("<failure ").unwrap();
    let case = &xml[xml[..failing].rfind("<testcase ").unwrap()..failing];
    assert!(
        case.contains(
            r#"name="latency p(50) +10% floor 200us" time="24.000" file="perf/api.loadgate.yaml">"#
        ),
        "{case}"
    );
    assert!(!render(None).contains(" file="));
}

// ---------------------------------------------------------------------------------------------
// Flows. The results are the long fixtures ([`judged_pair`]) with a flow added by hand: its
// steps are the fixture's two targets (named `<script>…` and `a|b`, so escaping shows), its
// iteration durations the run's whole histogram (10 ms then 15 ms of delay), without a
// per-second series (so its rules cannot be tested in two runs, and say why).

/// The flow's name: a tag, a table separator and Markdown emphasis, all to stay text.
const FLOW: &str = "<i>shop</i>|*x*";

/// `r` with the flow [`FLOW`], its SLO and regression rules of the flow, of a step's target and
/// of a flow that `with_gone` adds only to the current result.
fn with_flow(mut r: RunResult, with_gone: bool) -> RunResult {
    use loadgate::plan::regression::ScopeKind;
    use loadgate::result::{FlowResult, FlowStep, RecordedRule, SloVerdict};
    let flow = |name: &str| FlowResult {
        tags: Default::default(),
        name: name.to_string(),
        weight: 3,
        steps: vec![
            FlowStep {
                target: r.targets[0].name.clone(),
                group: Some("auth|*x*".to_string()),
            },
            FlowStep {
                target: r.targets[1].name.clone(),
                group: None,
            },
        ],
        iterations: r.total.requests,
        passed: r.total.requests - 3,
        failed: 3,
        iterations_per_s: r.total.requests as f64 / r.duration_s,
        failed_by_reason: [("request".to_string(), 2), ("extraction".to_string(), 1)].into(),
        failed_requests_by_kind: [("timeout".to_string(), 2)].into(),
        duration_us: r.total.latency_us.clone(),
        histogram: r.total.histogram.clone(),
    };
    r.flows = vec![flow(FLOW)];
    if with_gone {
        r.flows.push(flow("gone"));
    }
    let p95 = r.total.latency_us.as_ref().unwrap().p95_us as f64;
    r.slo.push(SloVerdict {
        scope_kind: None,
        tags: Default::default(),
        severity: Default::default(),
        scope: FLOW.to_string(),
        metric: loadgate::plan::threshold::Metric::Latency,
        threshold: "p(95) < 1s".to_string(),
        measured: Some(p95),
        unit: "us".to_string(),
        limit: 1_000_000.0,
        passed: true,
        window_s: None,
        failed_window_start_s: None,
        aborted_run: false,
        default: false,
        dropped: 0,
    });
    let rule = |kind, scope: &str| RecordedRule {
        severity: Default::default(),
        tags: Default::default(),
        scope_kind: kind,
        scope: scope.to_string(),
        metric: loadgate::plan::threshold::Metric::Latency,
        aggregation: "p(50)".to_string(),
        max_change: 0.05,
        floor: 100.0,
        unit: "us".to_string(),
        expression: "p(50) +5% floor 100us".to_string(),
    };
    let rules = r.regression_rules.get_or_insert_with(Vec::new);
    rules.push(rule(ScopeKind::Flow, FLOW));
    rules.push(rule(ScopeKind::Target, "a|b"));
    rules.push(rule(ScopeKind::Flow, "gone"));
    r
}

/// The long fixtures' two runs with the flow, and their comparison.
fn flow_runs() -> (RunResult, RunResult, compare::Comparison) {
    let (baseline, current) = judged_pair();
    let baseline = with_flow(baseline, false);
    let current = with_flow(current, true);
    let comparison = compare::compare(&baseline, &current).unwrap();
    (baseline, current, comparison)
}

fn render_flows(format: Format) -> String {
    let (baseline, current, comparison) = flow_runs();
    let input = Input {
        current: &current,
        baseline: Some(&baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: None,
    };
    report::render(format, &input, None).unwrap()
}

/// A flow's and a target's rule compare that flow's and target's values in both runs; the
/// target's is judged on its per-second series, while the flow, which has none, cannot be
/// tested in two runs and says why; a flow missing from the baseline is inconclusive, and says
/// so.
#[test]
fn scoped_rules_are_judged_on_their_flow_and_target() {
    let (baseline, current, comparison) = flow_runs();
    let find = |kind, scope: &str| {
        comparison
            .rules
            .iter()
            .find(|r| r.scope_kind == kind && r.scope == scope)
            .unwrap_or_else(|| panic!("no rule of {kind} {scope}: {:?}", comparison.rules))
    };
    let p50 = |r: &RunResult| r.total.latency_us.as_ref().unwrap().p50_us as f64;
    let flow = find(loadgate::plan::regression::ScopeKind::Flow, FLOW);
    assert_eq!(
        (flow.baseline, flow.current),
        (Some(p50(&baseline)), Some(p50(&current)))
    );
    assert_eq!(flow.verdict, compare::RuleState::Inconclusive);
    assert!(
        flow.reason.contains("no per-second series"),
        "{}",
        flow.reason
    );
    assert_eq!((flow.level, flow.mde), (None, None));

    let target = find(loadgate::plan::regression::ScopeKind::Target, "a|b");
    let target_p50 = |r: &RunResult| r.targets[1].latency_us.as_ref().unwrap().p50_us as f64;
    assert_eq!(
        (target.baseline, target.current),
        (Some(target_p50(&baseline)), Some(target_p50(&current)))
    );
    // 11.9 ms -> 16.8 ms, from its own seconds: beyond the allowed 5%, at its level.
    assert_eq!(
        target.verdict,
        compare::RuleState::Regressed,
        "{}",
        target.reason
    );
    assert!(target.level.is_some_and(|l| l > 0.0 && l <= 0.05));

    let gone = find(loadgate::plan::regression::ScopeKind::Flow, "gone");
    assert_eq!(gone.verdict, compare::RuleState::Inconclusive);
    assert_eq!(gone.reason, "the baseline result has no flow `gone`");
    assert_eq!((gone.baseline, gone.current.is_some()), (None, true));
    // The whole run's four rules beside them.
    assert_eq!(
        comparison
            .rules
            .iter()
            .filter(|r| r.scope_kind == loadgate::plan::regression::ScopeKind::Total)
            .count(),
        4
    );
}

/// Every format shows the flow with its steps under it, names escaped for the format.
#[test]
fn every_report_has_a_flow_table_with_its_steps() {
    let md = render_flows(Format::Md);
    let table =
        &md[md.find("#### Flows").expect("a Flows section")..md.find("#### Targets").unwrap()];
    assert!(
        !table.contains("<i>") && !table.contains("<script>"),
        "{table}"
    );
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| ")).collect();
    // Header, the two flows, each with its two steps.
    assert_eq!(rows.len(), 1 + 2 * 3, "{table}");
    for row in &rows {
        // Eight cells: nine unescaped `|`.
        assert_eq!(row.replace("\\|", "").matches('|').count(), 9, "{row}");
    }
    assert!(
        rows[1].starts_with("| **&lt;i&gt;shop&lt;/i&gt;\\|\\*x\\*** | | "),
        "{}",
        rows[1]
    );
    assert!(
        rows[2].starts_with("| ↳ &lt;script&gt;alert(1)&lt;/script&gt; | auth\\|\\*x\\* | "),
        "{}",
        rows[2]
    );
    assert!(rows[3].starts_with("| ↳ a\\|b |  | "), "{}", rows[3]);
    assert!(
        table.contains(
            "failed iterations by reason: extraction: 1, request: 2 (failed requests: timeout: 2)"
        ),
        "{table}"
    );
    // The flow's SLO and rule by the spec's names.
    assert!(
        md.contains("\\*x\\* iteration\\_duration: p(95) &lt; 1s | 19.98ms | 1.00s |"),
        "{md}"
    );
    insta::assert_snapshot!("markdown_flows", md);

    let html = render_flows(Format::Html);
    let table = &html[html.find(r#"<table id="flows">"#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(
        table.contains("<strong>&lt;i&gt;shop&lt;&#x2f;i&gt;|*x*</strong>"),
        "{table}"
    );
    assert_eq!(table.matches(r#"<tr class="step">"#).count(), 4);
    assert!(!html.contains("<i>shop"));
    insta::assert_snapshot!("html_flows", html);

    let text = render_flows(Format::Text);
    assert!(text.contains("flow / step"), "{text}");
    assert!(
        text.contains("<i>shop</i>|*x* failed iterations: extraction: 1, request: 2"),
        "{text}"
    );
    insta::assert_snapshot!("text_flows", text);
}

/// JUnit: the flow's SLO and its rules are test cases like a target's; the regressed flow rule
/// fails.
#[test]
fn junit_has_a_case_per_flow_slo_and_rule() {
    let xml = render_flows(Format::Junit);
    assert!(!xml.contains("<i>") && !xml.contains("<script>"));
    // minijinja's escaping writes `/` as `&#x2f;`.
    let xml = xml.replace("&#x2f;", "/");
    assert!(
        xml.contains(r#"<testcase classname="loadgate.slo.&lt;i&gt;shop&lt;/i&gt;|*x*" name="&lt;i&gt;shop&lt;/i&gt;|*x* iteration_duration: p(95) &lt; 1s""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testcase classname="loadgate.regression.&lt;i&gt;shop&lt;/i&gt;|*x*" name="&lt;i&gt;shop&lt;/i&gt;|*x* iteration_duration p(50) +5% floor 100us""#),
        "{xml}"
    );
    // 3 SLOs and 7 rules; the whole run's p(50) and throughput and the target `a|b`'s p(50)
    // fail, clearly (the p(95) too, near its bound); the flows' rules cannot be tested in two
    // runs.
    let failures = xml.matches("<failure ").count();
    assert!(failures >= 3, "{xml}");
    assert!(
        xml.contains(&format!(r#"tests="10" failures="{failures}""#)),
        "{xml}"
    );
    insta::assert_snapshot!("junit_flows", xml);
}

/// The JSON verdict lists the flows (valid against its schema); the scoped rules carry their
/// scope.
#[test]
fn json_verdict_has_the_flows() {
    let json = render_flows(Format::Json);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let flow = &value["flows"][0];
    assert_eq!(flow["name"], FLOW);
    assert_eq!(flow["failed"], 3);
    assert_eq!(flow["failed_by_reason"]["extraction"], 1);
    assert_eq!(flow["steps"][1], serde_json::json!({ "target": "a|b" }));
    assert!(flow["duration_us"]["p95_us"].is_u64());
    let rules = value["rules"].as_array().unwrap();
    assert!(
        rules
            .iter()
            .any(|r| r["scope_kind"] == "flow" && r["scope"] == FLOW)
    );
    assert!(
        rules
            .iter()
            .filter(|r| r.get("scope_kind").is_none())
            .count()
            == 4
    );
    let schema = loadgate::report::verdict::schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    insta::assert_snapshot!("verdict_json_flows", json);
}

/// A result with flows is written and read back whole, and is valid against its schema.
#[test]
fn a_result_with_flows_reads_back_and_fits_its_schema() {
    let (_, current, _) = flow_runs();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flows.json");
    result::write(&current, &path).unwrap();
    let back = result::read(&path).unwrap();
    assert_eq!(back.flows, current.flows);
    assert_eq!(back.regression_rules, current.regression_rules);
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(value["result_version"], 4);
    let schema = result::schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// The run's console summary shows the flow table after the latency table, and the flow's SLO
/// by the spec's name; a result without flows has no flow table.
#[test]
fn the_console_summary_has_the_flow_table() {
    let current = with_flow(fixture("current.json"), true);
    let text = report::console::summary(
        &current,
        loadgate::report::console::SummaryOptions::default(),
    );
    let table = text.find("  flow / step").expect("a flow table");
    assert!(text.find("  latency ").unwrap() < table, "{text}");
    assert!(
        text.contains("\n    a|b                                        2622  655.5/s  0.000%"),
        "{text}"
    );
    assert!(
        text.contains("<i>shop</i>|*x* iteration_duration: p(95) < 1s"),
        "{text}"
    );
    // The histogram's levels come from a request latency SLO, never a flow's iteration
    // duration, even when only a flow's is left.
    let mut flow_only = current.clone();
    flow_only.slo.retain(|v| v.scope == FLOW);
    let verbose = report::console::SummaryOptions {
        color: false,
        verbose: true,
    };
    let text = report::console::summary(&flow_only, verbose);
    assert!(text.contains("limits from no latency SLO"), "{text}");
    let plain = report::console::summary(&fixture("current.json"), verbose);
    assert!(!plain.contains("flow / step"), "{plain}");
}

/// A spec of one flow on the built-in server at `addr`: log in with a user of `users.csv` and
/// take the token, open an item with it, add it to the cart with the session cookie; SLOs and
/// rules of the flow, a rule of the `item` step; 2 connections for 2 s.
fn shop_spec(addr: std::net::SocketAddr) -> String {
    format!(
        r#"version: 1
name: shop-report
defaults:
  base_url: http://{addr}
  timeout: 2s
flows:
  - name: shop
    data: {{ file: users.csv }}
    slo:
      iteration_duration: ["p(95) < 2s"]
      failed_iterations: ["rate < 5%"]
    regression:
      iteration_duration: ["p(95) +50%"]
    steps:
      - name: login
        group: auth
        method: POST
        path: /api/login
        headers: {{ Content-Type: application/json }}
        body: '{{"user": "{{{{username}}}}", "password": "{{{{password}}}}"}}'
        expect: {{ status: [200] }}
        extract:
          - {{ var: token, json: /token }}
      - name: item
        path: /api/items/3
        headers: {{ Authorization: "Bearer {{{{token}}}}" }}
        expect: {{ status: [200] }}
        regression: {{ latency: ["p(50) +50%"] }}
      - name: cart
        group: cart
        method: POST
        path: /api/cart
        headers: {{ Content-Type: application/json }}
        body: '{{"item": 3}}'
        expect: {{ status: [201] }}
load:
  connections: 2
  duration: 2s
  warmup: 500ms
"#
    )
}

/// Through the real pipeline: a flow run against the built-in server's shop API (log in, take
/// the token; open an item with it; add to the cart with the session cookie) gives a result
/// whose flow, steps, SLOs and scoped rules the comparison and the reports carry.
#[test]
fn a_real_flow_run_is_compared_and_reported() {
    let _turn = support::turn();
    let (mut server, addr) = support::start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("users.csv"),
        "username,password\nann,secret-ann\nbob,secret-bob\n",
    )
    .unwrap();
    let spec = shop_spec(addr);
    let result = support::run_spec_text(dir.path(), &spec);
    let _ = server.kill();
    let _ = server.wait();

    assert_eq!(result.flows.len(), 1, "{:?}", result.flows);
    let flow = &result.flows[0];
    assert!(flow.iterations > 10, "{flow:?}");
    assert_eq!(flow.failed, 0, "{flow:?}");
    let steps: Vec<(&str, Option<&str>)> = flow
        .steps
        .iter()
        .map(|s| (s.target.as_str(), s.group.as_deref()))
        .collect();
    assert_eq!(
        steps,
        [
            ("shop/login", Some("auth")),
            ("shop/item", None),
            ("shop/cart", Some("cart"))
        ]
    );
    // Every iteration sent each step once: as many requests per step as iterations, up to the
    // iterations in flight at the measured window's two edges (2 connections at each).
    for t in &result.targets {
        assert!(
            t.requests.abs_diff(flow.iterations) <= 4,
            "{}: {} requests, {} iterations",
            t.name,
            t.requests,
            flow.iterations
        );
    }
    let flow_slo: Vec<_> = result.slo.iter().filter(|v| v.scope == "shop").collect();
    assert_eq!(flow_slo.len(), 2);
    assert!(flow_slo.iter().all(|v| v.passed), "{flow_slo:?}");
    let rules = result.regression_rules.as_ref().unwrap();
    assert!(
        rules.iter().any(
            |r| r.scope_kind == loadgate::plan::regression::ScopeKind::Flow && r.scope == "shop"
        )
    );
    assert!(rules.iter().any(
        |r| r.scope_kind == loadgate::plan::regression::ScopeKind::Target && r.scope == "shop/item"
    ));

    // Compared with itself: the scoped rules compare the same values, and 2 s are too short
    // to judge them (inconclusive, saying so).
    let comparison = compare::compare(&result, &result).unwrap();
    for kind in [
        loadgate::plan::regression::ScopeKind::Flow,
        loadgate::plan::regression::ScopeKind::Target,
    ] {
        let rule = comparison
            .rules
            .iter()
            .find(|r| r.scope_kind == kind)
            .unwrap_or_else(|| panic!("no {kind} rule"));
        assert_eq!(rule.verdict, compare::RuleState::Inconclusive, "{rule:?}");
        assert!(rule.reason.contains("too short to judge"), "{rule:?}");
        assert_eq!(rule.baseline, rule.current);
    }
    let input = Input {
        current: &result,
        baseline: Some(&result),
        comparison: Some(&comparison),
        history: &[],
        spec_path: None,
    };
    let md = report::render(Format::Md, &input, None).unwrap();
    assert!(
        md.contains(&format!("| **shop** | | {} | ", flow.iterations)),
        "{md}"
    );
    assert!(md.contains("| ↳ shop/login | auth | "), "{md}");
    let xml = report::render(Format::Junit, &input, None).unwrap();
    assert!(
        xml.contains(
            r#"classname="loadgate.slo.shop" name="shop iteration_duration: p(95) &lt; 2s""#
        ),
        "{xml}"
    );
}
