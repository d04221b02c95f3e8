//! Following redirects (`defaults.redirects`): each hop sent on the virtual user's connection
//! to the target's endpoint (a redirect is followed on the same origin only), within the
//! request's timeout, so that the request's latency covers the whole chain.

use std::time::Instant;

use super::h1::{Capture, Traffic};
use super::multiplexed::{Outgoing, Request, parse_request};
use super::transport::{self, Conn, Response, Route};
use crate::measure::ErrorKind;
use crate::plan::{REDIRECT_STATUSES, TargetPlan, h2_request};

/// Most response headers looked at for `Location`.
const MAX_HEADERS: usize = 64;

/// Follows the redirects from `first`, the response to `request` (kept in `capture`; a
/// rendered request is redirected as rendered, its `Cookie` header included), up to its
/// target's `redirects` of them, on `conn` (opened by `route` when there is none), until the
/// request's deadline. Returns the last response (with the connection setup of the chain's first when
/// the last reused its connection): the answer, whose status counts. A redirect without a
/// `Location` is an answer too.
///
/// Errors: [`ErrorKind::Redirect`] for one more redirect than allowed or one to another
/// origin; the errors of [`transport::send`].
pub(super) async fn follow(
    first: Response,
    conn: &mut Option<Conn>,
    route: Route<'_>,
    request: Request<'_>,
    capture: &mut Capture,
    traffic: &mut Traffic,
) -> Result<Response, ErrorKind> {
    let Request {
        target,
        outgoing,
        deadline,
    } = request;
    let mut response = first;
    let mut hop: Option<TargetPlan> = None;
    let mut followed = 0;
    while REDIRECT_STATUSES.contains(&response.status) {
        let Some(location) = location(&capture.head) else {
            break;
        };
        if followed == target.redirects {
            return Err(ErrorKind::Redirect);
        }
        if let (None, Outgoing::Rendered(bytes)) = (&hop, outgoing) {
            hop = Some(rendered_target(target, bytes).ok_or(ErrorKind::Redirect)?);
        }
        let next = hop
            .as_ref()
            .unwrap_or(target)
            .redirected(response.status, location)
            .ok_or(ErrorKind::Redirect)?;
        if !(response.keep_alive && target.keep_alive) {
            *conn = None;
            route.group.close_slot(route.slot);
        }
        let setup = response.timing.setup;
        let request = Request::planned(&next, deadline);
        let now = Instant::now();
        response = transport::send(conn, route, request, now, Some(capture), traffic).await?;
        response.timing.setup = response.timing.setup.or(setup);
        hop = Some(next);
        followed += 1;
    }
    Ok(response)
}

/// `target` with the request of `bytes` (rendered for a flow step) in place of its planned
/// one, as a redirect's starting point: method, path, header fields (but those the plan adds:
/// `Host`, `User-Agent`, `Content-Length`) and body. `None` when the bytes are no request.
fn rendered_target(target: &TargetPlan, bytes: &[u8]) -> Option<TargetPlan> {
    let (method, path, mut headers, body) = parse_request(bytes)?;
    headers.retain(|(name, _)| {
        !["host", "user-agent", "content-length"]
            .iter()
            .any(|added| name.eq_ignore_ascii_case(added))
    });
    let https = target.transport.tls.is_some();
    let h2 = h2_request(method, path, &target.endpoint, https, &headers, body).ok()?;
    Some(TargetPlan {
        method: method.to_string(),
        request: bytes.into(),
        h2_request: h2,
        body: bytes::Bytes::copy_from_slice(body),
        is_head: method == "HEAD",
        headers,
        ..target.clone()
    })
}

/// The value of the `Location` header of the response head `head`, if it has one.
fn location(head: &[u8]) -> Option<&[u8]> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    response.parse(head).ok()?;
    response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("location"))
        .map(|h| h.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_of_a_head() {
        let head = b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\nlocation: /next?a=1\r\n\r\n";
        assert_eq!(location(head), Some(&b"/next?a=1"[..]));
        assert_eq!(location(b"HTTP/1.1 302 Found\r\n\r\n"), None);
        assert_eq!(location(b"garbage"), None);
    }
}
