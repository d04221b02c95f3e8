//! The messages of gRPC and WebSocket targets in the result, built from a run's
//! [`TargetStats`] filled as the run fills them (`run/exchange.rs`): a server-streaming gRPC
//! target (`say`, compiled from `examples/echo.proto`), a WebSocket target (`chat`) and an
//! HTTP one (`page`). [`grpc_and_ws_result`] is the reports' fixture too
//! (`report/messages_tests.rs`).

use std::ops::Range;
use std::time::{Duration, Instant, SystemTime};

use super::*;
use crate::measure::{
    CodeSpace, ErrorCode, ErrorKind, MessageCounts, ResponseTimes, Setup, StageStats, TargetStats,
    Timing,
};
use crate::plan::Plan;
use crate::run::RunOutput;
use crate::spec::SourceSpec;

/// A gRPC server-streaming target, a WebSocket target and an HTTP target, 2 connections for
/// 4 s.
const SPEC: &str = "version: 1
name: protocols
targets:
  - name: say
    url: http://127.0.0.1:9
    grpc:
      proto: [echo.proto]
      method: loadgate.echo.v1.Echo/Stream
      message: {text: hi, count: 5}
  - {name: chat, url: 'ws://127.0.0.1:9/ws/echo', ws: {send: hello}}
  - {name: page, url: 'http://127.0.0.1:9/'}
load:
  connections: 2
  duration: 4s
";

/// The measured window of the outputs, s.
const SECONDS: u64 = 4;

/// [`SPEC`] planned, its `.proto` from `examples/`, without SLOs.
pub(crate) fn plan() -> Plan {
    let source = SourceSpec::parse("spec.yaml".into(), SPEC.to_string()).unwrap();
    let spec: crate::spec::Spec = serde_json::from_value(source.value.clone()).unwrap();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: &examples,
        var: &|_| None,
    };
    let mut plan = crate::plan::build(&spec, &ctx).unwrap_or_else(|e| panic!("{e:?}"));
    plan.slo.clear();
    plan
}

/// The times of a response of `latency_us`, on a connection it opened (`setup`) or not.
fn times(target: usize, latency_us: u64, setup: Option<Setup>) -> ResponseTimes {
    let timing = Timing {
        setup,
        write_us: 20,
        ttfb_us: latency_us.saturating_sub(20),
        ..Timing::default()
    };
    ResponseTimes::new(target, latency_us, latency_us, timing)
}

/// The gRPC target's calls `calls` (call `i`: its first message after 2 ms + 30 µs × `i`,
/// its stream over after 20 ms + 100 µs × `i`; every 25th ends with `UNAVAILABLE` and no
/// message), recorded as `run/exchange.rs` records them; `start`: when the first was due.
fn grpc_calls(stats: &mut TargetStats, calls: Range<u64>, start: Instant) {
    for i in calls {
        let due = start + Duration::from_millis(i);
        let latency_us = 2_000 + 30 * i;
        let setup = (i < 2).then(|| Setup {
            connect_us: 150,
            ..Setup::default()
        });
        stats.record_times(&times(0, latency_us, setup));
        stats.record_response(200, true);
        let failed = i % 25 == 24;
        if failed {
            // A response whose gRPC status was not expected: counted, and an error.
            stats.record_error(ErrorKind::GrpcUnavailable);
            stats.answered_errors += 1;
        }
        let counts = MessageCounts {
            sent: 1,
            received: if failed { 0 } else { 5 },
            bytes_sent: 6,
            bytes_received: if failed { 0 } else { 5 * 12 },
            answered_at: (!failed).then(|| due + Duration::from_micros(latency_us)),
            failure: failed.then_some(ErrorKind::GrpcUnavailable),
        };
        let end = due + Duration::from_micros(20_000 + 100 * i);
        stats.messages.record(&counts, due, end);
    }
}

