//! `result::merge` in process: percentiles come from the added histograms, not from averages.
//!
//! Two kinds of input: the committed results (version 1, read as version 4) taken as two
//! shards of one run (their spec hashes made equal), which merge as results before version 4
//! do; and shards of version 4 built from them with real encoded histograms per second
//! (`v4_shard`), on which the shard checks, the start check and the wall-clock alignment act.

use crate::support;
use crate::support::proptesting;

use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use loadgate::result::merge::{MergeOptions, merge};
use loadgate::result::{self, MergeInfo, RunResult, ShardInfo, TimeSample, decode_histogram};
use proptest::prelude::*;

fn shards() -> (RunResult, RunResult) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let a = result::read(&dir.join("baseline.json")).unwrap();
    let mut b = result::read(&dir.join("current.json")).unwrap();
    b.spec.hash = a.spec.hash.clone();
    (a, b)
}

#[test]
fn percentiles_are_recomputed_from_the_added_histograms() {
    let (a, b) = shards();
    let merged = merge(&[a.clone(), b.clone()], Default::default()).unwrap();
    let mut both = decode_histogram(&a.total.histogram).unwrap();
    both.add(decode_histogram(&b.total.histogram).unwrap())
        .unwrap();
    let l = merged.total.latency_us.as_ref().unwrap();
    assert_eq!(l.p99_us, both.value_at_quantile(0.99));
    assert_eq!(l.p50_us, both.value_at_quantile(0.50));
    assert_eq!(l.max_us, both.max());
    let (la, lb) = (
        a.total.latency_us.as_ref().unwrap(),
        b.total.latency_us.as_ref().unwrap(),
    );
    assert_ne!(l.p50_us, (la.p50_us + lb.p50_us) / 2, "not an average");
    assert_eq!(
        merged.total.responses,
        a.total.responses + b.total.responses
    );
    assert_eq!(
        merged.total.status_codes["200"],
        a.total.status_codes["200"] + b.total.status_codes["200"]
    );
    // Per target too, matched by name.
    for t in &merged.targets {
        let ta = a.targets.iter().find(|x| x.name == t.name).unwrap();
        let tb = b.targets.iter().find(|x| x.name == t.name).unwrap();
        assert_eq!(t.requests, ta.requests + tb.requests);
    }
    // The window is the longest shard's; throughput is over it.
    let window = a.duration_s.max(b.duration_s);
    assert_eq!(merged.duration_s, window);
    assert!((merged.total.rps - merged.total.responses as f64 / window).abs() < 1e-9);
    // SLOs are re-evaluated on the merged numbers.
    let p95_slo = merged
        .slo
        .iter()
        .find(|v| v.threshold == "p(95) < 50ms")
        .unwrap();
    assert_eq!(p95_slo.measured, Some(both.value_at_quantile(0.95) as f64));
    // The per-second counts add up exactly.
    let sum = |r: &RunResult| r.time_series.iter().map(|s| s.responses).sum::<u64>();
    assert_eq!(sum(&merged), sum(&a) + sum(&b));
}

#[test]
fn shards_of_other_specs_or_versions_are_refused() {
    let (a, mut b) = shards();
    b.spec.name = "other".to_string();
    let err = merge(&[a.clone(), b], Default::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("result 2 comes from another spec (`other`"),
        "{err}"
    );
    let (a, mut b) = shards();
    b.result_version = 3;
    let err = merge(&[a, b], Default::default()).unwrap_err().to_string();
    assert!(
        err.contains("result 2 has result_version 3, the first 4"),
        "{err}"
    );
    assert!(merge(&[], Default::default()).is_err());
}

#[test]
fn a_result_given_twice_is_refused() {
    let (a, b) = shards();
    let err = merge(&[a.clone(), b.clone(), a.clone()], Default::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("result 3 is result 1 again"), "{err}");
    // Another host's shard of the same moment is not the same result.
    let mut other = a.clone();
    other.environment.hostname = "shard-2".to_string();
    let merged = merge(&[a.clone(), other], Default::default()).unwrap();
    assert_eq!(merged.total.requests, 2 * a.total.requests);
}

