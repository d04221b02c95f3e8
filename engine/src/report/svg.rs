//! Inline SVG charts for the HTML report, drawn here so that the report needs no script or
//! network to show them.
//!
//! Every series has its own dash pattern, marker shape and a label at its end, so charts read
//! without colour (and printed in grey). The current run is solid with circles, the baseline
//! dashed with squares. Labels at the lines' ends that would overlap are moved apart vertically
//! ([`spread_labels`]). Horizontal marks (a shaded band, reference lines) are drawn under the
//! series and named in the legend. An x tick label may have two lines (`\n`), e.g. a date over
//! a time; x tick labels that would overlap are left out ([`thin_labels`]). Every point of a
//! line carries its values as a tooltip (an SVG `<title>`), so hovering shows them without a
//! script. The y axis is linear, or logarithmic for latency ([`LineChart::y_log`]).

use std::fmt::Write as _;

use super::scales;

/// Chart size in SVG user units (the SVG scales to its container).
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 306.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 96.0;
const TOP: f64 = 46.0;
const BOTTOM: f64 = 50.0;
/// Least distance between the baselines of two labels at the lines' ends, SVG units: the
/// 11-unit font's line box (about 12.8, ascent and descent, as Chromium lays it out) and a
/// little air.
const LABEL_GAP: f64 = 14.0;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// The current run: solid line, circles.
    Current,
    /// The baseline: dashed line, squares.
    Baseline,
    /// A second line of the current run (e.g. p99 beside p50): dotted, triangles.
    CurrentAlt,
    /// A second line of the baseline: dash-dot, diamonds.
    BaselineAlt,
    /// Points without a line (e.g. one per sub-run): small circles, every point marked.
    Points,
    /// Other points without a line, beside [`Style::Points`] (e.g. the sub-runs where the
    /// other side went first): small hollow squares.
    PointsAlt,
}

impl Style {
    fn stroke(self) -> (&'static str, &'static str) {
        // (colour, dasharray)
        match self {
            Style::Current => ("#1f4e9c", ""),
            Style::Baseline => ("#b35900", "7 4"),
            Style::CurrentAlt => ("#1f4e9c", "2 3"),
            Style::BaselineAlt => ("#b35900", "9 3 2 3"),
            Style::Points => ("#1f4e9c", ""),
            Style::PointsAlt => ("#b35900", ""),
        }
    }

    /// Drawn as points without a line.
    fn points_only(self) -> bool {
        matches!(self, Style::Points | Style::PointsAlt)
    }

    fn marker(self, x: f64, y: f64) -> String {
        let (colour, _) = self.stroke();
        match self {
            Style::Current => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{colour}"/>"#),
            Style::Points => format!(
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{colour}" fill-opacity="0.8"/>"#
            ),
            Style::PointsAlt => format!(
                r#"<rect x="{:.1}" y="{:.1}" width="5" height="5" fill="white" stroke="{colour}" stroke-width="1.5"/>"#,
                x - 2.5,
                y - 2.5
            ),
            Style::Baseline => format!(
                r#"<rect x="{:.1}" y="{:.1}" width="6" height="6" fill="white" stroke="{colour}" stroke-width="1.5"/>"#,
                x - 3.0,
                y - 3.0
            ),
            Style::CurrentAlt => format!(
                r#"<path d="M{x:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z" fill="{colour}"/>"#,
                y - 4.0,
                x + 4.0,
                y + 3.0,
                x - 4.0,
                y + 3.0
            ),
            Style::BaselineAlt => format!(
                r#"<path d="M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z" fill="white" stroke="{colour}" stroke-width="1.5"/>"#,
                y - 4.0,
                x + 4.0,
                y + 4.0,
                x - 4.0
            ),
        }
    }
}

/// One line of a chart.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// Shown in the legend and at the line's end.
    pub name: String,
    pub style: Style,
    /// `(x, y)` in data units, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A horizontal mark across the plot, in data units of y, drawn under the series.
#[derive(Debug, Clone)]
pub(crate) enum Mark {
    /// A shaded band from `low` to `high` (e.g. a 95% interval), `name` in the legend and
    /// `detail` (e.g. the bounds) in its tooltip.
    Band {
        low: f64,
        high: f64,
        name: String,
        detail: String,
    },
    /// A line at `y`, drawn as `kind` says.
    Line {
        y: f64,
        kind: MarkLine,
        name: String,
    },
}

