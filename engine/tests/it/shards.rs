//! Shards as real processes (issue 17): 4 `loadgate run --shard K/4 --start-at T` processes
//! against one `loadgate serve` on loopback, then `loadgate merge`. The merge must be exact:
//! counts are the shards' sums, percentiles those of the shards' histograms added (whole run,
//! per target, and per second from the shards' per-second histograms), the shards started
//! within 5 ms of each other, and their connections add up to the spec's. The commands of
//! examples/kubernetes/'s Jobs run the same way, with `/spec` and `/results` in a temporary
//! folder and `JOB_COMPLETION_INDEX` 0 to 3 as Kubernetes sets it.
//!
//! Each run is 4 s of load (1 s warmup, 3 s measured) at about 250 requests/s in all, started
//! 3 to 4 s ahead; the two tests take turns.

#![cfg(unix)]

use crate::support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use loadgate::result::{self, LatencySummary, RunResult, TargetResult, TimeSample};
use serde_json::Value;

use support::{start_serve, turn, wait_within};

/// Shards of every run here.
const SHARDS: u32 = 4;

/// `loadgate serve` on a free loopback port, killed when dropped.
struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Serve {
    fn start() -> Serve {
        let (child, addr) = start_serve("1");
        Serve { child, addr }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A common start 3 to 4 s from now, in whole seconds: `2026-11-24T10:00:04Z`.
fn start_at() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now() + Duration::from_secs(4)).to_string()
}

