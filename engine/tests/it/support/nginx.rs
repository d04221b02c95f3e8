//! A real nginx (Debian's `/usr/sbin/nginx`) as a child process, configured in a temporary
//! directory so that it runs as root or not without touching `/etc` or `/var`.
//!
//! nginx missing is an error, not a skip: CI installs it (`apt-get install nginx`), so a test
//! that needs it fails when it is absent.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Where the nginx binary is looked for first; then `nginx` on `PATH`.
pub const NGINX_BIN: &str = "/usr/sbin/nginx";

/// `location / { return 200 "hello\n"; }`: the body of every path but the two below.
pub const NGINX_HELLO: &[u8] = b"hello\n";

/// The path of the static file (its size is [`NginxOptions::static_size`]).
pub const NGINX_STATIC_PATH: &str = "/static/file.bin";

/// The path of `stub_status` (not written to the access log).
pub const NGINX_STATUS_PATH: &str = "/nginx_status";

/// A JSON body (`{"status": "ok", ...}`, about 600 bytes), gzipped for a request that accepts
/// gzip (nginx's `gzip on`, chunked over HTTP/1.1).
pub const NGINX_GZIP_PATH: &str = "/gzip.json";

/// How long [`Nginx::start`] waits for nginx to accept connections (5 s).
pub const NGINX_START_TIMEOUT: Duration = Duration::from_secs(5);

/// How an [`Nginx`] is configured.
#[derive(Debug, Clone)]
pub struct NginxOptions {
    /// Size of the static file at [`NGINX_STATIC_PATH`], in bytes.
    pub static_size: usize,
    /// nginx's `keepalive_requests`: requests served on one connection before nginx closes it
    /// (over HTTP/2: with a GOAWAY).
    pub keepalive_requests: u64,
    /// nginx's `keepalive_timeout`, in milliseconds: how long an idle connection stays open.
    pub keepalive_timeout_ms: u64,
    /// Speak TLS with this certificate chain and key (PEM files): `listen ... ssl`.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// nginx's `ssl_protocols` with `tls`.
    pub tls_protocols: &'static str,
    /// Speak HTTP/2 (`listen ... http2`): by ALPN over TLS; over cleartext, HTTP/2 with prior
    /// knowledge only (h2c).
    pub http2: bool,
}

impl Default for NginxOptions {
    /// A 4096-byte static file, 100 000 requests per connection.
    fn default() -> Self {
        NginxOptions {
            static_size: 4096,
            keepalive_requests: 100_000,
            keepalive_timeout_ms: 60_000,
            tls: None,
            tls_protocols: "TLSv1.2 TLSv1.3",
            http2: false,
        }
    }
}

/// One line of nginx's access log (a JSON object per line, written unbuffered).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct AccessLogEntry {
    /// e.g. `GET`.
    pub method: String,
    /// The request target as sent, with the query.
    pub uri: String,
    /// The response status.
    pub status: u16,
    /// Body bytes sent.
    pub body_bytes_sent: u64,
    /// nginx's `$request_time`, in seconds (millisecond resolution).
    pub request_time: f64,
    /// nginx's connection serial number: equal for requests on the same connection.
    pub connection: u64,
    /// The request's rank on its connection, from 1.
    pub connection_requests: u64,
    /// `HTTP/1.1` or `HTTP/2.0`.
    pub protocol: String,
}

/// The counters of nginx's `stub_status` page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StubStatus {
    /// Open client connections, this one included.
    pub active: u64,
    /// Connections accepted since start, the one readiness probe of [`Nginx::start`] included.
    pub accepts: u64,
    /// Connections handled since start.
    pub handled: u64,
    /// Requests since start, the status request itself included.
    pub requests: u64,
}

/// A running nginx: a child process in its own process group, killed (with its group) on drop.
/// It also gets SIGKILL if the thread that started it exits (`PR_SET_PDEATHSIG`), so a test
/// that dies leaves no nginx behind.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
    options: NginxOptions,
}

impl Nginx {
    /// Starts nginx with [`NginxOptions::default`]. See [`Nginx::start_with`].
    pub fn start() -> Result<Nginx, String> {
        Nginx::start_with(NginxOptions::default())
    }

