//! gRPC and WebSocket targets in every report, from a result built from the run's measures
//! (`result::messages_tests::grpc_and_ws_result`: a server-streaming gRPC target `say`, a
//! WebSocket target `chat`, an HTTP target `page`): their messages, their streams' durations,
//! the WebSocket upgrade phase and their error kinds and close codes, escaped for each
//! format. Snapshots in `report/snapshots/`.

use super::console::SummaryOptions;
use super::{Format, Input, render};
use crate::result::RunResult;
use crate::result::messages_tests::grpc_and_ws_result;

/// The whole summary (`--verbose`: the phase table holds the upgrade), plain.
const VERBOSE: SummaryOptions = SummaryOptions {
    color: false,
    verbose: true,
};

/// `result` alone (no baseline) in `format`.
fn report(format: Format, result: &RunResult) -> String {
    let input = Input {
        current: result,
        baseline: None,
        comparison: None,
        history: &[],
        spec_path: None,
    };
    render(format, &input, None).unwrap()
}

/// The part of `text` from the first `from` to the next `to` after it (inclusive).
fn part<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("no {from:?} in {text}"));
    let end = text[start..]
        .find(to)
        .unwrap_or_else(|| panic!("no {to:?} after {from:?}"));
    &text[start..start + end + to.len()]
}

#[test]
fn the_console_shows_messages_streams_the_upgrade_and_the_error_codes() {
    let text = super::console::summary(&grpc_and_ws_result(), VERBOSE);
    let messages = part(
        &text,
        "\n  messages",
        "receive_for); latency: to the first message\n",
    );
    assert!(
        messages
            .contains("\n  say (grpc)        100       100       480     120.0/s         600 B"),
        "{messages}"
    );
    assert!(
        messages
            .contains("\n  chat (ws)         200       200       198      49.5/s        1000 B"),
        "{messages}"
    );
    assert!(
        !messages.contains("page"),
        "an HTTP target counts no messages"
    );
    // Only the gRPC target streamed.
    assert!(
        messages.contains("\n  say (grpc)             96  20.00ms"),
        "{messages}"
    );
    assert!(text.contains("\n  upgrade "), "the upgrade phase: {text}");
    assert!(
        text.contains("error codes   ws_closed INTERNAL_ERROR (1011): 2"),
        "{text}"
    );
    assert!(text.contains("grpc_unavailable: 4"), "{text}");
    insta::assert_snapshot!("console", text);
}

#[test]
fn the_markdown_and_html_details_show_messages_and_streams() {
    let result = grpc_and_ws_result();
    let md = report(Format::Md, &result);
    let say = part(&md, "<details><summary>say", "</details>");
    assert!(
        say.contains(
            "\nMessages: gRPC: 100 calls; 100 messages sent, 480 received (120.0/s); \
             payload 600 B sent, 5.6 KiB received\n"
        ),
        "{say}"
    );
    assert!(
        say.contains("| stream duration (server streams: due to trailers) | 96 |"),
        "{say}"
    );
    assert!(say.contains("Errors: grpc\\_unavailable: 4"), "{say}");
    let chat = part(&md, "<details><summary>chat", "</details>");
    assert!(chat.contains("\n| upgrade | 2 | "), "{chat}");
    assert!(
        chat.contains("Error codes: ws\\_closed INTERNAL\\_ERROR (1011): 2"),
        "{chat}"
    );
    let page = part(&md, "<details><summary>page", "</details>");
    assert!(!page.contains("Messages:"), "{page}");
    insta::assert_snapshot!("markdown_details", format!("{say}\n{chat}"));

    let html = report(Format::Html, &result);
    let details = part(&html, "<summary>say", "<summary>page");
    assert!(
        details.contains("<p>Messages: gRPC: 100 calls; "),
        "{details}"
    );
    assert!(
        details.contains("<td class=\"mono\">ws_closed INTERNAL_ERROR (1011)</td><td>2</td>"),
        "{details}"
    );
    insta::assert_snapshot!("html_details", details);
}

#[test]
fn names_and_protocols_from_a_result_file_are_escaped_in_every_format() {
    let mut result = grpc_and_ws_result();
    result.targets[1].name = "chat <b>|x_y".to_string();
    result.targets[1].messages.as_mut().unwrap().protocol = "<i>\u{1b}[31m".to_string();
    let text = super::console::summary(&result, VERBOSE);
    assert!(
        text.contains("\n  chat <b>|x_y (<i>\\u{1b}[31m) "),
        "{text}"
    );
    let md = report(Format::Md, &result);
    assert!(md.contains("<details><summary>chat &lt;b&gt;|x_y"), "{md}");
    assert!(md.contains("Messages: &lt;i&gt;"), "{md}");
    let html = report(Format::Html, &result);
    assert!(html.contains("<p>Messages: &lt;i&gt;"), "{html}");
    assert!(!html.contains("<i>"), "{html}");
}
