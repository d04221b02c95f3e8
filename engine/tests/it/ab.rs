//! `loadgate ab` (duet mode) through the binary, against `loadgate serve` processes on loopback
//! with a controlled delay: an A/A pair passes, a +4 ms candidate regresses (exit 4), two
//! servers given by `--baseline-url`/`--candidate-url` are told apart, `--out` holds both sides,
//! their sub-runs (positions alternating) and epochs (which `loadgate report` renders), two
//! identical sides and odd or too few sub-runs are refused (exit 2), and an invocation lasts
//! at most 3 × one run of its spec. Runs of 8 s after a 1 s warmup (8 sub-runs of 1 s; 32
//! epochs of 250 ms), one at a time; every process is bounded in time.

use crate::support;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use loadgate::result::RunResult;
use serde_json::Value;

/// How long one `loadgate ab` may take: 6 s of load, services and checks, on a busy machine.
const AB_TIMEOUT: Duration = Duration::from_secs(60);

/// A `loadgate serve` process on a free loopback port; killed when dropped.
struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Serve {
    fn start() -> Serve {
        let (child, addr) = support::start_serve("1");
        Serve { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A spec of one target (`url` or `path`, as a YAML line), closed model with 4 connections,
/// 8 s after a 1 s warmup (about 32 pairs of 250 ms epochs; the paired interval needs 6),
/// and two latency rules.
fn spec(target: &str) -> String {
    format!(
        "version: 1\nname: ab\ntargets:\n  - name: slow\n    {target}\n\
         load:\n  connections: 4\n  duration: 8s\n  warmup: 1s\n\
         slo:\n  errors: [\"rate < 1%\"]\n\
         regression:\n  latency: [\"p(50) +10% floor 1ms\", \"p(95) +10% floor 1ms\"]\n"
    )
}

/// Runs `loadgate ab SPEC args...` and waits for it, at most [`AB_TIMEOUT`].
fn ab(spec: &Path, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .arg("ab")
        .arg(spec)
        .args(args)
        .arg("--quiet")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("run loadgate ab");
    let status = support::wait_within(&mut child, AB_TIMEOUT, "loadgate ab");
    Output {
        status,
        stdout: std::fs::read(out).unwrap(),
        stderr: std::fs::read(err).unwrap(),
    }
}

/// The exit code, with the output shown when it is not `want`.
fn assert_exit(output: &Output, want: i32) {
    assert_eq!(
        output.status.code(),
        Some(want),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The line of the text comparison that shows `rule`.
fn rule_line<'a>(stdout: &'a str, rule: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.contains(rule))
        .unwrap_or_else(|| panic!("no line for `{rule}` in:\n{stdout}"))
}

#[test]
fn an_a_a_pair_passes_and_out_holds_both_sides_that_report_renders() {
    let _turn = support::turn();
    let server = Serve::start();
    let (dir, path) = write_spec(&spec(&format!("url: {}/x?delay=${{DELAY}}", server.url())));
    let out = dir.path().join("ab.json");
    // The same delay, written two ways: the sides differ only in name.
    let output = ab(
        &path,
        &[
            "--baseline",
            "DELAY=2ms",
            "--candidate",
            "DELAY=2000us",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_exit(&output, 0);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("BASELINE") && stdout.contains("CANDIDATE"));
    assert!(stdout.contains("paired (duet): both sides loaded at the same time"));

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["ab_version"], 3);
    assert_eq!(doc["mode"], "duet");
    assert_eq!(doc["epoch_ms"], 250);
    // 8 sub-runs of 1 s (the default for 8 s), each side's result whole without time series.
    let sub_runs = doc["sub_runs"].as_array().unwrap();
    assert_eq!(sub_runs.len(), 8);
    for side in ["baseline", "candidate"] {
        let result: RunResult = serde_json::from_value(doc[side].clone()).expect("a whole result");
        assert!(result.total.responses > 1_000, "{side}: {:?}", result.total);
        // One complete second per sub-run, laid end to end.
        assert_eq!(result.time_series.len(), 8, "{side}");
        assert!((result.duration_s - 8.0).abs() < 1e-9, "{side}");
        let mut responses = 0;
        for s in sub_runs {
            let sub: RunResult = serde_json::from_value(s[side].clone()).expect("a result");
            assert!(
                (sub.duration_s - 1.0).abs() < 1e-9,
                "{side}: {}",
                sub.duration_s
            );
            assert!(
                sub.time_series.is_empty() && sub.total.responses > 100,
                "{side}"
            );
            responses += sub.total.responses;
        }
        assert_eq!(responses, result.total.responses, "{side}");
        // 8 s of 250 ms epochs, the last perhaps cut short; their responses are the run's.
        let epochs = doc[format!("{side}_epochs")].as_array().unwrap();
        assert!(
            (31..=32).contains(&epochs.len()),
            "{side}: {} epochs",
            epochs.len()
        );
        let in_epochs: u64 = epochs
            .iter()
            .map(|e| e["responses"].as_u64().unwrap())
            .sum();
        assert!(
            in_epochs <= result.total.responses && in_epochs * 10 >= result.total.responses * 9
        );
    }

    // `loadgate report` renders the document: the paired verdict, as JSON here.
    let report = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["report", out.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_exit(&report, 0);
    let verdict: Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(verdict["verdict"], "pass", "{verdict:#}");
    assert_eq!(verdict["exit_code"], 0);
    let rules = verdict["rules"].as_array().unwrap();
    // The spec's two latency rules, and the default errors and requests rules.
    assert_eq!(rules.len(), 4, "{rules:#?}");
    for rule in rules {
        assert_ne!(rule["verdict"], "regressed", "{rule:#}");
        if rule["metric"] == "latency" {
            assert!(
                ["unchanged", "inconclusive"].contains(&rule["verdict"].as_str().unwrap()),
                "{rule:#}"
            );
            // Judged across the sub-runs that were not late: the same count on both sides.
            let samples = rule["samples"].as_array().unwrap();
            assert_eq!(samples[0], samples[1], "{rule:#}");
            assert!((4..=8).contains(&samples[0].as_u64().unwrap()), "{rule:#}");
        }
    }
    assert_eq!(verdict["family"]["method"], "holm", "{verdict:#}");
    let notes = verdict["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("8 sub-runs of 1.0 s, the sides' positions swapped")),
        "{notes:?}"
    );
    // The document holds its own baseline: another one is refused as bad input.
    let refused = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args([
            "report",
            out.to_str().unwrap(),
            "--baseline",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_exit(&refused, 2);
}

#[test]
fn a_candidate_4ms_slower_regresses_with_exit_4() {
    let _turn = support::turn();
    let server = Serve::start();
    let (_dir, path) = write_spec(&spec(&format!("url: {}/x?delay=${{DELAY}}", server.url())));
    let output = ab(
        &path,
        &["--baseline", "DELAY=2ms", "--candidate", "DELAY=6ms"],
    );
    assert_exit(&output, 4);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        rule_line(&stdout, "p(50) +10% floor 1ms").contains("regressed"),
        "{stdout}"
    );
}

#[test]
fn two_servers_given_by_url_are_told_apart() {
    let _turn = support::turn();
    let (fast, slow) = (Serve::start(), Serve::start());
    // No `defaults.base_url` in the spec: each side's URL gives it.
    let (_dir, path) = write_spec(&spec("path: /x?delay=${DELAY}"));
    let (fast_url, slow_url) = (fast.url(), slow.url());
    let output = ab(
        &path,
        &[
            "--baseline-url",
            &fast_url,
            "--baseline",
            "DELAY=1ms",
            "--candidate-url",
            &slow_url,
            "--candidate",
            "DELAY=5ms",
        ],
    );
    assert_exit(&output, 4);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        rule_line(&stdout, "p(50) +10% floor 1ms").contains("regressed"),
        "{stdout}"
    );
}

#[test]
fn identical_sides_are_refused_with_exit_2_before_any_load() {
    let (_dir, path) = write_spec(&spec("url: http://127.0.0.1:9/x?delay=${DELAY}"));
    for args in [
        &["--baseline", "DELAY=2ms", "--candidate", "DELAY=2ms"][..],
        &[
            "--baseline-url",
            "http://127.0.0.1:9",
            "--candidate-url",
            "http://127.0.0.1:9",
        ],
        // The last value of a name counts.
        &[
            "--baseline",
            "DELAY=1ms",
            "--baseline",
            "DELAY=2ms",
            "--candidate",
            "DELAY=2ms",
        ],
        &[],
    ] {
        let output = ab(&path, args);
        assert_exit(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("the baseline and the candidate are the same"),
            "{args:?}: {stderr}"
        );
    }
    let output = ab(&path, &["--baseline", "DELAY"]);
    assert_exit(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("expected NAME=VALUE"));
}

/// `--sub-runs` and `ab.sub_runs` take an even number, at least 4: others are refused (exit 2)
/// before any load.
#[test]
fn odd_or_too_few_sub_runs_are_refused_with_exit_2() {
    let (_dir, path) = write_spec(&spec("url: http://127.0.0.1:9/x?delay=${DELAY}"));
    let sides = ["--baseline", "DELAY=1ms", "--candidate", "DELAY=2ms"];
    for n in ["2", "5", "0", "many"] {
        let output = ab(&path, &[&sides[..], &["--sub-runs", n]].concat());
        assert_exit(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--sub-runs") && stderr.contains(n),
            "{n}: {stderr}"
        );
    }
    let (_dir, odd) = write_spec(&format!(
        "{}ab:\n  sub_runs: 3\n",
        spec("url: http://127.0.0.1:9/x?delay=${DELAY}")
    ));
    let output = ab(&odd, &sides);
    assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("ab.sub_runs: must be at least 4")
            && stderr.contains("not a multiple of 2"),
        "{stderr}"
    );
}

/// A 2 s spec after a 1 s warmup: 4 sub-runs of 0.5 s, the sides' positions alternating from
/// the first (drawn at random, said on stderr), the whole invocation within 3 × one run's
/// planned 3 s (a bound on the real clock, with process start; not a timing goal), and `--out`
/// an ab_version 3 document read whole.
#[test]
fn sub_runs_alternate_positions_within_three_runs_of_time() {
    let _turn = support::turn();
    let server = Serve::start();
    let yaml = spec(&format!("url: {}/x?delay=${{DELAY}}", server.url()))
        .replace("duration: 8s", "duration: 2s");
    let (dir, path) = write_spec(&yaml);
    let out = dir.path().join("ab.json");
    let started = std::time::Instant::now();
    let output = ab(
        &path,
        &[
            "--baseline",
            "DELAY=1ms",
            "--candidate",
            "DELAY=1000us",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let took = started.elapsed();
    assert!(
        matches!(output.status.code(), Some(0 | 4 | 5)),
        "{output:?}"
    );
    let one_run = Duration::from_secs(3);
    assert!(
        took <= 3 * one_run,
        "ab took {took:?}, more than 3 × {one_run:?}"
    );

    let ab = loadgate::result::ab::read(&out)
        .expect("a whole document")
        .expect("an ab document");
    assert_eq!(ab.ab_version, 3);
    assert_eq!(ab.sub_runs.len(), 4);
    let first = ab.sub_runs[0].baseline_first;
    for (k, s) in ab.sub_runs.iter().enumerate() {
        assert_eq!(s.index as usize, k);
        assert_eq!(s.baseline_first, first == (k % 2 == 0), "sub-run {k}");
        assert!((s.baseline.duration_s - 0.5).abs() < 1e-9);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said = format!(
        "the {} first in sub-run 1 (drawn at random)",
        if first { "baseline" } else { "candidate" }
    );
    assert!(
        stderr.contains("4 sub-runs of 500ms measured each") && stderr.contains(&said),
        "{stderr}"
    );
    // The sides' whole results: 2 s of measured time, rates over it.
    for side in [&ab.baseline, &ab.candidate] {
        assert!((side.duration_s - 2.0).abs() < 1e-9);
        let rate = side.total.responses as f64 / 2.0;
        assert!(
            (side.total.rps - rate).abs() < 1e-6 * rate.max(1.0),
            "{}",
            side.total.rps
        );
    }
}

fn write_spec(yaml: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, yaml).expect("the spec is written");
    (dir, path)
}

#[test]
fn aa_calibration_prints_the_noise_and_the_run_length_per_rule() {
    let _turn = support::turn();
    let server = Serve::start();
    let (_dir, path) = write_spec(&spec("path: /x?delay=1ms"));
    let output = ab(&path, &["--aa", "--baseline-url", &server.url()]);
    assert_exit(&output, 0);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("A/A CALIBRATION: both sides are the baseline; 8 sub-runs ("),
        "{stdout}"
    );
    for rule in [
        "latency p(50) +10% floor 1ms",
        "latency p(95) +10% floor 1ms",
    ] {
        let line = rule_line(&stdout[stdout.find("A/A CALIBRATION").unwrap()..], rule);
        assert!(line.contains("MDE (80% power) +"), "{line}");
        assert!(line.contains("allowed +"), "{line}");
        assert!(!line.contains("FALSE ALARM"), "{line}");
    }
    // `--aa` takes no candidate.
    let refused = ab(&path, &["--aa", "--candidate-url", &server.url()]);
    assert_exit(&refused, 2);
}

#[test]
fn alternating_epochs_catch_a_slower_candidate_and_out_says_so() {
    let _turn = support::turn();
    let server = Serve::start();
    // 6 s of load per side: six 1 s epochs each, in ABBA order (about 13 s in all).
    let yaml = spec(&format!("url: {}/x?delay=${{DELAY}}", server.url()))
        .replace("duration: 8s", "duration: 6s");
    let (dir, path) = write_spec(&yaml);
    let out = dir.path().join("ab.json");
    let output = ab(
        &path,
        &[
            "--mode",
            "alternating",
            "--baseline",
            "DELAY=2ms",
            "--candidate",
            "DELAY=6ms",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_exit(&output, 4);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        rule_line(&stdout, "p(50) +10% floor 1ms").contains("regressed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("paired (alternating): the sides loaded in turn"),
        "{stdout}"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        (doc["mode"].as_str(), doc["epoch_ms"].as_u64()),
        (Some("alternating"), Some(1000))
    );
    for side in ["baseline", "candidate"] {
        assert_eq!(
            doc[format!("{side}_epochs")].as_array().unwrap().len(),
            6,
            "{side}"
        );
        // The side's epochs joined into one whole result: six seconds of load.
        let result: RunResult = serde_json::from_value(doc[side].clone()).unwrap();
        assert!(
            (result.duration_s - 6.0).abs() < 1e-9,
            "{side}: {}",
            result.duration_s
        );
        assert_eq!(result.time_series.len(), 6, "{side}");
        assert!(result.health.valid, "{side}: {:?}", result.health.problems);
    }
    // Six sub-runs of one epoch each, opened by either side in turn.
    let sub_runs = doc["sub_runs"].as_array().unwrap();
    assert_eq!(sub_runs.len(), 6);
    let first = sub_runs[0]["baseline_first"].as_bool().unwrap();
    for (k, s) in sub_runs.iter().enumerate() {
        assert_eq!(s["baseline_first"], first == (k % 2 == 0), "sub-run {k}");
        let sub: RunResult = serde_json::from_value(s["candidate"].clone()).unwrap();
        assert!((sub.duration_s - 1.0).abs() < 1e-9, "{}", sub.duration_s);
        assert!(sub.health.valid, "sub-run {k}: {:?}", sub.health.problems);
    }
    // Half-second epochs are for duet mode.
    let refused = ab(
        &path,
        &[
            "--mode",
            "alternating",
            "--epoch",
            "500ms",
            "--baseline",
            "DELAY=1ms",
            "--candidate",
            "DELAY=2ms",
        ],
    );
    assert_exit(&refused, 2);
}

#[test]
fn the_specs_ab_block_gives_the_sides_and_the_epoch() {
    let _turn = support::turn();
    let server = Serve::start();
    let yaml = format!(
        "{}ab:\n  baseline: {{values: {{DELAY: 2ms}}}}\n  candidate: {{values: {{DELAY: 6ms}}}}\n  \
         epoch: 500ms\n",
        spec(&format!("url: {}/x?delay=${{DELAY}}", server.url()))
    );
    let (dir, path) = write_spec(&yaml);
    let out = dir.path().join("ab.json");
    let output = ab(&path, &["--out", out.to_str().unwrap()]);
    assert_exit(&output, 4);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        (doc["mode"].as_str(), doc["epoch_ms"].as_u64()),
        (Some("duet"), Some(500))
    );

    // A block that does not fit the schema: its field and line, exit 2, before any load.
    let (_dir, bad) = write_spec(&format!(
        "{}ab:\n  mode: sideways\n",
        spec("url: http://127.0.0.1:9/")
    ));
    let refused = ab(&bad, &[]);
    assert_exit(&refused, 2);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("ab.mode"), "{stderr}");
}

/// A CPU hog on every core of this machine: one spinning thread per CPU, until dropped or
/// `limit` has passed.
struct Hog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn start(limit: Duration) -> Hog {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let end = std::time::Instant::now() + limit;
        let threads = (0..cpus)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < end {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(6364136223846793005) + 1);
                        }
                    }
                })
            })
            .collect();
        Hog { stop, threads }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Both sides of a duet on a machine a CPU hog saturates: the verdict says so with the
