//! The binary under a low open-files limit (set in the child with `setrlimit` before it
//! starts): refused with what the run needs, never a panic nor blame on the target; a soft
//! limit raised to the hard one; and a run that runs out of file descriptors midway (held by
//! what it inherited) counts `fd_limit`, backs off and is judged an invalid measurement.
#![cfg(unix)]

use crate::support;

use std::os::unix::process::CommandExt as _;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use support::write_spec;

/// A spec of `connections` connections to `url`, for `duration` (or `requests`).
fn spec(url: &str, load: &str) -> String {
    format!(
        "version: 1\nname: limits\ndefaults:\n  timeout: 2s\ntargets:\n  - name: t\n    url: {url}\nload:\n{load}"
    )
}

/// Runs `loadgate run SPEC --out OUT -q` with the open-files limits `(soft, hard)` and, open
/// on descriptors 3 and up, `inherited` copies of its standard input (as a parent that leaks
/// descriptors would leave them). At most 30 s.
fn run_limited(yaml: &str, (soft, hard): (u64, u64), inherited: i32) -> (Output, Option<String>) {
    let (dir, path) = write_spec(yaml);
    let out = dir.path().join("result.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_loadgate"));
    command
        .args(["run", "-q"])
        .arg(&path)
        .arg("--out")
        .arg(&out);
    // SAFETY: between fork and exec only async-signal-safe calls are made: setrlimit and dup2.
    unsafe {
        command.pre_exec(move || {
            for fd in 3..3 + inherited {
                nix::libc::dup2(0, fd);
            }
            setrlimit(Resource::RLIMIT_NOFILE, soft, hard).map_err(std::io::Error::from)
        });
    }
    let started = Instant::now();
    let output = command.output().expect("loadgate runs");
    assert!(started.elapsed() < Duration::from_secs(30));
    (output, std::fs::read_to_string(&out).ok())
}

#[test]
fn a_limit_too_low_for_the_run_is_refused_with_what_it_needs() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = spec(&server.url(), "  connections: 100\n  duration: 1s\n");
    // `loadgate run` checks the limit before it opens descriptors of its own (its signal
    // watcher, the `--out` file), so even a limit of 4 gets the sentence, not a panic.
    for limit in 4..=12 {
        let (output, result) = run_limited(&yaml, (limit, limit), 0);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "limit {limit}: {stderr}");
        assert!(!stderr.contains("panicked"), "limit {limit}: {stderr}");
        assert!(!stderr.contains("unreachable"), "limit {limit}: {stderr}");
        assert!(result.is_none(), "limit {limit}: no result");
        assert!(
            stderr.contains("out of file descriptors: this run needs about "),
            "limit {limit}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("the open-files limit (`ulimit -n`) is {limit}")),
            "limit {limit}: {stderr}"
        );
    }
}

#[test]
fn the_soft_limit_is_raised_to_the_hard_limit() {
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    assert!(
        hard >= 1024,
        "this test needs a hard limit of 1024 or more: {hard}"
    );
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = spec(&server.url(), "  connections: 100\n  requests: 1000\n");
    let (output, result) = run_limited(&yaml, (12, hard), 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let result: serde_json::Value = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!(result["total"]["responses"], 1000);
    assert_eq!(result["total"]["errors"], 0);
}

#[test]
fn running_out_midway_is_fd_limit_backed_off_and_an_invalid_measurement() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    // 100 connections need about 122 descriptors: 150 pass the check at start, but 60 are
    // held by what the process inherited, so some 30 connections cannot be opened.
    let yaml = spec(&server.url(), "  connections: 100\n  duration: 2s\n");
    let (output, result) = run_limited(&yaml, (150, 150), 60);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    let result: serde_json::Value = serde_json::from_str(&result.unwrap()).unwrap();
    let errors = &result["total"]["errors_by_kind"];
    let fd_limit = errors["fd_limit"].as_u64().unwrap_or(0);
    assert!(fd_limit > 0, "{errors}");
    assert!(errors.get("connect_error").is_none(), "{errors}");
    // Backed off: each of ~30 virtual users retries ~10 times within its first second
    // (1 ms, 2 ms, … up to 1 s, jittered), then about twice a second. Retried at once, it
    // would be some 100,000 a second.
    assert!(fd_limit < 3_000, "{fd_limit} failed connects in 2 s");
    assert!(result["total"]["responses"].as_u64().unwrap() > 1000);
    let problems = result["health"]["problems"].to_string();
    assert!(
        problems.contains("of the planned 100 connections were open"),
        "{problems}"
    );
    assert!(problems.contains("out of file descriptors"), "{problems}");
}
