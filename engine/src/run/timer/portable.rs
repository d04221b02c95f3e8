//! The timer of the systems without timerfd (macOS, Windows): a tokio sleep to [`MARGIN`]
//! before the deadline, then yields to the runtime (the worker's other tasks go on) until
//! [`SPIN_SPAN`] before it, then a spin. Precise at the price of a busy worker thread for up
//! to `MARGIN` per sleep; the Linux timerfd costs nothing while it waits.
//!
//! tokio's sleep wakes on the first 1 ms tick after its deadline, and later still where the
//! system's timer is coarser (about 15 ms on Windows by default, tokio-rs/tokio#5021): there
//! the coarse sleep is late and the deadline is met only when it was less than `MARGIN` away.

use std::io;
use std::time::{Duration, Instant};

/// Deadlines closer than this are waited for by spinning (the Linux kernel's default timer
/// slack): yielding to the runtime would wake later than that.
const SPIN_SPAN: Duration = Duration::from_micros(50);

/// How long before the deadline the tokio sleep ends: its 1 ms tick, plus 1 ms for a wake-up
/// delayed by the scheduler.
const MARGIN: Duration = Duration::from_millis(2);

/// A tokio sleep, yields and a spin.
pub(crate) struct PreciseTimer;

impl PreciseTimer {
    /// Creates the timer; does not fail (the `Result` is the timerfd's interface).
    pub(crate) fn new() -> io::Result<PreciseTimer> {
        Ok(PreciseTimer)
    }

    /// Sleeps until `deadline`; returns at once when it has passed. Does not fail.
    pub(crate) async fn sleep_until(&mut self, deadline: Instant) -> io::Result<()> {
        if let Some(coarse) = deadline.checked_sub(MARGIN)
            && Instant::now() < coarse
        {
            tokio::time::sleep_until(coarse.into()).await;
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            if deadline - now <= SPIN_SPAN {
                std::hint::spin_loop();
            } else {
                tokio::task::yield_now().await;
            }
        }
    }
}