/// Waits (at most 60 s) for a process and returns its output; panics with its stderr unless it
/// exited 0.
fn finish(child: Child, what: &str) -> Output {
    let mut child = child;
    wait_within(&mut child, Duration::from_secs(60), what);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{what}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `loadgate ARGS`, its output piped.
fn spawn_loadgate(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loadgate")
}

fn micros_since_epoch(rfc3339: &str) -> u64 {
    let at = humantime::parse_rfc3339(rfc3339).unwrap_or_else(|e| panic!("{rfc3339}: {e}"));
    at.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

fn decode(text: &str) -> Histogram<u64> {
    result::decode_histogram(text).expect("a histogram that decodes")
}

/// The histograms added together.
fn added<'a>(texts: impl IntoIterator<Item = &'a str>) -> Histogram<u64> {
    let mut sum: Option<Histogram<u64>> = None;
    for text in texts {
        let h = decode(text);
        match sum.as_mut() {
            Some(s) => s.add(h).unwrap(),
            None => sum = Some(h),
        }
    }
    sum.expect("at least one histogram")
}

/// The summary's percentiles are those of `h`, ranked as the result ranks them.
fn assert_percentiles_of(summary: &LatencySummary, h: &Histogram<u64>, what: &str) {
    let expected = [
        (summary.min_us, h.min()),
        (summary.p50_us, h.value_at_quantile(0.50)),
        (summary.p90_us, h.value_at_quantile(0.90)),
        (summary.p95_us, h.value_at_quantile(0.95)),
        (summary.p99_us, h.value_at_quantile(0.99)),
        (summary.p99_9_us, h.value_at_quantile(0.999)),
        (summary.max_us, h.max()),
    ];
    for (i, (merged, recomputed)) in expected.into_iter().enumerate() {
        assert_eq!(
            merged, recomputed,
            "{what}: percentile {i} (min, p50, p90, p95, p99, p99.9, max)"
        );
    }
}

/// One target (or `total`) of the merge against the same target of every shard: counts
/// summed, percentiles from the histograms added.
fn assert_target_merged(merged: &TargetResult, shards: &[&TargetResult]) {
    let name = &merged.name;
    let sum = |f: fn(&TargetResult) -> u64| shards.iter().map(|t| f(t)).sum::<u64>();
    assert_eq!(merged.requests, sum(|t| t.requests), "{name}: requests");
    assert_eq!(merged.responses, sum(|t| t.responses), "{name}: responses");
    assert_eq!(merged.errors, sum(|t| t.errors), "{name}: errors");
    assert_eq!(
        merged.bytes_sent,
        sum(|t| t.bytes_sent),
        "{name}: bytes sent"
    );
    assert_eq!(
        merged.bytes_received,
        sum(|t| t.bytes_received),
        "{name}: bytes received"
    );
    let mut codes = BTreeMap::new();
    for t in shards {
        for (code, n) in &t.status_codes {
            *codes.entry(code.clone()).or_insert(0) += n;
        }
    }
    assert_eq!(merged.status_codes, codes, "{name}: status codes");
    assert!(merged.responses > 0, "{name}: no responses");
    for t in shards {
        assert!(t.responses > 0, "{name}: a shard without responses");
    }

    let h = added(shards.iter().map(|t| t.histogram.as_str()));
    assert_eq!(h.len(), merged.responses, "{name}: histogram count");
    let summary = merged.latency_us.as_ref().expect("latency");
    assert_percentiles_of(summary, &h, name);
    let merged_h = decode(&merged.histogram);
    assert_eq!(merged_h.len(), h.len(), "{name}: merged histogram count");
    assert_eq!(merged_h.value_at_quantile(0.99), h.value_at_quantile(0.99));
}

/// The merged seconds against the shards' seconds, aligned by wall clock: shard `i`'s second
/// `s` is merged second `s + offset_i`, `offset_i = round((started_at_i - earliest) in s)`.
/// Each merged second's p50, p99 and max are those of the shards' per-second histograms added.
fn assert_seconds_merged(what: &str, merged: &[TimeSample], shards: &[(&[TimeSample], u32)]) {
    assert!(merged.len() >= 3, "{what}: {} merged seconds", merged.len());
    let mut with_histogram = 0;
    for m in merged {
        let parts: Vec<&TimeSample> = shards
            .iter()
            .flat_map(|(series, offset)| {
                series.iter().filter(move |s| s.second + offset == m.second)
            })
            .collect();
        let responses: u64 = parts.iter().map(|s| s.responses).sum();
        let errors: u64 = parts.iter().map(|s| s.errors).sum();
        assert_eq!(
            m.responses, responses,
            "{what}: second {}: responses",
            m.second
        );
        assert_eq!(m.errors, errors, "{what}: second {}: errors", m.second);
        if responses == 0 {
            assert_eq!(
                m.p99_us, 0,
                "{what}: second {}: p99 without responses",
                m.second
            );
            continue;
        }
        let texts: Vec<&str> = parts
            .iter()
            .filter(|s| s.responses > 0)
            .map(|s| {
                s.histogram.as_deref().unwrap_or_else(|| {
                    panic!("{what}: second {} of a shard: no histogram", s.second)
                })
            })
            .collect();
        let h = added(texts);
        assert_eq!(
            h.len(),
            responses,
            "{what}: second {}: histogram count",
            m.second
        );
        assert_eq!(
            m.p99_us,
            h.value_at_quantile(0.99),
            "{what}: second {}: p99",
            m.second
        );
        assert_eq!(
            m.p50_us,
            h.value_at_quantile(0.50),
            "{what}: second {}: p50",
            m.second
        );
        assert_eq!(m.max_us, h.max(), "{what}: second {}: max", m.second);
        with_histogram += 1;
    }
    assert!(
        with_histogram >= 3,
        "{what}: {with_histogram} seconds with responses"
    );
}

/// Everything issue 17 asks of a merge of `SHARDS` shards. `spec_level` is the spec's
/// connections (closed model) or `max_in_flight` (open model).
fn assert_exact_merge(shards: &[RunResult], merged: &RunResult, spec_level: u32, start_at: &str) {
    assert_eq!(shards.len(), SHARDS as usize);
    let mut indexes: Vec<u32> = shards
        .iter()
        .map(|r| {
            let shard = r.shard.expect("a shard's result records K/N");
            assert_eq!(shard.count, SHARDS);
            shard.index
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, (1..=SHARDS).collect::<Vec<_>>());

    // Started together: at the common start plus the warmup, within 5 ms of each other.
    let planned = micros_since_epoch(start_at) + (shards[0].load.warmup_s * 1e6).round() as u64;
    let started: Vec<u64> = shards
        .iter()
        .map(|r| micros_since_epoch(&r.started_at))
        .collect();
    for r in shards {
        let at = r.planned_start_at.as_deref().expect("planned_start_at");
        assert_eq!(micros_since_epoch(at), planned, "planned start");
    }
    let earliest = *started.iter().min().unwrap();
    let skew = started.iter().max().unwrap() - earliest;
    let info = merged
        .merged
        .as_ref()
        .expect("the merge records what it merged");
    assert_eq!(info.results, SHARDS);
    assert_eq!(info.shard_count, Some(SHARDS));
    assert!(info.missing.is_empty() && !info.partial, "{info:?}");
    assert_eq!(info.start_skew_us, skew, "start skew");
    assert!(skew < 5_000, "start skew {skew} µs");
    assert!(merged.shard.is_none());

    // The shards' connections (open model: in-flight caps) add up to the spec's, remainders
    // on the first shards.
    let level = |r: &RunResult| {
        r.load
            .connections
            .or(r.load.max_in_flight)
            .expect("a level")
    };
    let mut by_index: Vec<(u32, u32)> = shards
        .iter()
        .map(|r| (r.shard.unwrap().index, level(r)))
        .collect();
    by_index.sort();
    let split: Vec<u32> = (1..=SHARDS)
        .map(|k| spec_level / SHARDS + u32::from(k <= spec_level % SHARDS))
        .collect();
    assert_eq!(by_index.iter().map(|(_, l)| *l).collect::<Vec<_>>(), split);
    assert_eq!(split.iter().sum::<u32>(), spec_level);

    // Counts and percentiles, whole run and per target.
    assert_target_merged(
        &merged.total,
        &shards.iter().map(|r| &r.total).collect::<Vec<_>>(),
    );
    assert_eq!(merged.targets.len(), shards[0].targets.len());
    for t in &merged.targets {
        let parts: Vec<&TargetResult> = shards
            .iter()
            .map(|r| {
                r.targets
                    .iter()
                    .find(|x| x.name == t.name)
                    .expect("the target in every shard")
            })
            .collect();
        assert_target_merged(t, &parts);
    }

    // Per second, whole run and per target.
    let offsets: Vec<u32> = started
        .iter()
        .map(|s| ((s - earliest) as f64 / 1e6).round() as u32)
        .collect();
    let series: Vec<(&[TimeSample], u32)> = shards
        .iter()
        .zip(&offsets)
        .map(|(r, o)| (r.time_series.as_slice(), *o))
        .collect();
    assert_seconds_merged("total", &merged.time_series, &series);
    for t in &merged.targets {
        let series: Vec<(&[TimeSample], u32)> = shards
            .iter()
            .zip(&offsets)
            .map(|(r, o)| {
                let target = r.targets.iter().find(|x| x.name == t.name).unwrap();
                (target.time_series.as_slice(), *o)
            })
            .collect();
        assert_seconds_merged(&t.name, &t.time_series, &series);
    }
}

fn read_all(paths: &[PathBuf]) -> Vec<RunResult> {
    paths
        .iter()
        .map(|p| result::read(p).unwrap_or_else(|e| panic!("{}: {e:#}", p.display())))
        .collect()
}

/// 3 targets, 10 connections (shares 3, 3, 2, 2), each paced at 25 requests/s.
fn closed_spec(addr: SocketAddr) -> String {
    format!(
        r#"version: 1
name: shards
defaults:
  base_url: http://{addr}
  timeout: 2s
targets:
  - name: home
    path: /?size=256
    weight: 3
  - name: slow
    path: /?delay=2ms
    weight: 1
  - name: create
    method: POST
    path: /items?status=201
    body: '{{"name": "widget"}}'
    expect:
      status: [201]
load:
  connections: 10
  pacing: 25/s
  duration: 3s
  warmup: 1s
slo:
  errors: ["rate < 1%"]
"#
    )
}

#[test]
fn four_shards_started_together_merge_exactly() {
    let _turn = turn();
    let serve = Serve::start();
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, closed_spec(serve.addr)).unwrap();
    let spec = spec.to_str().unwrap();
    let at = start_at();
    let outs: Vec<PathBuf> = (1..=SHARDS)
        .map(|k| dir.path().join(format!("shard-{k}.json")))
        .collect();
    let children: Vec<Child> = (1..=SHARDS)
        .zip(&outs)
        .map(|(k, out)| {
            let shard = format!("{k}/{SHARDS}");
            let out = out.to_str().unwrap();
            spawn_loadgate(&[
                "run",
                spec,
                "--shard",
                &shard,
                "--start-at",
                &at,
                "--out",
                out,
                "--quiet",
            ])
        })
        .collect();
    for (k, child) in (1..=SHARDS).zip(children) {
        finish(child, &format!("shard {k}"));
    }

    let merged_path = dir.path().join("merged.json");
    let mut args = vec!["merge"];
    args.extend(outs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--out", merged_path.to_str().unwrap()]);
    finish(spawn_loadgate(&args), "loadgate merge");
    let shards = read_all(&outs);
    let merged = result::read(&merged_path).unwrap();
    assert_exact_merge(&shards, &merged, 10, &at);
    assert_eq!(
        merged.total.status_codes.get("201").copied(),
        Some(merged.targets[2].responses)
    );

    // The same shard twice is refused, and so is a missing one (unless --allow-missing).
    let [one, two, three, _] = [0, 1, 2, 3].map(|i| outs[i].to_str().unwrap());
    let again = dir.path().join("again.json");
    let again = again.to_str().unwrap();
    let refused = support::loadgate(&["merge", one, two, three, one, "--out", again]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let refused = support::loadgate(&["merge", one, two, three, "--out", again]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let partial = support::loadgate(&["merge", one, two, three, "--allow-missing", "--out", again]);
    assert!(partial.status.success(), "{partial:?}");
    let info = result::read(Path::new(again)).unwrap().merged.unwrap();
    assert!(info.partial);
    assert_eq!(info.missing, vec![4]);
}

/// A YAML manifest of examples/kubernetes/, as JSON values.
fn manifest(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/kubernetes")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a Job's (only) container runs, as local processes see it: its `sh -c` script with
/// each volume's mount path replaced by a folder under `root` (`/results/x` becomes
/// `ROOT/results/x`), and its environment. Also checks that the volumes are the ConfigMap's
/// and the PersistentVolumeClaim's of this folder.
struct JobCommand {
    script: String,
    env: Vec<(String, String)>,
}

fn job_command(job: &Value, root: &Path) -> JobCommand {
    let pod = &job["spec"]["template"]["spec"];
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    let command: Vec<&str> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(command[..2], ["sh", "-c"], "the command runs with sh -c");
    let mut script = command[2].to_string();
    for mount in container["volumeMounts"].as_array().unwrap() {
        let name = mount["name"].as_str().unwrap();
        let path = mount["mountPath"].as_str().unwrap();
        let volume = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap();
        if let Some(config_map) = volume.get("configMap") {
            assert_eq!(
                config_map["name"],
                manifest("spec-configmap.yaml")["metadata"]["name"]
            );
        } else {
            let claim = &volume["persistentVolumeClaim"]["claimName"];
            assert_eq!(*claim, manifest("results-pvc.yaml")["metadata"]["name"]);
        }
        let local = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(&local).unwrap();
        assert!(script.contains(&format!("{path}/")), "{script} uses {path}");
        script = script.replace(&format!("{path}/"), &format!("{}/", local.display()));
    }
    let env = container["env"]
        .as_array()
        .map(|vars| {
            vars.iter()
                .map(|v| {
                    (
                        v["name"].as_str().unwrap().to_string(),
                        v["value"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    JobCommand { script, env }
}

/// `sh -c SCRIPT` with `env` (then `extra`), `loadgate` on PATH as `bin/loadgate`.
fn spawn_sh(job: &JobCommand, bin: &Path, extra: &[(&str, String)]) -> Child {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", &job.script])
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in &job.env {
        command.env(name, value);
    }
    for (name, value) in extra {
        command.env(name, value);
    }
    command.spawn().expect("run sh")
}

/// The open model's spec the Kubernetes test runs in place of the ConfigMap's 60 s one:
/// 2 targets at 200 arrivals/s in all, at most 10 in flight (shares 3, 3, 2, 2).
const OPEN_SPEC: &str = r#"version: 1
name: kubernetes-shards
defaults:
  base_url: ${TARGET_URL}
  timeout: 2s
targets:
  - name: list
    path: /?size=1024
    weight: 3
  - name: item
    path: /?delay=1ms
    weight: 1
load:
  model: open
  rate: 200/s
  max_in_flight: 10
  duration: 3s
  warmup: 1s
slo:
  errors: ["rate < 1%"]
"#;

#[test]
fn the_kubernetes_jobs_commands_run_as_local_processes_and_merge() {
    let _turn = turn();
    let serve = Serve::start();
    let target_url = format!("http://{}", serve.addr);
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_loadgate"), bin.join("loadgate")).unwrap();

    let shards_job = manifest("shards-job.yaml");
    assert_eq!(shards_job["spec"]["completionMode"], "Indexed");
    assert_eq!(shards_job["spec"]["completions"], SHARDS);
    assert_eq!(shards_job["spec"]["parallelism"], SHARDS);
    let shard = job_command(&shards_job, root.path());
    let merge = job_command(&manifest("merge-job.yaml"), root.path());
    let (spec_dir, results) = (root.path().join("spec"), root.path().join("results"));

    // The ConfigMap's spec is valid (its TARGET_URL from the shards' Job)...
    let spec = manifest("spec-configmap.yaml")["data"]["spec.yaml"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(spec_dir.join("spec.yaml"), &spec).unwrap();
    let job_url = shard
        .env
        .iter()
        .find(|(n, _)| n == "TARGET_URL")
        .map(|(_, v)| v.clone());
    let validate = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["validate", spec_dir.join("spec.yaml").to_str().unwrap()])
        .env(
            "TARGET_URL",
            job_url.expect("the shards' Job sets TARGET_URL"),
        )
        .output()
        .unwrap();
    assert!(validate.status.success(), "{validate:?}");
    // ...and a short one stands in for it, against the local server.
    std::fs::write(spec_dir.join("spec.yaml"), OPEN_SPEC).unwrap();
    let at = start_at();
    let children: Vec<Child> = (0..SHARDS)
        .map(|index| {
            let vars = [
                ("JOB_COMPLETION_INDEX", index.to_string()),
                ("START_AT", at.clone()),
                ("TARGET_URL", target_url.clone()),
            ];
            spawn_sh(&shard, &bin, &vars)
        })
        .collect();
    for (index, child) in children.into_iter().enumerate() {
        finish(child, &format!("the shards' Job, index {index}"));
    }
    let outs: Vec<PathBuf> = (1..=SHARDS)
        .map(|k| results.join(format!("shard-{k}.json")))
        .collect();
    let merged_log = finish(spawn_sh(&merge, &bin, &[]), "the merge Job");

    let shards = read_all(&outs);
    let merged = result::read(&results.join("merged.json")).unwrap();
    assert_exact_merge(&shards, &merged, 10, &at);
    assert_eq!(merged.load.model, "open");
    let report = std::fs::read_to_string(results.join("report.md")).unwrap();
    assert!(report.contains("kubernetes-shards"), "{report}");
    let log = String::from_utf8_lossy(&merged_log.stdout);
    assert!(
        log.contains("kubernetes-shards"),
        "the merge Job's log: {log}"
    );
}
