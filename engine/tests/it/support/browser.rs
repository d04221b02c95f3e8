//! Headless Chromium (Debian's `chromium`, installed by `.ci/run`) for the tests that look at
//! a page as a browser lays it out (the HTML report, the dashboard). A test fails, never
//! skips, without Chromium.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Runs Chromium headless with a fresh profile, bounded by [`TIMEOUT`]. Its output is read
/// while it runs: a page's DOM can be larger than a pipe holds.
pub fn headless(profile: &Path, args: &[String]) -> Output {
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
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish in {TIMEOUT:?}: {}",
                String::from_utf8_lossy(&stderr.join().unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    }
}

/// Console messages and script errors in Chromium's log.
pub fn console_problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("ERR_"))
        .collect()
}

/// The page that shows `page` (a file in `dir`) in a frame `width` px wide and `height` px
/// high, for the widths headless Chromium's window cannot have (it is at least 500 px wide; a
/// frame has the width it is given). When the frame has loaded, the text of its
/// `<pre id="probe-out">` (written by a probe script the test added to the page) is copied
/// into the outer page's, which Chromium's `--dump-dom` prints.
fn frame_page(dir: &Path, page: &Path, width: u32, height: u32) -> PathBuf {
    let outer = dir.join(format!("frame-{width}.html"));
    std::fs::write(
        &outer,
        format!(
            r#"<!doctype html><html><body style="margin:0"><iframe src="{}" style="border:0;width:{width}px;height:{height}px" onload="var p=document.createElement('pre');p.id='probe-out';var o=this.contentDocument.getElementById('probe-out');p.textContent=o?o.textContent:'';document.body.appendChild(p)"></iframe></body></html>"#,
            page.file_name().expect("a file").to_string_lossy()
        ),
    )
    .expect("write the frame page");
    outer
}

/// Loads `page` in a frame `width` px wide ([`frame_page`]; file pages are one origin with
/// `--allow-file-access-from-files`) and returns what its probe wrote (HTML entities
/// decoded), after checking that Chromium logged no console message or script error.
pub fn frame_probe(dir: &Path, page: &Path, width: u32) -> String {
    let outer = frame_page(dir, page, width, 30_000);
    let out = headless(
        &dir.join(format!("profile-probe-{width}")),
        &[
            format!("--window-size={},1000", width + 40),
            "--allow-file-access-from-files".to_string(),
            "--dump-dom".to_string(),
            format!("file://{}", outer.display()),
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert_eq!(console_problems(&log), Vec::<&str>::new(), "{log}");
    dom.split(r#"<pre id="probe-out">"#)
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| panic!("the probe did not run: {log}"))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// A screenshot (PNG) of the top `height` px of `page` laid out `width` px wide, in a frame
/// as [`frame_probe`] loads it, written to `shot`; checked to be a PNG.
pub fn frame_screenshot(dir: &Path, page: &Path, width: u32, height: u32, shot: &Path) {
    let outer = frame_page(dir, page, width, height);
    let _ = std::fs::remove_file(shot);
    let out = headless(
        &dir.join(format!("profile-shot-{width}")),
        &[
            format!("--screenshot={}", shot.display()),
            format!("--window-size={width},{height}"),
            "--hide-scrollbars".to_string(),
            "--allow-file-access-from-files".to_string(),
            format!("file://{}", outer.display()),
        ],
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chromium failed: {log}");
    assert_eq!(console_problems(&log), Vec::<&str>::new(), "{log}");
    let png = std::fs::read(shot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
}
