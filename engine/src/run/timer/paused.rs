//! The precise timer of the crate's tests: the platform's, or one on tokio's paused clock that
//! wakes exactly at its deadline (the runs on virtual time: `run/fake.rs`).

use std::io;
use std::time::{Duration, Instant};

use super::Platform;

/// The platform's precise timer, or the virtual one.
pub(crate) enum PreciseTimer {
    Real(Platform),
    /// On tokio's paused clock whose timer ticks (1 ms apart) count from this instant: the
    /// first instant of the test's runtime.
    Paused(Instant),
}

impl PreciseTimer {
    /// The platform's timer, as outside tests.
    pub(crate) fn new() -> io::Result<PreciseTimer> {
        Platform::new().map(PreciseTimer::Real)
    }

    /// Sleeps until `deadline`, as the platform's timer does; on the paused clock, wakes at
    /// `deadline` exactly (or as soon as a task that stalled the clock past it lets it run).
    pub(crate) async fn sleep_until(&mut self, deadline: Instant) -> io::Result<()> {
        match self {
            PreciseTimer::Real(timer) => timer.sleep_until(deadline).await,
            PreciseTimer::Paused(origin) => {
                sleep_exactly_until(*origin, deadline).await;
                Ok(())
            }
        }
    }
}

/// tokio's timer tick.
const TICK: Duration = Duration::from_millis(1);

/// On a paused clock whose ticks count from `origin`, wakes at `deadline` exactly. tokio's
/// timer wakes only on ticks, and when its runtime is idle it moves the paused clock on by
/// whole ticks (`runtime/time`: a clock between two ticks stays between two, and every sleep
/// then wakes late by as much). So: a clock between two ticks (after an exact wake) is first
/// moved onto the next one, or to `deadline` if sooner; on a tick, tokio's sleep takes it to
/// the last tick at or before `deadline`; the rest, under a tick, is the clock moved on. No
/// tick is passed over, so no other task's timer is; one that sleeps on this timer to an
/// instant less than a tick ahead of another's can be, and then wakes that late.
async fn sleep_exactly_until(origin: Instant, deadline: Instant) {
    loop {
        let now = crate::run::clock::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        let since_tick = now.saturating_duration_since(origin).as_nanos() % TICK.as_nanos();
        if since_tick != 0 {
            let to_tick = TICK - Duration::from_nanos(since_tick as u64);
            tokio::time::advance(to_tick.min(left)).await;
        } else if left >= TICK {
            let ticks = (left.as_nanos() / TICK.as_nanos()) as u32;
            tokio::time::sleep_until((now + TICK * ticks).into()).await;
        } else {
            tokio::time::advance(left).await;
        }
    }
}
