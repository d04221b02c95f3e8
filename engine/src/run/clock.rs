//! The scheduler's clock: tokio's [`Instant`](tokio::time::Instant), read as a std `Instant`.
//!
//! In the engine this is the system's monotonic clock at the same cost as
//! `std::time::Instant::now()`: without tokio's `test-util` feature (a dev-dependency only),
//! tokio's `Instant::now()` is that call and nothing more, so the per-request path gains no
//! branch, dynamic dispatch or allocation. In the crate's own tests, tokio's clock can be
//! paused (`start_paused`): the dispatcher, paced and thinking virtual users, their pauses and
//! the lateness they record then run on virtual time, exactly, against a fake server
//! (`fake.rs`). Everything that decides when work is due reads this clock; a response's own
//! times (`transport`) and the precise timer's spin (`timer`) read the system's, which is the
//! same clock whenever a run is real.

use std::time::Instant;

/// Now, on the scheduler's clock (the system's; a test's virtual one when its runtime's time
/// is paused).
#[inline]
pub(super) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}
