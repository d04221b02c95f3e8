//! WebSocket connections (RFC 6455): the HTTP/1.1 upgrade, timed as its own phase, then
//! per request a message sent and its reply awaited (or messages received for a while).
//!
//! CONTRACT STUB (issue 35): the run/ws helper replaces this file.

use std::time::Instant;

use super::h1::{Capture, Failure, Traffic};
use super::multiplexed::Request;
use super::transport::{Response, Stream};
use crate::measure::{ErrorCode, ErrorKind, Setup};
use crate::plan::TargetPlan;

/// One virtual user's WebSocket connection to one endpoint, upgraded.
pub(crate) struct WsConn {
    /// The connection's setup (DNS, connect, TLS, upgrade), until its first request takes it.
    setup: Option<Setup>,
}

/// Upgrades `stream` (opened with `setup`) to a WebSocket for `target`: sends the upgrade
/// request (the target's request head) and reads `101 Switching Protocols`, timing it into
/// `setup.upgrade_us`.
///
/// Errors: a refused upgrade (`unexpected_status`), a malformed answer (`malformed`), the
/// connection closed or reset (with `code` set for a Close frame).
pub(crate) async fn open(
    stream: Stream,
    setup: Setup,
    target: &TargetPlan,
    code: &mut Option<ErrorCode>,
) -> Result<WsConn, ErrorKind> {
    let _ = (stream, target, code);
    Ok(WsConn { setup: Some(setup) })
}

impl WsConn {
    /// Marks its setup as made before the clock started (`load.pre_connect`).
    pub(crate) fn mark_pre_connected(&mut self) {
        if let Some(setup) = &mut self.setup {
            setup.pre_connected = true;
        }
    }

    /// Sends the request's message (its body) and waits for its reply, or receives for the
    /// target's `receive_for`; with `capture`, the reply is kept as the response body.
    /// Counts the messages into `traffic.messages`.
    pub(crate) async fn exchange(
        &mut self,
        request: Request<'_>,
        now: Instant,
        capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<Response, Failure> {
        let _ = (request, now, capture, traffic, self.setup.take());
        Err(Failure::Error(ErrorKind::Malformed))
    }
}