/// The WebSocket target's exchanges `exchanges` (exchange `i`: its reply after 500 µs + 5 µs ×
/// `i`; the first two opened the connections, upgraded in 900 µs and 1.3 ms; every 100th
/// failed: the server closed with 1011), recorded as `run/exchange.rs` records them.
fn ws_exchanges(stats: &mut TargetStats, exchanges: Range<u64>, start: Instant) {
    for i in exchanges {
        let due = start + Duration::from_millis(i);
        let counts = MessageCounts {
            sent: 1,
            received: 1,
            bytes_sent: 5,
            bytes_received: 5,
            ..MessageCounts::default()
        };
        if i % 100 == 99 {
            stats.record_error(ErrorKind::WsClosed);
            let code = ErrorCode {
                space: CodeSpace::WebSocket,
                value: 1011,
            };
            stats.record_error_code(ErrorKind::WsClosed, Some(code));
            let unanswered = MessageCounts {
                received: 0,
                bytes_received: 0,
                ..counts
            };
            stats.messages.record(&unanswered, due, due);
            continue;
        }
        let latency_us = 500 + 5 * i;
        let setup = (i < 2).then(|| Setup {
            connect_us: 120,
            upgrade_us: Some([900, 1_300][i as usize]),
            ..Setup::default()
        });
        stats.record_times(&times(1, latency_us, setup));
        stats.record_response(101, true);
        stats
            .messages
            .record(&counts, due, due + Duration::from_micros(latency_us));
    }
}

/// A run of [`plan`] over [`SECONDS`]: the gRPC target's `calls`, the WebSocket target's
/// `exchanges` and 50 HTTP responses of 1 ms.
pub(crate) fn output(plan: &Plan, calls: Range<u64>, exchanges: Range<u64>) -> RunOutput {
    let start = Instant::now();
    let mut targets = vec![TargetStats::default(); 3];
    grpc_calls(&mut targets[0], calls, start);
    ws_exchanges(&mut targets[1], exchanges, start);
    for _ in 0..50 {
        targets[2].record_times(&times(2, 1_000, None));
        targets[2].record_response(200, true);
    }
    RunOutput {
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        elapsed: Duration::from_secs(SECONDS),
        targets,
        flows: Vec::new(),
        stages: plan
            .load
            .stages
            .iter()
            .map(|_| StageStats::default())
            .collect(),
        stage_cpu_s: vec![0.0; plan.load.stages.len()],
        time_series: Vec::new(),
        epochs: Vec::new(),
        cpu: (Duration::from_millis(300), Duration::from_millis(100)),
        interrupted: false,
        aborted_by: None,
        windows: Vec::new(),
        negotiated: Vec::new(),
        udp_buffers: None,
    }
}

/// The result of 100 gRPC calls and 200 WebSocket exchanges ([`output`]), with the machine
/// and the source made fixed for the reports' snapshots.
pub(crate) fn grpc_and_ws_result() -> RunResult {
    let plan = plan();
    let mut result = build(&plan, &output(&plan, 0..100, 0..200));
    let env = &mut result.environment;
    env.loadgate_version = "0.0.0-test".to_string();
    env.hostname = "runner".to_string();
    env.os = "linux".to_string();
    env.arch = "x86_64".to_string();
    env.cpu_count = 4;
    env.cpu_model = Some("Test CPU".to_string());
    result.source = None;
    result
}

/// `m` with its stream histogram left out (an added histogram and one recorded whole may
/// encode differently; their numbers are compared).
fn without_histogram(m: &MessagesResult) -> MessagesResult {
    let mut m = m.clone();
    if let Some(s) = &mut m.stream_duration {
        s.histogram.clear();
    }
    m
}