/// How a [`Mark::Line`] is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MarkLine {
    /// A reference such as 0: thin, solid, dark grey.
    Reference,
    /// A limit (e.g. the allowed change): red, dashed.
    Limit,
    /// An estimate (e.g. the whole-run change): blue, dash-dot.
    Estimate,
}

impl MarkLine {
    /// (colour, dasharray, width)
    fn stroke(self) -> (&'static str, &'static str, f64) {
        match self {
            MarkLine::Reference => ("#555", "", 1.0),
            MarkLine::Limit => ("#a11", "6 4", 1.5),
            MarkLine::Estimate => ("#1f4e9c", "9 3 2 3", 1.5),
        }
    }
}

/// Fill of a [`Mark::Band`].
const BAND_FILL: &str = r##"fill="#1f4e9c" fill-opacity="0.15""##;

/// A line chart with a linear y axis (from 0, or lower when a value is negative) and a linear
/// x axis with the given ticks.
#[derive(Debug, Clone)]
pub(crate) struct LineChart {
    /// Shown above the chart and read by screen readers.
    pub title: String,
    /// Under the x axis.
    pub x_label: String,
    /// Beside the y axis.
    pub y_label: String,
    /// `(x, label)` in data units.
    pub x_ticks: Vec<(f64, String)>,
    /// Formats a y value for the axis and for a point's tooltip.
    pub y_format: fn(f64) -> String,
    /// Formats an x value for a point's tooltip (a tick's label where the point is at one).
    pub x_format: fn(f64) -> String,
    /// A log10 y axis for values above 0 (latency, µs): ticks on a 1-2-5 ladder
    /// ([`super::scales::log_ticks`]); a value at or below 0 is drawn at 1.
    pub y_log: bool,
    /// The lines, drawn in this order.
    pub series: Vec<Series>,
    /// Draw steps (a histogram) instead of straight segments.
    pub steps: bool,
    /// Bands and reference lines, drawn under the series.
    pub marks: Vec<Mark>,
}

/// Escapes text for SVG (XML); control and hidden characters written out first
/// (`templates::visible`).
pub(crate) fn escape(text: &str) -> String {
    super::templates::visible(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Most y ticks of a log axis.
const LOG_TICKS: usize = 7;

/// "Nice" round numbers for an axis from `min` to `max` (`min` at most 0 here; above 0 for the
/// dashboard's charts): about 5 steps, from a multiple of the step at or below `min`
/// to one at or above `max`.
pub(super) fn nice_ticks(min: f64, max: f64) -> Vec<f64> {
    if !(max > min && min.is_finite() && max.is_finite()) {
        return vec![min.min(0.0), min.min(0.0) + 1.0];
    }
    let raw = (max - min) / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let (first, last) = ((min / step).floor() as i64, (max / step).ceil() as i64);
    (first..=last).map(|i| i as f64 * step).collect()
}

/// Where data land on the chart: the data ranges and the plot area inside the margins.
struct Frame {
    x_min: f64,
    x_max: f64,
    y_bottom: f64,
    y_top: f64,
    plot_w: f64,
    plot_h: f64,
}

impl Frame {
    /// The SVG x of a data x.
    fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.x_min) / (self.x_max - self.x_min) * self.plot_w
    }

    /// The SVG y of a data y.
    fn sy(&self, y: f64) -> f64 {
        TOP + self.plot_h - (y - self.y_bottom) / (self.y_top - self.y_bottom) * self.plot_h
    }
}

