//! Simulations with known answers behind `changepoint.rs` and `trend.rs` (unit tests, seeded):
//! series of results as the review of 2026-11-27 (§5) measured them, on the log scale: run-to-run
//! noise of 1–5% (sd of the log, drawn per series), lag-1 correlation 0.4 (AR(1)), 60 results.
//! `cargo test -p loadgate --lib stats::sims_changes -- --nocapture` prints the figures.

use super::changepoint::{Options, detect};
use super::sims::ar1;
use super::trend::drift;

/// Results per simulated series: the detector's default window.
const LENGTH: usize = 60;
/// The lag-1 correlation of successive results.
const RHO: f64 = 0.4;

/// A series of `n` results: AR(1) noise with coefficient `rho` and a standard deviation drawn
/// uniformly from 1–5%, plus `shift(t)`.
fn series(rng: &mut fastrand::Rng, n: usize, rho: f64, shift: impl Fn(usize) -> f64) -> Vec<f64> {
    let sd = 0.01 + 0.04 * rng.f64();
    ar1(rng, n, rho)
        .into_iter()
        .enumerate()
        .map(|(t, e)| sd * e + shift(t))
        .collect()
}

/// Of `sims` series: how many had any change point, and how many had one within 3 results of
/// `step` (when given).
#[derive(Debug, Default)]
struct Splits {
    sims: usize,
    any: usize,
    near: usize,
}

fn splits(
    options: &Options,
    rho: f64,
    sims: usize,
    seed: u64,
    step: Option<(usize, f64)>,
) -> Splits {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut result = Splits {
        sims,
        ..Splits::default()
    };
    for _ in 0..sims {
        let values = series(&mut rng, LENGTH, rho, |t| match step {
            Some((at, size)) if t >= at => size,
            _ => 0.0,
        });
        let points = detect(&values, options);
        result.any += usize::from(!points.is_empty());
        if let Some((at, _)) = step {
            result.near += usize::from(points.iter().any(|p| p.index.abs_diff(at) <= 3));
        }
    }
    result
}

fn options(serial_correlation: bool) -> Options {
    Options {
        serial_correlation,
        ..Options::default()
    }
}

/// A/A: 400 series of 60 results with no change (noise 1–5%, AR(1) ρ = 0.4). With the serial
/// correction, at most 5 in 100 series split (Otava's independent t-test splits many more;
/// printed beside it); and with independent results.
#[test]
fn aa_series_with_serial_correlation_rarely_split() {
    let sims = 400;
    let corrected = splits(&options(true), RHO, sims, 101, None);
    let plain = splits(&options(false), RHO, sims, 101, None);
    let per_100 = |s: &Splits| 100.0 * s.any as f64 / s.sims as f64;
    println!(
        "A/A, {sims} series of {LENGTH} (noise 1-5%, AR(1) rho {RHO}): series with a change point per 100: {:.1} with the AR(1) correction, {:.1} without (Otava's test)",
        per_100(&corrected),
        per_100(&plain)
    );
    assert!(per_100(&corrected) <= 5.0, "{corrected:?}");
    assert!(plain.any > corrected.any, "{plain:?} {corrected:?}");
    // Independent results: the correction estimates ρ near 0 and splits about as often as
    // Otava's test.
    let corrected = splits(&options(true), 0.0, sims, 102, None);
    let plain = splits(&options(false), 0.0, sims, 102, None);
    println!(
        "A/A, {sims} series of {LENGTH} (noise 1-5%, independent): series with a change point per 100: {:.1} with the AR(1) correction, {:.1} without",
        per_100(&corrected),
        per_100(&plain)
    );
    assert!(per_100(&corrected) <= 5.0 && per_100(&plain) <= 10.0);
}

/// A +8% step (ln 1.08) after 30 and after 45 of 60 results (noise 1–5%, AR(1) ρ = 0.4): the
/// share of 400 series with a change point within 3 results of the step, with the correction:
/// at least 75% (step after 30) and 65% (after 45; fewer results after the step).
#[test]
fn an_eight_percent_step_is_found_within_three_results() {
    let sims = 400;
    let size = 1.08_f64.ln();
    for (at, floor) in [(30, 0.75), (45, 0.65)] {
        let corrected = splits(&options(true), RHO, sims, 202 + at as u64, Some((at, size)));
        let plain = splits(
            &options(false),
            RHO,
            sims,
            202 + at as u64,
            Some((at, size)),
        );
        let share = |s: &Splits| s.near as f64 / s.sims as f64;
        println!(
            "+8% step at result {at} of {LENGTH}: found within 3 results in {:.1}% of {sims} series with the AR(1) correction ({:.1}% with any change point), {:.1}% without (Otava's test)",
            100.0 * share(&corrected),
            100.0 * corrected.any as f64 / sims as f64,
            100.0 * share(&plain)
        );
        assert!(share(&corrected) >= floor, "{corrected:?}");
    }
}

/// The share of `sims` series of `n` results with slope `slope` a result (AR(1) noise of
/// coefficient `rho`, sd `sd`) whose drift has p < 0.05.
fn drift_reported(n: usize, slope: f64, sd: f64, rho: f64, sims: usize, seed: u64) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let reported = (0..sims)
        .filter(|_| {
            let values: Vec<f64> = ar1(&mut rng, n, rho)
                .into_iter()
                .enumerate()
                .map(|(t, e)| sd * e + slope * t as f64)
                .collect();
            drift(&values).expect("enough values").p_value < 0.05
        })
        .count();
    reported as f64 / sims as f64
}

/// A drift of 1% a result over 10 results at 1% noise is reported (p < 0.05) in most series,
/// independent or AR(1) ρ = 0.4; flat AR(1) series of 10 and 30 results are reported at close to
/// the test's 5%.
#[test]
fn a_one_percent_drift_is_reported_and_flat_series_are_not() {
    let sims = 1000;
    let slope = 1.01_f64.ln();
    let found_iid = drift_reported(10, slope, 0.01, 0.0, sims, 301);
    let found_ar = drift_reported(10, slope, 0.01, RHO, sims, 302);
    let flat_10 = drift_reported(10, 0.0, 0.01, RHO, sims, 303);
    let flat_30 = drift_reported(30, 0.0, 0.01, RHO, sims, 304);
    let flat_iid = drift_reported(30, 0.0, 0.01, 0.0, sims, 305);
    println!(
        "drift 1%/result over 10 results, noise 1%: reported (p < 0.05) in {:.1}% (independent), {:.1}% (AR(1) rho {RHO}) of {sims}",
        100.0 * found_iid,
        100.0 * found_ar
    );
    println!(
        "flat series, noise 1%: reported in {:.1}% (10 results, AR(1) rho {RHO}), {:.1}% (30 results, AR(1) rho {RHO}), {:.1}% (30 results, independent) of {sims}",
        100.0 * flat_10,
        100.0 * flat_30,
        100.0 * flat_iid
    );
    assert!(
        found_iid >= 0.9 && found_ar >= 0.8,
        "{found_iid} {found_ar}"
    );
    assert!(flat_10 <= 0.1 && flat_30 <= 0.1 && flat_iid <= 0.07);
}
