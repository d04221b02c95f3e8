//! Tests of [`super`]: label placement, ticks, escaping, marks, tooltips and the log axis.

use super::*;
use crate::report::scales::trim_number;

#[test]
fn labels_too_close_move_apart_in_order_within_the_plot() {
    // "current" and "baseline" ending at the same point: one above the other.
    assert_eq!(spread_labels(&[100.0, 100.0], 50.0, 250.0), [100.0, 114.0]);
    // Far enough apart already: unchanged.
    assert_eq!(spread_labels(&[60.0, 90.0], 50.0, 250.0), [60.0, 90.0]);
    // Four at the bottom edge: pushed up from it, 14 apart, in their order.
    assert_eq!(
        spread_labels(&[245.0, 246.0, 248.0, 250.0], 50.0, 250.0),
        [208.0, 222.0, 236.0, 250.0]
    );
    // At the top edge: pushed down.
    assert_eq!(spread_labels(&[10.0, 12.0], 50.0, 250.0), [50.0, 64.0]);
}

#[test]
fn nice_ticks_cover_the_maximum() {
    assert_eq!(nice_ticks(0.0, 9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(nice_ticks(0.0, 0.0), vec![0.0, 1.0]);
    let t = nice_ticks(0.0, 12_345.0);
    assert!(*t.last().unwrap() >= 12_345.0 && t.len() <= 7, "{t:?}");
    // Below 0 too: from a multiple of the step below the minimum.
    assert_eq!(
        nice_ticks(-3.0, 7.0),
        vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]
    );
}

#[test]
fn charts_escape_text_and_draw_each_series() {
    let chart = LineChart {
        title: "a <b>".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        x_ticks: vec![(0.0, "0".into()), (1.0, "1".into())],
        y_format: |v| format!("{v}"),
        x_format: |v| format!("{v}"),
        y_log: false,
        series: vec![
            Series {
                name: "current".into(),
                style: Style::Current,
                points: vec![(0.0, 1.0), (1.0, 2.0)],
            },
            Series {
                name: "baseline".into(),
                style: Style::Baseline,
                points: vec![(0.0, 1.5), (1.0, 1.0)],
            },
        ],
        steps: false,
        marks: vec![],
    };
    let svg = chart.render();
    assert!(svg.contains("a &lt;b&gt;") && !svg.contains("a <b>"));
    assert_eq!(svg.matches("<path d=\"M").count(), 2);
    assert!(svg.contains(r#"stroke-dasharray="7 4""#));
    assert!(svg.contains("<circle") && svg.contains("<rect"));
}

#[test]
fn marks_and_points_draw_below_zero_and_in_the_legend() {
    let chart = LineChart {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        x_ticks: vec![(0.0, "0".into()), (2.0, "2".into())],
        y_format: |v| format!("{v}"),
        x_format: |v| format!("{v}"),
        y_log: false,
        series: vec![Series {
            name: "pair".into(),
            style: Style::Points,
            points: vec![(0.0, -3.0), (1.0, 2.0), (2.0, 4.0)],
        }],
        steps: false,
        marks: vec![
            Mark::Band {
                low: -1.0,
                high: 3.0,
                name: "interval <i>".into(),
                detail: "[-1, 3] <i>".into(),
            },
            Mark::Line {
                y: 0.0,
                kind: MarkLine::Reference,
                name: String::new(),
            },
            Mark::Line {
                y: 5.0,
                kind: MarkLine::Limit,
                name: "allowed".into(),
            },
        ],
    };
    let svg = chart.render();
    // Every point marked, no line through them; one more in the legend.
    assert_eq!(svg.matches(r#"r="2.5""#).count(), 4);
    assert!(!svg.contains(r#"<path d="M"#));
    // The axis reaches below 0 and above the limit.
    assert!(
        svg.contains(">-4</text>") && svg.contains(">6</text>"),
        "{svg}"
    );
    // The band and the named line in the legend, escaped; the unnamed line not.
    assert_eq!(svg.matches("interval &lt;i&gt;").count(), 1);
    assert!(svg.contains("<title>[-1, 3] &lt;i&gt;</title>"));
    assert!(svg.contains(r##"stroke="#a11""##) && svg.contains(">allowed</text>"));
    assert_eq!(
        svg.matches("<text").count() - svg.matches("</text>").count(),
        0
    );
    // The zero line sits where y = 0 maps: between the band's edges.
    let frame_y = |y: f64| {
        let (bottom, top) = (-4.0, 6.0);
        TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - (y - bottom) / (top - bottom))
    };
    assert!(svg.contains(&format!(r#"y1="{:.1}""#, frame_y(0.0))));
}

#[test]
fn tick_numbers_show_the_steps_precision() {
    assert_eq!(
        nice_ticks(0.0, 11.0)
            .into_iter()
            .map(trim_number)
            .collect::<Vec<_>>(),
        ["0", "2.5", "5", "7.5", "10", "12.5"]
    );
    assert_eq!(trim_number(0.1 * 3.0), "0.3");
    assert_eq!(trim_number(-0.0), "0");
}

#[test]
fn x_labels_that_would_overlap_are_left_out() {
    // 12 labels 40 units apart, each 7 characters (about 45 units): every other one shows.
    let ticks: Vec<(f64, &str)> = (0..12)
        .map(|i| (64.0 + 40.0 * f64::from(i), "10.00ms"))
        .collect();
    let shown = thin_labels(&ticks);
    assert_eq!(shown.iter().filter(|s| **s).count(), 6, "{shown:?}");
    assert!(shown[0] && !shown[1] && shown[2]);
    // Far apart: all of them.
    assert!(
        thin_labels(&[(64.0, "1ms"), (200.0, "10ms"), (400.0, "100ms")])
            .iter()
            .all(|s| *s)
    );
}

#[test]
fn a_log_axis_spreads_values_and_every_point_has_its_values_as_a_tooltip() {
    let chart = LineChart {
        title: "latency".into(),
        x_label: "percentile".into(),
        y_label: "latency".into(),
        x_ticks: vec![(0.0, "0%".into()), (1.0, "90%".into()), (2.0, "99%".into())],
        y_format: scales::short_duration,
        x_format: |x| format!("x{x}"),
        y_log: true,
        series: vec![Series {
            name: "current <c>".into(),
            style: Style::Current,
            points: vec![
                (0.0, 900.0),
                (1.0, 2_000.0),
                (1.5, 5_000.0),
                (2.0, 120_000.0),
            ],
        }],
        steps: false,
        marks: vec![],
    };
    let svg = chart.render();
    // From 500us to 200ms on a 1-2-5 ladder.
    for tick in [">500us<", ">1ms<", ">10ms<", ">100ms<", ">200ms<"] {
        assert!(svg.contains(tick), "no {tick} in {svg}");
    }
    assert!(!svg.contains(">0us<"));
    // 2 ms sits as far above 1 ms as 20 ms would above 10 ms: the lower values are not
    // flattened against the axis. Tooltips: a tick's label, else x_format; escaped.
    assert!(
        svg.contains("<title>current &lt;c&gt;: 90%, 2ms</title>"),
        "{svg}"
    );
    assert!(svg.contains("<title>current &lt;c&gt;: x1.5, 5ms</title>"));
    assert_eq!(svg.matches(r#"r="5"><title>"#).count(), 4);
}
