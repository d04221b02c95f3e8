//! The gate measures what it claims, or refuses (issue 29), through the binary against real
//! processes on loopback:
//!
//! - the service: a `ready_url` that already answers before the service starts (another
//!   server holds the port: `loadgate serve` started here) is refused; a service that dies
//!   during the run ends it (exit 3, its exit status named, the partial result kept);
//! - files read whole: `/dev/zero` and a named pipe as `body_file`, `ca_file`, and as a result
//!   given to `report`, `compare` and `run --baseline` are refused at once, naming the path and
//!   the limit;
//! - files written whole or not at all: a report or a JSON line that does not fit on the disk
//!   (a file-size limit, `RLIMIT_FSIZE`, which makes the kernel cut the write short as a full
//!   disk does; and a 64 KiB tmpfs where this machine lets the test mount one) leaves the
//!   file as it was.

#![cfg(unix)]

use crate::support;
use support::{loadgate, result_fixture, start_serve, wait_within};

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The longest a refusal may take: it must not read or wait, so this is the time to start the
/// process on a busy machine, with room.
const REFUSED_WITHIN: Duration = Duration::from_secs(10);

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs the binary with `args`, killing it (and failing) after `limit`.
fn loadgate_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loadgate");
    // The pipes are small: read them while waiting, so that a chatty child does not block.
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = pipe.read_to_end(&mut text);
            text
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let status = wait_within(&mut child, limit, &format!("loadgate {}", args.join(" ")));
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

// ---- The service -------------------------------------------------------------------------

#[test]
fn service_refused_when_its_ready_url_already_answers() {
    // A stale server from an earlier step holds the port: the service would fail to bind,
    // and the run would measure the stale one.
    let (mut stale, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    let spec = write(
        dir.path(),
        "spec.yaml",
        &format!(
            "version: 1\nname: busy\nservice:\n  command: [\"${{LOADGATE}}\", \"serve\", \"--listen\", \
             \"{addr}\", \"--threads\", \"1\"]\n  ready_url: http://{addr}/health\n  ready_timeout: 5s\n\
             targets:\n  - name: t\n    url: http://{addr}/\nload:\n  connections: 1\n  requests: 20\n"
        ),
    );
    let out = loadgate_within(&["run", &spec, "--quiet"], Duration::from_secs(30));
    let _ = stale.kill();
    let _ = stale.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "something already answers at `http://{addr}/health`"
        )) && err.contains("stop it or change the port"),
        "{err}"
    );
}

#[test]
fn service_that_dies_during_the_run_ends_it_with_its_status_and_keeps_the_result() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    // The service serves for 1.5 s, then stops its server and exits with 7; the run is
    // planned for 20 s.
    let script = format!(
        "\"$0\" serve --listen 127.0.0.1:{port} --threads 1 & sleep 1.5; kill $!; wait; exit 7"
    );
    let spec = write(
        dir.path(),
        "spec.yaml",
        &format!(
            "version: 1\nname: dies\nservice:\n  command: [\"sh\", \"-c\", {script:?}, \"${{LOADGATE}}\"]\n  \
             ready_url: http://127.0.0.1:{port}/health\n  ready_timeout: 10s\n\
             targets:\n  - name: t\n    url: http://127.0.0.1:{port}/?delay=5ms\n\
             load:\n  connections: 2\n  duration: 20s\n"
        ),
    );
    let result = dir.path().join("result.json");
    let started = Instant::now();
    let out = loadgate_within(
        &["run", &spec, "--quiet", "--out", result.to_str().unwrap()],
        Duration::from_secs(40),
    );
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("exited with exit status: 7 during the run"),
        "{err}"
    );
    assert!(
        took < Duration::from_secs(12),
        "the run went on for {took:?} after its service died"
    );
    let kept: loadgate::result::RunResult =
        serde_json::from_str(&std::fs::read_to_string(&result).expect("the partial result"))
            .unwrap();
    assert!(
        kept.total.requests > 0,
        "the partial result holds the requests sent"
    );
}