#[test]
fn grpc_and_websocket_targets_carry_their_messages_and_http_ones_none() {
    let result = grpc_and_ws_result();
    let [say, chat, page] = &result.targets[..] else {
        panic!("three targets");
    };
    let grpc = say.messages.as_ref().expect("a gRPC target has messages");
    assert_eq!(grpc.protocol, "grpc");
    assert_eq!(
        (grpc.exchanges, grpc.sent, grpc.received),
        (100, 100, 96 * 5)
    );
    assert_eq!((grpc.bytes_sent, grpc.bytes_received), (600, 96 * 60));
    assert_eq!(grpc.received_per_second, 480.0 / 4.0);
    let streams = grpc.stream_duration.as_ref().expect("server streams");
    assert_eq!(streams.count, 96, "calls that failed had no stream");
    assert_eq!(streams.min_us, 20_000);
    // 29.8 ms, as the histogram's 3 significant digits hold it.
    assert!(
        (29_800..29_816).contains(&streams.max_us),
        "{}",
        streams.max_us
    );
    assert_eq!(say.errors_by_kind.get("grpc_unavailable"), Some(&4));
    assert_eq!(say.responses, 100, "a failed call's response is counted");
    assert_eq!(
        say.requests, 100,
        "a call that failed by its status is one request"
    );
    assert_eq!(say.error_rate, 0.04);

    let ws = chat
        .messages
        .as_ref()
        .expect("a WebSocket target has messages");
    assert_eq!(ws.protocol, "ws");
    assert_eq!((ws.exchanges, ws.sent, ws.received), (200, 200, 198));
    assert_eq!(ws.received_per_second, 198.0 / 4.0);
    assert_eq!(ws.stream_duration, None, "replies are no streams");
    let upgrade = chat.phases_us.as_ref().unwrap().upgrade.as_ref().unwrap();
    assert_eq!(
        (upgrade.count, upgrade.min_us, upgrade.max_us),
        (2, 900, 1_300)
    );
    assert_eq!(chat.errors_by_kind.get("ws_closed"), Some(&2));
    assert_eq!(
        chat.errors_by_code.get("ws_closed INTERNAL_ERROR (1011)"),
        Some(&2)
    );

    assert_eq!(page.messages, None, "an HTTP target counts no messages");
    assert_eq!(result.total.messages, None, "messages are a target's");
    assert!(say.phases_us.as_ref().unwrap().upgrade.is_none());
}

#[test]
fn messages_are_written_and_read_back_and_results_without_them_still_read() {
    let result = grpc_and_ws_result();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    write(&result, &path).unwrap();
    let back = read(&path).unwrap();
    for (a, b) in back.targets.iter().zip(&result.targets) {
        assert_eq!(a.messages, b.messages, "{}", a.name);
    }
    // A result written before messages were measured.
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for t in json["targets"].as_array_mut().unwrap() {
        t.as_object_mut().unwrap().remove("messages");
        t["phases_us"].as_object_mut().unwrap().remove("upgrade");
    }
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let old = read(&path).unwrap();
    assert!(old.targets.iter().all(|t| t.messages.is_none()));
    assert!(old.targets[1].phases_us.as_ref().unwrap().upgrade.is_none());
}

#[test]
fn shards_merge_their_messages_exactly() {
    let plan = plan();
    let shard = |index: u32, calls, exchanges, host: &str| {
        let mut r = build(&plan, &output(&plan, calls, exchanges));
        r.shard = Some(ShardInfo { index, count: 2 });
        r.environment.hostname = host.to_string();
        r
    };
    let a = shard(1, 0..60, 0..150, "a");
    let b = shard(2, 60..100, 150..200, "b");
    let merged = merge::merge(&[a, b], merge::MergeOptions::default()).unwrap();
    // The same calls and exchanges measured by one run.
    let whole = build(&plan, &output(&plan, 0..100, 0..200));
    for (m, w) in merged.targets.iter().zip(&whole.targets) {
        assert_eq!(
            m.messages.as_ref().map(without_histogram),
            w.messages.as_ref().map(without_histogram),
            "{}",
            m.name
        );
        let upgrade = |t: &TargetResult| {
            t.phases_us
                .as_ref()
                .and_then(|p| p.upgrade.clone())
                .map(|mut p| {
                    p.histogram.clear();
                    p
                })
        };
        assert_eq!(upgrade(m), upgrade(w), "{}", m.name);
    }
    let streams = merged.targets[0].messages.as_ref().unwrap();
    assert_eq!(streams.stream_duration.as_ref().unwrap().count, 96);
    assert_eq!(merged.total.messages, None);
}

#[test]
fn a_result_with_messages_and_the_upgrade_phase_is_valid_against_the_published_schema() {
    let value = serde_json::to_value(grpc_and_ws_result()).unwrap();
    assert!(value["targets"][0]["messages"]["stream_duration"].is_object());
    assert!(value["targets"][1]["phases_us"]["upgrade"].is_object());
    let validator = jsonschema::validator_for(&schema()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
