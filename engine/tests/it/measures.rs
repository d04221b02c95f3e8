//! The measures beside latency, against the built-in target on loopback: the request's write
//! phase, slow responses, upstream-time headers, streamed bodies, pre-connect, a warmup
//! counted in requests, and the per-second histograms of the run and of each target.

use crate::support;

use loadgate::result::{PhaseSummary, RunResult, TimeSample, decode_histogram};
use support::run_yaml;

// Runs take turns (across the whole test binary): concurrent runs on a 2-core machine would
// disturb each other's latency.
use support::turn;

/// A closed-model spec of one target at `path` on `server`, with `defaults` and `load` lines
/// (each indented, may be empty).
fn spec(server: &loadgate::serve::ServerHandle, path: &str, defaults: &str, load: &str) -> String {
    format!(
        "version: 1\nname: measures\ndefaults:\n  base_url: {}\n  timeout: 5s\n{defaults}\
         targets:\n  - name: t\n    path: {path}\nload:\n{load}",
        server.url()
    )
}

/// Equal within the histograms' 3 significant digits.
fn near(value: u64, expected: u64) -> bool {
    value.abs_diff(expected) <= expected / 1000 + 1
}

fn phase<'a>(result: &'a RunResult, name: &str) -> &'a PhaseSummary {
    let phases = result.targets[0].phases_us.as_ref().expect("phases");
    match name {
        "write" => phases.write.as_ref(),
        "ttfb" => phases.ttfb.as_ref(),
        _ => None,
    }
    .unwrap_or_else(|| panic!("a `{name}` phase in {phases:?}"))
}

#[test]
fn the_write_phase_is_measured_and_ttfb_counts_from_its_end() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let result = run_yaml(&spec(
        &server,
        "/?delay=20ms",
        "",
        "  connections: 2\n  requests: 40\n",
    ));
    assert_eq!(result.targets[0].responses, 40);
    let (write, ttfb) = (phase(&result, "write"), phase(&result, "ttfb"));
    assert_eq!(write.count, 40);
    // The server waits 20 ms after the request arrived: that is response wait, not write.
    assert!(ttfb.p50_us >= 20_000, "{ttfb:?}");
    assert!(write.max_us < 20_000, "{write:?}");
    assert!(
        result.targets[0].upstream_us.is_none(),
        "no upstream header"
    );
}

#[test]
fn responses_at_least_as_slow_as_the_threshold_are_counted_and_merged_exactly() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = format!(
        "version: 1\nname: slow\ndefaults:\n  base_url: {}\n  slow: 50ms\ntargets:\n  \
         - name: fast\n    path: /\n  - name: slow\n    path: /?delay=60ms\n\
         load:\n  connections: 4\n  requests: 60\n",
        server.url()
    );
    let mut runs = [run_yaml(&yaml), run_yaml(&yaml)];
    for result in &runs {
        let (fast, slow) = (&result.targets[0], &result.targets[1]);
        assert!(slow.responses > 0 && fast.responses > 0);
        assert_eq!(slow.slow_threshold_us, Some(50_000));
        assert_eq!(slow.slow_responses, Some(slow.responses));
        assert_eq!(fast.slow_responses, Some(0));
        assert_eq!(result.total.slow_responses, Some(slow.responses));
        assert_eq!(result.total.slow_threshold_us, Some(50_000));
    }
    as_one_run(&mut runs);
    let merged = loadgate::result::merge::merge(&runs, Default::default()).unwrap();
    assert_eq!(
        merged.targets[1].slow_responses,
        Some(runs[0].targets[1].responses + runs[1].targets[1].responses)
    );
    assert_eq!(merged.total.slow_threshold_us, Some(50_000));
    // Without a threshold nothing is counted, and the fields are absent.
    let plain = run_yaml(&yaml.replace("  slow: 50ms\n", ""));
    assert_eq!(plain.targets[1].slow_responses, None);
    assert_eq!(plain.total.slow_threshold_us, None);
}

