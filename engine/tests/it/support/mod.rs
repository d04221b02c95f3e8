//! Test support shared by the integration tests (`crate::support`): whole runs (in-process and
//! as the binary), a raw HTTP/1.1 client, faulty, hostile and counting servers, a real nginx,
//! and the proptest configuration. Every server listens on loopback only and stops on drop;
//! every client read and write is bounded by a timeout.

// `tests/http_options.rs`, a binary of its own, includes this module too and uses a part of it.
#![allow(dead_code, unused_imports)]

mod aioquic;
mod certs;
mod client;
mod h2server;
pub mod hostile;
mod nginx;
pub mod proptesting;
mod pyh2;
mod runs;
mod servers;

pub use aioquic::{
    AIOQUIC, AIOQUIC_START_TIMEOUT, Killed, aioquic_server, aioquic_server_with, listening_addr,
    pypi_python,
};
pub use certs::{SERVER_NAMES, TestPki, WRONG_NAME};
pub use client::{HttpConn, IO_TIMEOUT, RawResponse};
pub use h2server::H2ResetServer;
pub use nginx::{
    AccessLogEntry, NGINX_BIN, NGINX_GZIP_PATH, NGINX_HELLO, NGINX_REDIRECT_PATH,
    NGINX_START_TIMEOUT, NGINX_STATIC_PATH, NGINX_STATUS_PATH, Nginx, NginxOptions, StubStatus,
    parse_stub_status,
};
pub use pyh2::{PYH2_START_TIMEOUT, pyh2_server};
pub use runs::{
    delay_spec, loadgate, result_fixture, run_spec_text, start_serve, turn, wait_within,
};
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
    let plan = loadgate::validate::check(&source, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let output = loadgate::run::execute(&plan, stop, &mut |_| {}).expect("the run is carried out");
    loadgate::result::build(&plan, &output)
}

/// Writes `yaml` to `spec.yaml` in a new temporary folder (removed when the guard drops).
pub fn write_spec(yaml: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, yaml).expect("the spec is written");
    (dir, path)
}