#[test]
fn service_of_an_ab_side_that_dies_during_the_run_ends_it_and_keeps_the_document() {
    let (base, cand) = (free_port(), free_port());
    let dir = tempfile::tempdir().unwrap();
    // Each side's service serves for `LIFE` seconds, then exits with 7: the candidate's 1.5 s
    // into a run planned for 20 s.
    let script = "\"$0\" serve --listen 127.0.0.1:$1 --threads 1 & sleep $2; kill $!; wait; exit 7";
    let spec = write(
        dir.path(),
        "spec.yaml",
        &format!(
            "version: 1\nname: abdies\nservice:\n  command: [\"sh\", \"-c\", {script:?}, \"${{LOADGATE}}\", \
             \"${{PORT}}\", \"${{LIFE}}\"]\n  ready_url: http://127.0.0.1:${{PORT}}/health\n  ready_timeout: 10s\n\
             targets:\n  - name: t\n    url: http://127.0.0.1:${{PORT}}/?delay=5ms\n\
             load:\n  connections: 2\n  duration: 20s\n\
             regression:\n  latency: [\"p(50) +10% floor 1ms\"]\n"
        ),
    );
    let doc = dir.path().join("ab.json");
    let (base, cand) = (format!("PORT={base}"), format!("PORT={cand}"));
    let started = Instant::now();
    let out = loadgate_within(
        &[
            "ab",
            &spec,
            "--quiet",
            "--baseline",
            &base,
            "--baseline",
            "LIFE=60",
            "--candidate",
            &cand,
            "--candidate",
            "LIFE=1.5",
            "--out",
            doc.to_str().unwrap(),
        ],
        Duration::from_secs(40),
    );
    let took = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("exited with exit status: 7 during the run"),
        "{err}"
    );
    assert!(
        took < Duration::from_secs(15),
        "the run went on for {took:?}"
    );
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&doc).expect("the document so far")).unwrap();
    assert_eq!(kept["candidate"]["interrupted"], true);
}

// ---- Files read whole --------------------------------------------------------------------

/// A named pipe in `dir`, with no writer: opening it for reading would wait for one.
fn fifo(dir: &Path) -> String {
    let path = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(made.success());
    path.display().to_string()
}

/// Asserts the command was refused as invalid input (exit 2), naming `path` and `limit`.
fn assert_refused(out: &Output, path: &str, limit: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(path), "the message names `{path}`: {err}");
    assert!(
        err.contains(limit),
        "the message names the limit {limit}: {err}"
    );
}

#[test]
fn files_body_file_that_is_endless_or_a_pipe_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["/dev/zero".to_string(), fifo(dir.path())] {
        for (what, yaml) in [
            (
                "target",
                format!(
                    "version: 1\nname: b\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/\n    \
                     method: POST\n    body_file: {file}\nload:\n  connections: 1\n  requests: 1\n"
                ),
            ),
            (
                "flow step",
                format!(
                    "version: 1\nname: b\nflows:\n  - name: f\n    steps:\n      - name: s\n        \
                     url: http://127.0.0.1:9/\n        method: POST\n        body_file: {file}\n\
                     load:\n  connections: 1\n  requests: 1\n"
                ),
            ),
        ] {
            let spec = write(dir.path(), "spec.yaml", &yaml);
            let out = loadgate_within(&["validate", &spec], REFUSED_WITHIN);
            assert_refused(&out, &file, "64 MiB");
            assert!(
                stderr(&out).contains("body_file"),
                "{what}: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn files_ca_file_that_is_endless_or_a_pipe_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["/dev/zero".to_string(), fifo(dir.path())] {
        let spec = write(
            dir.path(),
            "spec.yaml",
            &format!(
                "version: 1\nname: c\ndefaults:\n  tls:\n    ca_file: {file}\ntargets:\n  - name: t\n    \
                 url: https://127.0.0.1:9/\nload:\n  connections: 1\n  requests: 1\n"
            ),
        );
        let out = loadgate_within(&["validate", &spec], REFUSED_WITHIN);
        assert_refused(&out, &file, "4 MiB");
        assert!(stderr(&out).contains("ca_file"), "{}", stderr(&out));
    }
}

#[test]
fn files_result_that_is_endless_or_a_pipe_is_refused_by_report_compare_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let good = result_fixture("current.json").display().to_string();
    // A run whose baseline is refused must not start: its target does not exist.
    let spec = write(
        dir.path(),
        "spec.yaml",
        "version: 1\nname: demo\ntargets:\n  - name: a\n    url: http://127.0.0.1:9/\n\
         load:\n  connections: 1\n  requests: 1\n",
    );
    for file in ["/dev/zero".to_string(), fifo(dir.path())] {
        for args in [
            vec!["report", &file],
            vec!["report", &good, "--baseline", &file],
            vec!["compare", &file, &good],
            vec!["compare", &good, &file],
            vec!["run", &spec, "--quiet", "--baseline", &file],
        ] {
            let out = loadgate_within(&args, REFUSED_WITHIN);
            assert_refused(&out, &file, "256 MiB");
        }
    }
}

