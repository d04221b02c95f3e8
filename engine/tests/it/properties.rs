//! Properties of the parsers reachable through the public API, checked on generated input
//! (proptest; `scripts/fuzz` runs them longer):
//!
//! - thresholds, regression rules, durations and rates, written into a spec and validated
//!   (`spec::SourceSpec::parse`, `validate::check`): never a panic; what the grammar allows is
//!   accepted; anything else is refused with a diagnostic at the field's path;
//! - whole specs (the valid corpus of `tests/specs/valid`) with one value replaced by an odd
//!   one: validation never panics;
//! - result files (`tests/fixtures/results`) with values replaced, keys removed or bytes
//!   broken: `result::read` never panics, and what it reads, `merge`, `compare` and every
//!   report format take without a panic; the same of a shard of version 4 (per-second
//!   histograms, `shard`, `started_at` to the microsecond) merged with another.
//!
//! The cases of `tests/corpus/thresholds.txt` run first, every time. A failing case is saved
//! in `tests/proptest-regressions/` (commit it) and replayed first on the next runs.
//! `PROPTEST_CASES` sets the number of cases of every property.

use crate::support::proptesting;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

use loadgate::result::{self, RunResult};
use loadgate::{compare, report, spec, validate};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What validating `yaml` gave: `Ok(number of SLO thresholds the spec wrote)` (not the
/// default `errors` one the plan adds), or the diagnostics as (path, message); `Err` with an
/// empty path for a file that is not YAML at all.
fn validate_yaml(yaml: &str, dir: &Path) -> Result<usize, Vec<(String, String)>> {
    let source = spec::SourceSpec::parse(dir.join("spec.yaml"), yaml.to_string())
        .map_err(|e| vec![(String::new(), e.to_string())])?;
    validate::check(&source, &|name| Some(format!("value-of-{name}")))
        .map(|plan| plan.slo.iter().filter(|t| !t.is_default()).count())
        .map_err(|d| d.0.into_iter().map(|d| (d.path, d.message)).collect())
}

/// A spec with one target on loopback, `load` and `extra` (YAML at top level) as given.
fn spec_with(load: &str, extra: &str) -> String {
    format!(
        "version: 1\nname: prop\ndefaults:\n  timeout: 1s\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/\nload:\n{load}{extra}"
    )
}

/// `text` as a YAML scalar (a JSON string is a YAML double-quoted scalar).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

/// Asserts that `outcome` is an acceptance, or a refusal whose every diagnostic is at
/// `path` (or inside it) and says something; `Ok` with the number of thresholds accepted.
fn accepted_or_refused_at(
    outcome: Result<usize, Vec<(String, String)>>,
    path: &str,
    text: &str,
) -> Result<Option<usize>, TestCaseError> {
    match outcome {
        Ok(n) => Ok(Some(n)),
        Err(diagnostics) => {
            for (at, message) in &diagnostics {
                // A string YAML cannot carry (a control character) fails before any path.
                if at.is_empty() && message.contains("YAML") {
                    continue;
                }
                prop_assert!(
                    at.starts_with(path),
                    "{text:?}: a diagnostic at `{at}`, not `{path}`: {message}"
                );
                prop_assert!(!message.trim().is_empty(), "{text:?}: an empty message");
            }
            Ok(None)
        }
    }
}

// ---- Generators ----------------------------------------------------------------------------

/// The pieces of thresholds, rules, durations and rates, and what may break them.
const TOKENS: &[&str] = &[
    "p(",
    "p(95)",
    "p(99.9)",
    "p(0)",
    "p(100)",
    "p(1e400)",
    "p(NaN)",
    "p(-5)",
    "p()",
    "med",
    "mean",
    "avg",
    "min",
    "max",
    "rate",
    "count",
    "floor",
    ")",
    "(",
    "p",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "=",
    "=<",
    "+",
    "-",
    "0",
    "1",
    "95",
    "99.9",
    "1e308",
    "1e400",
    "NaN",
    "inf",
    "-1",
    "18446744073709551616",
    "0.0000001",
    ".",
    "..",
    "us",
    "ms",
    "s",
    "m",
    "h",
    "%",
    "/s",
    "µs",
    "d",
    " ",
    "",
    "\t",
    "\u{a0}",
    "\u{1b}",
    "\0",
    "é",
];

/// A string made of [`TOKENS`], or of any characters.
fn tokens() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(prop::sample::select(TOKENS), 0..9).prop_map(|t| t.concat()),
        1 => any::<String>(),
    ]
}

