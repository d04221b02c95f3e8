//! Command-line interface (clap derive).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// loadgate: a CI performance gate for HTTP services.
#[derive(Debug, Parser)]
#[command(name = "loadgate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a spec: start its service, apply the load, check the SLOs.
    Run(RunArgs),
    /// Check a spec against the schema and its semantics, without running it.
    Validate {
        /// The spec file (YAML).
        spec: PathBuf,
    },
    /// Print a JSON Schema: of the spec (default) or of the result file.
    Schema {
        #[arg(value_enum, default_value = "spec")]
        which: SchemaKind,
    },
    /// Serve the built-in test target: responses shaped by query parameters.
    Serve(ServeArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaKind {
    Spec,
    Result,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The spec file (YAML).
    pub spec: PathBuf,
    /// Write the result artifact (JSON) here; written whole or not at all.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Worker threads (default: the number of CPUs).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Speak TLS (HTTP/1.1 and HTTP/2 by ALPN) with this certificate chain (PEM).
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM).
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Require client certificates signed by a CA in this PEM file (mTLS).
    #[arg(long, requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
}
