//! What the commands do with inputs that are wrong or unusual, through the binary on the
//! committed result fixtures: an `--out` folder that cannot take the file (refused before any
//! load), an interrupted result (never a pass), a response check no response reached (not
//! evaluated), a result given twice to `merge`, a corrupt or wrong-typed field (refused by the
//! one reader, naming the field), a missing `--templates` folder, and an OS error printed once.

use crate::support;
use support::{loadgate, result_fixture as fixture};

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A copy of the fixture `name` with `edit` applied, written to `dir/file`.
fn edited(dir: &Path, name: &str, file: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    edit(&mut value);
    let path = dir.join(file);
    std::fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    path.display().to_string()
}

/// A spec whose one target is a loopback port where nothing listens: a run that started would
/// end with exit 3 (unreachable at start).
fn unreachable_spec(dir: &Path) -> String {
    let spec = dir.join("spec.yaml");
    std::fs::write(
        &spec,
        "version: 1\nname: demo\ntargets:\n  - name: a\n    url: http://127.0.0.1:9/\n\
         load:\n  connections: 1\n  requests: 1\n",
    )
    .unwrap();
    spec.display().to_string()
}

#[test]
fn run_refuses_an_out_folder_that_cannot_take_the_file_before_any_load() {
    let dir = tempfile::tempdir().unwrap();
    let spec = unreachable_spec(dir.path());
    let missing = dir.path().join("no-such-folder/result.json");
    let started = Instant::now();
    let out = loadgate(&["run", &spec, "--quiet", "--out", missing.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot write `{}`", missing.display()))
            && err.contains("no-such-folder` does not exist"),
        "{err}"
    );
    assert!(!err.contains("unreachable"), "no load was sent: {err}");
    assert!(started.elapsed() < Duration::from_secs(10));

    // A folder given as the file.
    let out = loadgate(&[
        "run",
        &spec,
        "--quiet",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("it is a folder"), "{err}");

    // A file where the folder should be.
    let file = dir.path().join("spec.yaml/result.json");
    let out = loadgate(&["run", &spec, "--quiet", "--out", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot create a file in"), "{err}");
    // No temporary file left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn ab_refuses_an_out_folder_that_cannot_take_the_file_before_any_load() {
    let dir = tempfile::tempdir().unwrap();
    // Each side's URL gives the base: loopback ports where nothing listens.
    let spec = dir.path().join("spec.yaml");
    std::fs::write(
        &spec,
        "version: 1\nname: demo\ntargets:\n  - name: a\n    path: /\n\
         load:\n  connections: 1\n  duration: 2s\n",
    )
    .unwrap();
    let spec = spec.display().to_string();
    let missing = dir.path().join("no-such-folder/ab.json");
    let out = loadgate(&[
        "ab",
        &spec,
        "--quiet",
        "--baseline-url",
        "http://127.0.0.1:9",
        "--candidate-url",
        "http://127.0.0.1:7",
        "--out",
        missing.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot write `{}`", missing.display()))
            && err.contains("does not exist"),
        "{err}"
    );
}

#[test]
fn an_interrupted_result_is_never_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let interrupted = edited(dir.path(), "current.json", "interrupted.json", |v| {
        v["interrupted"] = Value::Bool(true)
    });
    // Alone it would pass: every SLO met, no baseline.
    let out = loadgate(&[
        "report",
        &fixture("current.json").display().to_string(),
        "--format",
        "json",
    ]);
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["verdict"], "pass");

    let out = loadgate(&["report", &interrupted, "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "report succeeds whatever the verdict"
    );
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["verdict"], "interrupted");
    assert_eq!(verdict["exit_code"], 3);
    let summary = verdict["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("INTERRUPTED: the run was stopped before its end and is not judged"),
        "{summary}"
    );
    assert!(!summary.contains("PASSED"), "{summary}");

    for (format, marker) in [
        ("md", "### ⏹️ loadgate demo: INTERRUPTED:"),
        (
            "html",
            "<p class=\"verdict interrupted\" id=\"verdict\">✘ INTERRUPTED:",
        ),
        ("junit", "<error type=\"interrupted\""),
        ("text", "\nINTERRUPTED: "),
    ] {
        let out = loadgate(&["report", &interrupted, "--format", format]);
        let text = stdout(&out);
        assert!(text.contains(marker), "{format}: {text}");
        assert!(!text.contains("PASSED"), "{format}: {text}");
    }
    let out = loadgate(&["report", &interrupted, "--format", "junit"]);
    let xml = stdout(&out);
    assert!(
        xml.contains(r#"tests="3" failures="0" errors="1""#),
        "{xml}"
    );

    // `compare` ends as `run` did: exit 3, whatever the rules say (here, a regression between
    // runs long enough to judge).
    let baseline = fixture("long-baseline.json").display().to_string();
    let interrupted = edited(
        dir.path(),
        "long-current.json",
        "interrupted-long.json",
        |v| v["interrupted"] = Value::Bool(true),
    );
    let out = loadgate(&["compare", &baseline, &interrupted, "--format", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let verdict: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["verdict"], "interrupted");
    assert_eq!(verdict["regressed"], true, "the rules are still reported");
}

#[test]
fn a_response_check_no_response_reached_is_not_evaluated() {
    let mut result = loadgate::result::read(&fixture("current.json")).unwrap();
    let check = |name: &str, passed, failed| loadgate::result::CheckResult {
        check: name.to_string(),
        passed,
        failed,
    };
    result.targets[0].checks = vec![
        check("status == 200", 0, 0),
        check("body contains ok", 7, 0),
    ];
    result.targets[1].checks = vec![check("status == 201", 3, 4)];
    let summary = loadgate::report::console::summary(
        &result,
        loadgate::report::console::SummaryOptions::default(),
    );
    assert!(
        summary
            .contains("not evaluated  <script>alert(1)</script>: status == 200  no response read"),
        "{summary}"
    );
    assert!(!summary.contains("0/0"), "{summary}");
    assert!(summary.contains("pass  <script>alert(1)</script>: body contains ok  7/7 passed"));
    assert!(
        summary.contains("FAIL  a|b: status == 201  3/7 passed"),
        "{summary}"
    );
}

#[test]
fn merge_refuses_a_result_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    let c = fixture("current.json").display().to_string();
    let merged = dir.path().join("merged.json");
    let merged = merged.to_str().unwrap();
    let out = loadgate(&["merge", &c, &c, "--out", merged]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("result 2 is result 1 again"), "{err}");
    assert!(!Path::new(merged).exists());

    // A copy of it, given third.
    let copy = dir.path().join("copy.json");
    std::fs::copy(&c, &copy).unwrap();
    let other = edited(dir.path(), "current.json", "shard2.json", |v| {
        v["environment"]["hostname"] = "shard-2".into()
    });
    let out = loadgate(&["merge", &c, &other, copy.to_str().unwrap(), "--out", merged]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("result 3 is result 1 again"), "{err}");

    // Two shards of one run (other hosts) merge.
    let out = loadgate(&["merge", &c, &other, "--out", merged]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_corrupt_or_wrong_typed_field_is_refused_by_every_reader_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = fixture("baseline.json").display().to_string();
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 5] = [
        (
            "histogram.json",
            |v| v["targets"][1]["histogram"] = "AAAA".into(),
            "`targets[1].histogram` is not an HdrHistogram",
        ),
        (
            "base64.json",
            |v| v["total"]["histogram"] = "not base64!".into(),
            "`total.histogram` is not an HdrHistogram",
        ),
        (
            "zero.json",
            |v| v["duration_s"] = 0.0.into(),
            "`duration_s` is 0: a result measures a window of positive length",
        ),
        (
            "negative.json",
            |v| v["duration_s"] = (-4.0).into(),
            "`duration_s` is -4",
        ),
        (
            "type.json",
            |v| v["total"]["requests"] = "many".into(),
            "`total.requests`: invalid type: string \"many\", expected u64",
        ),
    ];
    for (file, edit, message) in cases {
        let bad = edited(dir.path(), "current.json", file, edit);
        let (bad, merged) = (bad.as_str(), dir.path().join("merged.json"));
        for args in [
            vec!["compare", baseline.as_str(), bad],
            vec!["report", bad],
            vec![
                "merge",
                baseline.as_str(),
                bad,
                "--out",
                merged.to_str().unwrap(),
            ],
        ] {
            let out = loadgate(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(&format!("`{bad}` is not a loadgate result: {message}")),
                "{args:?}: {err}"
            );
        }
    }
    // A run stopped before measuring measured no request in no time: it reads.
    let empty = edited(dir.path(), "current.json", "empty.json", |v| {
        v["duration_s"] = 0.0.into();
        v["total"]["requests"] = 0.into();
    });
    let out = loadgate(&["report", &empty, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn report_refuses_a_templates_folder_that_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let c = fixture("current.json").display().to_string();
    let missing = dir.path().join("no-such-templates");
    let out = loadgate(&["report", &c, "--templates", missing.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "cannot use the templates folder `{}`: no such folder",
            missing.display()
        )),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    // A folder without any template it could replace: a mistyped path.
    let out = loadgate(&["report", &c, "--templates", dir.path().to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds none of the templates"), "{err}");

    // With one: used.
    std::fs::write(dir.path().join("report.md"), "mine: {{ view.verdict }}\n").unwrap();
    let out = loadgate(&["report", &c, "--templates", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "mine: pass\n");
}

#[test]
fn an_os_error_is_printed_once() {
    let c = fixture("current.json").display().to_string();
    let out = loadgate(&["compare", "/nonexistent/b.json", &c]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        "loadgate: error: cannot read the result `/nonexistent/b.json`: No such file or \
         directory (os error 2)"
    );
}

#[test]
fn a_service_that_cannot_start_prints_its_os_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(
        &spec,
        "version: 1\nname: nostart\nservice:\n  command: [\"/nonexistent/loadgate-test-server\"]\n  ready_url: http://127.0.0.1:9/\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/\nload:\n  connections: 1\n  requests: 1\n",
    )
    .unwrap();
    let out = loadgate(&["run", spec.to_str().unwrap(), "--quiet"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot start service"), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

#[test]
fn a_service_never_ready_is_named_by_its_ready_url_as_written_not_its_interpolated_value() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(
        &spec,
        "version: 1\nname: notready\nservice:\n  command: [\"sleep\", \"5\"]\n  ready_url: \"http://${READY_HOST}:9/health\"\n  ready_timeout: 300ms\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/\nload:\n  connections: 1\n  requests: 1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["run", spec.to_str().unwrap(), "--quiet"])
        .env("READY_HOST", "127.0.0.1")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("`http://${READY_HOST}:9/health` did not answer"),
        "{err}"
    );
    assert!(!err.contains("127.0.0.1:9/health"), "{err}");
}

#[test]
fn an_unreachable_target_from_the_environment_is_named_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(
        &spec,
        "version: 1\nname: secret\ntargets:\n  - name: t\n    url: \"${TARGET_URL}/x\"\nload:\n  connections: 1\n  requests: 1\n",
    )
    .unwrap();
    // Port 9 (discard) has no listener on loopback here: refused at the check at start.
    let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["run", spec.to_str().unwrap(), "--quiet"])
        .env("TARGET_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("unreachable at start"), "{err}");
    assert!(err.contains("${TARGET_URL}/x"), "{err}");
    assert!(!err.contains("127.0.0.1") && !err.contains(":9"), "{err}");
}
