//! The system under test: started before the run, stopped after it, on failure and on Ctrl-C.
//!
//! The run must measure this service and no other: a `ready_url` that answers before the
//! service starts (a stale server on its port, which would make the service fail to bind) is
//! refused; a service that exits before, or as, its URL answers is not ready; and one that
//! exits during the run ends the run (`Service::finish` says so, with its exit status).
//!
//! On Unix the command runs in its own process group, so stopping it (SIGTERM to the group,
//! SIGKILL after 5 s, `STOP_GRACE`) reaches the children it started too; on Linux the kernel
//! also sends it SIGTERM should loadgate die without stopping it (the parent-death signal). On
//! Windows the command runs in a job object that kills every process in it when loadgate closes
//! it: when the service is stopped, or when loadgate dies. Its output goes to our stderr.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::plan::ServicePlan;

/// How long the service has to exit after SIGTERM before it gets SIGKILL.
#[cfg(unix)]
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);
/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(50);
/// Pause between checks that the service still runs, once it is ready.
const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// Why the service could not be brought up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServiceError {
    #[error("cannot start service `{command}`")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error(
        "something already answers at `{url}` before service `{command}` started: stop it or \
         change the port (the run would measure it, not the service)"
    )]
    AlreadyAnswers { command: String, url: String },
    #[error("service `{command}` exited with {status} before it was ready")]
    Exited { command: String, status: String },
    #[error(
        "service `{command}` exited with {status} during the run: the run was stopped there \
         (its result so far is kept)"
    )]
    Died { command: String, status: String },
    #[error("service `{command}` was not ready: `{url}` did not answer within {timeout:?}")]
    NotReady {
        command: String,
        url: String,
        timeout: Duration,
    },
    #[error("interrupted while waiting for service `{command}`")]
    Interrupted { command: String },
}

/// A running service, watched from when it is ready; stopped when dropped or
/// [finished](Service::finish).
pub(crate) struct Service {
    /// The command as written, for messages.
    command: String,
    /// The service's process, shared with the watching thread.
    process: Arc<Mutex<Watched>>,
    /// The job object the service runs in (kill on close); `None` when it could not be made,
    /// and then only the service's own process is killed.
    #[cfg(windows)]
    job: Option<std::os::windows::io::OwnedHandle>,
}

/// The service's process and what the watching thread found.
struct Watched {
    child: Child,
    /// Set when loadgate stops the service: its exit is then no death.
    stopping: bool,
    /// How it ended, when it exited before loadgate stopped it.
    died: Option<ExitStatus>,
}

impl Service {
    /// Starts the command and waits until its readiness URL answers with any HTTP response,
    /// then watches it: should it exit, `stop` is set, which ends the run. Errors: the URL
    /// answers before the command starts (another server holds the port); the command cannot
    /// start, exits before it is ready (or as its URL answers: another server answered), is
    /// not ready within `ready_timeout`; `stop` was set.
    pub(crate) fn start(
        plan: &ServicePlan,
        stop: &Arc<AtomicBool>,
    ) -> Result<Service, ServiceError> {
        let command = plan.display_command.clone();
        if probe(plan) {
            return Err(ServiceError::AlreadyAnswers {
                command,
                url: plan.ready_url.clone(),
            });
        }
        let mut cmd = Command::new(&plan.command[0]);
        cmd.args(&plan.command[1..])
            .envs(plan.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&plan.working_dir)
            .stdin(Stdio::null())
            .stdout(std::io::stderr());
        #[cfg(unix)]
        own_process_group(&mut cmd);
        let child = cmd.spawn().map_err(|source| ServiceError::Spawn {
            command: command.clone(),
            source,
        })?;
        let service = Service {
            command: command.clone(),
            #[cfg(windows)]
            job: kill_on_close_job(&child),
            process: Arc::new(Mutex::new(Watched {
                child,
                stopping: false,
                died: None,
            })),
        };

        let deadline = Instant::now() + plan.ready_timeout;
        let exited = |service: &Service| service.lock().child.try_wait().ok().flatten();
        loop {
            if let Some(status) = exited(&service) {
                return Err(ServiceError::Exited {
                    command,
                    status: status.to_string(),
                });
            }
            if stop.load(Ordering::Relaxed) {
                return Err(ServiceError::Interrupted { command });
            }
            if probe(plan) {
                // What answered may be another server that took the port first.
                if let Some(status) = exited(&service) {
                    return Err(ServiceError::Exited {
                        command,
                        status: status.to_string(),
                    });
                }
                service.watch(stop.clone());
                return Ok(service);
            }
            if Instant::now() >= deadline {
                return Err(ServiceError::NotReady {
                    command,
                    url: plan.ready_url.clone(),
                    timeout: plan.ready_timeout,
                });
            }
            std::thread::sleep(PROBE_INTERVAL);
        }
    }

