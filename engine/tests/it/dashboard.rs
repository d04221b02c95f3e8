//! `loadgate report --dashboard DIR` over a history of real result files (the committed
//! fixtures, copied with a time, a commit and its page in `source`, and a +30% step in the
//! tail latency from the 9th result on), run as the binary and laid out by headless Chromium
//! at 400 and 1280 px (`support::browser`): no two text elements overlap, the document does
//! not overflow sideways, no chart text is cut off, each point links to its commit's page, a
//! hostile spec or target name stays text, and the step is marked at its commit. Screenshots
//! at both widths are left in `target/tmp/loadgate-dashboard-*.png`, to look at.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use loadgate::result::{self, LatencySummary, RunResult, SourceInfo};

use crate::support::{frame_probe, headless};

/// Results on `main` per spec; the step is at index [`STEP`].
const RESULTS: usize = 14;
const STEP: usize = 8;
const HOSTILE_SPEC: &str = "</title><script>alert(\"spec\")</script>";

/// The commit of result `i` of a spec (40 hex).
fn commit(spec: usize, i: usize) -> String {
    format!("{spec:x}{i:02x}{}", "5eed".repeat(10))[..40].to_string()
}

fn commit_url(sha: &str) -> String {
    format!("https://github.com/acme/shop/commit/{sha}")
}

/// Scales a latency summary's tail (p95 and above) by `factor`, keeping the order.
fn scale_tail(latency: &mut Option<LatencySummary>, factor: f64) {
    if let Some(l) = latency {
        let scale = |v: u64| (v as f64 * factor).round() as u64;
        l.p95_us = scale(l.p95_us);
        l.p99_us = scale(l.p99_us);
        l.p99_9_us = scale(l.p99_9_us);
        l.max_us = scale(l.max_us);
    }
}

/// Result `i` of spec number `spec` (from the fixture `from`) on `branch`.
fn copy(from: &RunResult, spec: usize, i: usize, branch: &str) -> RunResult {
    let mut r = from.clone();
    r.started_at = format!("2026-11-{:02}T02:{spec:02}:00.000Z", i + 1);
    let sha = commit(spec, i);
    r.source = Some(SourceInfo {
        branch: Some(branch.to_string()),
        commit_url: Some(commit_url(&sha)),
        commit: Some(sha),
    });
    r.environment.cpu_model = Some("Test CPU @ 2.0GHz".to_string());
    // Noise of ±2% in a fixed pattern, and the step.
    let noise = 1.0 + 0.02 * (((i * 7) % 5) as f64 - 2.0) / 2.0;
    let factor = noise * if i >= STEP { 1.3 } else { 1.0 };
    scale_tail(&mut r.total.latency_us, factor);
    for t in &mut r.targets {
        scale_tail(&mut t.latency_us, factor);
    }
    r
}

/// A history folder: two specs (`demo`, whose targets have hostile names, and
/// [`HOSTILE_SPEC`]) of [`RESULTS`] results each on `main`, two on a `feature` branch.
fn history(dir: &Path) -> BTreeMap<String, String> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let mut urls = BTreeMap::new();
    for (spec, file) in [(1, "baseline.json"), (2, "current.json")] {
        let mut from = result::read(&fixtures.join(file)).unwrap();
        if spec == 2 {
            from.spec.name = HOSTILE_SPEC.to_string();
        }
        for i in 0..RESULTS {
            let r = copy(&from, spec, i, "main");
            let sha = commit(spec, i);
            urls.insert(sha.clone(), commit_url(&sha));
            result::write(&r, &dir.join(format!("{spec}-{i:02}.json"))).unwrap();
        }
        for i in RESULTS..RESULTS + 2 {
            let r = copy(&from, spec, i, "feature");
            result::write(&r, &dir.join(format!("{spec}-{i:02}-feature.json"))).unwrap();
        }
    }
    urls
}

/// Added to the test's copy of the page: measures the laid-out page and writes what it found
/// as JSON into `<pre id="probe-out">` (after measuring, so that it does not count).
const PROBE: &str = r#"<script>
(function () {
  var root = document.documentElement;
  var out = { width: window.innerWidth, client_width: root.clientWidth, scroll_width: root.scrollWidth,
              overlaps: [], cut: [], links: [], changes: [] };
  var items = Array.prototype.slice.call(document.querySelectorAll(
    "svg text, h1, h2, h3, p, li, figcaption, th, td"));
  var rects = items.map(function (e) { return e.getBoundingClientRect(); });
  for (var i = 0; i < items.length; i++) {
    var a = rects[i];
    if (a.width === 0 || a.height === 0) continue;
    for (var j = i + 1; j < items.length; j++) {
      var b = rects[j];
      if (b.width === 0 || b.height === 0) continue;
      if (items[i].contains(items[j]) || items[j].contains(items[i])) continue;
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
        out.overlaps.push(items[i].textContent.slice(0, 40) + " / " + items[j].textContent.slice(0, 40));
      }
    }
  }
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        out.cut.push(t.textContent);
      }
    });
    svg.querySelectorAll("a.point").forEach(function (a) {
      out.links.push([a.getAttribute("href"), a.querySelector("title").textContent]);
    });
    svg.querySelectorAll("line.change-point").forEach(function (l) {
      out.changes.push(svg.getAttribute("aria-label") + ": " + l.querySelector("title").textContent);
    });
  });
  var pre = document.createElement("pre");
  pre.id = "probe-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