/// Flows merge by name as targets do: iterations and reasons summed, the iteration-duration
/// histograms added, the rate over the merged window, the flow's SLO re-evaluated on them.
#[test]
fn flows_merge_with_their_histograms_added_and_their_slos_reevaluated() {
    use loadgate::result::{FlowResult, FlowStep, SloVerdict};
    let (mut a, mut b) = shards();
    let flow = |r: &RunResult, failed: u64, reason: &str| FlowResult {
        tags: Default::default(),
        name: "shop".to_string(),
        weight: 1,
        steps: vec![FlowStep {
            target: r.targets[0].name.clone(),
            group: Some("auth".to_string()),
        }],
        iterations: r.total.requests,
        passed: r.total.requests - failed,
        failed,
        iterations_per_s: r.total.requests as f64 / r.duration_s,
        failed_by_reason: [(reason.to_string(), failed)].into(),
        failed_requests_by_kind: Default::default(),
        duration_us: r.total.latency_us.clone(),
        histogram: r.total.histogram.clone(),
    };
    a.flows = vec![flow(&a, 2, "request")];
    b.flows = vec![flow(&b, 1, "extraction")];
    // The flow's p95 against a limit between the two shards' own p95s' range and beyond both.
    let slo = SloVerdict {
        scope_kind: None,
        tags: Default::default(),
        severity: Default::default(),
        scope: "shop".to_string(),
        metric: loadgate::plan::threshold::Metric::Latency,
        threshold: "p(95) < 1s".to_string(),
        measured: None,
        unit: "us".to_string(),
        limit: 1_000_000.0,
        passed: false,
        window_s: None,
        failed_window_start_s: None,
        aborted_run: false,
        default: false,
        dropped: 0,
    };
    a.slo.push(slo.clone());
    b.slo.push(slo);
    let merged = merge(&[a.clone(), b.clone()], Default::default()).unwrap();
    assert_eq!(merged.flows.len(), 1);
    let f = &merged.flows[0];
    assert_eq!(f.iterations, a.total.requests + b.total.requests);
    assert_eq!(f.failed, 3);
    assert_eq!(f.failed_by_reason["request"], 2);
    assert_eq!(f.failed_by_reason["extraction"], 1);
    assert_eq!(f.steps, a.flows[0].steps);
    assert!((f.iterations_per_s - f.iterations as f64 / merged.duration_s).abs() < 1e-9);
    // The merged histogram is the total's (the same histograms, added).
    assert_eq!(f.duration_us, merged.total.latency_us);
    assert_eq!(decode_histogram(&f.histogram).unwrap().len(), f.iterations);
    let verdict = merged.slo.iter().find(|v| v.scope == "shop").unwrap();
    assert_eq!(
        verdict.measured,
        Some(merged.total.latency_us.as_ref().unwrap().p95_us as f64)
    );
    assert!(verdict.passed);
}

// Shards of version 4: per-second histograms, `shard`, `started_at` to the microsecond.

/// `2026-11-24T09:00:00.000000Z` plus `after_us`, as a result of version 4 writes it.
fn at(after_us: u64) -> String {
    let t = humantime::parse_rfc3339("2026-11-24T09:00:00Z").unwrap()
        + std::time::Duration::from_micros(after_us);
    humantime::format_rfc3339_micros(t).to_string()
}

/// HdrHistogram V2 + DEFLATE, base64: the result's encoding.
fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Latencies (µs) from `low` to `high`, `count` of them, spread by a fixed pseudo-random walk.
fn latencies(seed: u64, count: usize, low: u64, high: u64) -> Vec<u64> {
    let mut x = seed;
    (0..count)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            low + (x >> 33) % (high - low)
        })
        .collect()
}

/// A histogram of `values` with `digits` significant digits (2 per second, 3 for the run).
fn histogram(values: &[u64], digits: u8) -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 3_600_000_000, digits).unwrap();
    for &v in values {
        h.record(v).unwrap();
    }
    h
}

