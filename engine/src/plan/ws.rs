//! WebSocket exchanges (`ws://`, `wss://`, `protocol: ws`): what each request sends and
//! what answers it (RFC 6455).

use std::sync::Arc;
use std::time::Duration;

use super::{BuildContext, Errors};
use crate::spec::Ws;

/// The largest message accepted by default, bytes (16 MiB).
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;

/// A target's WebSocket exchange, resolved. The message sent is the target's request body
/// (`ws.send`, rendered per request when it holds `{{var}}`); the upgrade request is the
/// target's request head (method `GET`, its path and headers).
#[derive(Debug, Clone)]
pub(crate) struct WsPlan {
    /// Each request sends a message (`ws.send` given); false: it only receives.
    pub(crate) sends: bool,
    /// The message is sent as a binary message, not a text one.
    pub(crate) binary: bool,
    /// The reply is the first message that contains these bytes; `None`: the next message.
    pub(crate) reply: Option<Vec<u8>>,
    /// Receive for this long instead of waiting for a reply.
    pub(crate) receive_for: Option<Duration>,
    /// Offered in `Sec-WebSocket-Protocol`, in order.
    pub(crate) subprotocols: Vec<String>,
    /// The largest message accepted, bytes.
    pub(crate) max_message_bytes: usize,
}

/// Builds the exchange of `ws`, a target's at `path`; problems go to `errors`, at
/// `{path}.ws.*`.
pub(super) fn build(
    ws: &Ws,
    path: &str,
    _ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<Arc<WsPlan>> {
    let field = format!("{path}.ws");
    let receive_for = match &ws.receive_for {
        Some(text) => Some(errors.duration(&format!("{field}.receive_for"), text, false)?),
        None => None,
    };
    if ws.send.is_none() && receive_for.is_none() {
        errors.push(
            field,
            "give `send` (a message to send and wait for its reply) or `receive_for` (how long to receive)",
        );
        return None;
    }
    Some(Arc::new(WsPlan {
        sends: ws.send.is_some(),
        binary: ws.binary,
        reply: ws.reply.as_ref().map(|r| r.as_bytes().to_vec()),
        receive_for,
        subprotocols: ws.subprotocols.clone(),
        max_message_bytes: ws.max_message_bytes.map_or(DEFAULT_MAX_MESSAGE_BYTES, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
    }))
}
