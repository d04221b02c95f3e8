//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
//! `.ci/run`) loads it with no console error, runs its script, lays its charts out with no two
//! labels at the lines' ends and no two x tick labels overlapping (measured by the browser,
//! with a probe script the test adds to its copy of the page), and takes a screenshot
//! (`target/tmp/loadgate-report.png`, to look at). The test fails, never skips, without
//! Chromium (`support::browser`).

use std::path::{Path, PathBuf};

use loadgate::compare;
use loadgate::report::{self, Format, Input};
use loadgate::result;

use crate::support::{console_problems, headless};

fn report_html() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let baseline = result::read(&dir.join("baseline.json")).unwrap();
    let current = result::read(&dir.join("current.json")).unwrap();
    let comparison = compare::compare(&baseline, &current).unwrap();
    // A trend of three runs on three dates (the x axis shows them).
    let mut older = baseline.clone();
    older.started_at = "2026-11-20T02:00:00.000Z".to_string();
    let mut old = baseline.clone();
    old.started_at = "2026-11-21T02:00:00.000Z".to_string();
    let history = [older, old];
    let input = Input {
        current: &current,
        baseline: Some(&baseline),
        comparison: Some(&comparison),
        history: &history,
        spec_path: None,
    };
    report::render(Format::Html, &input, None).unwrap()
}

/// A script added to the test's copy of the page: in each chart, the boxes of the labels at
/// the lines' ends, and of the x tick labels, as the browser laid them out; every pair that
/// intersects is written to `data-overlaps` on the body (`none` when there is none).
const OVERLAP_PROBE: &str = r#"<script>
  (function () {
    var found = [];
    function boxes(svg, selector) {
      return Array.prototype.map.call(svg.querySelectorAll(selector), function (t) {
        return { box: t.getBBox(), text: t.textContent };
      });
    }
    function check(title, items) {
      for (var i = 0; i < items.length; i++) {
        for (var j = i + 1; j < items.length; j++) {
          var a = items[i].box, b = items[j].box;
          if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
            found.push(title + ": " + items[i].text + " / " + items[j].text);
          }
        }
      }
    }
    document.querySelectorAll("svg.chart").forEach(function (svg) {
      var title = svg.getAttribute("aria-label");
      check(title, boxes(svg, "text.end-label"));
      check(title, boxes(svg, "text.x-tick"));
    });
    document.body.setAttribute("data-overlaps", found.length ? found.join("; ") : "none");
  })();
</script>
</body>"#;

#[test]
fn the_html_report_loads_in_chromium_without_errors_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let html = report_html();
    assert_eq!(html.matches("</body>").count(), 1);
    std::fs::write(&page, html.replace("</body>", OVERLAP_PROBE)).unwrap();
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
    // Laid out by the browser: no labels on top of each other (the percentile chart's
    // "current" and "baseline" end at one point), the trend's x axis by date.
    assert!(
        dom.contains(r#"data-overlaps="none""#),
        "overlapping labels: {}",
        {
            let at = dom.find("data-overlaps=").unwrap_or(0);
            &dom[at..(at + 400).min(dom.len())]
        }
    );
    assert!(dom.matches("class=\"end-label\"").count() >= 10);
    assert!(
        dom.contains(r#"<tspan x="#) && dom.contains(">2026-11-20</tspan>"),
        "the trend's x axis has no dates"
    );
    assert!(!dom.contains("<script>alert(1)</script>"));
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("loadgate-report.png");
    let _ = std::fs::remove_file(&shot);
    let out = headless(
        &dir.path().join("profile-shot"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2800".to_string(),
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
