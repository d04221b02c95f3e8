//! A sleep with microsecond precision for the open model's dispatcher.
//!
//! tokio's timer wheel has a 1 ms tick, so a task sleeping until an arrival's due time wakes
//! on the next tick: about 0.7 ms late at the median (bench/rate_accuracy.sh), and that
//! lateness would be part of every open-model latency. [`PreciseTimer`] is, on Linux, a
//! timerfd (`timerfd.rs`, the measured path); elsewhere a tokio sleep to shortly before the
//! deadline, then yields and a spin to it (`portable.rs`, compiled on Linux for its tests).
//! Both have the same interface: `PreciseTimer::new() -> io::Result<PreciseTimer>` (in a tokio
//! runtime with I/O enabled) and `async fn sleep_until(&mut self, deadline: Instant) ->
//! io::Result<()>`.

#[cfg(any(not(target_os = "linux"), test))]
mod portable;
#[cfg(target_os = "linux")]
mod timerfd;

#[cfg(not(target_os = "linux"))]
pub(crate) use portable::PreciseTimer;
#[cfg(target_os = "linux")]
pub(crate) use timerfd::PreciseTimer;

/// Deadlines closer than this are waited for by spinning (the Linux kernel's default timer
/// slack): a timer would wake later than that.
const SPIN_SPAN: std::time::Duration = std::time::Duration::from_micros(50);

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// A deadline `ahead` of now, slept until on `$timer`; the lateness, or `None` when the
    /// sleep woke before the deadline.
    macro_rules! late {
        ($timer:expr, $ahead:expr) => {{
            let deadline = Instant::now() + $ahead;
            $timer.sleep_until(deadline).await.unwrap();
            Instant::now().checked_duration_since(deadline)
        }};
    }

    /// The `q` quantile (0..=1) of sorted lateness, in µs.
    fn quantile_us(sorted: &[Duration], q: f64) -> u128 {
        sorted[((sorted.len() - 1) as f64 * q).round() as usize].as_micros()
    }

    /// Both timers, alternately, on `TICKS` deadlines each drawn evenly from 50 µs..3 ms ahead
    /// (the dispatcher hands its timer up to 2 ms; beyond the portable timer's 2 ms margin its
    /// tokio sleep is used too), about 2 s in all; then tokio's sleep alone for reference. The
    /// portable timer must beat tokio's 1 ms tick as the timerfd does. Run with `--nocapture`
    /// for the figures.
    #[test]
    fn the_portable_timer_is_as_punctual_as_the_timerfd() {
        const TICKS: usize = 500;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (mut timerfd, mut portable) = runtime.block_on(async {
            let mut fd = super::timerfd::PreciseTimer::new().unwrap();
            let mut portable = super::portable::PreciseTimer::new().unwrap();
            let (mut timerfd, mut portable_late) = (Vec::new(), Vec::new());
            let mut rng = fastrand::Rng::with_seed(20);
            for _ in 0..TICKS {
                let ahead = Duration::from_micros(rng.u64(50..=3000));
                timerfd.push(late!(fd, ahead).expect("the timerfd woke early"));
                let ahead = Duration::from_micros(rng.u64(50..=3000));
                portable_late.push(late!(portable, ahead).expect("the portable timer woke early"));
            }
            // For reference: tokio's sleep alone (printed, not asserted).
            let mut tokio_late = Vec::new();
            for _ in 0..TICKS / 4 {
                let deadline = Instant::now() + Duration::from_micros(rng.u64(50..=3000));
                tokio::time::sleep_until(deadline.into()).await;
                tokio_late.push(Instant::now().saturating_duration_since(deadline));
            }
            tokio_late.sort();
            println!(
                "tokio sleep alone: p50 {} µs, p99 {} µs",
                quantile_us(&tokio_late, 0.5),
                quantile_us(&tokio_late, 0.99)
            );
            (timerfd, portable_late)
        });
        timerfd.sort();
        portable.sort();
        let figures = |late: &[Duration]| {
            format!(
                "p50 {} µs, p90 {} µs, p99 {} µs, max {} µs",
                quantile_us(late, 0.5),
                quantile_us(late, 0.9),
                quantile_us(late, 0.99),
                quantile_us(late, 1.0)
            )
        };
        println!("timerfd:  {}", figures(&timerfd));
        println!("portable: {}", figures(&portable));
        for (name, late) in [("timerfd", &timerfd), ("portable", &portable)] {
            // The median well under tokio's 1 ms tick (a tokio sleep alone wakes ~1.1 ms late),
            // even on a busy machine. The tail is printed, not asserted: on a shared machine a
            // thread waits for a core, and the scheduler sets it, not the timer.
            assert!(quantile_us(late, 0.5) < 200, "{name}: {}", figures(late));
        }
    }
}