/// A number as the grammar writes it: a whole number or a decimal, at most `max`.
fn number(max: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        (0..=max).prop_map(|n| n.to_string()),
        (0..max, 0..1000u32).prop_map(|(n, f)| format!("{n}.{f}")),
    ]
}

fn op() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["<", "<=", ">", ">=", "==", "!="][..])
}

/// A duration the grammar allows, at most 1000 of its unit (so never "too long").
fn duration() -> impl Strategy<Value = String> {
    (
        number(1000),
        prop::sample::select(&["us", "ms", "s", "m", "h"][..]),
    )
        .prop_map(|(n, unit)| format!("{n}{unit}"))
}

/// A percentage from 0% to 100%.
fn percent() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..=100u32).prop_map(|n| format!("{n}%")),
        (0..100u32, 0..1000u32).prop_map(|(n, f)| format!("{n}.{f}%")),
    ]
}

/// A threshold the grammar allows for `metric`, with optional spaces.
fn valid_threshold(metric: &'static str) -> BoxedStrategy<String> {
    let aggregation_and_value: BoxedStrategy<(String, String)> = match metric {
        "latency" => (
            prop_oneof![
                prop::sample::select(&["med", "mean", "avg", "min", "max"][..])
                    .prop_map(str::to_string),
                (1..=100u32).prop_map(|p| format!("p({p})")),
                (0..100u32, 1..10u32).prop_map(|(p, f)| format!("p({p}.{f})")),
            ],
            duration(),
        )
            .boxed(),
        "errors" | "checks" => (Just("rate".to_string()), percent()).boxed(),
        _ => (
            Just("rate".to_string()),
            number(100_000).prop_map(|n| n + "/s"),
        )
            .boxed(),
    };
    let count = (metric == "errors" || metric == "requests").then_some(());
    let spaced = (aggregation_and_value, op(), any::<bool>()).prop_map(|((a, v), op, space)| {
        let s = if space { " " } else { "" };
        format!("{a}{s}{op}{s}{v}")
    });
    match count {
        Some(()) => prop_oneof![
            spaced,
            (op(), any::<u32>()).prop_map(|(op, n)| format!("count {op} {n}")),
        ]
        .boxed(),
        None => spaced.boxed(),
    }
}

/// A regression rule the grammar allows for `metric`.
fn valid_rule(metric: &'static str) -> BoxedStrategy<String> {
    let floor: BoxedStrategy<String> = match metric {
        "latency" => duration().boxed(),
        "errors" => percent().boxed(),
        _ => number(100_000).prop_map(|n| n + "/s").boxed(),
    };
    let head: BoxedStrategy<String> = match metric {
        "latency" => prop::sample::select(
            &["p(50)", "p(90)", "p(95)", "p(99)", "p(99.9)", "med", "mean"][..],
        )
        .prop_map(|a| format!("{a} +"))
        .boxed(),
        "errors" => Just("rate +".to_string()).boxed(),
        _ => Just("rate -".to_string()).boxed(),
    };
    (head, number(1000), prop::option::of(floor))
        .prop_map(|(head, change, floor)| match floor {
            Some(floor) => format!("{head}{change}% floor {floor}"),
            None => format!("{head}{change}%"),
        })
        .boxed()
}

static METRICS: [&str; 4] = ["latency", "errors", "requests", "checks"];

// ---- Thresholds, rules, durations, rates ---------------------------------------------------