#[test]
fn upstream_time_headers_are_histograms_per_name_over_h1_and_h2() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let many: Vec<String> = (0..10).map(|i| format!("m{i};dur=1")).collect();
    let yaml = |protocol: &str| {
        format!(
            "version: 1\nname: upstream\ndefaults:\n  base_url: {}\n  protocol: {protocol}\n\
             targets:\n  - name: timed\n    path: \"/?delay=20ms&server_timing=1\
             &header=X-Envoy-Upstream-Service-Time:7&header=Server-Timing:db;dur=12.5\"\n  \
             - name: many\n    path: \"/?header=Server-Timing:{}\"\n\
             load:\n  connections: 2\n  requests: 40\n",
            server.url(),
            many.join(",")
        )
    };
    let mut runs = [run_yaml(&yaml("h1")), run_yaml(&yaml("h2"))];
    for result in &runs {
        let (timed, many) = (&result.targets[0], &result.targets[1]);
        assert!(timed.responses > 0 && many.responses > 0);
        let upstream = timed.upstream_us.as_ref().expect("upstream times");
        let envoy = upstream.envoy_upstream_service_time.as_ref().unwrap();
        assert_eq!(envoy.count, timed.responses);
        assert!(
            near(envoy.min_us, 7_000) && near(envoy.max_us, 7_000),
            "{envoy:?}"
        );
        let names: Vec<&str> = upstream
            .server_timing
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(names, ["db", "app"]);
        let (db, app) = (
            &upstream.server_timing[0].dur,
            &upstream.server_timing[1].dur,
        );
        assert_eq!(db.count, timed.responses);
        assert!(near(db.min_us, 12_500) && near(db.max_us, 12_500), "{db:?}");
        // The server's own time: at least its 20 ms delay, at most what the client waited.
        let latency = timed.latency_us.as_ref().unwrap();
        assert!(
            app.min_us >= 20_000 && app.max_us <= latency.max_us,
            "{app:?}"
        );
        assert_eq!(upstream.server_timing_dropped, 0);
        let upstream = many.upstream_us.as_ref().unwrap();
        assert_eq!(upstream.server_timing.len(), 8);
        assert_eq!(upstream.server_timing_dropped, 2 * many.responses);
        // All targets together: db, app and m0..m5 fill the 8 names; m6..m9 are dropped.
        let total = result.total.upstream_us.as_ref().unwrap();
        assert_eq!(total.server_timing.len(), 8);
        assert_eq!(total.server_timing_dropped, 4 * many.responses);
    }
    // Merged as two shards of one run (their spec files differ in the protocol only).
    runs[1].spec.hash = runs[0].spec.hash.clone();
    as_one_run(&mut runs);
    let merged = loadgate::result::merge::merge(&runs, Default::default()).unwrap();
    let db = &merged.targets[0]
        .upstream_us
        .as_ref()
        .unwrap()
        .server_timing[0];
    assert_eq!(
        db.dur.count,
        runs[0].targets[0].responses + runs[1].targets[0].responses
    );
    let dropped = |r: &RunResult| {
        r.targets[1]
            .upstream_us
            .as_ref()
            .unwrap()
            .server_timing_dropped
    };
    assert_eq!(
        merged.targets[1]
            .upstream_us
            .as_ref()
            .unwrap()
            .server_timing_dropped,
        dropped(&runs[0]) + dropped(&runs[1])
    );
}

#[test]
fn streamed_bodies_time_their_first_byte_and_server_sent_events_over_h1_and_h2() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = |protocol: &str| {
        format!(
            "version: 1\nname: sse\ndefaults:\n  base_url: {}\n  protocol: {protocol}\n\
             targets:\n  - name: sse\n    path: /?events=5&interval=20ms\n  \
             - name: chunked\n    path: \"/?events=2&interval=1ms&header=Content-Type:text/plain\"\n  \
             - name: plain\n    path: /\nload:\n  connections: 2\n  requests: 24\n",
            server.url()
        )
    };
    let mut runs = Vec::new();
    for protocol in ["h1", "h2"] {
        let result = run_yaml(&yaml(protocol));
        let (sse, chunked, plain) = (&result.targets[0], &result.targets[1], &result.targets[2]);
        assert!(sse.responses > 0 && chunked.responses > 0, "{protocol}");
        let streaming = sse.streaming.as_ref().expect("a streamed body");
        assert_eq!(
            (
                streaming.responses,
                streaming.sse_responses,
                streaming.events
            ),
            (sse.responses, sse.responses, 5 * sse.responses),
            "{protocol}"
        );
        // The head comes at once, the first event after 20 ms: the body's first byte is
        // that event, and the latency (time to last byte) covers the five.
        let first = streaming.ttfb.as_ref().unwrap();
        assert_eq!(first.count, sse.responses);
        assert!(first.min_us >= 20_000, "{protocol}: {first:?}");
        let head = sse.phases_us.as_ref().unwrap().ttfb.as_ref().unwrap();
        assert!(head.p50_us < 20_000, "{protocol}: {head:?}");
        assert!(sse.latency_us.as_ref().unwrap().min_us >= 100_000);
        let gaps = streaming.event_gap.as_ref().unwrap();
        assert_eq!(gaps.count, 4 * sse.responses);
        assert!(
            (15_000..=40_000).contains(&gaps.p50_us),
            "{protocol}: {gaps:?}"
        );
        let streaming = chunked.streaming.as_ref().expect("a chunked body");
        assert_eq!(
            (
                streaming.responses,
                streaming.sse_responses,
                streaming.events
            ),
            (chunked.responses, 0, 0),
            "{protocol}: not an event stream"
        );
        assert!(
            plain.streaming.is_none(),
            "{protocol}: a body of known length"
        );
        let total = result.total.streaming.as_ref().unwrap();
        assert_eq!(total.responses, sse.responses + chunked.responses);
        runs.push(result);
    }
    runs[1].spec.hash = runs[0].spec.hash.clone();
    as_one_run(&mut runs);
    let merged = loadgate::result::merge::merge(&runs, Default::default()).unwrap();
    let streaming = |r: &RunResult| r.targets[0].streaming.clone().unwrap();
    let (a, b, m) = (streaming(&runs[0]), streaming(&runs[1]), streaming(&merged));
    assert_eq!(m.events, a.events + b.events);
    let count = |s: &loadgate::result::StreamingResult| s.event_gap.as_ref().unwrap().count;
    assert_eq!(count(&m), count(&a) + count(&b));
}

