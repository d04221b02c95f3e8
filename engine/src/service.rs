//! The system under test: started before the run, stopped after it, on failure and on Ctrl-C.
//!
//! The command runs in its own process group, so stopping it (SIGTERM to the group, SIGKILL
//! after 5 s, `STOP_GRACE`) reaches the children it started too. Its output goes to our stderr.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::plan::ServicePlan;

/// How long the service has to exit after SIGTERM before it gets SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);
/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(50);

/// Why the service could not be brought up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServiceError {
    #[error("cannot start service `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("service `{command}` exited with {status} before it was ready")]
    Exited { command: String, status: String },
    #[error("service `{command}` was not ready: `{url}` did not answer within {timeout:?}")]
    NotReady {
        command: String,
        url: String,
        timeout: Duration,
    },
    #[error("interrupted while waiting for service `{command}`")]
    Interrupted { command: String },
}

/// A running service; stopped when dropped.
pub(crate) struct Service {
    child: Child,
}

impl Service {
    /// Starts the command and waits until its readiness URL answers with any HTTP response.
    /// Gives up when the command exits, on `ready_timeout`, or when `stop` is set.
    pub(crate) fn start(plan: &ServicePlan, stop: &AtomicBool) -> Result<Service, ServiceError> {
        let command = plan.display_command.clone();
        let stdout = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_or_else(|_| Stdio::null(), Stdio::from);
        let mut cmd = Command::new(&plan.command[0]);
        cmd.args(&plan.command[1..])
            .envs(plan.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&plan.working_dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .process_group(0);
        // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe; it makes the kernel send
        // SIGTERM to the service if loadgate dies without running its cleanup.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
            });
        }
        let child = cmd.spawn().map_err(|source| ServiceError::Spawn {
            command: command.clone(),
            source,
        })?;
        let mut service = Service { child };

        let deadline = Instant::now() + plan.ready_timeout;
        loop {
            if let Ok(Some(status)) = service.child.try_wait() {
                return Err(ServiceError::Exited {
                    command,
                    status: status.to_string(),
                });
            }
            if stop.load(Ordering::Relaxed) {
                return Err(ServiceError::Interrupted { command });
            }
            if probe(plan) {
                return Ok(service);
            }
            if Instant::now() >= deadline {
                return Err(ServiceError::NotReady {
                    command,
                    url: format!("http://{}", plan.ready),
                    timeout: plan.ready_timeout,
                });
            }
            std::thread::sleep(PROBE_INTERVAL);
        }
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL after [`STOP_GRACE`]. The group
    /// is signalled even when its leader has exited, since children it started may live on.
    fn stop(&mut self) {
        let group = Pid::from_raw(self.child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = Instant::now() + STOP_GRACE;
        loop {
            let _ = self.child.try_wait(); // reap the leader when it exits
            // Signal 0 checks whether any process of the group is left.
            if killpg(group, None).is_err() {
                return;
            }
            if Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = killpg(group, Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One readiness probe: does the URL answer with an HTTP response within a second? Over TLS
/// for an `https://` URL (the certificate is not verified: only whether it answers).
fn probe(plan: &ServicePlan) -> bool {
    let timeout = Duration::from_secs(1);
    let Some(addr) = (plan.ready.host.as_str(), plan.ready.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    else {
        return false;
    };
    let Ok(stream) = TcpStream::connect_timeout(&addr, timeout) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    match &plan.ready_tls {
        None => answers(stream, &plan.ready_request),
        Some((config, name)) => match rustls::ClientConnection::new(config.clone(), name.clone()) {
            Ok(tls) => answers(rustls::StreamOwned::new(tls, stream), &plan.ready_request),
            Err(_) => false,
        },
    }
}

/// Sends `request` and reads the start of the answer: does it begin like an HTTP response?
fn answers(mut stream: impl Read + Write, request: &[u8]) -> bool {
    if stream
        .write_all(request)
        .and_then(|()| stream.flush())
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 8];
    let mut filled = 0;
    while filled < head.len() {
        match stream.read(&mut head[filled..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => filled += n,
        }
    }
    head.starts_with(b"HTTP/1.")
}
