//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, installed by
//! `.ci/run`) loads it with no console error and runs its script; at 400 px (a phone) and
//! 1280 px wide, as the browser lays it out (measured by a probe script the test adds to its
//! copy of the page): the page does not scroll sideways, every SLO's and rule's verdict is on
//! screen, any other table cell off screen is in a box that scrolls, no chart is wider than
//! the window or cuts off its text, no two texts overlap (chart labels and ticks included),
//! and the charts' points carry their values as tooltips. Screenshots at both widths go to
//! `target/tmp/loadgate-report-{400,1280}.png` (docs/images/ has copies). The test fails,
//! never skips, without Chromium (`support::browser`).

use std::path::Path;

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};

use loadgate::compare;
use loadgate::report::{self, Format, Input};
use loadgate::result;

use crate::support::{console_problems, frame_probe, frame_screenshot, headless};

/// The report of the fixture's current run against its baseline, with a trend of three runs;
/// with `wide`, the current run's latencies spread from 150 µs to 4 s (2% of its count at
/// each of seven values), so that its charts' latency axes span more than four decades.
fn report_html(wide: bool) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let baseline = result::read(&dir.join("baseline.json")).unwrap();
    let mut current = result::read(&dir.join("current.json")).unwrap();
    if wide {
        let mut h = result::decode_histogram(&current.total.histogram).unwrap();
        let n = h.len() / 50;
        for us in [150, 300, 40_000, 120_000, 700_000, 2_500_000, 4_000_000] {
            h.record_n(us, n).unwrap();
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        current.total.histogram = base64::engine::general_purpose::STANDARD.encode(bytes);
    }
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

/// Added to the test's copy of the page: opens every target's details (with the page's own
/// button), measures the laid-out page and writes what it found as JSON into
/// `<pre id="probe-out">` (after measuring, so that it does not count).
const PROBE: &str = r##"<script>
(function () {
  document.getElementById("expand").click();
  var root = document.documentElement;
  var vw = window.innerWidth;
  var out = { width: vw, client_width: root.clientWidth, scroll_width: root.scrollWidth,
              rendered: document.body.getAttribute("data-rendered"),
              overlaps: [], cut: [], wide_charts: [], hidden_verdicts: [], unreachable_cells: [],
              hover: 0, charts: 0, verdicts: 0 };
  function scroller(e) {
    for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      var s = getComputedStyle(p).overflowX;
      if (s === "auto" || s === "scroll") return p;
    }
    return null;
  }
  var name = function (e) { return e.textContent.trim().slice(0, 40); };
  // Text on top of other text: in a chart, and on the page.
  var items = Array.prototype.slice.call(document.querySelectorAll(
    "svg.chart text, h1, h2, p, th, td, summary, button"));
  var rects = items.map(function (e) { return e.getBoundingClientRect(); });
  for (var i = 0; i < items.length; i++) {
    var a = rects[i];
    if (a.width === 0 || a.height === 0) continue;
    for (var j = i + 1; j < items.length; j++) {
      var b = rects[j];
      if (b.width === 0 || b.height === 0) continue;
      if (items[i].contains(items[j]) || items[j].contains(items[i])) continue;
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
        out.overlaps.push(name(items[i]) + " / " + name(items[j]));
      }
    }
  }
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    out.charts++;
    var box = svg.getBoundingClientRect();
    if (box.left < -0.5 || box.right > vw + 0.5) {
      out.wide_charts.push(svg.getAttribute("aria-label") + ": " + Math.round(box.left) + ".." + Math.round(box.right));
    }
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        out.cut.push(svg.getAttribute("aria-label") + ": " + t.textContent);
      }
    });
    out.hover += svg.querySelectorAll(".hover title").length;
  });
  // The verdict of each SLO and rule: on screen as it is, without scrolling sideways.
  document.querySelectorAll("#slo td.state, #rules td.state").forEach(function (td) {
    out.verdicts++;
    var r = td.getBoundingClientRect();
    var s = scroller(td);
    var edge = s ? Math.min(vw, s.getBoundingClientRect().right) : vw;
    if (r.left < -0.5 || r.right > edge + 0.5) {
      out.hidden_verdicts.push(name(td) + " " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + Math.round(edge));
    }
  });
  // Any other cell beyond the window: only inside a box that scrolls sideways.
  document.querySelectorAll("td, th").forEach(function (td) {
    var r = td.getBoundingClientRect();
    if (r.width > 0 && (r.left < -0.5 || r.right > vw + 0.5) && !scroller(td)) {
      out.unreachable_cells.push(name(td));
    }
  });
  var pre = document.createElement("pre");
  pre.id = "probe-out";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
</body>"##;