impl LineChart {
    /// The chart as an `<svg>` element.
    pub(crate) fn render(&self) -> String {
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(self.x_ticks.iter().map(|t| t.0));
        let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
            (x_min, x_max)
        } else {
            (0.0, 1.0)
        };
        let series = self.plotted();
        let ys: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(self.marks.iter().flat_map(|m| match m {
                Mark::Band { low, high, .. } => vec![*low, *high],
                Mark::Line { y, .. } => vec![*y],
            }))
            .filter(|y| y.is_finite())
            .collect();
        let y_ticks = self.y_ticks(&ys);
        let frame = Frame {
            x_min,
            x_max,
            y_bottom: y_ticks[0],
            y_top: *y_ticks.last().expect("at least two ticks"),
            plot_w: WIDTH - LEFT - RIGHT,
            plot_h: HEIGHT - TOP - BOTTOM,
        };

        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="11">"#,
            escape(&self.title)
        );
        let _ = write!(
            svg,
            r#"<title>{}</title><text x="{LEFT}" y="16" font-size="13" font-weight="bold">{}</text>"#,
            escape(&self.title),
            escape(&self.title)
        );
        self.axes(&mut svg, &frame, &y_ticks);
        for m in &self.marks {
            mark(&mut svg, &frame, m);
        }
        let mut labels = Vec::new();
        for (s, drawn) in self.series.iter().zip(&series) {
            labels.extend(self.line(&mut svg, &frame, s, drawn));
        }
        end_labels(&mut svg, &frame, labels);
        self.legend(&mut svg);
        svg.push_str("</svg>");
        svg
    }

    /// The series as drawn: y in log10 on a log axis.
    fn plotted(&self) -> Vec<Series> {
        let mut series = self.series.clone();
        if self.y_log {
            for s in &mut series {
                for p in &mut s.points {
                    p.1 = p.1.max(1.0).log10();
                }
            }
        }
        series
    }

    /// The y ticks for the drawn values `ys`: from 0 (or below the lowest negative value) to
    /// above the highest, or on a log axis the log10 of the 1-2-5 values around them.
    fn y_ticks(&self, ys: &[f64]) -> Vec<f64> {
        if self.y_log {
            let low = ys.iter().copied().fold(f64::INFINITY, f64::min);
            let high = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if low.is_finite() && high.is_finite() {
                return scales::log_ticks(10f64.powf(low), 10f64.powf(high), LOG_TICKS);
            }
            return vec![0.0, 1.0];
        }
        let y_min = ys.iter().copied().fold(0.0, f64::min);
        let y_max = ys.iter().copied().fold(0.0, f64::max);
        let margin = (y_max - y_min) * 0.05;
        nice_ticks(
            if y_min < 0.0 { y_min - margin } else { 0.0 },
            y_max + margin,
        )
    }

    /// A drawn y value as the data's value.
    fn y_value(&self, y: f64) -> f64 {
        if self.y_log { 10f64.powf(y) } else { y }
    }

    /// A point's tooltip: the series, its x (a tick's label where there is one at it) and y.
    fn hover(&self, name: &str, x: f64, y: f64) -> String {
        let at = self
            .x_ticks
            .iter()
            .find(|t| (t.0 - x).abs() < 1e-9)
            .map_or_else(|| (self.x_format)(x), |t| t.1.replace('\n', " "));
        format!("{name}: {at}, {}", (self.y_format)(y))
    }

    /// Grid, axes, tick labels and axis labels.
    fn axes(&self, svg: &mut String, f: &Frame, y_ticks: &[f64]) {
        let (plot_w, plot_h) = (f.plot_w, f.plot_h);
        for y in y_ticks {
            let py = f.sy(*y);
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + plot_w,
                LEFT - 8.0,
                py + 4.0,
                escape(&(self.y_format)(self.y_value(*y)))
            );
        }
        let shown = thin_labels(
            &self
                .x_ticks
                .iter()
                .map(|(x, label)| (f.sx(*x), label.as_str()))
                .collect::<Vec<_>>(),
        );
        for ((x, label), shown) in self.x_ticks.iter().zip(shown) {
            let px = f.sx(*x);
            let _ = write!(
                svg,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/>"##,
                TOP + plot_h,
            );
            if !shown {
                continue;
            }
            let _ = write!(
                svg,
                r#"<text class="x-tick" x="{px:.1}" y="{:.1}" text-anchor="middle">"#,
                TOP + plot_h + 18.0,
            );
            // A second line (a time under a date) one line lower.
            for (i, part) in label.split('\n').enumerate() {
                let dy = if i == 0 { 0.0 } else { 11.0 };
                let _ = write!(
                    svg,
                    r#"<tspan x="{px:.1}" dy="{dy}">{}</tspan>"#,
                    escape(part)
                );
            }
            svg.push_str("</text>");
        }
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="#333"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
            TOP + plot_h,
            TOP + plot_h,
            LEFT + plot_w,
            TOP + plot_h
        );
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            LEFT + plot_w / 2.0,
            HEIGHT - 5.0,
            escape(&self.x_label),
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
    }

    /// One series (`s` as given, `drawn` as plotted): its line, markers (at most ~12) and a
    /// tooltip on each point; returns the label for its end (none for points without a line).
    fn line(&self, svg: &mut String, f: &Frame, s: &Series, drawn: &Series) -> Option<EndLabel> {
        if s.points.is_empty() {
            return None;
        }
        let (colour, dash) = s.style.stroke();
        if s.style.points_only() {
            for (&(x, y), &(_, dy)) in s.points.iter().zip(&drawn.points) {
                let _ = write!(
                    svg,
                    r#"<g class="hover">{}<title>{}</title></g>"#,
                    s.style.marker(f.sx(x), f.sy(dy)),
                    escape(&self.hover(&s.name, x, y))
                );
            }
            return None;
        }
        let s_given = s;
        let s = drawn;
        let mut d = String::new();
        let mut last: Option<(f64, f64)> = None;
        for (i, &(x, y)) in s.points.iter().enumerate() {
            let (px, py) = (f.sx(x), f.sy(y));
            if i == 0 {
                let _ = write!(d, "M{px:.1} {py:.1}");
            } else if self.steps {
                let (_, ly) = last.expect("set");
                let _ = write!(d, " L{px:.1} {ly:.1} L{px:.1} {py:.1}");
            } else {
                let _ = write!(d, " L{px:.1} {py:.1}");
            }
            last = Some((px, py));
        }
        let dash_attr = if dash.is_empty() {
            String::new()
        } else {
            format!(r#" stroke-dasharray="{dash}""#)
        };
        let _ = write!(
            svg,
            r#"<path d="{d}" fill="none" stroke="{colour}" stroke-width="2"{dash_attr}><title>{}</title></path>"#,
            escape(&s.name)
        );
        let every = s.points.len().div_ceil(12).max(1);
        for (i, &(x, y)) in s.points.iter().enumerate() {
            if i % every == 0 || i + 1 == s.points.len() {
                svg.push_str(&s.style.marker(f.sx(x), f.sy(y)));
            }
        }
        // Where the pointer finds each point's values: a circle with no visible paint.
        svg.push_str(r#"<g class="hover" fill="transparent">"#);
        for (&(x, y), &(_, dy)) in s_given.points.iter().zip(&s.points) {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="5"><title>{}</title></circle>"#,
                f.sx(x),
                f.sy(dy),
                escape(&self.hover(&s.name, x, y))
            );
        }
        svg.push_str("</g>");
        let (lx, ly) = s.points[s.points.len() - 1];
        Some(EndLabel {
            x: f.sx(lx) + 6.0,
            y: f.sy(ly) + 4.0,
            colour,
            name: s.name.clone(),
        })
    }

    /// The legend, under the title: a sample of each line with its marker, then of each
    /// named mark.
    fn legend(&self, svg: &mut String) {
        /// What a legend entry's sample shows.
        enum Sample {
            Series(Style),
            Band,
            Line(MarkLine),
        }
        let entries = self
            .series
            .iter()
            .map(|s| (Sample::Series(s.style), s.name.as_str()))
            .chain(self.marks.iter().map(|m| match m {
                Mark::Band { name, .. } => (Sample::Band, name.as_str()),
                Mark::Line { kind, name, .. } => (Sample::Line(*kind), name.as_str()),
            }))
            .filter(|(_, name)| !name.is_empty());
        let mut lx = LEFT;
        for (sample, name) in entries {
            match sample {
                Sample::Series(style) => {
                    let (colour, dash) = style.stroke();
                    if !style.points_only() {
                        let _ = write!(
                            svg,
                            r#"<line x1="{lx:.1}" y1="30" x2="{:.1}" y2="30" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                            lx + 24.0
                        );
                    }
                    svg.push_str(&style.marker(lx + 12.0, 30.0));
                }
                Sample::Band => {
                    let _ = write!(
                        svg,
                        r#"<rect x="{lx:.1}" y="25" width="24" height="10" {BAND_FILL}/>"#
                    );
                }
                Sample::Line(kind) => {
                    let (colour, dash, width) = kind.stroke();
                    let _ = write!(
                        svg,
                        r#"<line x1="{lx:.1}" y1="30" x2="{:.1}" y2="30" stroke="{colour}" stroke-width="{width}" stroke-dasharray="{dash}"/>"#,
                        lx + 24.0
                    );
                }
            }
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="34">{}</text>"#,
                lx + 30.0,
                escape(name)
            );
            lx += 40.0 + 6.5 * name.chars().count() as f64;
        }
    }
}