/// The thresholds of `tests/corpus/thresholds.txt`: `metric<TAB>expression<TAB>ok|refused`.
#[test]
fn the_threshold_corpus_is_judged_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(manifest_dir().join("tests/corpus/thresholds.txt"))
        .expect("the corpus");
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let [metric, expression, verdict] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("a corpus line is `metric<TAB>expression<TAB>ok|refused`: {line:?}");
        };
        let yaml = spec_with(
            "  connections: 1\n  requests: 1\n",
            &format!("slo:\n  {metric}: [{}]\n", quoted(expression)),
        );
        let outcome = validate_yaml(&yaml, dir.path());
        assert_eq!(
            outcome.is_ok(),
            verdict == "ok",
            "{metric}: {expression:?}: {outcome:?}"
        );
        if let Err(diagnostics) = outcome {
            let path = format!("slo.{metric}[0]");
            assert!(
                diagnostics.iter().all(|(at, _)| *at == path),
                "{metric}: {expression:?}: {diagnostics:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(proptesting::config(256, "tests/proptest-regressions/properties.txt", 30_000))]

    /// Any text as a threshold of any metric: accepted, or refused at `slo.METRIC[0]`.
    #[test]
    fn thresholds_never_panic_and_are_refused_at_their_path(
        metric in prop::sample::select(&METRICS[..]),
        text in tokens(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let yaml = spec_with(
            "  connections: 1\n  requests: 1\n",
            &format!("slo:\n  {metric}: [{}]\n", quoted(&text)),
        );
        let accepted =
            accepted_or_refused_at(validate_yaml(&yaml, dir.path()), &format!("slo.{metric}[0]"), &text)?;
        if let Some(n) = accepted {
            prop_assert_eq!(n, 1, "{:?}", text);
        }
    }

    /// What the grammar allows is accepted, as one threshold.
    #[test]
    fn thresholds_of_the_grammar_are_accepted(
        (metric, text) in prop::sample::select(&METRICS[..])
            .prop_flat_map(|m| (Just(m), valid_threshold(m))),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let yaml = spec_with(
            "  connections: 1\n  requests: 1\n",
            &format!("slo:\n  {metric}: [{}]\n", quoted(&text)),
        );
        prop_assert_eq!(validate_yaml(&yaml, dir.path()), Ok(1), "{}: {:?}", metric, text);
    }

    /// Any text as a regression rule: accepted, or refused at `regression.METRIC[0]`; the
    /// rules the grammar allows are accepted.
    #[test]
    fn regression_rules_never_panic_and_the_grammar_is_accepted(
        (metric, good) in prop::sample::select(&METRICS[..3])
            .prop_flat_map(|m| (Just(m), valid_rule(m))),
        text in tokens(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let rule = |text: &str| spec_with(
            "  connections: 1\n  requests: 1\n",
            &format!("regression:\n  {metric}: [{}]\n", quoted(text)),
        );
        let path = format!("regression.{metric}[0]");
        accepted_or_refused_at(validate_yaml(&rule(&text), dir.path()), &path, &text)?;
        prop_assert_eq!(validate_yaml(&rule(&good), dir.path()), Ok(0), "{:?}", good);
    }

    /// Any text where a duration or a rate goes: accepted, or refused at that field.
    #[test]
    fn durations_and_rates_never_panic_and_are_refused_at_their_path(
        field in 0..6usize,
        text in tokens(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let q = quoted(&text);
        let (load, extra, path) = match field {
            0 => ("  connections: 1\n".to_string() + &format!("  duration: {q}\n"), String::new(), "load.duration"),
            1 => (format!("  connections: 1\n  requests: 1\n  warmup: {q}\n"), String::new(), "load.warmup"),
            2 => (format!("  connections: 1\n  requests: 1\n  think_time: {q}\n"), String::new(), "load.think_time"),
            3 => (format!("  model: open\n  rate: {q}\n  requests: 1\n"), String::new(), "load.rate"),
            4 => (format!("  connections: 1\n  requests: 1\n  pacing: {q}\n"), String::new(), "load.pacing"),
            _ => (
                "  connections: 1\n  requests: 1\n".to_string(),
                format!("slo:\n  latency:\n    - threshold: \"p(99) < 1s\"\n      window: {q}\n"),
                "slo.latency[0].window",
            ),
        };
        accepted_or_refused_at(validate_yaml(&spec_with(&load, &extra), dir.path()), path, &text)?;
    }

    /// Durations and rates the grammar allows are accepted where they go.
    #[test]
    fn durations_and_rates_of_the_grammar_are_accepted(
        timeout in duration(),
        run_s in 1..3600u32,
        rate in number(100_000),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let closed = spec_with(&format!("  connections: 1\n  duration: {run_s}s\n  warmup: {timeout}\n  think_time: {timeout}\n"), "");
        prop_assert_eq!(validate_yaml(&closed, dir.path()), Ok(0));
        let open = spec_with(&format!("  model: open\n  rate: \"{rate}/s\"\n  duration: {run_s}s\n"), "");
        let outcome = validate_yaml(&open, dir.path());
        let zero = rate.parse::<f64>().unwrap() == 0.0;
        prop_assert!(outcome.is_ok() || zero, "{:?}: {:?}", rate, outcome);
    }
}

// ---- Mutated documents ---------------------------------------------------------------------

/// Odd values to put in a document.
fn odd_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(u64::MAX)),
        Just(serde_json::json!(i64::MIN)),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(-1e-300)),
        Just(serde_json::json!(0.5)),
        Just(serde_json::json!(true)),
        Just(serde_json::json!("")),
        Just(serde_json::json!("x")),
        Just(serde_json::json!("NaN")),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        any::<String>().prop_map(Value::String),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>().prop_map(|x| serde_json::json!(x)),
    ]
}

