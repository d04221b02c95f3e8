//! A sleep with microsecond precision for the open model's dispatcher and paced virtual users.
//!
//! tokio's timer wheel has a 1 ms tick, so a task sleeping until an arrival's (or a paced
//! request's) due time wakes on the next tick: about 0.7 ms late at the median
//! (bench/rate_accuracy.sh), and that lateness would be part of every latency measured from
//! the due time. [`PreciseTimer`] is, on Linux, a
//! timerfd (`timerfd.rs`, the measured path); elsewhere a tokio sleep to shortly before the
//! deadline, then yields and a spin to it (`portable.rs`, compiled on Linux for its tests).
//! Both have the same interface: `PreciseTimer::new() -> io::Result<PreciseTimer>` (in a tokio
//! runtime with I/O enabled) and `async fn sleep_until(&mut self, deadline: Instant) ->
//! io::Result<()>`. In the crate's tests a third one wakes exactly at the deadline on tokio's
//! paused clock (`paused.rs`, `Shared::precise_timer`).

#[cfg(any(not(target_os = "linux"), test))]
mod portable;
#[cfg(target_os = "linux")]
mod timerfd;

#[cfg(test)]
mod paused;

#[cfg(not(target_os = "linux"))]
use portable::PreciseTimer as Platform;
#[cfg(target_os = "linux")]
use timerfd::PreciseTimer as Platform;

/// The precise timer: the platform's.
#[cfg(not(test))]
pub(crate) type PreciseTimer = Platform;
/// The precise timer: in the crate's tests, the platform's, or one on tokio's paused clock
/// (`paused.rs`) for the runs on virtual time.
#[cfg(test)]
pub(crate) use paused::PreciseTimer;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::{Duration, Instant};

    use nix::time::{ClockId, clock_gettime};

    /// What one timer did over many sleeps.
    #[derive(Default)]
    struct Sample {
        /// How late each sleep woke, sorted once all are in.
        late: Vec<Duration>,
        /// The time slept, and the CPU time this thread used meanwhile.
        waited: Duration,
        cpu: Duration,
    }

    impl Sample {
        /// The `q` quantile (0..=1) of the lateness, in µs (`late` sorted).
        fn quantile_us(&self, q: f64) -> u128 {
            self.late[((self.late.len() - 1) as f64 * q).round() as usize].as_micros()
        }

        fn figures(&self) -> String {
            format!(
                "p50 {} µs, p90 {} µs, p99 {} µs, max {} µs late; CPU busy {:.0}% of the wait",
                self.quantile_us(0.5),
                self.quantile_us(0.9),
                self.quantile_us(0.99),
                self.quantile_us(1.0),
                100.0 * self.cpu.as_secs_f64() / self.waited.as_secs_f64()
            )
        }
    }

    fn thread_cpu() -> Duration {
        clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
            .unwrap()
            .into()
    }

    /// Sleeps until a deadline `$ahead` of now, on the future `$sleep` makes of the deadline
    /// `$d`, and records it in `$sample`.
    macro_rules! sleep {
        ($sample:expr, $ahead:expr, |$d:ident| $sleep:expr) => {{
            let (started, cpu) = (Instant::now(), thread_cpu());
            let $d = started + $ahead;
            $sleep.await;
            let woke = Instant::now();
            assert!(woke >= $d, "woke {:?} early", $d - woke);
            $sample.late.push(woke - $d);
            $sample.waited += woke - started;
            $sample.cpu += thread_cpu() - cpu;
        }};
    }

    /// Both timers, alternately, on `TICKS` deadlines each drawn evenly from 50 µs..3 ms ahead
    /// (the dispatcher hands its timer up to 2 ms; beyond the portable timer's 2 ms margin its
    /// tokio sleep is used too), about 2 s in all; then tokio's sleep alone for reference. The
    /// portable timer must beat tokio's 1 ms tick as the timerfd does. Run with `--nocapture`
    /// for the figures.
    #[test]
    fn real_time_the_portable_timer_is_as_punctual_as_the_timerfd() {
        const TICKS: usize = 500;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (mut timerfd, mut portable, mut reference) = <(Sample, Sample, Sample)>::default();
        runtime.block_on(async {
            let mut fd = super::timerfd::PreciseTimer::new().unwrap();
            let mut spin = super::portable::PreciseTimer::new().unwrap();
            let mut rng = fastrand::Rng::with_seed(20);
            let mut ahead = || Duration::from_micros(rng.u64(50..=3000));
            for _ in 0..TICKS {
                sleep!(timerfd, ahead(), |d| async {
                    fd.sleep_until(d).await.unwrap()
                });
                sleep!(portable, ahead(), |d| async {
                    spin.sleep_until(d).await.unwrap()
                });
            }
            for _ in 0..TICKS / 4 {
                sleep!(reference, ahead(), |d| tokio::time::sleep_until(d.into()));
            }
        });
        for sample in [&mut timerfd, &mut portable, &mut reference] {
            sample.late.sort();
        }
        println!("timerfd:  {}", timerfd.figures());
        println!("portable: {}", portable.figures());
        println!(
            "tokio's sleep alone (for reference): {}",
            reference.figures()
        );
        for (name, sample) in [("timerfd", &timerfd), ("portable", &portable)] {
            // On an idle machine the median is well under tokio's 1 ms tick (a tokio sleep alone
            // wakes ~1.1 ms late; bench/rate_accuracy.sh measures it). The bound is wide: on a
            // machine with more runnable threads than cores (2 cores at a load of 14: timerfd
            // p50 1.3 ms) a thread waits for a core, and the scheduler sets the wake-up, not
            // the timer. The tail is printed, not asserted, for the same reason. Waking early
            // is refused at every sleep.
            assert!(
                sample.quantile_us(0.5) < 2_000,
                "{name}: {}",
                sample.figures()
            );
        }
    }
}
