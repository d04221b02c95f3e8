//! Bidirectional controls and invisible format characters (U+202A-U+202E, U+2066-U+2069,
//! U+200E/F, U+061C, U+FEFF, U+200B-U+200D) in a spec's names and checks and in a result's
//! error text never reach the console or a report raw: every format writes them out as
//! `\u{202e}` (as control characters are), against the built-in target on loopback.

use crate::support;

use support::{loadgate, turn};

/// The characters that must never appear raw.
const HIDDEN: &[char] = &[
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}', '\u{feff}', '\u{200b}', '\u{200c}', '\u{200d}',
];

/// Fails when `text` (the output `what`) holds a hidden character raw (but the zero-width
/// space that breaks an `@mention` in Markdown, loadgate's own), or lacks the written-out
/// escape of U+202E and U+2066.
fn none_raw(text: &str, what: &str) {
    for c in HIDDEN {
        let own = if *c == '\u{200b}' {
            text.matches("@\u{200b}").count()
        } else {
            0
        };
        let raw = text.matches(*c).count();
        assert!(
            raw <= own,
            "{what}: U+{:04X} raw {raw} times:\n{text}",
            u32::from(*c)
        );
    }
    for escape in ["u{202e}", "u{2066}"] {
        assert!(text.contains(escape), "{what}: no `\\{escape}`:\n{text}");
    }
}

fn output(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn hidden_characters_are_written_out_in_every_format() {
    let _turn = turn();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let all: String = HIDDEN
        .iter()
        .map(|c| format!("\\u{:04X}", u32::from(*c)))
        .collect();
    let spec = format!(
        "version: 1\nname: \"demo \\u202Eevil\"\ntargets:\n  - name: \"gnp{all}exe\"\n    \
         url: \"http://{}/x\"\n    checks:\n      - body_contains: \"ok\\u202E\\u2066\"\n      \
         - header: Content-Type\n        equals: \"text/plain\\u2066\\u202E\"\n    slo:\n      \
         latency: [\"p(99) < 10s\"]\nload: {{connections: 2, requests: 40}}\nregression:\n  \
         latency: [\"p(50) +1000%\"]\n",
        server.addr()
    );
    let spec_path = dir.path().join("hidden.yaml");
    std::fs::write(&spec_path, spec).unwrap();
    let baseline = dir.path().join("baseline.json");
    let run = loadgate(&[
        "run",
        spec_path.to_str().unwrap(),
        "--out",
        baseline.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", output(&run));
    none_raw(&output(&run), "the console of `loadgate run`");

    // A result with error text that carries them too (a result file is anyone's input).
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    let target = &mut value["targets"][0];
    target["errors_by_kind"]["boom\u{202e}\u{2066}"] = 1.into();
    target["status_codes"]["2\u{202e}00"] = 1.into();
    value["health"]["problems"] = serde_json::json!(["late\u{202e}\u{2066}"]);
    let current = dir.path().join("current.json");
    std::fs::write(&current, value.to_string()).unwrap();

    for format in ["text", "md", "html", "junit"] {
        let out = loadgate(&[
            "report",
            current.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert!(out.status.code().is_some(), "{format}: {}", output(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.is_empty(), "{format}: {}", output(&out));
        none_raw(&text, format);
        // The target's name is in every format, each of its hidden characters written out.
        assert!(
            text.contains("u{202a}") && text.contains("u{feff}"),
            "{format}:\n{text}"
        );
    }
}

#[test]
fn an_error_message_writes_them_out_and_keeps_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("gnp\u{202e}\u{2066}lmay.yaml");
    let out = loadgate(&["validate", spec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", output(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    none_raw(&stderr, "the error of `loadgate validate`");
    assert!(stderr.starts_with("loadgate: error: "), "{stderr}");
    assert!(
        !stderr.contains("\\n"),
        "line breaks stay line breaks: {stderr}"
    );
}
