//! What every report says about how the rules were decided (issue 32): per rule its one-sided
//! level, its effective allowance (the floor turning `+5%` into `+24%`) and its minimum
//! detectable effect at 80% power; once, how many rules were tested together at which
//! false-alarm rate per run; in a paired comparison (`loadgate ab`), each rule's change per
//! sub-run, by the side that went first. From the fixtures' comparison with these statistics
//! set by hand ([`known`]: known values), a rule's name holding markup to show the escaping.

use loadgate::compare::{
    self, Comparison, Family, Paired, RuleChanges, RuleState, RuleVerdict, SubRunChange,
};
use loadgate::report::{self, Format, Input};

use super::reports::fixture;

/// The first rule's text: a tag, an entity, quotes, a table separator and Markdown emphasis.
const MARKUP: &str = "p(50) <b>&\"x\"</b>|*y*";

/// The sub-runs the changes were measured in (sub-run 3 was left out: late), and which side
/// went first in each.
const SUB_RUNS: [(u32, bool); 6] = [
    (0, true),
    (1, false),
    (2, true),
    (4, true),
    (5, false),
    (6, true),
];

/// The numbers of a judged rule: `[baseline, current]`, the allowance (in the rule's unit,
/// and relative), the interval (in the unit, and relative), the level and the MDE (in the
/// unit, and relative), the verdict and its reason.
struct Numbers {
    values: [f64; 2],
    allowed: (f64, Option<f64>),
    interval: Option<([f64; 2], Option<[f64; 2]>)>,
    level: Option<f64>,
    mde: Option<(f64, Option<f64>)>,
    verdict: RuleState,
    reason: &'static str,
}

/// `r` with the numbers `n`; the rest as the comparison gave it.
fn set(r: &RuleVerdict, n: Numbers) -> RuleVerdict {
    let [b, c] = n.values;
    RuleVerdict {
        baseline: Some(b),
        current: Some(c),
        change: Some(c - b),
        relative_change: (b != 0.0).then(|| c / b - 1.0),
        allowed_change: Some(n.allowed.0),
        relative_allowed_change: n.allowed.1,
        change_ci: n.interval.map(|i| i.0),
        relative_change_ci: n.interval.and_then(|i| i.1),
        level: n.level,
        mde: n.mde.map(|m| m.0),
        relative_mde: n.mde.and_then(|m| m.1),
        verdict: n.verdict,
        reason: n.reason.to_string(),
        ..r.clone()
    }
}

/// The fixtures' five rules with known statistics, as Holm decides 4 tested rules at a 5%
/// false-alarm rate per run: the p(50) regressed at the first step (one-sided 1.25%), the
/// others decided at the second (1.67%) but the p(99), not tested; the p(95) rule is
/// `+5% floor 50us` on a 208us baseline (allowed +24.0%). `paired`: a paired comparison of 6
/// sub-runs (1 left out), else two runs decided by the max-T step-down.
fn known(paired: bool) -> Comparison {
    let mut c = compare::compare(&fixture("baseline.json"), &fixture("current.json")).unwrap();
    assert_eq!(c.rules.len(), 5);
    let (first, second) = (0.05 / 4.0, 0.05 / 3.0);
    c.rules[0] = set(
        &c.rules[0],
        Numbers {
            values: [8_000.0, 8_960.0],
            allowed: (800.0, Some(0.10)),
            interval: Some(([840.0, 1_080.0], Some([0.105, 0.135]))),
            level: Some(first),
            mde: Some((1_040.0, Some(0.13))),
            verdict: RuleState::Regressed,
            reason: "the whole interval lies beyond the allowed +10.0%",
        },
    );
    c.rules[0].rule = MARKUP.to_string();
    c.rules[1] = set(
        &RuleVerdict {
            rule: "p(95) +5% floor 50us".to_string(),
            max_change: 0.05,
            floor: 50.0,
            ..c.rules[1].clone()
        },
        Numbers {
            values: [208.0, 212.0],
            allowed: (50.0, Some(50.0 / 208.0)),
            interval: Some(([-10.4, 18.72], Some([-0.05, 0.09]))),
            level: Some(second),
            mde: Some((60.0, Some(60.0 / 208.0))),
            verdict: RuleState::Unchanged,
            reason: "the whole interval lies within the allowed +24.0%",
        },
    );
    c.rules[2] = set(
        &c.rules[2],
        Numbers {
            values: [12_000.0, 12_500.0],
            allowed: (2_400.0, Some(0.20)),
            interval: None,
            level: None,
            mde: None,
            verdict: RuleState::Inconclusive,
            reason: "not tested: too few sub-runs with a p(99) on both sides",
        },
    );
    c.rules[3] = set(
        &c.rules[3],
        Numbers {
            values: [0.0, 0.000_5],
            allowed: (0.001, None),
            interval: Some(([-0.000_4, 0.000_9], None)),
            level: Some(second),
            mde: Some((0.002_1, None)),
            verdict: RuleState::Unchanged,
            reason: "the whole interval lies within the allowed 0.100%",
        },
    );
    c.rules[4] = set(
        &c.rules[4],
        Numbers {
            values: [1_000.0, 970.0],
            allowed: (100.0, Some(0.10)),
            interval: Some(([-50.0, -10.0], Some([-0.05, -0.01]))),
            level: Some(second),
            mde: Some((130.0, Some(0.13))),
            verdict: RuleState::Unchanged,
            reason: "the whole interval lies within the allowed 100.0/s",
        },
    );
    c.family = Some(Family {
        alpha: 0.05,
        tested: 4,
        method: if paired { "holm" } else { "max-t" }.to_string(),
    });
    c.paired = paired.then(|| sub_runs(&c.rules));
    c
}

