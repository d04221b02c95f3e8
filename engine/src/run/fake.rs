//! The fake server of the scheduler's tests on a virtual clock (hyperfine's `MockExecutor`):
//! it takes every request in place of the network, for a fixed time on tokio's paused clock,
//! and notes each request's times.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::clock;
use super::timer::PreciseTimer;

/// Takes each request for `service`, on the test's clock, and notes it.
pub(super) struct Server {
    /// How long each request takes.
    service: Duration,
    /// Where the paused clock's ticks count from (`timer::PreciseTimer::Paused`).
    origin: Instant,
    /// Requests started from then on get a response that fails its checks (an unexpected
    /// status); `None`: none fails.
    fail_from: Option<Instant>,
    /// Every request taken, in the order they started.
    served: Mutex<Vec<Served>>,
}

/// One request's times, as the scheduler gave them (`vu::request`'s) and its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Served {
    /// When it was due (its arrival, or its paced slot; else its start).
    pub(super) intended: Instant,
    /// When its virtual user was free to send it.
    pub(super) ready: Instant,
    pub(super) started: Instant,
    pub(super) end: Instant,
    /// Its response failed (an unexpected status).
    pub(super) failed: bool,
    /// The task that sent it: one per virtual user (and per open-model user).
    pub(super) task: Option<tokio::task::Id>,
}

impl Server {
    /// A server whose every response takes `service`, on a paused clock whose ticks count
    /// from `origin`.
    pub(super) fn new(service: Duration, origin: Instant) -> Server {
        Server {
            service,
            origin,
            fail_from: None,
            served: Mutex::new(Vec::new()),
        }
    }

    /// The same server, failing every request started at `at` or later.
    pub(super) fn failing_from(self, at: Option<Instant>) -> Server {
        Server {
            fail_from: at,
            ..self
        }
    }

    /// Takes a request due at `intended`, its virtual user ready at `ready`, started at
    /// `started` (now): answers it `service` later, exactly, and returns then with what it
    /// noted.
    pub(super) async fn serve(
        &self,
        intended: Instant,
        ready: Instant,
        started: Instant,
    ) -> Served {
        let end = clock::now() + self.service;
        if !self.service.is_zero() {
            let _ = PreciseTimer::Paused(self.origin).sleep_until(end).await;
        }
        let served = Served {
            intended,
            ready,
            started,
            end,
            failed: self.fail_from.is_some_and(|at| started >= at),
            task: tokio::task::try_id(),
        };
        self.lock().push(served);
        served
    }

    /// The requests taken so far, in the order they started.
    pub(super) fn served(&self) -> Vec<Served> {
        let mut served = self.lock().clone();
        served.sort_by_key(|s| s.started);
        served
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Served>> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }
}
