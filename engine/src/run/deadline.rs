//! A virtual user's request timeout.

use std::pin::Pin;
use std::time::Instant;

use tokio::time::{Sleep, sleep_until};

use super::clock;

/// A virtual user's request timeout: one tokio timer, re-armed lazily. Each request's
/// deadline only moves later, so the timer stays armed at an earlier request's deadline; when
/// it fires before the current deadline it is re-armed. A request then costs no timer-wheel
/// insertion and removal, only a poll (at most one re-arm per timeout period).
pub(super) struct Deadline {
    sleep: Pin<Box<Sleep>>,
    /// When `sleep` fires.
    armed: Instant,
}

impl Deadline {
    pub(super) fn new() -> Deadline {
        let now = clock::now();
        Deadline {
            sleep: Box::pin(sleep_until(now.into())),
            armed: now,
        }
    }

    /// Runs `work` until it ends, or until `deadline` (`None`).
    ///
    /// `work` comes pinned by the caller: taken by value, it would be held twice in this
    /// future (the argument, and the pinned copy that is polled), 2.3 KB more per virtual
    /// user for an HTTP request.
    pub(super) async fn run<F: Future>(
        &mut self,
        deadline: Instant,
        mut work: Pin<&mut F>,
    ) -> Option<F::Output> {
        if self.armed > deadline {
            // A shorter timeout than the last request's (another target).
            self.arm(deadline);
        }
        loop {
            tokio::select! {
                biased;
                output = work.as_mut() => return Some(output),
                () = self.sleep.as_mut() => {
                    if clock::now() >= deadline {
                        return None;
                    }
                    self.arm(deadline);
                }
            }
        }
    }

    fn arm(&mut self, at: Instant) {
        self.sleep.as_mut().reset(at.into());
        self.armed = at;
    }
}