/// Which of the x tick labels at `ticks` (SVG x, label) to show: from the left, each that
/// keeps clear of the last one shown (its width estimated from the 11-unit font's
/// characters, about 6.5 units wide at most, and 6 units of air).
fn thin_labels(ticks: &[(f64, &str)]) -> Vec<bool> {
    let half = |label: &str| {
        let chars = label
            .split('\n')
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        chars as f64 * 6.5 / 2.0
    };
    let mut right_of_last = f64::NEG_INFINITY;
    ticks
        .iter()
        .map(|(x, label)| {
            let show = x - half(label) >= right_of_last + 6.0;
            if show {
                right_of_last = x + half(label);
            }
            show
        })
        .collect()
}

/// A series' name beside its last point, in SVG units (`y` the text's baseline).
struct EndLabel {
    x: f64,
    y: f64,
    colour: &'static str,
    name: String,
}

/// Writes the labels at the lines' ends, moved apart where they would overlap, each with a
/// short leader to its line's end when moved.
fn end_labels(svg: &mut String, f: &Frame, mut labels: Vec<EndLabel>) {
    labels.sort_by(|a, b| a.y.total_cmp(&b.y));
    let wanted: Vec<f64> = labels.iter().map(|l| l.y).collect();
    // The plot's top to just below its bottom edge, where the baselines may go.
    let placed = spread_labels(&wanted, TOP + 4.0, TOP + f.plot_h + 8.0);
    for (label, y) in labels.iter().zip(placed) {
        if (y - label.y).abs() > 2.0 {
            let _ = write!(
                svg,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{}" stroke-width="0.8"/>"#,
                label.x - 5.0,
                label.y - 4.0,
                label.x - 1.0,
                y - 4.0,
                label.colour
            );
        }
        let _ = write!(
            svg,
            r#"<text class="end-label" x="{:.1}" y="{y:.1}" fill="{}">{}</text>"#,
            label.x,
            label.colour,
            escape(&label.name)
        );
    }
}