    /// Starts nginx on a free `127.0.0.1` port and waits (at most [`NGINX_START_TIMEOUT`]) until
    /// it accepts connections. The error says what is wrong: nginx not installed, or its error
    /// log when it did not start.
    pub fn start_with(options: NginxOptions) -> Result<Nginx, String> {
        let binary = find_nginx().ok_or_else(|| {
            format!(
                "nginx not found at {NGINX_BIN} nor on PATH: install it (`apt-get install nginx`); \
                 the nginx tests do not skip, CI installs it"
            )
        })?;
        let dir = tempfile::Builder::new()
            .prefix("loadgate-nginx-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let static_file = dir
            .path()
            .join("www")
            .join(NGINX_STATIC_PATH.trim_start_matches('/'));
        std::fs::create_dir_all(static_file.parent().unwrap())
            .and_then(|()| std::fs::write(&static_file, static_body(options.static_size)))
            .map_err(|e| format!("cannot write {}: {e}", static_file.display()))?;
        // The port is free when we look; if nginx loses the race for it, try another.
        let mut last_error = String::new();
        for _attempt in 0..3 {
            match start_once(&binary, dir.path(), &options) {
                Ok((child, addr)) => {
                    return Ok(Nginx {
                        child,
                        addr,
                        dir,
                        options,
                    });
                }
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// The address nginx listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The options it was started with.
    pub fn options(&self) -> &NginxOptions {
        &self.options
    }

    /// The static file's expected content: [`NginxOptions::static_size`] bytes.
    pub fn static_body(&self) -> Vec<u8> {
        static_body(self.options.static_size)
    }

    /// The access log's path.
    pub fn access_log_path(&self) -> PathBuf {
        self.dir.path().join("access.log")
    }

    /// The number of lines in the access log now. nginx writes a line (unbuffered) when it
    /// finishes a request, which may be just after the client has the response: see
    /// [`Nginx::wait_access_log_count`].
    pub fn access_log_count(&self) -> usize {
        std::fs::read_to_string(self.access_log_path())
            .map(|log| log.lines().count())
            .unwrap_or(0)
    }

    /// Waits until the access log has at least `expected` lines, or `timeout` passed, then a
    /// further 100 ms for any extra line, and returns the count then.
    pub fn wait_access_log_count(&self, expected: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        while self.access_log_count() < expected && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        self.access_log_count()
    }

    /// The access log, parsed. Panics on a line that is not an [`AccessLogEntry`].
    pub fn access_log(&self) -> Vec<AccessLogEntry> {
        std::fs::read_to_string(self.access_log_path())
            .unwrap_or_default()
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("access log line {line:?}: {e}"))
            })
            .collect()
    }

    /// nginx's error log, for failure messages.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // The child leads its own group (process_group(0)): its pid is the group id.
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// Parses the body of nginx's `stub_status` page:
///
/// ```text
/// Active connections: 1
/// server accepts handled requests
///  5 5 9
/// Reading: 0 Writing: 1 Waiting: 0
/// ```
pub fn parse_stub_status(body: &str) -> Option<StubStatus> {
    let mut lines = body.lines();
    let active = lines
        .next()?
        .strip_prefix("Active connections:")?
        .trim()
        .parse()
        .ok()?;
    lines.next()?;
    let counts: Vec<u64> = lines
        .next()?
        .split_whitespace()
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    match counts[..] {
        [accepts, handled, requests] => Some(StubStatus {
            active,
            accepts,
            handled,
            requests,
        }),
        _ => None,
    }
}

fn find_nginx() -> Option<PathBuf> {
    if Path::new(NGINX_BIN).is_file() {
        return Some(PathBuf::from(NGINX_BIN));
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join("nginx"))
        .find(|path| path.is_file())
}

/// The static file: a repeated, recognisable pattern of `size` bytes.
fn static_body(size: usize) -> Vec<u8> {
    b"0123456789abcdef"
        .iter()
        .copied()
        .cycle()
        .take(size)
        .collect()
}

/// Writes the config for a free port, starts nginx and waits for it to accept connections.
fn start_once(
    binary: &Path,
    dir: &Path,
    options: &NginxOptions,
) -> Result<(Child, SocketAddr), String> {
    let addr = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| format!("cannot find a free port: {e}"))?;
    let config = dir.join("nginx.conf");
    std::fs::write(&config, config_text(dir, addr, options))
        .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
    let error_log = dir.join("error.log");
    let _ = std::fs::remove_file(&error_log);
    let mut command = Command::new(binary);
    command
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(&config)
        .arg("-e")
        .arg(&error_log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
        });
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let deadline = Instant::now() + NGINX_START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(&error_log).unwrap_or_default();
            return Err(format!(
                "nginx exited with {status} before accepting connections on {addr}; error log:\n{log}"
            ));
        }
        if TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() {
            return Ok((child, addr));
        }
        if Instant::now() >= deadline {
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            let _ = child.wait();
            let log = std::fs::read_to_string(&error_log).unwrap_or_default();
            return Err(format!(
                "nginx did not accept connections on {addr} within {NGINX_START_TIMEOUT:?}; \
                 error log:\n{log}"
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The nginx configuration: one process (no master, so no `user` switch when run as root),
/// every path in `dir`.
fn config_text(dir: &Path, addr: SocketAddr, options: &NginxOptions) -> String {
    let d = dir.display();
    let mut config = String::new();
    let _ = write!(
        config,
        r#"worker_processes 1;
daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    client_body_temp_path {d}/client_body_temp;
    proxy_temp_path {d}/proxy_temp;
    fastcgi_temp_path {d}/fastcgi_temp;
    uwsgi_temp_path {d}/uwsgi_temp;
    scgi_temp_path {d}/scgi_temp;

    log_format loadgate escape=json '{{"method":"$request_method","uri":"$request_uri",'
        '"status":$status,"body_bytes_sent":$body_bytes_sent,"request_time":$request_time,'
        '"connection":$connection,"connection_requests":$connection_requests,'
        '"protocol":"$server_protocol"}}';
    access_log {d}/access.log loadgate;

    keepalive_requests {keepalive_requests};
    keepalive_timeout {keepalive_timeout_ms}ms;

    server {{
        listen {addr} backlog=1024{ssl}{http2};
        server_name localhost;
{tls}
        location = {status} {{
            stub_status;
            access_log off;
        }}
        location /static/ {{
            root {d}/www;
            default_type application/octet-stream;
        }}
        location = {gzip_path} {{
            gzip on;
            gzip_min_length 1;
            gzip_types application/json;
            default_type application/json;
            return 200 '{{"status": "ok", "padding": "{padding}"}}';
        }}
        location = /redirect/301 {{ return 301 /; }}
        location = /redirect/302 {{ return 302 /; }}
        location = /redirect/303 {{ return 303 /; }}
        location = /redirect/307 {{ return 307 /; }}
        location = /redirect/308 {{ return 308 /; }}
        location = /redirect/chain {{
            return 302 /redirect/302;
        }}
        location = /redirect/loop {{
            return 302 /redirect/loop;
        }}
        location = /redirect/away {{
            return 302 http://localhost.invalid/;
        }}
        location / {{
            default_type text/plain;
            return 200 "hello\n";
        }}
    }}
}}
"#,
        keepalive_requests = options.keepalive_requests,
        keepalive_timeout_ms = options.keepalive_timeout_ms,
        status = NGINX_STATUS_PATH,
        gzip_path = NGINX_GZIP_PATH,
        padding = "abc".repeat(200),
        ssl = if options.tls.is_some() { " ssl" } else { "" },
        http2 = if options.http2 { " http2" } else { "" },
        tls = match &options.tls {
            Some((cert, key)) => format!(
                "        ssl_certificate {};\n        ssl_certificate_key {};\n        \
                 ssl_protocols {};\n        ssl_session_tickets on;\n",
                cert.display(),
                key.display(),
                options.tls_protocols
            ),
            None => String::new(),
        },
    );
    config
}
