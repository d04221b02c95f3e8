//! Test support shared by the integration tests (`crate::support`): whole runs (in-process and
//! as the binary), a raw HTTP/1.1 client, faulty, hostile and counting servers, a real nginx,
//! and the proptest configuration. Every server listens on loopback only and stops on drop;
//! every client read and write is bounded by a timeout.

mod aioquic;
mod browser;
mod certs;
mod client;
mod h2server;
pub mod hostile;
mod nginx;
mod peers;
pub mod proptesting;
mod pyh2;
mod runs;
mod servers;

pub use aioquic::{
    AIOQUIC_START_TIMEOUT, Killed, aioquic_server, aioquic_server_with, listening_addr, pypi_python,
};
pub use browser::{console_problems, frame_probe, frame_screenshot, headless};
pub use certs::{TestPki, WRONG_NAME};
pub use client::{HttpConn, IO_TIMEOUT, RawResponse};
pub use h2server::H2ResetServer;
pub use nginx::{
    NGINX_GZIP_PATH, NGINX_HELLO, NGINX_STATIC_PATH, NGINX_STATUS_PATH, Nginx, NginxOptions,
    StubStatus, parse_stub_status,
};
pub use peers::{
    Peer, Ran, check_counts, echo_proto, grpc_echo_server, grpc_h2_server, loadgate_run, u64_at,
    ws_server,
};
pub use pyh2::pyh2_server;
pub use runs::{loadgate, result_fixture, run_spec_text, start_serve, turn, wait_within};
pub use servers::{
    CLOSE_MID_RESPONSE, COUNTING_BODY, CloseMidResponseServer, CountingServer, FIXTURE_LIFETIME,
    Framing, GARBAGE, GarbageServer, HangServer, down_addr,
};

/// Validates, plans and runs `yaml` in-process (spec -> validate -> plan -> run -> result);
/// `${VAR}`s are all unset.
pub fn run_yaml(yaml: &str) -> loadgate::result::RunResult {
    let source = loadgate::spec::SourceSpec::parse("test.yaml".into(), yaml.to_string())
        .expect("spec parses");
    run_source(source)
}

/// The pipeline of [`run_yaml`] and [`run_spec_text`], from the source spec to the result.
fn run_source(source: loadgate::spec::SourceSpec) -> loadgate::result::RunResult {
    try_run_source(source).unwrap_or_else(|e| panic!("the run is carried out: {e}"))
}

/// Validates, plans and runs `yaml` in-process: the result, or why the run could not start
/// (an unreachable target, a failed handshake at the check at start).
pub fn try_run(yaml: &str) -> Result<loadgate::result::RunResult, String> {
    let source = loadgate::spec::SourceSpec::parse("test.yaml".into(), yaml.to_string())
        .expect("spec parses");
    try_run_source(source)
}

/// [`try_run`] of a parsed spec.
fn try_run_source(
    source: loadgate::spec::SourceSpec,
) -> Result<loadgate::result::RunResult, String> {
    let plan = loadgate::validate::check(&source, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let output = loadgate::run::execute(&plan, stop, &mut |_| {}).map_err(|e| e.to_string())?;
    Ok(loadgate::result::build(&plan, &output))
}

/// The whole run's transport and framing errors, by kind.
pub fn errors(result: &loadgate::result::RunResult) -> &std::collections::BTreeMap<String, u64> {
    &result.total.errors_by_kind
}

/// The first target's transport (protocol, TLS, connections).
pub fn transport(result: &loadgate::result::RunResult) -> &loadgate::result::TransportResult {
    result.targets[0]
        .transport
        .as_ref()
        .expect("targets record their transport")
}

/// The first target's phases (connect, TLS, TTFB, ...).
pub fn phases(result: &loadgate::result::RunResult) -> &loadgate::result::PhasesResult {
    result.targets[0]
        .phases_us
        .as_ref()
        .expect("targets record phases")
}

/// Writes `yaml` to `spec.yaml` in a new temporary folder (removed when the guard drops).
pub fn write_spec(yaml: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, yaml).expect("the spec is written");
    (dir, path)
}
