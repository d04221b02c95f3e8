//! The circular block bootstrap of a run's seconds (Politis & Romano 1992): blocks of `block`
//! consecutive seconds, wrapping around the end, drawn with replacement until the run's length
//! is filled; the block length is chosen from the data (Politis & White 2004, corrected by
//! Patton, Politis & White 2009).

/// The fewest complete seconds a run must have for a two-run verdict: with fewer, every rule is
/// inconclusive ("runs too short to judge"). Chosen from the coverage simulations in `sims.rs`:
/// from this length on, each bound of the circular block bootstrap interval of a percentile of
/// merged seconds ([`block_length`], expanded by [`bootstrap_df`]) misses the truth at most 2
/// points more often than its stated level, with independent and with AR(1) (φ = 0.3, 0.5)
/// seconds.
pub(crate) const MIN_SECONDS: usize = 20;

/// The block length, in seconds, of the circular block bootstrap of a run whose per-second
/// values are `series` (e.g. each second's median log latency): the larger of the automatic
/// length of Politis & White (2004, corrected by Patton, Politis & White 2009; see
/// [`politis_white`]) and `⌈√n⌉`, at most `⌈min(3√n, n/3)⌉` (their cap); 1 for fewer than 4
/// values. The floor `⌈√n⌉` is this module's: with tens of seconds the automatic rule cannot see
/// an AR(1) dependence of φ = 0.5 (its lag-1 autocorrelation is within the rule's noise band
/// `±2·√(log10 n / n)`, ±0.51 at n = 20) and picks 1, and the interval then covers 74% for a stated
/// 90% (`sims.rs`); with the floor and the expansion of [`bootstrap_df`] it holds its level from
/// [`MIN_SECONDS`] on, and costs independent seconds a somewhat wider interval.
pub(crate) fn block_length(series: &[f64]) -> usize {
    let n = series.len();
    if n < 4 {
        return 1;
    }
    let nf = n as f64;
    let cap = (3.0 * nf.sqrt()).min(nf / 3.0).ceil() as usize;
    politis_white(series)
        .max(nf.sqrt().ceil() as usize)
        .min(cap.max(1))
}

/// The automatic block length of the circular block bootstrap for `series` (n ≥ 4 values),
/// rounded, at least 1 (not capped):
/// `b = (2·G²/D)^(1/3) · n^(1/3)` with `G = Σ λ(k/M)·|k|·R̂(k)`, `D = (4/3)·(Σ λ(k/M)·R̂(k))²`
/// over `|k| ≤ M` (Politis & White 2004, eq. 9, with the circular bootstrap's constant corrected by
/// Patton, Politis & White 2009), R̂ the sample autocovariance (divisor n), λ the flat-top lag
/// window (1 on `|t| ≤ ½`, `2(1 − |t|)` on `½ < |t| ≤ 1`, 0 beyond), and `M = 2·m̂`, m̂ the
/// smallest lag after which `K_N = max(5, √log10 n)` autocorrelations in a row are within
/// `±2·√(log10 n / n)` (Politis & White 2004, §3.2; `m̂ = 0`, so `b = 1`, when none is outside),
/// M at most `⌈√n⌉ + K_N`. 1 for a constant series.
fn politis_white(series: &[f64]) -> usize {
    let n = series.len();
    let nf = n as f64;
    let mean = series.iter().sum::<f64>() / nf;
    let centred: Vec<f64> = series.iter().map(|x| x - mean).collect();
    let autocovariance = |k: usize| -> f64 {
        centred[k..]
            .iter()
            .zip(&centred)
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / nf
    };
    let r0 = autocovariance(0);
    if r0 <= 0.0 || !r0.is_finite() {
        return 1;
    }
    let k_n = nf.log10().sqrt().max(5.0).ceil() as usize;
    let m_max = (nf.sqrt().ceil() as usize + k_n).min(n - 1);
    let threshold = 2.0 * (nf.log10() / nf).sqrt();
    let significant: Vec<bool> = (0..=m_max)
        .map(|k| (autocovariance(k) / r0).abs() >= threshold)
        .collect();
    // Smallest m with lags m+1 ..= m+K_N all insignificant (lags past m_max count as such).
    let m_hat = (0..=m_max)
        .find(|&m| (m + 1..=m + k_n).all(|k| k > m_max || !significant[k]))
        .unwrap_or(m_max);
    let big_m = (2 * m_hat).min(m_max);
    if big_m == 0 {
        return 1;
    }
    let window = |k: usize| {
        let t = k as f64 / big_m as f64;
        if t <= 0.5 { 1.0 } else { 2.0 * (1.0 - t) }
    };
    let (mut g, mut long_run) = (0.0, r0);
    for k in 1..=big_m {
        let r = window(k) * autocovariance(k);
        g += 2.0 * k as f64 * r;
        long_run += 2.0 * r;
    }
    let d = 4.0 / 3.0 * long_run * long_run;
    if d <= 0.0 || !d.is_finite() {
        return 1;
    }
    let b = (2.0 * g * g / d).cbrt() * nf.cbrt();
    if b.is_finite() {
        b.round().max(1.0) as usize
    } else {
        1
    }
}

