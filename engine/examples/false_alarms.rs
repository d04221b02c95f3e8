//! Measures the regression verdict's error rates against the built-in target, in-process:
//!
//! - false alarms: over `PAIRS` A/A pairs (both runs at `?delay=20ms`), how often the comparison
//!   says "regressed";
//! - detection: over `PAIRS` pairs of a 20% regression (20 ms, then 24 ms), how often it does.
//!
//! ```sh
//! cargo run --release -p loadgate --example false_alarms -- [PAIRS] [DURATION]
//! ```
//! (defaults: 20 pairs, runs of 3s after a 1s warmup; 8 connections, closed model). The rules
//! are the default rules with the latency floor lowered to 1 ms so that the 4 ms change is not
//! under the floor: `p(50) +10%`, `p(95) +10%`, `p(99) +20%`, `errors rate +10% floor 0.1%`,
//! `requests rate -10%`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use loadgate::compare::{self, RuleState};
use loadgate::result::RunResult;
use loadgate::{result, run, serve, spec, validate};

const RULES: &str = "regression:\n  latency: [\"p(50) +10% floor 1ms\", \"p(95) +10% floor 1ms\", \"p(99) +20% floor 1ms\"]\n";

fn run_once(dir: &std::path::Path, url: &str, delay: &str, duration: &str) -> RunResult {
    let text = format!(
        "version: 1\nname: experiment\ntargets:\n  - name: t\n    url: {url}/x?delay={delay}\n\
         load:\n  connections: 8\n  duration: {duration}\n  warmup: 1s\n{RULES}"
    );
    let path = dir.join("spec.yaml");
    std::fs::write(&path, text).unwrap();
    let source = spec::SourceSpec::read(&path).unwrap();
    let plan = validate::check(&source, &|_| None).unwrap();
    let output = run::execute(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {}).unwrap();
    result::build(&plan, &output)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let pairs: usize = args
        .next()
        .map_or(20, |a| a.parse().expect("PAIRS is a number"));
    let duration = args.next().unwrap_or_else(|| "3s".to_string());
    let server = serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();

    for (label, delays) in [
        ("A/A 20ms vs 20ms", ("20ms", "20ms")),
        ("20% 20ms vs 24ms", ("20ms", "24ms")),
    ] {
        let mut regressed_pairs = 0;
        let mut states: std::collections::BTreeMap<String, [usize; 4]> = Default::default();
        for i in 0..pairs {
            let baseline = run_once(dir.path(), &url, delays.0, &duration);
            let current = run_once(dir.path(), &url, delays.1, &duration);
            let comparison = compare::compare(&baseline, &current).unwrap();
            let line: Vec<String> = comparison
                .rules
                .iter()
                .map(|r| {
                    let slot = match r.verdict {
                        RuleState::Regressed => 0,
                        RuleState::Inconclusive => 1,
                        RuleState::Unchanged => 2,
                        RuleState::Improved => 3,
                    };
                    states
                        .entry(format!("{} {}", r.metric, r.rule))
                        .or_default()[slot] += 1;
                    format!("{}={}", r.aggregation, r.verdict.name())
                })
                .collect();
            if comparison.regressed() {
                regressed_pairs += 1;
            }
            println!("{label} pair {:>2}: {}", i + 1, line.join(" "));
        }
        println!(
            "{label}: {regressed_pairs}/{pairs} pairs regressed ({:.0}%)",
            100.0 * regressed_pairs as f64 / pairs as f64
        );
        for (rule, [r, inc, u, imp]) in &states {
            println!(
                "  {rule:<40} regressed {r:>2}  inconclusive {inc:>2}  unchanged {u:>2}  improved {imp:>2}"
            );
        }
    }
}
