//! gRPC calls (`protocol: grpc`): the method found in `.proto` files compiled at run time
//! (protox, no `protoc`), and its messages encoded from and decoded to protobuf's JSON mapping
//! (prost-reflect's dynamic messages).
//!
//! On the wire a gRPC call is an HTTP/2 `POST /package.Service/Method` with
//! `content-type: application/grpc` and `te: trailers`; each message is a 5-byte prefix (a
//! compressed flag, 0 here, and the length as a big-endian `u32`) and the protobuf bytes; the
//! call's outcome is the `grpc-status` trailer (gRPC over HTTP/2,
//! grpc/grpc `doc/PROTOCOL-HTTP2.md`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};

use super::{BuildContext, Errors};
use crate::spec::{Grpc, GrpcStatusName};

/// The length of a gRPC message's prefix: a compressed flag and a big-endian `u32` length.
pub(crate) const PREFIX_BYTES: usize = 5;

/// gRPC's default limit on a received message, bytes (4 MiB, as grpc-go and grpc-java).
pub(crate) const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 << 20;

/// The status codes by number (grpc/grpc `doc/statuscodes.md`).
pub(crate) const STATUS_NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// A target's gRPC call, resolved: the method and what its calls expect.
#[derive(Debug)]
pub(crate) struct GrpcPlan {
    /// The method: its input and output message types, and whether it streams.
    pub(crate) method: MethodDescriptor,
    /// `/package.Service/Method`: the HTTP/2 `:path` of its calls.
    pub(crate) path: String,
    /// The server answers with a stream of messages: the call's latency runs to the first,
    /// its stream's duration to the trailers.
    pub(crate) server_streaming: bool,
    /// Sent as `grpc-timeout`; `None`: no deadline is sent.
    pub(crate) deadline: Option<Duration>,
    /// The status codes that count as success (bit `n` for code `n`; default: `OK` only).
    pub(crate) expect: u32,
    /// The largest response message accepted, bytes.
    pub(crate) max_message_bytes: usize,
}

impl GrpcPlan {
    /// Whether a call that ended with status `code` succeeded.
    pub(crate) fn expects(&self, code: u32) -> bool {
        code < 32 && self.expect & (1 << code) != 0
    }

    /// The request message written as JSON (protobuf's JSON mapping), encoded as one gRPC
    /// message: prefix and protobuf bytes.
    ///
    /// Errors: JSON that is not a message of the method's input type (the message says why).
    pub(crate) fn encode(&self, json: &[u8]) -> Result<Bytes, String> {
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let message = DynamicMessage::deserialize(self.method.input(), &mut deserializer)
            .and_then(|m| deserializer.end().map(|()| m))
            .map_err(|e| {
                format!(
                    "not a `{}` message in JSON: {e}",
                    self.method.input().full_name()
                )
            })?;
        let length = message.encoded_len();
        let mut out = BytesMut::with_capacity(PREFIX_BYTES + length);
        out.put_u8(0);
        out.put_u32(u32::try_from(length).map_err(|_| "the message is over 4 GiB")?);
        message
            .encode(&mut out)
            .map_err(|e| format!("cannot encode the message: {e}"))?;
        Ok(out.freeze())
    }

    /// One response message (its protobuf bytes, without the prefix) decoded as the method's
    /// output type, in its JSON form.
    ///
    /// Errors: bytes that are not a message of that type.
    pub(crate) fn decode(&self, message: &[u8]) -> Result<serde_json::Value, String> {
        let decoded = DynamicMessage::decode(self.method.output(), message)
            .map_err(|e| format!("not a `{}` message: {e}", self.method.output().full_name()))?;
        serde_json::to_value(&decoded).map_err(|e| e.to_string())
    }
}

/// Builds the call of `grpc`, a target's at `path` (`targets[0]`): compiles its `.proto`
/// files (relative to the spec's folder) and finds its method. Problems go to `errors`, at
/// `{path}.grpc.*`.
pub(super) fn build(
    grpc: &Grpc,
    path: &str,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<Arc<GrpcPlan>> {
    let field = format!("{path}.grpc");
    let pool = if grpc.reflection {
        errors.push(
            format!("{field}.reflection"),
            "the reflection service is not read yet: give the `.proto` files in `proto`",
        );
        return None;
    } else {
        compile(grpc, &field, ctx, errors)?
    };
    let method = find_method(&pool, &grpc.method, &format!("{field}.method"), errors)?;
    let deadline = match &grpc.deadline {
        Some(text) => Some(errors.duration(&format!("{field}.deadline"), text, false)?),
        None => None,
    };
    let mut expect = 0u32;
    for (i, status) in grpc.expect_status.iter().enumerate() {
        match status_code(status) {
            Some(code) => expect |= 1 << code,
            None => errors.push(
                format!("{field}.expect_status[{i}]"),
                format!(
                    "not a gRPC status: use a number 0-16 or a name ({})",
                    STATUS_NAMES.join(", ")
                ),
            ),
        }
    }
    if grpc.expect_status.is_empty() {
        expect = 1;
    }
    let max_message_bytes = grpc
        .max_message_bytes
        .map_or(DEFAULT_MAX_MESSAGE_BYTES, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        });
    Some(Arc::new(GrpcPlan {
        path: format!("/{}/{}", method.parent_service().full_name(), method.name()),
        server_streaming: method.is_server_streaming(),
        method,
        deadline,
        expect,
        max_message_bytes,
    }))
}