/// A second whose responses had `values` latencies, as a run of version 4 records it.
fn second(second: u32, values: &[u64]) -> TimeSample {
    let h = histogram(values, 2);
    let at = |q| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(q)
        }
    };
    TimeSample {
        second,
        responses: values.len() as u64,
        errors: 0,
        p50_us: at(0.5),
        p99_us: at(0.99),
        max_us: h.max(),
        p90_us: Some(at(0.9)),
        p95_us: Some(at(0.95)),
        p99_9_us: Some(at(0.999)),
        mean_us: Some(if h.is_empty() { 0.0 } else { h.mean() }),
        requests: Some(values.len() as u64),
        histogram: (!h.is_empty()).then(|| encode(&h)),
    }
}

/// Shard `k` of `n` (unsharded for `k` 0) that started measuring `start_us` after 09:00 and
/// whose second `s` had the latencies `seconds[s]` on its one target (`a|b`), the run's and
/// the target's series alike: the committed result with these numbers in it.
fn v4_shard(k: u32, n: u32, start_us: u64, seconds: &[Vec<u64>]) -> RunResult {
    let (mut r, _) = shards();
    r.started_at = at(start_us);
    r.shard = (k > 0).then_some(ShardInfo { index: k, count: n });
    r.duration_s = seconds.len() as f64;
    let all: Vec<u64> = seconds.concat();
    let series: Vec<TimeSample> = (0..).zip(seconds).map(|(s, v)| second(s, v)).collect();
    r.targets.truncate(1);
    for t in [&mut r.total, &mut r.targets[0]] {
        t.requests = all.len() as u64;
        t.responses = all.len() as u64;
        t.status_codes = [("200".to_string(), all.len() as u64)].into();
        t.histogram = encode(&histogram(&all, 3));
        t.time_series = series.clone();
    }
    r.total.time_series.clear();
    r.time_series = series;
    r
}

/// Three seconds of a shard: `per_second` latencies each, from `low` to `high` µs.
fn three_seconds(seed: u64, per_second: usize, low: u64, high: u64) -> Vec<Vec<u64>> {
    (0..3)
        .map(|s| latencies(seed + s, per_second, low, high))
        .collect()
}

fn decode(text: &Option<String>) -> Histogram<u64> {
    decode_histogram(text.as_deref().expect("a histogram")).unwrap()
}

fn error(results: &[RunResult], allow_missing: bool) -> String {
    merge(results, MergeOptions { allow_missing })
        .unwrap_err()
        .to_string()
}

#[test]
fn the_same_shard_twice_is_refused() {
    let a = v4_shard(2, 3, 0, &three_seconds(1, 50, 1_000, 2_000));
    let b = v4_shard(1, 3, 100, &three_seconds(2, 50, 1_000, 2_000));
    let c = v4_shard(2, 3, 200, &three_seconds(3, 50, 1_000, 2_000));
    let err = error(&[a, b, c], false);
    assert!(err.contains("results 1 and 3 are both shard 2/3"), "{err}");
}

#[test]
fn shards_of_different_counts_or_with_unsharded_results_are_refused() {
    let a = v4_shard(1, 4, 0, &three_seconds(1, 50, 1_000, 2_000));
    let b = v4_shard(2, 3, 100, &three_seconds(2, 50, 1_000, 2_000));
    let err = error(&[a.clone(), b], true);
    assert!(
        err.contains("result 2 is a shard of 3 and result 1 a shard of 4"),
        "{err}"
    );
    let plain = v4_shard(0, 0, 100, &three_seconds(2, 50, 1_000, 2_000));
    let err = error(&[a.clone(), plain.clone()], true);
    assert!(
        err.contains("result 1 is a shard (`run --shard K/N`) and result 2 is not"),
        "{err}"
    );
    let err = error(&[plain, a], true);
    assert!(err.contains("result 2 is a shard"), "{err}");
    // A shard that is no K/N (a hand-edited file).
    let odd = v4_shard(5, 4, 0, &three_seconds(1, 50, 1_000, 2_000));
    let err = error(&[odd], true);
    assert!(err.contains("the shard of result 1 is not valid"), "{err}");
}

