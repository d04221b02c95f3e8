//! The Linux timer: a timerfd armed for the exact duration and awaited through tokio's reactor
//! (timerfds take no timer slack: the wake-up is as late as the scheduler makes it).
//!
//! It never spins: a deadline a few microseconds ahead is armed like any other (its expiry is
//! usually in by the reactor's next poll, so the thread does not sleep for it), and the worker's
//! other tasks run meanwhile. A spin to a deadline under 50 µs ahead held the thread from its
//! virtual users' responses: at 20,000 arrivals/s (50 µs apart) it spun most of the time
//! (62% of the CPU samples in `pause_precisely`, a third of the arrivals dropped on a loaded
//! 2-core machine; bench/README.md, issue 36).

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Instant;

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// One timerfd, re-armed for each sleep.
pub(crate) struct PreciseTimer {
    fd: AsyncFd<Fd>,
}

/// `TimerFd` as tokio's reactor wants it.
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

impl PreciseTimer {
    /// Creates the timer (needs a tokio runtime with I/O enabled).
    pub(crate) fn new() -> io::Result<PreciseTimer> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // SAFETY: `Fd` owns the timerfd, so the descriptor stays open and the same for as long
        // as the `AsyncFd` holds it.
        let fd = unsafe { AsyncFd::register_with_interest(Fd(fd), Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(PreciseTimer { fd })
    }

    /// Sleeps until `deadline`; returns at once when it has passed.
    pub(crate) async fn sleep_until(&mut self, deadline: Instant) -> io::Result<()> {
        let now = Instant::now();
        if deadline <= now {
            return Ok(());
        }
        // Not zero (that would disarm the timer): `deadline` is after `now`.
        let wait = TimeSpec::from_duration(deadline - now);
        // Arming resets the timer's expiration count, and the reactor is edge-triggered, so
        // the expiration need not be read (one syscall fewer per sleep): each expiry after
        // the arming is a new readiness event.
        self.fd
            .get_ref()
            .0
            .set(Expiration::OneShot(wait), TimerSetTimeFlags::empty())?;
        loop {
            let mut ready = self.fd.readable().await?;
            ready.clear_ready();
            // An expiry of an earlier arming that the reactor reports late wakes us early.
            if Instant::now() >= deadline {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn real_time_wakes_after_the_deadline_and_not_a_tick_late() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut timer = PreciseTimer::new().unwrap();
            let mut late = Vec::new();
            for _ in 0..50 {
                let deadline = Instant::now() + Duration::from_micros(300);
                timer.sleep_until(deadline).await.unwrap();
                let now = Instant::now();
                assert!(now >= deadline);
                late.push(now - deadline);
            }
            late.sort();
            // Never early; the median wake-up under tokio's 1 ms tick on an idle machine, and
            // within a wide bound on a busy one (a thread that waits for a core wakes when the
            // scheduler lets it: see `real_time_the_portable_timer_is_as_punctual_as_the_timerfd`).
            assert!(late[25] < Duration::from_millis(2), "{late:?}");
            // A deadline in the past returns at once.
            timer.sleep_until(Instant::now()).await.unwrap();
        });
    }

    #[test]
    fn real_time_an_abandoned_sleep_does_not_wake_the_next_one_early() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut timer = PreciseTimer::new().unwrap();
            // Armed for 200 µs, polled once, then dropped; it expires while nobody waits.
            tokio::select! {
                biased;
                _ = timer.sleep_until(Instant::now() + Duration::from_micros(200)) => {
                    panic!("a 200 µs sleep ended at its first poll")
                }
                () = std::future::ready(()) => {}
            }
            // The reactor sees that expiry while this task sleeps on tokio's timer.
            tokio::time::sleep(Duration::from_millis(3)).await;
            // Its readiness is still pending; the next sleep must not end on it.
            let deadline = Instant::now() + Duration::from_millis(5);
            timer.sleep_until(deadline).await.unwrap();
            assert!(Instant::now() >= deadline);
        });
    }
}
