//! Tests' per-second latencies, shared by the tests of `two_run`, `between_runs` and `scoped`.

/// `n` seconds of 200 latencies each about `median_us`, spread ±30% (log-normal), seeded.
pub(super) fn seconds(seed: u64, n: usize, median_us: f64) -> Vec<Vec<u64>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            (0..200)
                .map(|_| {
                    let (u1, u2) = (rng.f64().max(1e-12), rng.f64());
                    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    (median_us * (0.3 * z).exp()) as u64
                })
                .collect()
        })
        .collect()
}
