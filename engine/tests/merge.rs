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
    let merged = merge(&[a.clone(), b.clone()]).unwrap();
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
    let err = merge(&[a.clone(), b]).unwrap_err().to_string();
    assert!(
        err.contains("result 2 comes from another spec (`other`"),
        "{err}"
    );
    let (a, mut b) = shards();
    b.result_version = 3;
    let err = merge(&[a, b]).unwrap_err().to_string();
    assert!(
        err.contains("result 2 has result_version 3, the first 2"),
        "{err}"
    );
    assert!(merge(&[]).is_err());
}

#[test]
fn a_result_given_twice_is_refused() {
    let (a, b) = shards();
    let err = merge(&[a.clone(), b.clone(), a.clone()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("result 3 is result 1 again"), "{err}");
    // Another host's shard of the same moment is not the same result.
    let mut other = a.clone();
    other.environment.hostname = "shard-2".to_string();
    let merged = merge(&[a.clone(), other]).unwrap();
    assert_eq!(merged.total.requests, 2 * a.total.requests);
}