    /// Stops the service. Errors: it exited before (during the run), with its exit status.
    pub(crate) fn finish(self) -> Result<(), ServiceError> {
        let died = {
            let mut watched = self.lock();
            watched.stopping = true;
            watched.died
        };
        let command = self.command.clone();
        drop(self);
        match died {
            Some(status) => Err(ServiceError::Died {
                command,
                status: status.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Checks every [`WATCH_INTERVAL`], from a thread of its own, that the service still runs;
    /// when it has exited, keeps its status and sets `stop`. Ends when the service is stopped.
    fn watch(&self, stop: Arc<AtomicBool>) {
        let process = self.process.clone();
        let watching = std::thread::Builder::new()
            .name("loadgate-service".to_string())
            .spawn(move || {
                loop {
                    std::thread::sleep(WATCH_INTERVAL);
                    let mut watched = process.lock().unwrap_or_else(|e| e.into_inner());
                    if watched.stopping {
                        return;
                    }
                    if let Ok(Some(status)) = watched.child.try_wait() {
                        watched.died = Some(status);
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            });
        // Without the thread (the system refused one), the service is not watched: its death
        // shows as failed requests, as before there was a watch.
        if let Err(e) = watching {
            eprintln!("loadgate: cannot watch service `{}`: {e}", self.command);
        }
    }

    /// The service's process and watch, locked (a panicked holder left it usable).
    fn lock(&self) -> MutexGuard<'_, Watched> {
        self.process.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL after [`STOP_GRACE`]. The group
    /// is signalled even when its leader has exited, since children it started may live on.
    #[cfg(unix)]
    fn stop(&mut self) {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        let mut watched = self.lock();
        watched.stopping = true;
        let child = &mut watched.child;
        let group = Pid::from_raw(child.id() as i32);
        let _ = killpg(group, Signal::SIGTERM);
        let deadline = Instant::now() + STOP_GRACE;
        loop {
            let _ = child.try_wait(); // reap the leader when it exits
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
        let _ = child.wait();
    }

    /// Kills every process of the job by closing it (Windows has no SIGTERM to ask first);
    /// without a job, the service's own process.
    #[cfg(windows)]
    fn stop(&mut self) {
        let job = self.job.take();
        let mut watched = self.lock();
        watched.stopping = true;
        match job {
            // Closing the only handle to the job kills its processes.
            Some(job) => drop(job),
            None => {
                let _ = watched.child.kill();
            }
        }
        let _ = watched.child.wait();
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Puts the command in a process group of its own, and on Linux asks the kernel to send it
/// SIGTERM when loadgate dies (the parent-death signal).
#[cfg(unix)]
fn own_process_group(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe; it makes the kernel send
    // SIGTERM to the service if loadgate dies without running its cleanup.
    #[cfg(target_os = "linux")]
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)
                .map_err(std::io::Error::from)
        });
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

/// A job object holding the service, made to kill every process in it when it is closed (when
/// the service is stopped, or when loadgate dies); `None` when Windows refuses. The processes
/// the service starts join its job; one it started before it was assigned (right after the
/// spawn) would stay outside.
#[cfg(windows)]
fn kill_on_close_job(child: &Child) -> Option<std::os::windows::io::OwnedHandle> {
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
        SetInformationJobObject,
    };
    // SAFETY: an anonymous job with default security; a null handle is a failure.
    let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if job.is_null() {
        return None;
    }
    // SAFETY: `job` is a handle we own from here on (closed when this drops).
    let job = unsafe { OwnedHandle::from_raw_handle(job) };
    let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    // SAFETY: both handles are open; the information is the struct of its class, whose size is
    // given.
    let made = unsafe {
        SetInformationJobObject(
            job.as_raw_handle(),
            JobObjectExtendedLimitInformation,
            std::ptr::from_ref(&limits).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        ) != 0
            && AssignProcessToJobObject(job.as_raw_handle(), child.as_raw_handle()) != 0
    };
    made.then_some(job)
}