/// One change to a document: at the `at`-th node (depth first, modulo the count), put a value,
/// or remove the node from its object or array, or repeat it in its array.
#[derive(Debug, Clone)]
enum Mutation {
    Replace(prop::sample::Index, Value),
    Remove(prop::sample::Index),
    Repeat(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<prop::sample::Index>(), odd_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Remove),
        1 => any::<prop::sample::Index>().prop_map(Mutation::Repeat),
    ]
}

/// Every node's path from the root: object keys and array indices.
fn node_paths(value: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(here.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                here.push(Step::Key(k.clone()));
                node_paths(v, here, out);
                here.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                here.push(Step::Index(i));
                node_paths(v, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn node_mut<'a>(root: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(root, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// Applies `mutations` in turn to `doc`.
fn mutate(doc: &mut Value, mutations: &[Mutation]) {
    for m in mutations {
        let mut paths = Vec::new();
        node_paths(doc, &mut Vec::new(), &mut paths);
        let index = match m {
            Mutation::Replace(i, _) | Mutation::Remove(i) | Mutation::Repeat(i) => i,
        };
        let path = index.get(&paths).clone();
        match (m, path.split_last()) {
            (Mutation::Replace(_, value), _) => *node_mut(doc, &path) = value.clone(),
            (_, None) => {}
            (Mutation::Remove(_), Some((last, parent))) => match (node_mut(doc, parent), last) {
                (Value::Object(map), Step::Key(k)) => {
                    map.remove(k);
                }
                (Value::Array(items), Step::Index(i)) => {
                    items.remove(*i);
                }
                _ => {}
            },
            (Mutation::Repeat(_), Some((last, parent))) => {
                if let (Value::Array(items), Step::Index(i)) = (node_mut(doc, parent), last) {
                    let copy = items[*i].clone();
                    items.insert(*i, copy);
                }
            }
        }
    }
}

/// The valid specs of `tests/specs/valid`, as (path, JSON value).
fn valid_specs() -> Vec<(PathBuf, Value)> {
    let dir = manifest_dir().join("tests/specs/valid");
    let mut specs: Vec<(PathBuf, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let value = serde_saphyr::from_str(&text).unwrap();
            (p, value)
        })
        .collect();
    specs.sort_by(|a, b| a.0.cmp(&b.0));
    specs
}

/// The result fixtures, as text.
fn result_fixtures() -> Vec<String> {
    [
        "baseline.json",
        "current.json",
        "v1-before-health.json",
        "v2-current.json",
    ]
    .iter()
    .map(|f| {
        std::fs::read_to_string(manifest_dir().join("tests/fixtures/results").join(f)).unwrap()
    })
    .collect()
}

/// What a result read from a file goes through: compared both ways, rendered in every format.
/// Errors are fine; a panic fails the property. (`merge`: `merge_both_ways`.)
fn use_result(read: &RunResult, other: &RunResult) {
    let comparisons = [
        compare::compare_with_history(other, read, &[]).ok(),
        compare::compare_with_history(read, other, std::slice::from_ref(read)).ok(),
    ];
    for format in [
        report::Format::Text,
        report::Format::Md,
        report::Format::Html,
        report::Format::Junit,
        report::Format::Json,
    ] {
        for (baseline, comparison) in [(None, None), (Some(other), comparisons[0].as_ref())] {
            let input = report::Input {
                current: read,
                baseline,
                comparison,
                history: std::slice::from_ref(other),
                spec_path: None,
            };
            let _ = report::render(format, &input, None);
        }
    }
}

/// `merge` of a result read from a file with `other`, in both orders. Errors are fine.
fn merge_both_ways(read: &RunResult, other: &RunResult) {
    let _ = result::merge::merge(&[read.clone(), other.clone()], Default::default());
    let _ = result::merge::merge(&[other.clone(), read.clone()], Default::default());
}

/// A fixture with `mutations`, written to a file and read back (`None`: refused).
fn read_mutated(which: prop::sample::Index, mutations: &[Mutation]) -> Option<RunResult> {
    let fixtures = result_fixtures();
    let mut doc: Value = serde_json::from_str(which.get::<String>(&fixtures)).unwrap();
    mutate(&mut doc, mutations);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    result::read(&path).ok()
}

fn baseline() -> RunResult {
    result::read(&manifest_dir().join("tests/fixtures/results/baseline.json")).unwrap()
}

proptest! {
    #![proptest_config(proptesting::config(128, "tests/proptest-regressions/merge.txt", 30_000))]

    /// A result file with a few values replaced or removed, merged with another: no panic.
    /// Found by this property: counts near `u64::MAX` overflowed in `merge` (a panic in debug
    /// builds, a wrapped count in release ones); the seed is in the file above. Now the reader
    /// refuses integers beyond 2^53 - 1 and a merge takes at most 1,024 results.
    #[test]
    fn mutated_results_merge_without_panic(
        which in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        if let Some(read) = read_mutated(which, &mutations) {
            merge_both_ways(&read, &baseline());
        }
    }
}

/// The baseline fixture as shard `index` of 2 written by version 4, as JSON: `started_at` to
/// the microsecond (`index` µs apart), `shard`, and a histogram in each second of the run's and
/// each target's series (its responses at its p50), so that mutations reach the shard checks,
/// the start check and the per-second histograms of `merge`.
fn v4_shard_json(index: u32) -> Value {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
    let mut r = baseline();
    r.started_at = format!("2026-11-24T09:00:00.{index:06}Z");
    r.shard = Some(result::ShardInfo { index, count: 2 });
    for s in &mut r.time_series {
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 2).unwrap();
        h.record_n(s.p50_us.max(1), s.responses).unwrap();
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        s.histogram = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    for t in &mut r.targets {
        t.time_series = r.time_series.clone();
    }
    serde_json::to_value(&r).unwrap()
}

/// The shards `mutated_shards_merge_without_panic` starts from merge, exactly: the property
/// reaches the merge itself, not only its refusals.
#[test]
fn the_v4_shards_of_the_merge_property_merge() {
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<RunResult> = [1, 2]
        .map(|k| {
            let path = dir.path().join(format!("shard-{k}.json"));
            std::fs::write(&path, serde_json::to_string(&v4_shard_json(k)).unwrap()).unwrap();
            result::read(&path).unwrap()
        })
        .into();
    let merged = result::merge::merge(&shards, Default::default()).unwrap();
    assert_eq!(merged.merged.as_ref().unwrap().start_skew_us, 1);
    let first = &merged.time_series[0];
    assert_eq!(first.responses, 2 * shards[0].time_series[0].responses);
    assert!(first.histogram.is_some());
}

proptest! {
    #![proptest_config(proptesting::config(64, "tests/proptest-regressions/merge-shards.txt", 30_000))]

    /// A shard of version 4 with a few values replaced or removed (its shard, its starts, its
    /// seconds and their histograms among them), merged with the other shard: no panic.
    #[test]
    fn mutated_shards_merge_without_panic(mutations in prop::collection::vec(mutation(), 1..4)) {
        let mut doc = v4_shard_json(1);
        mutate(&mut doc, &mutations);
        let dir = tempfile::tempdir().unwrap();
        let (path, other_path) = (dir.path().join("shard-1.json"), dir.path().join("shard-2.json"));
        std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
        std::fs::write(&other_path, serde_json::to_string(&v4_shard_json(2)).unwrap()).unwrap();
        let other = result::read(&other_path).unwrap();
        if let Ok(read) = result::read(&path) {
            merge_both_ways(&read, &other);
        }
    }
}

proptest! {
    #![proptest_config(proptesting::config(128, "tests/proptest-regressions/properties-documents.txt", 30_000))]

    /// A valid spec with a few values replaced or removed: validation never panics.
    #[test]
    fn mutated_specs_never_panic(
        which in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let specs = valid_specs();
        let (path, value) = which.get(&specs);
        let mut doc = value.clone();
        mutate(&mut doc, &mutations);
        let yaml = serde_json::to_string_pretty(&doc).unwrap();
        if let Ok(source) = spec::SourceSpec::parse(path.clone(), yaml) {
            let _ = validate::check(&source, &|name| Some(format!("value-of-{name}")));
        }
    }

    /// A result file with a few values replaced or removed: `result::read` never panics, and
    /// whatever it reads passes through compare and every report without a panic.
    #[test]
    fn mutated_results_never_panic(
        which in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        if let Some(read) = read_mutated(which, &mutations) {
            use_result(&read, &baseline());
        }
    }

    /// A result file with bytes flipped, cut or inserted: `result::read` never panics.
    #[test]
    fn broken_result_bytes_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let fixtures = result_fixtures();
        let mut bytes = which.get::<String>(&fixtures).as_bytes().to_vec();
        for (at, byte, kind) in edits {
            let i = at.index(bytes.len().max(1)).min(bytes.len());
            match kind {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.truncate(i),
                _ => bytes.insert(i, byte),
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(read) = result::read(&path) {
            use_result(&read, &baseline());
        }
    }
}

/// Issue 19, "A wrong-typed field's message names no field": every field of a result, given a
/// value of another type, is refused by a message that names the field.
#[test]
fn a_wrong_typed_field_is_refused_by_its_name() {
    let text = &result_fixtures()[0];
    let doc: Value = serde_json::from_str(text).unwrap();
    let mut paths = Vec::new();
    node_paths(&doc, &mut Vec::new(), &mut paths);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("result.json");
    let mut unnamed = Vec::new();
    for path in paths {
        let Some(Step::Key(key)) = path.last() else {
            continue;
        };
        let mut changed = doc.clone();
        let node = node_mut(&mut changed, &path);
        *node = match node {
            Value::String(_) => serde_json::json!(7),
            Value::Object(_) | Value::Array(_) => continue,
            _ => serde_json::json!("wrong"),
        };
        std::fs::write(&file, changed.to_string()).unwrap();
        // Fields an older result names otherwise are read, and so named, under today's name.
        let name = match key.as_str() {
            "target_from" => "level_from",
            "target_to" => "level_to",
            "target_unit" => "level_unit",
            "achieved_concurrency" => "achieved_in_flight",
            other => other,
        };
        if let Err(e) = result::read(&file)
            && !e.to_string().contains(name)
        {
            unnamed.push(format!("{path:?}: {e}"));
        }
    }
    assert!(unnamed.is_empty(), "{}", unnamed.join("\n"));
}
