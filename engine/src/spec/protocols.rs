//! The protocols besides plain HTTP requests: a gRPC call (`grpc:`) and a WebSocket exchange
//! (`ws:`), on a target or a flow step.

use schemars::JsonSchema;
use serde::Deserialize;

use super::DURATION_PATTERN;

/// A gRPC call (`protocol: grpc`, over HTTP/2: h2c for `http://`, ALPN `h2` for `https://`):
/// unary or server-streaming. The target's `headers` are the call's metadata; `body` is not
/// used (the message is `message`).
///
/// ```yaml
/// - name: say
///   url: http://127.0.0.1:8080
///   protocol: grpc
///   grpc:
///     proto: [echo.proto]              # compiled at run time, relative to the spec file
///     method: loadgate.echo.v1.Echo/Say
///     message: { text: "hello {{vu}}" }
///     deadline: 2s
/// ```
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Grpc {
    /// `.proto` files that define the service, relative to the spec file, compiled at run
    /// time (no `protoc` needed). Give these or `reflection: true`.
    #[serde(default)]
    pub(crate) proto: Vec<String>,
    /// Folders that `import`s in the `.proto` files are resolved in, relative to the spec file
    /// (default: the folder of each file in `proto`).
    #[serde(default)]
    pub(crate) import_paths: Vec<String>,
    /// Read the service's descriptors from the server's reflection service
    /// (`grpc.reflection.v1`, else `v1alpha`) once, before the run, instead of `.proto` files.
    #[serde(default)]
    pub(crate) reflection: bool,
    /// The method to call: `package.Service/Method`, e.g. `loadgate.echo.v1.Echo/Say`.
    #[schemars(length(min = 1))]
    pub(crate) method: String,
    /// The request message in protobuf's JSON mapping: a mapping, or a JSON text whose
    /// strings and values may hold `{{var}}`. Default: the empty message.
    #[serde(default)]
    pub(crate) message: Option<serde_json::Value>,
    /// The call's deadline, sent as `grpc-timeout` (default: none; the target's `timeout`
    /// still ends the call on the client).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) deadline: Option<String>,
    /// The gRPC status codes that count as success, by name (`OK`, `NOT_FOUND`) or number.
    /// Default: `[OK]`. Any other status is an error of kind `grpc_<status>`.
    #[serde(default)]
    pub(crate) expect_status: Vec<GrpcStatusName>,
    /// The largest response message accepted, bytes (default 4194304, 4 MiB, as gRPC's
    /// clients); a larger one ends the call as `grpc_resource_exhausted`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) max_message_bytes: Option<u64>,
}

/// A gRPC status code: its name as gRPC writes it (`OK`, `DEADLINE_EXCEEDED`) or its number
/// (0-16).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum GrpcStatusName {
    /// The code's number.
    Code(#[schemars(range(max = 16))] u32),
    /// The code's name.
    Name(String),
}

/// A WebSocket exchange (`ws://`, `wss://`, or `protocol: ws`): the upgrade opens the
/// connection (timed as its own phase, `upgrade`), then each request sends `send` and waits
/// for the reply, or receives for `receive_for`. The connection stays open for the virtual
/// user's next request, as HTTP keep-alive. The target's `headers` (and a flow's cookies) go
/// on the upgrade request.
///
/// ```yaml
/// - name: chat
///   url: ws://127.0.0.1:8080/ws/echo
///   ws:
///     send: '{"user": {{vu}}, "text": "hi"}'
///     reply: '"text"'                  # the first message that contains this
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ws {
    /// The message each request sends (`{{var}}` allowed). Absent: nothing is sent, and the
    /// request only receives (`receive_for`).
    #[serde(default)]
    pub(crate) send: Option<String>,
    /// Send `send` as a binary message (its bytes, UTF-8) instead of a text one.
    #[serde(default)]
    pub(crate) binary: bool,
    /// The reply that answers the request: the first message received that contains this
    /// text (messages before it are counted, not checked). Default: the next message.
    /// The request's latency runs to it; checks read it as the response body.
    #[serde(default)]
    pub(crate) reply: Option<String>,
    /// Instead of waiting for a reply, receive for this long, counting messages (a
    /// subscription, a feed). The request's latency is then the time to the first message.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) receive_for: Option<String>,
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    #[serde(default)]
    pub(crate) subprotocols: Vec<String>,
    /// The largest message accepted, bytes (default 16777216, 16 MiB); a larger one closes
    /// the connection with 1009 and counts as `ws_closed`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) max_message_bytes: Option<u64>,
}