/// The request message of `grpc` as JSON text: the request body a target's template renders
/// (`{{var}}` in it) and [`GrpcPlan::encode`] encodes. A string is taken as the JSON text
/// itself; a mapping as its JSON; none as `{}`.
pub(crate) fn message_text(grpc: &Grpc) -> String {
    match &grpc.message {
        None => "{}".to_string(),
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
    }
}

/// The code of `status`, a number or a name (any case); `None` for neither.
fn status_code(status: &GrpcStatusName) -> Option<u32> {
    match status {
        GrpcStatusName::Code(code) => (*code <= 16).then_some(*code),
        GrpcStatusName::Name(name) => STATUS_NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| i as u32),
    }
}

/// Compiles the `.proto` files of `grpc` into a descriptor pool.
fn compile(
    grpc: &Grpc,
    field: &str,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<DescriptorPool> {
    if grpc.proto.is_empty() {
        errors.push(
            format!("{field}.proto"),
            "give the `.proto` files that define the service",
        );
        return None;
    }
    let files: Vec<PathBuf> = grpc.proto.iter().map(|f| ctx.spec_dir.join(f)).collect();
    let mut includes: Vec<PathBuf> = grpc
        .import_paths
        .iter()
        .map(|p| ctx.spec_dir.join(p))
        .collect();
    for file in &files {
        let folder = file.parent().map(PathBuf::from).unwrap_or_default();
        if !includes.contains(&folder) {
            includes.push(folder);
        }
    }
    let compiled = protox::Compiler::new(&includes).and_then(|mut compiler| {
        compiler.include_imports(true).open_files(&files)?;
        Ok(compiler.descriptor_pool())
    });
    match compiled {
        Ok(pool) => Some(pool),
        Err(e) => {
            errors.push(format!("{field}.proto"), format!("{e}"));
            None
        }
    }
}

/// The method named `name` (`package.Service/Method`) in `pool`.
fn find_method(
    pool: &DescriptorPool,
    name: &str,
    field: &str,
    errors: &mut Errors,
) -> Option<MethodDescriptor> {
    let Some((service_name, method_name)) = name.trim_start_matches('/').split_once('/') else {
        errors.push(field, "write the method as `package.Service/Method`");
        return None;
    };
    let Some(service) = pool.get_service_by_name(service_name) else {
        let known: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        errors.push(
            field,
            format!(
                "no service `{service_name}` in the `.proto` files (they define: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
        );
        return None;
    };
    let method = service.methods().find(|m| m.name() == method_name);
    if method.is_none() {
        let known: Vec<String> = service.methods().map(|m| m.name().to_string()).collect();
        errors.push(
            field,
            format!(
                "`{service_name}` has no method `{method_name}` (it has: {})",
                known.join(", ")
            ),
        );
    }
    method
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn echo(method: &str) -> Result<Arc<GrpcPlan>, Vec<String>> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let ctx = BuildContext {
            source: b"",
            spec_dir: &dir,
            var: &|_| None,
        };
        let grpc = Grpc {
            proto: vec!["echo.proto".to_string()],
            import_paths: Vec::new(),
            reflection: false,
            method: method.to_string(),
            message: None,
            deadline: Some("2s".to_string()),
            expect_status: vec![
                GrpcStatusName::Name("ok".to_string()),
                GrpcStatusName::Code(5),
            ],
            max_message_bytes: None,
        };
        let mut errors = Errors::default();
        build(&grpc, "targets[0]", &ctx, &mut errors).ok_or_else(|| {
            errors
                .0
                .iter()
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect()
        })
    }

    #[test]
    fn finds_the_method_and_round_trips_a_message_through_json() {
        let plan = echo("loadgate.echo.v1.Echo/Say").unwrap();
        assert_eq!(plan.path, "/loadgate.echo.v1.Echo/Say");
        assert!(!plan.server_streaming);
        assert!(plan.expects(0) && plan.expects(5) && !plan.expects(14));
        assert_eq!(plan.deadline, Some(Duration::from_secs(2)));
        let framed = plan.encode(br#"{"text": "hi", "delayMs": 3}"#).unwrap();
        assert_eq!(framed[0], 0);
        let length = u32::from_be_bytes(framed[1..5].try_into().unwrap()) as usize;
        assert_eq!(length, framed.len() - PREFIX_BYTES);
        // SayRequest and SayReply share field 1 (`text`): the bytes decode as a reply.
        let reply = plan.decode(&framed[PREFIX_BYTES..]).unwrap();
        assert_eq!(reply["text"], "hi");
        assert!(
            echo("loadgate.echo.v1.Echo/Stream")
                .unwrap()
                .server_streaming
        );
    }

    #[test]
    fn a_wrong_method_or_message_says_what_there_is() {
        let errors = echo("loadgate.echo.v1.Echo/Shout").unwrap_err();
        assert!(
            errors[0].contains("has no method `Shout` (it has: Say, Stream)"),
            "{errors:?}"
        );
        let errors = echo("Echo/Say").unwrap_err();
        assert!(
            errors[0].contains("they define: loadgate.echo.v1.Echo"),
            "{errors:?}"
        );
        let plan = echo("loadgate.echo.v1.Echo/Say").unwrap();
        let e = plan.encode(br#"{"txt": 1}"#).unwrap_err();
        assert!(e.contains("loadgate.echo.v1.SayRequest"), "{e}");
    }
}