/// Baselines for labels wanted at `wanted` (ascending), each at least [`LABEL_GAP`] from the
/// next and within `[low, high]` where they fit: pushed down past the ones above them, then
/// up from the bottom when the last went past `high`. Labels keep their order.
fn spread_labels(wanted: &[f64], low: f64, high: f64) -> Vec<f64> {
    let mut placed: Vec<f64> = Vec::with_capacity(wanted.len());
    for &y in wanted {
        let y = match placed.last() {
            Some(above) => y.max(above + LABEL_GAP),
            None => y.max(low),
        };
        placed.push(y);
    }
    let mut limit = high;
    for y in placed.iter_mut().rev() {
        *y = y.min(limit);
        limit = *y - LABEL_GAP;
    }
    placed
}

/// A band or a line across the plot area, with its name as a tooltip.
fn mark(svg: &mut String, f: &Frame, m: &Mark) {
    match m {
        Mark::Band {
            low, high, detail, ..
        } => {
            let (top, bottom) = (f.sy(low.max(*high)), f.sy(low.min(*high)));
            let _ = write!(
                svg,
                r#"<rect x="{LEFT}" y="{top:.1}" width="{:.1}" height="{:.1}" {BAND_FILL}><title>{}</title></rect>"#,
                f.plot_w,
                (bottom - top).max(1.0),
                escape(detail)
            );
        }
        Mark::Line { y, kind, name } => {
            let (colour, dash, width) = kind.stroke();
            let py = f.sy(*y);
            let _ = write!(
                svg,
                r#"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="{colour}" stroke-width="{width}" stroke-dasharray="{dash}"><title>{}</title></line>"#,
                LEFT + f.plot_w,
                escape(name)
            );
        }
    }
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
