//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
//! `.ci/run`) loads it with no console error, runs its script, and takes a screenshot
//! (`target/tmp/loadgate-report.png`, to look at). The test fails, never skips, without
//! Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use loadgate::compare;
use loadgate::report::{self, Format, Input};
use loadgate::result;

const CHROMIUM: [&str; 2] = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
const TIMEOUT: Duration = Duration::from_secs(90);

fn chromium() -> PathBuf {
    CHROMIUM
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("Chromium is needed for this test: `apt-get install chromium` (.ci/run does)")
        })
}

/// Runs Chromium headless with a fresh profile, bounded by [`TIMEOUT`].
fn headless(profile: &Path, args: &[String]) -> Output {
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait for chromium").is_some() {
            return child.wait_with_output().expect("chromium output");
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let out = child.wait_with_output().expect("chromium output");
            panic!(
                "chromium did not finish in {TIMEOUT:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn report_html() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let baseline = result::read(&dir.join("baseline.json")).unwrap();
    let current = result::read(&dir.join("current.json")).unwrap();
    let comparison = compare::compare(&baseline, &current).unwrap();
    let history = [baseline.clone()];
    let input = Input {
        current: &current,
        baseline: Some(&baseline),
        comparison: Some(&comparison),
        history: &history,
        spec_path: None,
    };
    report::render(Format::Html, &input, None).unwrap()
}

/// Console messages and script errors in Chromium's log.
fn console_problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("ERR_"))
        .collect()
}

#[test]
fn the_html_report_loads_in_chromium_without_errors_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, report_html()).unwrap();
    let url = format!("file://{}", page.display());

    let out = headless(
        &dir.path().join("profile-dom"),
        &["--dump-dom".to_string(), url.clone()],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    // The inline script ran to its end.
    assert!(
        dom.contains(r#"data-rendered="ok""#),
        "script did not run: {log}"
    );
    assert_eq!(console_problems(&log), Vec::<&str>::new(), "{log}");
    // The charts are there, and the target named like a tag stayed text.
    assert_eq!(dom.matches("<svg class=\"chart\"").count(), 5);
    assert!(!dom.contains("<script>alert(1)</script>"));
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("loadgate-report.png");
    let _ = std::fs::remove_file(&shot);
    let out = headless(
        &dir.path().join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".to_string(),
            "--hide-scrollbars".to_string(),
            url,
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert_eq!(console_problems(&log), Vec::<&str>::new(), "{log}");
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        png.len() > 50_000,
        "a {} byte screenshot is too small to show the report",
        png.len()
    );
}
