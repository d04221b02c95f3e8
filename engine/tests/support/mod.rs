//! Test support shared by the integration tests (`mod support;`): a raw HTTP/1.1 client, faulty
//! and counting servers, and a real nginx. Every server listens on loopback only and stops on
//! drop; every client read and write is bounded by a timeout.

// Each test crate uses a different part of this module (and of its re-exports).
#![allow(dead_code, unused_imports)]

mod certs;
mod client;
mod h2server;
mod nginx;
mod servers;

pub use certs::{SERVER_NAMES, TestPki, WRONG_NAME};
pub use client::{HttpConn, IO_TIMEOUT, RawResponse};
pub use h2server::H2ResetServer;
pub use nginx::{
    AccessLogEntry, NGINX_BIN, NGINX_HELLO, NGINX_START_TIMEOUT, NGINX_STATIC_PATH,
    NGINX_STATUS_PATH, Nginx, NginxOptions, StubStatus, parse_stub_status,
};
pub use servers::{
    CLOSE_MID_RESPONSE, COUNTING_BODY, CloseMidResponseServer, CountingServer, FIXTURE_LIFETIME,
    Framing, GARBAGE, GarbageServer, HangServer, down_addr,
};