#[test]
fn pre_connect_keeps_connects_out_of_a_count_runs_latency() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let load = "  connections: 50\n  requests: 300\n";
    let opened = |result: &RunResult| {
        let p = result.total.phases_us.as_ref().unwrap();
        (p.connections_opened, p.pre_connected)
    };
    // By default the 50 connections are open before the clock starts: every connect sample
    // is marked, so no measured request's latency included one.
    let result = run_yaml(&spec(&server, "/", "", load));
    assert_eq!(result.total.responses, 300);
    let (all, pre) = opened(&result);
    assert!(all > 0 && all <= 50, "{all}");
    assert_eq!(pre, all, "no measured latency included a connect");
    // Without it, the first request of each connection connects inside its latency.
    let result = run_yaml(&spec(
        &server,
        "/",
        "",
        &format!("{load}  pre_connect: false\n"),
    ));
    let (all, pre) = opened(&result);
    assert!(all > 0 && pre == 0, "{all} {pre}");
}

#[test]
fn a_warmup_of_n_requests_is_sent_before_the_clock_and_not_counted() {
    let _turn = turn();
    for (model, load) in [
        (
            "closed",
            "  connections: 4\n  requests: 200\n  warmup: 100\n",
        ),
        (
            "open",
            "  model: open\n  rate: 400/s\n  requests: 60\n  warmup: 30\n",
        ),
    ] {
        let server = support::CountingServer::start(support::Framing::ContentLength);
        let yaml = format!(
            "version: 1\nname: warm\ntargets:\n  - name: t\n    url: http://{}/\nload:\n{load}",
            server.addr()
        );
        let result = run_yaml(&yaml);
        let (measured, warmup) = if model == "closed" {
            (200, 100)
        } else {
            (60, 30)
        };
        assert_eq!(result.total.requests, measured, "{model}");
        assert_eq!(server.requests(), measured + warmup, "{model}");
        assert_eq!(result.load.warmup_s, 0.0, "{model}: no warmup stage");
        if model == "closed" {
            // The warmup ran on the run's own 4 connections, opened before the clock (and
            // the check at start opened one).
            assert_eq!(server.connections(), 4 + 1);
            // A connection whose user got no warmup request reports its setup with its first
            // measured response, marked: no measured latency included a connect.
            let phases = result.total.phases_us.as_ref().unwrap();
            assert_eq!(phases.connections_opened, phases.pre_connected);
        }
    }
}

#[test]
fn pre_connect_keeps_tls_handshakes_out_of_the_latency_percentiles() {
    let _turn = turn();
    let pki = support::TestPki::generate();
    let config = Some(pki.serve_config("server", false));
    let server = loadgate::serve::spawn_with("127.0.0.1:0".parse().unwrap(), 1, config).unwrap();
    let yaml = |pre_connect: bool, requests: u32| {
        format!(
            "version: 1\nname: tls\ndefaults:\n  timeout: 3s\n  protocol: h1\ntargets:\n  \
             - name: t\n    url: {}/\n    tls:\n      ca_file: {}\n\
             load:\n  connections: 8\n  requests: {requests}\n  pre_connect: {pre_connect}\n",
            server.url(),
            pki.path("ca.pem").display()
        )
    };
    let p90_and_handshake = |result: &RunResult| {
        let handshake = result
            .total
            .phases_us
            .as_ref()
            .unwrap()
            .tls
            .as_ref()
            .unwrap()
            .min_us;
        (result.total.latency_us.as_ref().unwrap().p90_us, handshake)
    };
    // Without pre-connect, 8 of the 16 requests open their connection: the upper half of
    // the latencies (p90 among them) each holds a whole TLS handshake.
    let (p90, handshake) = p90_and_handshake(&run_yaml(&yaml(false, 16)));
    assert!(
        p90 >= handshake,
        "{p90} µs < the fastest handshake, {handshake} µs"
    );
    // With it, every request finds its connection open: every connection was opened before
    // the clock started (exactly), and so latencies are below a handshake's time (the median:
    // a busy machine may delay a few requests past a handshake's time, not half of them).
    let result = run_yaml(&yaml(true, 48));
    let phases = result.total.phases_us.as_ref().unwrap();
    assert_eq!(
        phases.connections_opened, phases.pre_connected,
        "{phases:?}"
    );
    assert_eq!(phases.connections_opened, 8, "{phases:?}");
    let handshake = p90_and_handshake(&result).1;
    let p50 = result.total.latency_us.as_ref().unwrap().p50_us;
    assert!(
        p50 < handshake,
        "{p50} µs >= the fastest handshake, {handshake} µs"
    );
}

