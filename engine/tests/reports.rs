//! Every report format rendered from fixed result files (`tests/fixtures/results`: two real runs
//! of one spec, 5 ms then 6 ms of server delay (the p50 regressed; the baseline's p95 was
//! noisy, so the p95 improved), with targets named `<script>alert(1)</script>`
//! and `a|b`), compared with insta snapshots (`tests/snapshots`), plus the properties each
//! format must keep whatever the snapshot says.

use std::path::Path;

use loadgate::compare;
use loadgate::report::{self, Format, Input};
use loadgate::result::{self, RunResult};

fn fixture(name: &str) -> RunResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name);
    result::read(&path).unwrap()
}

fn render(format: Format, with_baseline: bool) -> String {
    let baseline = fixture("baseline.json");
    let current = fixture("current.json");
    let comparison = compare::compare(&baseline, &current).unwrap();
    let input = Input {
        current: &current,
        baseline: with_baseline.then_some(&baseline),
        comparison: with_baseline.then_some(&comparison),
        history: &[],
    };
    report::render(format, &input, None).unwrap()
}

#[test]
fn markdown_snapshot() {
    let md = render(Format::Md, true);
    assert!(md.starts_with("### 📉 loadgate demo: REGRESSED:"), "{md}");
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
    assert!(!md.contains("| rule "), "{md}");
    insta::assert_snapshot!("markdown_no_baseline", md);
}

#[test]
fn junit_snapshot() {
    let xml = render(Format::Junit, true);
    assert!(xml.starts_with("<?xml"));
    assert!(xml.contains(r#"tests="7" failures="1""#), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 7);
    assert_eq!(xml.matches("<failure ").count(), 1);
    assert!(!xml.contains("<script>"));
    insta::assert_snapshot!("junit", xml);
}

#[test]
fn json_verdict_snapshot() {
    let json = render(Format::Json, true);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["verdict"], "regressed");
    assert_eq!(value["exit_code"], 4);
    assert_eq!(value["rule_counts"]["regressed"], 1);
    assert_eq!(value["rule_counts"]["improved"], 1);
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
    let text = render(Format::Text, true);
    assert!(text.trim_end().ends_with(
        "REGRESSED: 2/2 SLOs met; regression found (5 rules: 1 regressed, 1 improved, 3 unchanged)"
    ));
    insta::assert_snapshot!("text", text);
}

#[test]
fn html_snapshot() {
    let html = render(Format::Html, true);
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
        };
        let md = report::render(Format::Md, &input, None).unwrap();
        let chars = md.chars().count();
        assert!(chars <= report::markdown::GITHUB_COMMENT_LIMIT, "{chars}");
        assert!(chars > 10_000, "{chars}: summarised too much");
        assert!(md.contains("more targets are not listed"), "{n}");
        // The verdict line and the checks survive.
        assert!(md.starts_with("### "));
        assert!(md.contains("| check |") == with_baseline || md.contains("| SLO "));
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
    };
    let md = report::render(Format::Md, &input, None).unwrap();
    assert!(md.contains("#### Trend over the last 4 runs"), "{md}");
    assert!(
        md.contains("| p95 | 10.00ms | 12.00ms | 30.00ms | 15.00ms | -50.0% | +25.0% |"),
        "{md}"
    );
    let html = report::render(Format::Html, &input, None).unwrap();
    assert!(html.contains("Trend over the last 4 runs"));
    assert!(html.contains("p50 and p95 over the runs"));
}