// ---- Files written whole or not at all ---------------------------------------------------

/// The binary with `args`, its files limited to `max_bytes` (`RLIMIT_FSIZE`): a write past
/// that is cut short and then fails (EFBIG), as on a full disk. SIGXFSZ, which would kill the
/// process instead, is ignored.
fn loadgate_with_file_limit(args: &[&str], max_bytes: u64) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_loadgate"));
    command.args(args);
    // SAFETY: setrlimit and sigaction (through nix) are async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            use nix::sys::resource::{Resource, setrlimit};
            use nix::sys::signal::{SigHandler, Signal, signal};
            signal(Signal::SIGXFSZ, SigHandler::SigIgn).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_FSIZE, max_bytes, max_bytes).map_err(std::io::Error::from)
        });
    }
    command.output().expect("run loadgate")
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `report --output` and `compare --output` into `dir`, where a report does not fit: each
/// fails (exit 3), the report written before is intact, and no other file is left.
fn assert_reports_written_whole_or_not_at_all(dir: &Path, run: &dyn Fn(&[&str]) -> Output) {
    let good = result_fixture("current.json").display().to_string();
    let baseline = result_fixture("baseline.json").display().to_string();
    let report = dir.join("report.html");
    std::fs::write(&report, "the previous report\n").unwrap();
    let before = names(dir);
    let shown = report.display().to_string();
    for args in [
        vec!["report", &good, "--format", "html", "--output", &shown],
        vec![
            "compare", &baseline, &good, "--format", "html", "--output", &shown,
        ],
    ] {
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&format!("cannot write the report to `{shown}`")),
            "{err}"
        );
        let now = std::fs::read(&report).unwrap();
        assert!(
            now == b"the previous report\n",
            "{args:?} left a cut report of {} bytes",
            now.len()
        );
        assert_eq!(names(dir), before, "{args:?} left a file behind");
    }
}

/// The output of a run of `requests` requests to `loadgate serve` at `addr`, appended as a JSON
/// line to `lines`, by `run`.
fn append_line(dir: &Path, addr: &str, lines: &Path, run: &dyn Fn(&[&str]) -> Output) -> Output {
    let spec = write(
        dir,
        "spec.yaml",
        &format!(
            "version: 1\nname: lines\ntargets:\n  - name: t\n    url: http://{addr}/\n\
             load:\n  connections: 1\n  requests: 5\n"
        ),
    );
    run(&[
        "run",
        &spec,
        "--quiet",
        "--format",
        "jsonl",
        "--output",
        lines.to_str().unwrap(),
    ])
}

#[test]
fn written_whole_a_report_past_a_file_size_limit_leaves_the_previous_one() {
    let dir = tempfile::tempdir().unwrap();
    // An HTML report is tens of KiB; 8 KiB cuts it in its middle.
    assert_reports_written_whole_or_not_at_all(dir.path(), &|args| {
        loadgate_with_file_limit(args, 8 * 1024)
    });
}