/// Degrees of freedom of a run of `seconds` seconds resampled in blocks of `block`: the number of
/// blocks less one, `n/b − 1`, at least 1. Given as [`Evidence::df`](super::Evidence) of a
/// bootstrap test (the smaller of the two runs'), it expands the bootstrap's critical values for
/// few blocks (Hesterberg 2015, §5.1).
pub(crate) fn bootstrap_df(seconds: usize, block: usize) -> f64 {
    (seconds as f64 / block.max(1) as f64 - 1.0).max(1.0)
}

/// One circular block bootstrap resample of the indices `0..n` into `out` (cleared first):
/// blocks `s, s+1, …, s+block−1` (mod n) with uniform random starts s, until `out` holds n
/// indices (the last block cut short). `block` is clamped to `[1, n]`; n = 0 leaves `out` empty.
pub(crate) fn circular_indices(
    n: usize,
    block: usize,
    rng: &mut fastrand::Rng,
    out: &mut Vec<usize>,
) {
    out.clear();
    if n == 0 {
        return;
    }
    let block = block.clamp(1, n);
    while out.len() < n {
        let start = rng.usize(0..n);
        let take = block.min(n - out.len());
        out.extend((start..start + take).map(|i| i % n));
    }
}

#[cfg(test)]
mod tests {
    use super::super::sims::ar1;
    use super::*;

    #[test]
    fn independent_seconds_get_short_blocks_and_correlated_ones_longer() {
        let mut rng = fastrand::Rng::with_seed(11);
        let iid = ar1(&mut rng, 400, 0.0);
        let correlated = ar1(&mut rng, 400, 0.7);
        let (b_iid, b_ar) = (politis_white(&iid), politis_white(&correlated));
        assert!(b_iid <= 2, "{b_iid}");
        // Theory for AR(1) φ = 0.7, n = 400: (6φ²/(1 − φ²)²)^(1/3)·n^(1/3) ≈ 16.5.
        assert!((8..=25).contains(&b_ar), "{b_ar}");
        // The floor ⌈√n⌉ = 20 wins for both here.
        assert_eq!(block_length(&iid), 20);
        assert_eq!(block_length(&correlated), 20.max(b_ar));
    }

    #[test]
    fn block_length_is_clamped_and_defined_for_short_or_flat_series() {
        assert_eq!(block_length(&[]), 1);
        assert_eq!(block_length(&[1.0, 2.0, 3.0]), 1);
        assert_eq!(block_length(&[2.0; 30]), 6);
        assert_eq!(politis_white(&[2.0; 30]), 1);
        let trend: Vec<f64> = (0..30).map(f64::from).collect();
        assert!(block_length(&trend) <= 10);
        assert_eq!(block_length(&[0.0, 1.0, 0.0, 1.0]), 2);
    }

    #[test]
    fn circular_indices_fill_n_in_consecutive_wrapping_blocks() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut out = Vec::new();
        circular_indices(10, 4, &mut rng, &mut out);
        assert_eq!(out.len(), 10);
        for chunk in out.chunks(4) {
            for pair in chunk.windows(2) {
                assert_eq!(pair[1], (pair[0] + 1) % 10);
            }
        }
        circular_indices(0, 4, &mut rng, &mut out);
        assert!(out.is_empty());
        circular_indices(3, 0, &mut rng, &mut out);
        assert_eq!(out.len(), 3);
    }
}