/// The value and count of every bucket a histogram recorded, in order.
fn buckets(h: &hdrhistogram::Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// A second's histogram, decoded: it holds the second's responses and gives its percentiles.
fn second_histogram(s: &TimeSample) -> hdrhistogram::Histogram<u64> {
    let text = s
        .histogram
        .as_deref()
        .expect("a second with responses has a histogram");
    let h = decode_histogram(text).expect("the histogram decodes");
    assert_eq!(h.len(), s.responses, "second {}", s.second);
    assert_eq!(h.value_at_quantile(0.99), s.p99_us, "second {}", s.second);
    assert_eq!(h.value_at_quantile(0.5), s.p50_us, "second {}", s.second);
    assert_eq!(h.max(), s.max_us, "second {}", s.second);
    h
}

#[test]
fn each_second_has_its_histogram_for_the_run_and_for_each_target() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = format!(
        "version: 1\nname: seconds\ndefaults:\n  base_url: {}\ntargets:\n  \
         - name: fast\n    path: /\n  - name: slow\n    path: /?delay=3ms\n\
         load:\n  model: open\n  rate: 300/s\n  max_in_flight: 20\n  duration: 3s\n  \
         threads: 2\n",
        server.url()
    );
    let result = run_yaml(&yaml);
    let seconds: Vec<u32> = result.time_series.iter().map(|s| s.second).collect();
    assert!(seconds.len() >= 3, "{seconds:?}");
    for target in &result.targets {
        // One sample per second of the run, the same seconds.
        let own: Vec<u32> = target.time_series.iter().map(|s| s.second).collect();
        assert_eq!(own, seconds, "{}", target.name);
        // Every measured response ended in one of them.
        let sum: u64 = target.time_series.iter().map(|s| s.responses).sum();
        assert_eq!(sum, target.responses, "{}", target.name);
    }
    assert!(
        result.total.time_series.is_empty(),
        "the total's seconds are the run's"
    );
    for (i, second) in result.time_series.iter().enumerate() {
        let of_targets = || result.targets.iter().map(move |t| &t.time_series[i]);
        let requests: u64 = of_targets().map(|s| s.requests.unwrap()).sum();
        let responses: u64 = of_targets().map(|s| s.responses).sum();
        let errors: u64 = of_targets().map(|s| s.errors).sum();
        assert_eq!(Some(requests), second.requests, "second {i}");
        assert_eq!(
            (responses, errors),
            (second.responses, second.errors),
            "second {i}"
        );
        if second.responses == 0 {
            assert!(second.histogram.is_none(), "second {i}");
            continue;
        }
        // The run's second is the targets' seconds added, bucket by bucket.
        let total = second_histogram(second);
        let mut added = hdrhistogram::Histogram::<u64>::new_from(&total);
        for s in of_targets().filter(|s| s.responses > 0) {
            added.add(second_histogram(s)).unwrap();
        }
        assert_eq!(buckets(&total), buckets(&added), "second {i}");
    }
    // The whole seconds kept their rate, and the slow target's are slower.
    let middle = (
        &result.targets[0].time_series[1],
        &result.targets[1].time_series[1],
    );
    assert!(middle.0.responses + middle.1.responses >= 200, "{middle:?}");
    assert!(
        middle.1.p50_us >= 3_000 && middle.0.p50_us < 3_000,
        "{middle:?}"
    );
}

/// The runs ran one after the other; `merge` takes only shards that started within a second
/// of each other, so they are given the first one's start (their seconds then align by index).
fn as_one_run(runs: &mut [RunResult]) {
    let start = runs[0].started_at.clone();
    for run in runs.iter_mut() {
        run.started_at = start.clone();
    }
}