/// A paired comparison of 6 sub-runs ([`SUB_RUNS`], 1 left out) with each rule's changes in
/// them: the p(50) about +12% (+13% where the candidate went first), none for the untested
/// p(99).
fn sub_runs(rules: &[RuleVerdict]) -> Paired {
    Paired {
        mode: "duet".to_string(),
        sub_runs: 6,
        late: 1,
        rules: rules
            .iter()
            .zip([
                &[0.11, 0.13, 0.114, 0.12, 0.135, 0.11][..],
                &[0.01, 0.03, -0.01, 0.022, 0.04, 0.0],
                &[],
                &[0.0, 0.001, 0.0, 0.0, 0.002, 0.0],
                &[-0.03, -0.02, -0.04, -0.03, -0.025, -0.035],
            ])
            .map(|(r, changes)| RuleChanges {
                rule: r.rule.clone(),
                relative: r.unit != "ratio",
                changes: changes
                    .iter()
                    .zip(SUB_RUNS)
                    .map(|(change, (sub_run, baseline_first))| SubRunChange {
                        sub_run,
                        baseline_first,
                        change: *change,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// `comparison` of the fixtures rendered in `format` (the current run as the candidate).
fn render(comparison: &Comparison, format: Format) -> String {
    let input = Input {
        current: &fixture("current.json"),
        baseline: Some(&fixture("baseline.json")),
        comparison: Some(comparison),
        history: &[],
        spec_path: None,
    };
    report::render(format, &input, None).unwrap()
}

/// The family in one sentence, as every format gives it.
const FAMILY: &str = "4 rules tested together at a 5% false-alarm rate per run (Holm); \
                      1 could not be tested";

#[test]
fn text_gives_each_rules_level_allowance_and_detectable_effect() {
    let text = render(&known(true), Format::Text);
    for line in [
        "allowed +10.0% (800us); interval [+10.5%, +13.5%] at one-sided level 1.25%; \
         detectable at 80% power +13.0% (1.04ms)",
        "allowed +24.0% (floor 50us); interval [-5.0%, +9.0%] at one-sided level 1.67%; \
         detectable at 80% power +28.8% (60us)",
        "allowed +20.0% (2.40ms); not tested",
        "allowed +0.100% (floor); interval [-0.040%, +0.090%] at one-sided level 1.67%; \
         detectable at 80% power +0.210%",
        "allowed -10.0% (100.0/s); interval [-5.0%, -1.0%] at one-sided level 1.67%; \
         detectable at 80% power -13.0% (130.0/s)",
        FAMILY,
        // Per sub-run, by the side that went first.
        "6 above 0, 0 below of 6 sub-runs; median +11.7%; baseline first +11.0%, +11.4%, \
         +12.0%, +11.0%; candidate first +13.0%, +13.5%",
        "4 above 0, 1 below, 1 at 0 of 6 sub-runs; median +1.6%",
        "2 above 0, 0 below, 4 at 0 of 6 sub-runs; median +0.00 points",
    ] {
        assert!(text.contains(line), "no `{line}` in {text}");
    }
    // Not the old half-width.
    assert!(!text.contains("detectable: ±"), "{text}");
    // No sub-run line for the rule without changes.
    assert_eq!(text.matches("per sub-run ").count(), 4, "{text}");
    insta::assert_snapshot!("text_paired", text);

    // A rule whose changes are all 0: the counts say it, no list by side.
    let mut c = known(true);
    let errors = &mut c.paired.as_mut().unwrap().rules[3];
    errors.changes.iter_mut().for_each(|s| s.change = 0.0);
    let text = render(&c, Format::Text);
    assert!(
        text.contains("0 above 0, 0 below, 6 at 0 of 6 sub-runs; median +0.00 points\n"),
        "{text}"
    );
}

#[test]
fn markdown_gives_each_rules_level_allowance_and_detectable_effect() {
    let md = render(&known(true), Format::Md);
    for row in [
        "| latency p(50) &lt;b&gt;&amp;\"x\"&lt;/b&gt;\\|\\*y\\* | 8.96ms | 8.00ms | +12.0% | \
         \\[+10.5%, +13.5%\\] | 1.25% | +10.0% (800us) | +13.0% (1.04ms) | ❌ regressed |",
        "| latency p(95) +5% floor 50us | 212us | 208us | +1.9% | \\[-5.0%, +9.0%\\] | 1.67% | \
         +24.0% (floor 50us) | +28.8% (60us) | ✅ unchanged |",
        "| latency p(99) +20% | 12.50ms | 12.00ms | +4.2% | – | – | +20.0% (2.40ms) | \
         not tested | ⚠️ inconclusive |",
        "| errors rate +10% floor 0.1% | 0.050% | 0.000% | +0.050% | \\[-0.040%, +0.090%\\] | \
         1.67% | +0.100% (floor) | +0.210% | ✅ unchanged |",
        "| requests rate -10% | 970.0/s | 1000.0/s | -3.0% | \\[-5.0%, -1.0%\\] | 1.67% | \
         -10.0% (100.0/s) | -13.0% (130.0/s) | ✅ unchanged |",
    ] {
        assert!(md.contains(row), "no `{row}` in {md}");
    }
    // Every rule row has the header's cells.
    let header = md.lines().find(|l| l.starts_with("| rule |")).unwrap();
    for row in md
        .lines()
        .skip_while(|l| *l != header)
        .take(7)
        .filter(|l| !l.starts_with("|---"))
    {
        assert_eq!(row.matches(" | ").count(), 8, "{row}");
    }
    assert!(md.contains(&format!("\n{FAMILY}.\n")), "{md}");
    assert!(md.contains("Per sub-run (6 sub-runs, 1 left out: the generator fell behind)"));
    assert!(md.contains("Holm's step-down"), "{md}");
    assert!(!md.contains("<b>"), "{md}");
    insta::assert_snapshot!("markdown_paired", md);
}

#[test]
fn html_gives_each_rules_level_allowance_and_detectable_effect() {
    let html = render(&known(true), Format::Html);
    let rules = &html[html.find(r#"<table id="rules">"#).unwrap()..];
    let rules = &rules[..rules.find("</table>").unwrap()];
    assert!(
        rules.contains("<th>one-sided level</th><th>allowed</th><th>detectable (80% power)</th>")
    );
    for cells in [
        "<td>[+10.5%, +13.5%]</td><td>1.25%</td><td>+10.0% (800us)</td><td>+13.0% (1.04ms)</td>",
        "<td>1.67%</td><td>+24.0% (floor 50us)</td><td>+28.8% (60us)</td>",
        "<td>–</td><td>–</td><td>+20.0% (2.40ms)</td><td>not tested</td>",
        "<td>+0.100% (floor)</td><td>+0.210%</td>",
        "<td>-10.0% (100.0&#x2f;s)</td><td>-13.0% (130.0&#x2f;s)</td>",
    ] {
        assert!(rules.contains(cells), "no `{cells}` in {rules}");
    }
    assert!(rules.contains("latency p(50) &lt;b&gt;&amp;&quot;x&quot;&lt;&#x2f;b&gt;|*y*"));
    assert!(
        html.contains(&format!(r#"<p id="family">{FAMILY}.</p>"#)),
        "{html}"
    );
    // One chart per rule with changes, a point per sub-run: circles where the baseline went
    // first (4), squares where the candidate did (2); the interval at the rule's level.
    let section = &html[html
        .find("<h2>Per sub-run</h2>")
        .expect("a sub-run section")..];
    let section = &section[..section.find("<h2>Charts</h2>").unwrap()];
    assert_eq!(section.matches("<svg ").count(), 4);
    assert_eq!(
        section.matches(r#"r="2.5""#).count(),
        4 * 4 + 4,
        "circles and legends"
    );
    assert_eq!(
        section.matches(r#"width="5" height="5""#).count(),
        4 * 2 + 4,
        "squares and legends"
    );
    assert!(
        section
            .contains("interval of the change [+10.5%, +13.5%] (one-sided level 1.25% each side)")
    );
    assert!(
        section.contains("allowed +24.0%"),
        "the effective allowance"
    );
    assert!(
        section.contains("allowed -10.0%"),
        "throughput's allowance is a drop"
    );
    assert!(section.contains("allowed +0.10 points"), "errors in points");
    assert!(
        section.contains("p(50) &lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;|*y*: change per sub-run")
    );
    assert!(!html.contains("<b>&"));
    assert!(!html.contains("Per epoch"));
}

#[test]
fn junit_gives_each_rules_level_allowance_and_detectable_effect() {
    let xml = render(&known(true), Format::Junit).replace("&#x2f;", "/");
    assert!(
        xml.contains(
            "<system-out>regressed: the whole interval lies beyond the allowed +10.0%; allowed \
         +10.0% (800us); interval [+10.5%, +13.5%] at one-sided level 1.25%; detectable at 80% \
         power +13.0% (1.04ms)</system-out>"
        ),
        "{xml}"
    );
    assert!(xml.contains("allowed +20.0% (2.40ms); not tested</system-out>"));
    assert!(xml.contains("one-sided level: 1.25%\nallowed: +10.0% (800us)\ndetectable at 80% power: +13.0% (1.04ms)\n"));
    // Once, in the rules' suite, after its cases.
    assert!(xml.contains(&format!(
        "    <system-out>{FAMILY}</system-out>\n  </testsuite>"
    )));
    assert!(xml.contains("p(50) &lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;|*y*"));
    assert!(!xml.contains("<b>"));
    insta::assert_snapshot!("junit_paired", xml);
}

#[test]
fn json_verdict_gives_each_rules_level_allowance_and_detectable_effect() {
    let json = render(&known(true), Format::Json);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rules = value["rules"].as_array().unwrap();
    let number = |i: usize, key: &str| rules[i][key].as_f64();
    assert_eq!(number(0, "level"), Some(0.0125));
    assert_eq!(number(0, "mde"), Some(1_040.0));
    assert_eq!(number(0, "relative_mde"), Some(0.13));
    assert_eq!(number(0, "relative_allowed_change"), Some(0.10));
    assert_eq!(number(1, "relative_allowed_change"), Some(50.0 / 208.0));
    assert!(rules[2]["level"].is_null() && rules[2]["mde"].is_null());
    assert_eq!(rules[1]["display"]["allowed"], "+24.0% (floor 50us)");
    assert_eq!(rules[1]["display"]["level"], "1.67%");
    assert_eq!(rules[1]["display"]["mde"], "+28.8% (60us)");
    assert_eq!(rules[2]["display"]["mde"], "not tested");
    assert_eq!(rules[3]["display"]["mde"], "+0.210%");
    assert_eq!(rules[0]["rule"], MARKUP);
    assert!(rules.iter().all(|r| r.get("detectable_change").is_none()));
    let family = &value["family"];
    assert_eq!(family["alpha"], 0.05);
    assert_eq!(family["tested"], 4);
    assert_eq!(family["method"], "holm");
    assert_eq!(family["text"], FAMILY);
    let schema = loadgate::report::verdict::schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    insta::assert_snapshot!("verdict_json_paired", json);
}

/// Two runs: the max-T step-down named, no sub-runs.
#[test]
fn two_runs_name_the_max_t_step_down() {
    let c = known(false);
    let max_t = FAMILY.replace("(Holm)", "(max-T step-down)");
    let text = render(&c, Format::Text);
    assert!(text.contains(&max_t), "{text}");
    assert!(!text.contains("per sub-run"), "{text}");
    let md = render(&c, Format::Md);
    assert!(md.contains(&format!("\n{max_t}.\n")), "{md}");
    assert!(md.contains("circular block bootstrap"), "{md}");
    assert!(!md.contains("Per sub-run"), "{md}");
    let html = render(&c, Format::Html);
    assert!(html.contains(&format!(r#"<p id="family">{max_t}.</p>"#)));
    assert!(!html.contains("<h2>Per sub-run</h2>"));
}

/// The family's method comes from a file (`loadgate report` reads comparisons' results): an
/// unknown one is printed as written, and escaped for each format.
#[test]
fn the_family_is_escaped_in_every_format() {
    let mut c = known(true);
    c.family.as_mut().unwrap().method = "<i>x</i>|*y*\u{1b}[2J".to_string();
    let text = render(&c, Format::Text);
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("per run (<i>x</i>|*y*"), "{text}");
    let md = render(&c, Format::Md);
    assert!(
        md.contains("per run (&lt;i&gt;x&lt;/i&gt;\\|\\*y\\*"),
        "{md}"
    );
    let html = render(&c, Format::Html);
    assert!(
        html.contains("per run (&lt;i&gt;x&lt;&#x2f;i&gt;|*y*"),
        "{html}"
    );
    let xml = render(&c, Format::Junit);
    assert!(
        xml.contains("per run (&lt;i&gt;x&lt;&#x2f;i&gt;|*y*"),
        "{xml}"
    );
    for out in [&md, &html, &xml] {
        assert!(!out.contains("<i>"));
    }
}