/// What [`PROBE`] found at one width.
#[derive(Debug, serde::Deserialize)]
struct Probe {
    /// The window's width, px.
    width: f64,
    client_width: f64,
    /// The document's width: more than `client_width` when the page scrolls sideways.
    scroll_width: f64,
    /// `ok` when the page's script ran to its end.
    rendered: Option<String>,
    /// Pairs of texts on top of each other.
    overlaps: Vec<String>,
    /// Chart texts not wholly inside their chart.
    cut: Vec<String>,
    /// Charts not wholly inside the window.
    wide_charts: Vec<String>,
    /// Verdict cells of the SLO and rule tables, and of them those not wholly on screen.
    verdicts: usize,
    hidden_verdicts: Vec<String>,
    /// Table cells off screen and not in a box that scrolls sideways.
    unreachable_cells: Vec<String>,
    /// Charts, and tooltips of their points.
    charts: usize,
    hover: usize,
}

#[test]
fn the_html_report_loads_in_chromium_without_errors_and_renders() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let html = report_html(false);
    assert_eq!(html.matches("</body>").count(), 1);
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}", page.display());

    let out = headless(
        &dir.path().join("profile-dom"),
        &["--dump-dom".to_string(), url],
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
    assert!(dom.matches("class=\"end-label\"").count() >= 10);
    assert!(
        dom.contains(r#"<tspan x="#) && dom.contains(">2026-11-20</tspan>"),
        "the trend's x axis has no dates"
    );
    // The percentile chart on its log scales: 50% to 99.9%, latency from 5 ms to 20 ms.
    for tick in [">50%<", ">99.9%<", ">5ms<", ">10ms<", ">20ms<"] {
        assert!(dom.contains(tick), "no tick {tick}");
    }
    assert!(!dom.contains("<script>alert(1)</script>"));
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // Nothing fetched at view time.
    for external in ["<link", "<img", "<iframe", "src=", "url(", "@import"] {
        assert!(!html.contains(external), "the page has `{external}`");
    }
}

#[test]
fn the_html_report_fits_400_and_1280_px_with_verdicts_on_screen_and_no_overlaps() {
    let dir = tempfile::tempdir().unwrap();
    let html = report_html(false);
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    // A latency range over four decades: decades on the percentile chart's latency axis.
    let wide = report_html(true);
    for tick in [">100us<", ">1ms<", ">10ms<", ">100ms<", ">1s<"] {
        assert!(wide.contains(tick), "no tick {tick} over a wide range");
    }
    for (name, html) in [("fixture", &html), ("wide", &wide)] {
        let probed = dir.path().join(format!("probed-{name}.html"));
        std::fs::write(&probed, html.replace("</body>", PROBE)).unwrap();
        for width in [400, 1280] {
            probe_at(dir.path(), &probed, &format!("{name}, {width}"), width);
        }
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    frame_screenshot(
        dir.path(),
        &page,
        400,
        3700,
        &tmp.join("loadgate-report-400.png"),
    );
    frame_screenshot(
        dir.path(),
        &page,
        1280,
        1900,
        &tmp.join("loadgate-report-1280.png"),
    );
}

/// Loads `page` (with [`PROBE`]) `width` px wide and checks what the probe found; `at` names
/// the page and width in messages.
fn probe_at(dir: &Path, page: &Path, at: &str, width: u32) {
    let json = frame_probe(dir, page, width);
    let found: Probe = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(found.width, f64::from(width), "the window's width");
    assert_eq!(found.rendered.as_deref(), Some("ok"), "{at}: the script");
    assert!(
        found.scroll_width <= found.client_width,
        "{at}: the page is {} px wide in {} px: it scrolls sideways",
        found.scroll_width,
        found.client_width
    );
    // 2 SLOs and 5 rules.
    assert_eq!(found.verdicts, 7, "{at}: the verdict cells");
    assert_eq!(
        found.hidden_verdicts,
        Vec::<String>::new(),
        "{at}: verdicts off screen"
    );
    assert_eq!(
        found.unreachable_cells,
        Vec::<String>::new(),
        "{at}: table cells off screen that cannot be scrolled to"
    );
    assert_eq!(found.charts, 5);
    assert_eq!(
        found.wide_charts,
        Vec::<String>::new(),
        "{at}: charts wider than the window"
    );
    assert_eq!(found.cut, Vec::<String>::new(), "{at}: chart text cut off");
    assert_eq!(
        found.overlaps,
        Vec::<String>::new(),
        "{at}: overlapping text"
    );
    // Every point of every line has its values as a tooltip (the percentile chart
    // alone has 61 per run).
    assert!(found.hover > 200, "{at}: {} tooltips", found.hover);
}