#[test]
fn missing_shards_are_refused_unless_allowed_and_then_marked_partial() {
    let one = v4_shard(1, 4, 0, &three_seconds(1, 50, 1_000, 2_000));
    let three = v4_shard(3, 4, 300, &three_seconds(2, 50, 1_000, 2_000));
    let err = error(&[three.clone(), one.clone()], false);
    assert!(err.contains("shards 2, 4 of 4 missing"), "{err}");
    assert!(err.contains("--allow-missing"), "{err}");
    let merged = merge(
        &[three.clone(), one.clone()],
        MergeOptions {
            allow_missing: true,
        },
    )
    .unwrap();
    assert_eq!(
        merged.merged,
        Some(MergeInfo {
            results: 2,
            shard_count: Some(4),
            missing: vec![2, 4],
            partial: true,
            start_skew_us: 300,
        })
    );
    assert_eq!(merged.shard, None);
    assert_eq!(
        merged.total.requests,
        one.total.requests + three.total.requests
    );
    // The reports say so: the console summary, the Markdown and the HTML report.
    let note = "partial: shards 2, 4 of 4 missing";
    let console = loadgate::report::console::summary(
        &merged,
        loadgate::report::console::SummaryOptions::default(),
    );
    assert!(console.contains(note), "{console}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merged.json");
    result::write(&merged, &path).unwrap();
    for format in ["md", "html"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_loadgate"))
            .args(["report", path.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(report.contains(note), "{format}: {report}");
    }
    // All shards given: complete, and the reports say nothing of it.
    let (two, four) = (
        v4_shard(2, 4, 10, &three_seconds(3, 50, 1_000, 2_000)),
        v4_shard(4, 4, 20, &three_seconds(4, 50, 1_000, 2_000)),
    );
    let whole = merge(&[one, two, three, four], MergeOptions::default()).unwrap();
    let info = whole.merged.as_ref().unwrap();
    assert!(!info.partial && info.missing.is_empty(), "{info:?}");
    assert_eq!((info.results, info.shard_count), (4, Some(4)));
    assert!(
        !loadgate::report::console::summary(
            &whole,
            loadgate::report::console::SummaryOptions::default()
        )
        .contains("partial")
    );
}

#[test]
fn starts_more_than_a_second_apart_are_refused() {
    let a = v4_shard(1, 2, 0, &three_seconds(1, 50, 1_000, 2_000));
    let b = v4_shard(2, 2, 2_000_000, &three_seconds(2, 50, 1_000, 2_000));
    let err = error(&[b.clone(), a.clone()], false);
    assert!(
        err.contains("result 1 started measuring 2.000 s after result 2"),
        "{err}"
    );
    // Unsharded results of version 4 too.
    let (mut a, mut b) = (a, b);
    (a.shard, b.shard) = (None, None);
    assert!(error(&[a.clone(), b], false).contains("2.000 s after"));
    // One second apart is still together.
    let c = v4_shard(0, 0, 1_000_000, &three_seconds(3, 50, 1_000, 2_000));
    let merged = merge(&[a, c], MergeOptions::default()).unwrap();
    assert_eq!(merged.merged.unwrap().start_skew_us, 1_000_000);
}

/// A merged second's percentiles come from the shards' histograms of that second added
/// together, for the run and for each target; counts are summed.
#[test]
fn a_merged_second_is_computed_from_the_added_histograms() {
    // Shard 1 fast (1–2 ms), shard 2 slow (10–30 ms) and fewer: an average of their p99s is
    // far from the p99 of the responses together.
    let fast = v4_shard(1, 2, 0, &three_seconds(1, 400, 1_000, 2_000));
    let slow = v4_shard(2, 2, 2_500, &three_seconds(7, 30, 10_000, 30_000));
    let merged = merge(&[fast.clone(), slow.clone()], MergeOptions::default()).unwrap();
    assert_eq!(merged.started_at, fast.started_at);
    assert_eq!(merged.merged.as_ref().unwrap().start_skew_us, 2_500);
    assert_eq!(merged.time_series.len(), 3);
    let series = |r: &RunResult| [r.time_series.clone(), r.targets[0].time_series.clone()];
    for (which, ((m, f), s)) in series(&merged)
        .iter()
        .zip(series(&fast))
        .zip(series(&slow))
        .enumerate()
    {
        for ((m, f), s) in m.iter().zip(&f).zip(&s) {
            let mut sum = decode(&f.histogram);
            sum.add(decode(&s.histogram)).unwrap();
            let at = (which, m.second);
            assert_eq!(m.responses, f.responses + s.responses, "{at:?}");
            assert_eq!(m.requests, Some(f.responses + s.responses), "{at:?}");
            assert_eq!(m.p99_us, sum.value_at_quantile(0.99), "{at:?}");
            assert_eq!(m.p50_us, sum.value_at_quantile(0.5), "{at:?}");
            assert_eq!(m.p95_us, Some(sum.value_at_quantile(0.95)), "{at:?}");
            assert_eq!(m.p99_9_us, Some(sum.value_at_quantile(0.999)), "{at:?}");
            assert_eq!(m.max_us, sum.max(), "{at:?}");
            assert_eq!(m.mean_us, Some(sum.mean()), "{at:?}");
            // The sum is kept: a merge of merges stays exact.
            let kept = decode(&m.histogram);
            assert_eq!(kept.len(), sum.len(), "{at:?}");
            assert_eq!(kept.value_at_quantile(0.99), m.p99_us, "{at:?}");
            let weighted =
                (f.p99_us * f.responses + s.p99_us * s.responses) / (f.responses + s.responses);
            assert!(m.p99_us > 2 * weighted, "{at:?}: not an average");
        }
    }
}

/// Seconds are aligned by wall clock: a shard that started 0.8 s later has its second 0
/// merged into the other's second 1 (offset round(0.8) = 1).
#[test]
fn seconds_are_aligned_by_wall_clock() {
    let early = v4_shard(1, 2, 0, &three_seconds(1, 100, 1_000, 2_000));
    let late = v4_shard(2, 2, 800_000, &three_seconds(4, 60, 5_000, 9_000));
    // Given late first: the earliest start is found, not the first given.
    let merged = merge(&[late.clone(), early.clone()], MergeOptions::default()).unwrap();
    assert_eq!(merged.started_at, early.started_at);
    assert_eq!(merged.merged.as_ref().unwrap().start_skew_us, 800_000);
    let m = &merged.time_series;
    let seconds: Vec<u32> = m.iter().map(|s| s.second).collect();
    assert_eq!(seconds, [0, 1, 2, 3]);
    let (e, l) = (&early.time_series, &late.time_series);
    assert_eq!(m[0].responses, e[0].responses);
    assert_eq!(m[0].histogram, e[0].histogram);
    for s in 1..3 {
        assert_eq!(m[s].responses, e[s].responses + l[s - 1].responses, "{s}");
        let mut sum = decode(&e[s].histogram);
        sum.add(decode(&l[s - 1].histogram)).unwrap();
        assert_eq!(m[s].p99_us, sum.value_at_quantile(0.99), "{s}");
        assert_eq!(decode(&m[s].histogram).len(), sum.len(), "{s}");
    }
    assert_eq!(m[3].responses, l[2].responses);
    // The target's seconds move with the run's.
    let t = &merged.targets[0].time_series;
    assert_eq!(t[1].responses, m[1].responses);
    assert_eq!(t[3].histogram, late.targets[0].time_series[2].histogram);
}

/// Results written before version 4 (`started_at` to the millisecond, no histogram per
/// second) merge as before: by the seconds' index, whatever their starts, with weighted
/// per-second latencies.
#[test]
fn older_results_merge_by_index_with_weighted_seconds() {
    let (a, b) = shards();
    let merged = merge(&[a.clone(), b.clone()], MergeOptions::default()).unwrap();
    let info = merged.merged.as_ref().unwrap();
    assert_eq!(
        info.start_skew_us, 5_136_000,
        "the fixtures started 5.136 s apart"
    );
    assert_eq!((info.shard_count, info.partial), (None, false));
    let longest = a.time_series.len().max(b.time_series.len());
    assert_eq!(merged.time_series.len(), longest);
    let (m, sa, sb) = (&merged.time_series[1], &a.time_series[1], &b.time_series[1]);
    assert_eq!(m.histogram, None);
    let weighted = (sa.p99_us * sa.responses + sb.p99_us * sb.responses) as f64
        / (sa.responses + sb.responses) as f64;
    assert_eq!(m.p99_us, weighted.round() as u64);
    assert_eq!(m.max_us, sa.max_us.max(sb.max_us));
}

/// `planned_start_at` of the merge: the shards' common one.
#[test]
fn the_planned_start_is_the_shards_common_one() {
    let mut a = v4_shard(1, 2, 0, &three_seconds(1, 50, 1_000, 2_000));
    let mut b = v4_shard(2, 2, 40, &three_seconds(2, 50, 1_000, 2_000));
    a.planned_start_at = Some(at(0));
    b.planned_start_at = Some(at(0));
    let merged = merge(&[b.clone(), a.clone()], MergeOptions::default()).unwrap();
    assert_eq!(merged.planned_start_at, Some(at(0)));
    b.planned_start_at = Some(at(500));
    let merged = merge(&[b, a], MergeOptions::default()).unwrap();
    assert_eq!(merged.planned_start_at, Some(at(0)), "the earliest");
}

proptest! {
    #![proptest_config(proptesting::config(48, "tests/proptest-regressions/merge-exact.txt", 30_000))]

    /// Any 1 to 4 shards started within a second of each other, given in any order: each
    /// merged second holds exactly the seconds that wall-clock alignment puts there (offset
    /// `round(Δstart / 1 s)`, recomputed here), its counts their sum and its percentiles those
    /// of their histograms added; the merge does not depend on the order given.
    #[test]
    fn any_shards_merge_exactly_in_any_order(
        shards in prop::collection::vec(
            (0..=1_000_000u64, prop::collection::vec(prop::collection::vec(1..200_000u64, 0..40), 1..4)),
            1..=4,
        ),
        rotate in 0..4usize,
    ) {
        let n = shards.len() as u32;
        let results: Vec<RunResult> = (1..)
            .zip(&shards)
            .map(|(k, (start, seconds))| v4_shard(k, n, start + u64::from(k), seconds))
            .collect();
        let earliest = (1u32..).zip(&shards).map(|(k, (s, _))| s + u64::from(k)).min().unwrap();
        let mut expected: std::collections::BTreeMap<u32, (u64, Histogram<u64>)> = Default::default();
        for ((k, (start, _)), r) in (1u32..).zip(&shards).zip(&results) {
            let offset = ((start + u64::from(k) - earliest) as f64 / 1e6).round() as u32;
            for s in &r.time_series {
                let (responses, sum) = expected
                    .entry(s.second + offset)
                    .or_insert_with(|| (0, Histogram::new_with_bounds(1, 3_600_000_000, 2).unwrap()));
                *responses += s.responses;
                if let Some(h) = &s.histogram {
                    sum.add(decode_histogram(h).unwrap()).unwrap();
                }
            }
        }
        let merged = merge(&results, MergeOptions::default()).unwrap();
        prop_assert_eq!(merged.time_series.len(), expected.len());
        for (m, (second, (responses, sum))) in merged.time_series.iter().zip(&expected) {
            prop_assert_eq!(m.second, *second);
            prop_assert_eq!(m.responses, *responses);
            let at = |q| if sum.is_empty() { 0 } else { sum.value_at_quantile(q) };
            prop_assert_eq!(m.p99_us, at(0.99));
            prop_assert_eq!(m.p50_us, at(0.5));
            prop_assert_eq!(m.max_us, sum.max());
        }
        let total: u64 = results.iter().map(|r| r.total.responses).sum();
        prop_assert_eq!(merged.total.responses, total);
        let mut turned = results.clone();
        turned.rotate_left(rotate % results.len());
        let again = merge(&turned, MergeOptions::default()).unwrap();
        prop_assert_eq!(
            serde_json::to_value(&again.time_series).unwrap(),
            serde_json::to_value(&merged.time_series).unwrap()
        );
        prop_assert_eq!(again.started_at, merged.started_at);
    }
}

/// Two shards run as processes against one `loadgate serve`, started together by one
/// `--start-at`, then merged: each merged second (the run's and each target's) holds the
/// shards' seconds that wall-clock alignment puts there, its counts their sum and its
/// percentiles those of their per-second histograms added.
#[test]
fn two_real_shards_merge_second_by_second_exactly() {
    let _turn = support::turn();
    let (mut server, addr) = support::start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(
        &spec,
        format!(
            "version: 1\nname: shards\ntargets:\n  - name: fast\n    url: http://{addr}/?delay=1ms\n  \
             - name: slow\n    url: http://{addr}/s?delay=8ms\n\
             load:\n  connections: 4\n  duration: 2s\n  warmup: 300ms\n"
        ),
    )
    .unwrap();
    let start_at = humantime::format_rfc3339_millis(
        std::time::SystemTime::now() + std::time::Duration::from_secs(2),
    )
    .to_string();
    let children: Vec<(std::process::Child, std::path::PathBuf)> = (1..=2)
        .map(|k| {
            let out = dir.path().join(format!("shard-{k}.json"));
            let child = std::process::Command::new(env!("CARGO_BIN_EXE_loadgate"))
                .args(["run", spec.to_str().unwrap(), "--quiet", "--shard"])
                .arg(format!("{k}/2"))
                .args(["--start-at", &start_at, "--out", out.to_str().unwrap()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let mut shards = Vec::new();
    for (mut child, out) in children {
        let status =
            support::wait_within(&mut child, std::time::Duration::from_secs(30), "a shard");
        assert_eq!(status.code(), Some(0));
        shards.push(result::read(&out).unwrap());
    }
    let _ = server.kill();
    let _ = server.wait();
    let merged = merge(&shards, MergeOptions::default()).unwrap();
    let info = merged.merged.as_ref().unwrap();
    assert_eq!(
        (info.results, info.shard_count, info.partial),
        (2, Some(2), false)
    );
    assert!(info.start_skew_us < 100_000, "{info:?}");
    assert_eq!(
        merged.total.responses,
        shards[0].total.responses + shards[1].total.responses
    );
    // Every result's seconds, the run's and each target's, go where their start says.
    let earliest = shards
        .iter()
        .map(|r| humantime::parse_rfc3339(&r.started_at).unwrap())
        .min()
        .unwrap();
    let series = |r: &RunResult| -> Vec<Vec<TimeSample>> {
        std::iter::once(r.time_series.clone())
            .chain(r.targets.iter().map(|t| t.time_series.clone()))
            .collect()
    };
    let merged_series = series(&merged);
    let mut checked = 0;
    for (which, m_series) in merged_series.iter().enumerate() {
        for m in m_series {
            let mut sum = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 2).unwrap();
            let mut responses = 0;
            for r in &shards {
                let started = humantime::parse_rfc3339(&r.started_at).unwrap();
                let offset = started
                    .duration_since(earliest)
                    .unwrap()
                    .as_secs_f64()
                    .round() as u32;
                for s in series(r)[which]
                    .iter()
                    .filter(|s| s.second + offset == m.second)
                {
                    responses += s.responses;
                    if s.responses > 0 {
                        sum.add(decode(&s.histogram)).unwrap();
                    }
                }
            }
            assert_eq!(m.responses, responses, "{which} {}", m.second);
            if responses > 0 {
                assert_eq!(
                    m.p99_us,
                    sum.value_at_quantile(0.99),
                    "{which} {}",
                    m.second
                );
                assert_eq!(m.p50_us, sum.value_at_quantile(0.5), "{which} {}", m.second);
                assert_eq!(m.max_us, sum.max(), "{which} {}", m.second);
                assert_eq!(decode(&m.histogram).len(), sum.len());
                checked += 1;
            }
        }
    }
    // The run and both targets, about two seconds each.
    assert!(checked >= 6, "{checked}");
}