/// measured share of the CPUs (above 90%) and suggests `--mode alternating`; `--out` holds
/// the share, and `loadgate report` of it shows the same note. (Whether a calm machine stays
/// under 90% depends on its neighbours, so that is not asserted.)
#[test]
fn a_duet_on_a_saturated_machine_says_so() {
    let _turn = support::turn();
    let server = Serve::start();
    let (dir, path) = write_spec(&spec(&format!("url: {}/x?delay=1ms", server.url())));
    let out = dir.path().join("ab.json");
    let output = {
        let _hog = Hog::start(AB_TIMEOUT);
        ab(
            &path,
            &["--aa", "--out", out.to_str().unwrap(), "--mode", "duet"],
        )
    };
    // Passed, or an invalid measurement if the hog also starved the generator.
    let code = output.status.code();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        matches!(code, Some(0 | 4 | 5)),
        "exit {code:?}\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let note = "the machine was saturated during the duet: ";
    let line = stdout
        .lines()
        .find(|l| l.contains(note))
        .unwrap_or_else(|| panic!("no saturation note in:\n{stdout}"));
    assert!(line.contains("--mode alternating"), "{line}");
    let shown: f64 = line
        .split(note)
        .nth(1)
        .unwrap()
        .split('%')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((90.0..=100.0).contains(&shown), "{line}");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let busy = doc["machine_busy"].as_f64().unwrap();
    assert!(busy > 0.9 && busy <= 1.0, "{busy}");
    assert!((busy * 100.0 - shown).abs() <= 0.5, "{busy} vs {line}");
    let report = support::loadgate(&["report", out.to_str().unwrap(), "--format", "md"]);
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(md.contains(note), "{md}");
}