#[test]
fn written_whole_a_json_line_past_a_file_size_limit_leaves_the_file_as_it_was() {
    let (mut server, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("lines.jsonl");
    let previous = "{\"name\":\"earlier\"}\n";
    std::fs::write(&lines, previous).unwrap();
    // Room for 100 more bytes: a line (about 1 KiB) is cut short.
    let limit = previous.len() as u64 + 100;
    let out = append_line(dir.path(), &addr.to_string(), &lines, &|args| {
        loadgate_with_file_limit(args, limit)
    });
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("cannot write `{}`", lines.display())),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&lines).unwrap(), previous);
    // The next run's line starts on a line of its own.
    let out = append_line(dir.path(), &addr.to_string(), &lines, &|args| {
        loadgate(args)
    });
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&lines).unwrap();
    let all: Vec<&str> = text.lines().collect();
    assert_eq!(all.len(), 2, "{text}");
    for line in all {
        serde_json::from_str::<serde_json::Value>(line).expect("each line is JSON");
    }
}

/// A 64 KiB tmpfs, mounted for a test and unmounted when dropped; `None` where this process may
/// not mount one (not root, or a container that forbids it).
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("cannot mount a tmpfs here: the file-size limit tests stand for a full disk");
            return None;
        }
        Some(SmallDisk { dir })
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// Fills the disk but for `room` bytes (rounded to tmpfs pages), with a file named `fill`.
    fn fill_but(&self, room: u64) {
        let fill = self.dir.path().join("fill");
        let _ = std::fs::remove_file(&fill);
        // 64 KiB in pages of 4 KiB, less the pages left as room.
        let bytes = 64 * 1024 - room.div_ceil(4096) * 4096;
        std::fs::write(&fill, vec![b'x'; bytes as usize]).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn written_whole_a_report_on_a_full_tmpfs_leaves_the_previous_one() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    // The previous report takes a page; 8 KiB more are free.
    disk.fill_but(12 * 1024);
    assert_reports_written_whole_or_not_at_all(&disk.path(), &|args| loadgate(args));
}

#[test]
fn written_whole_a_json_line_on_a_full_tmpfs_leaves_the_file_as_it_was() {
    let Some(disk) = SmallDisk::mount() else {
        return;
    };
    let (mut server, addr) = start_serve("1");
    let lines = disk.path().join("lines.jsonl");
    // A page but 100 bytes: the next line does not fit in it, and no other page is free.
    let previous = format!("{}\n", "x".repeat(4096 - 101));
    std::fs::write(&lines, &previous).unwrap();
    disk.fill_but(4096);
    let spec_dir = tempfile::tempdir().unwrap();
    let out = append_line(spec_dir.path(), &addr.to_string(), &lines, &|args| {
        loadgate(args)
    });
    let _ = server.kill();
    let _ = server.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let now = std::fs::read_to_string(&lines).unwrap();
    assert!(
        now == previous,
        "the file holds {} bytes, not {}",
        now.len(),
        previous.len()
    );
}

#[test]
fn written_whole_a_report_to_a_named_pipe_goes_through_it_and_leaves_the_pipe() {
    // `--output /dev/stdout` or a pipe: renaming a temporary file onto it would replace it.
    let dir = tempfile::tempdir().unwrap();
    let pipe = fifo(dir.path());
    let reader = {
        let pipe = pipe.clone();
        std::thread::spawn(move || std::fs::read_to_string(pipe).unwrap())
    };
    let good = result_fixture("current.json").display().to_string();
    let out = loadgate_within(
        &["report", &good, "--format", "md", "--output", &pipe],
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Checked first: a replaced pipe never sees a writer, and its reader waits for ever.
    use std::os::unix::fs::FileTypeExt as _;
    let kind = std::fs::symlink_metadata(&pipe).unwrap().file_type();
    assert!(kind.is_fifo(), "the pipe was replaced by a file");
    let read = reader.join().unwrap();
    assert!(read.contains("loadgate demo"), "{read}");
}