</body>"#;

/// What [`PROBE`] found at one width.
#[derive(Debug, serde::Deserialize)]
struct Probe {
    width: f64,
    client_width: f64,
    scroll_width: f64,
    overlaps: Vec<String>,
    cut: Vec<String>,
    links: Vec<(String, String)>,
    changes: Vec<String>,
}

/// Loads `page` (with [`PROBE`]) in a frame `width` px wide in Chromium
/// (`support::frame_probe`): what the probe found.
fn probe(dir: &Path, page: &Path, width: u32) -> Probe {
    let json = frame_probe(dir, page, width);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// Takes a screenshot of `page`, `width` px wide, into `target/tmp`; checks it is a PNG.
fn screenshot(dir: &Path, page: &Path, width: u32) {
    let shot =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("loadgate-dashboard-{width}.png"));
    let _ = std::fs::remove_file(&shot);
    let out = headless(
        &dir.join(format!("profile-shot-{width}")),
        &[
            format!("--screenshot={}", shot.display()),
            format!("--window-size={width},1600"),
            "--hide-scrollbars".to_string(),
            format!("file://{}", page.display()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("a screenshot was written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
}

#[test]
fn the_dashboard_of_a_history_lays_out_at_400_and_1280_px_with_links_to_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("history");
    std::fs::create_dir(&store).unwrap();
    let urls = history(&store);
    let page = dir.path().join("dashboard.html");
    let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["report", "--dashboard"])
        .arg(&store)
        .args(["--branch", "main", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();

    // Self-contained: nothing fetched, no script; hostile names are text.
    for external in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!html.contains(external), "the page has `{external}`");
    }
    assert!(html.contains("&lt;&#x2f;title&gt;&lt;script&gt;alert(&quot;spec&quot;)"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"));
    // Only `main`: the feature branch's commits are not on the page.
    assert!(!html.contains(&commit(1, RESULTS)) && !html.contains(&commit(2, RESULTS + 1)));

    let with_probe = dir.path().join("probed.html");
    std::fs::write(&with_probe, html.replace("</body>", PROBE)).unwrap();
    for width in [400, 1280] {
        let found = probe(dir.path(), &with_probe, width);
        assert_eq!(found.width, f64::from(width), "the window's width");
        assert!(
            found.scroll_width <= found.client_width,
            "{width} px: the document is {} px wide in {} px",
            found.scroll_width,
            found.client_width
        );
        assert_eq!(
            found.overlaps,
            Vec::<String>::new(),
            "{width} px: overlapping text"
        );
        assert_eq!(
            found.cut,
            Vec::<String>::new(),
            "{width} px: chart text cut off"
        );
        // Two specs × 3 scopes × 5 metrics of 14 points, each a link to its own commit.
        assert_eq!(found.links.len(), 2 * 3 * 5 * RESULTS);
        for (href, title) in &found.links {
            let sha = title
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("commit "))
                .unwrap_or_else(|| panic!("no commit in {title:?}"));
            assert_eq!(Some(href), urls.get(sha), "{title}");
            assert!(
                title.contains("branch main") && title.contains("2026-11-"),
                "{title}"
            );
        }
        // The step, marked between the last result before it and the first after, in p95 and
        // p99 of every scope of both specs.
        let at = format!("{}..{}", &commit(1, STEP - 1)[..7], &commit(1, STEP)[..7]);
        let p95 = found
            .changes
            .iter()
            .filter(|c| c.contains(&format!("change point: p95 {at}")))
            .count();
        assert_eq!(p95, 3, "{:#?}", found.changes);
    }
    screenshot(dir.path(), &page, 400);
    screenshot(dir.path(), &page, 1280);
}

#[test]
fn the_dashboard_shows_one_spec_when_asked_and_says_which_specs_there_are() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let loadgate = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_loadgate"))
            .args(["report", "--dashboard"])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = loadgate(&["--spec", "demo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    assert_eq!(html.matches("<section id=").count(), 1);
    assert!(html.contains("<h2>demo</h2>") && !html.contains("alert(&quot;spec"));
    // Both branches without `--branch`: 16 results.
    assert!(html.contains("16 results"), "{html}");
    assert!(html.contains(&commit(1, RESULTS + 1)));

    let out = loadgate(&["--spec", "nope"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no result of spec `nope`") && stderr.contains("demo"),
        "{stderr}"
    );
    let out = loadgate(&["--branch", "gone"]);
    assert_eq!(out.status.code(), Some(2));
    // The page's template, overridden like the reports'.
    let templates = tempfile::tempdir().unwrap();
    std::fs::write(
        templates.path().join("dashboard.html"),
        "{% for g in view.groups %}{{ g.spec }} {{ g.results }};{% endfor %}",
    )
    .unwrap();
    let out = loadgate(&[
        "--branch",
        "main",
        "--templates",
        templates.path().to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "&lt;&#x2f;title&gt;&lt;script&gt;alert(&quot;spec&quot;)&lt;&#x2f;script&gt; 14;demo 14;"
    );
    // A report's own flags do not go with it.
    let out = loadgate(&["--format", "md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
