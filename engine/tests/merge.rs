//! `result::merge` in process, on the committed results taken as two shards of one run (their
//! spec hashes made equal): percentiles come from the added histograms, not from averages.

use std::path::Path;

use loadgate::result::{self, RunResult, decode_histogram, merge::merge};

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
        scope: "shop".to_string(),
        metric: "latency".to_string(),
        threshold: "p(95) < 1s".to_string(),
        measured: None,
        unit: "us".to_string(),
        limit: 1_000_000.0,
        passed: false,
        window_s: None,
        failed_window_start_s: None,
        aborted_run: false,
        default: false,
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
