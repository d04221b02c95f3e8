//! The interrupt of a run: the first Ctrl-C (SIGINT) or SIGTERM (Ctrl-C or Ctrl-Break on
//! Windows) stops it. [`Interrupt`] sets a stop flag that `pipeline`, `quick` and `ab` hand to
//! the run; [`interrupt_signal`] is the future that `serve` shuts down on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Watches for an interrupt: sets `stop` on the first Ctrl-C (SIGINT) or SIGTERM (see
/// [`interrupt_signal`]), from a thread of its own that ends when this is dropped. The handlers
/// stay installed after that: a later Ctrl-C is ignored, as while watching.
pub(crate) struct Interrupt {
    /// Set on the signal.
    pub(crate) stop: Arc<AtomicBool>,
    /// Dropped with this, which ends the watching thread.
    _watching: tokio::sync::oneshot::Sender<()>,
}

impl Interrupt {
    /// Installs the handlers (before it returns) and starts watching.
    pub(crate) fn watch() -> std::io::Result<Interrupt> {
        let stop = Arc::new(AtomicBool::new(false));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let signal = {
            let _in_runtime = runtime.enter();
            interrupt_signal()?
        };
        let (watching, dropped) = tokio::sync::oneshot::channel::<()>();
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("loadgate-signals".to_string())
            .spawn(move || {
                runtime.block_on(async {
                    tokio::select! {
                        () = signal => flag.store(true, Ordering::Relaxed),
                        _ = dropped => {}
                    }
                });
            })?;
        Ok(Interrupt {
            stop,
            _watching: watching,
        })
    }
}

/// A future that resolves on the first SIGINT or SIGTERM; on Windows, on the first Ctrl-C or
/// Ctrl-Break. The handlers are installed when this function returns (it needs a tokio runtime
/// with I/O enabled; `tokio::signal::ctrl_c` would install its handler only when first polled).
pub(crate) fn interrupt_signal() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    #[cfg(windows)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::windows::{ctrl_break, ctrl_c};
        (ctrl_c()?, ctrl_break()?)
    };
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    /// SIGTERM (what a CI runner sends on cancel) stops a run as Ctrl-C does (`tests/it/run.rs`
    /// sends SIGINT to the binary).
    #[test]
    fn sigterm_sets_the_stop_flag() {
        let interrupt = super::Interrupt::watch().unwrap();
        assert!(!interrupt.stop.load(Ordering::Relaxed));
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !interrupt.stop.load(Ordering::Relaxed) {
            assert!(
                Instant::now() < deadline,
                "SIGTERM did not set the flag in 5 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
