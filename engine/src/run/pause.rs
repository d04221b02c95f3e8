//! Waiting on the hot path: a virtual user's think time, and sleeps that notice a stopped run
//! (checked at least every [`super::COLLECT_INTERVAL`]), the last stretch before a request is
//! due on the precise timer (`timer.rs`).

use std::time::{Duration, Instant};

use tokio::time::sleep_until;

use super::timer::PreciseTimer;
use super::{Shared, clock};
use crate::plan::ThinkTime;

/// A pause of `think_time`: fixed, or drawn uniformly from its range.
pub(super) fn think(think_time: Option<ThinkTime>, rng: &mut fastrand::Rng) -> Duration {
    match think_time {
        Some(ThinkTime::Fixed(d)) => d,
        Some(ThinkTime::Uniform(low, high)) => {
            let span = (high - low).as_nanos() as u64;
            low + Duration::from_nanos(rng.u64(0..=span))
        }
        None => Duration::ZERO,
    }
}

/// Sleeps until `deadline` in slices of at most [`super::COLLECT_INTERVAL`], so that a stopped
/// run is noticed; false when the run was stopped.
pub(super) async fn pause_until(shared: &Shared, deadline: Instant) -> bool {
    loop {
        if shared.halted() {
            return false;
        }
        let now = clock::now();
        if now >= deadline {
            return true;
        }
        sleep_until(deadline.min(now + super::COLLECT_INTERVAL).into()).await;
    }
}

/// How long before an arrival (or a paced request) is due [`pause_precisely`] switches from
/// tokio's 1 ms timer to the precise one.
const PRECISE_SPAN: Duration = Duration::from_millis(2);

/// Sleeps until `deadline`, when a request is due (an arrival, a paced request): long gaps
/// (low rates) in slices, as [`pause_until`], to notice a stop; the last [`PRECISE_SPAN`] on
/// `timer` (tokio's timer when there is none), so that the request starts on time and its
/// latency holds none of the generator's lateness. False when the run was stopped.
pub(super) async fn pause_precisely(
    shared: &Shared,
    timer: &mut Option<PreciseTimer>,
    deadline: Instant,
) -> bool {
    let coarse_until = deadline.checked_sub(PRECISE_SPAN).unwrap_or(deadline);
    if !pause_until(shared, coarse_until).await {
        return false;
    }
    if clock::now() < deadline {
        let precise = match timer.as_mut() {
            Some(timer) => timer.sleep_until(deadline).await.is_ok(),
            None => false,
        };
        if !precise {
            sleep_until(deadline.into()).await;
        }
    }
    true
}
