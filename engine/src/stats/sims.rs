//! Simulations with known answers behind the stated levels and constants of `stats/` (unit tests,
//! seeded): `cargo test -p loadgate --lib stats:: -- --nocapture` prints the figures.

/// A standard normal draw (Box–Muller).
pub(super) fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = 1.0 - rng.f64();
    let v = rng.f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// `n` values of a stationary AR(1) series `x_t = φ·x_{t−1} + √(1 − φ²)·e_t` (unit variance,
/// lag-k autocorrelation φ^k), started from its stationary distribution.
pub(super) fn ar1(rng: &mut fastrand::Rng, n: usize, phi: f64) -> Vec<f64> {
    let innovation = (1.0 - phi * phi).sqrt();
    let mut x = normal(rng);
    (0..n)
        .map(|_| {
            let value = x;
            x = phi * x + innovation * normal(rng);
            value
        })
        .collect()
}
