//! The curl command reader of `loadgate curl`, fuzzed through the binary
//! (`loadgate curl --emit-spec -- WORDS`, nothing is sent): generated command lines of known
//! and unknown options, values of any text, as words and as one string. Whatever the input:
//!
//! - no panic (exit 0 or 2, never 101);
//! - an unknown option is never dropped: a command holding one is refused (exit 2), and the
//!   refusal names an option or word of the input (in backquotes);
//! - an accepted command prints a spec that reads back as YAML, whose `targets[0].url` is the
//!   command's URL (`${` written `$${`).
//!
//! A failing case is saved in `tests/proptest-regressions/fuzz_curl.txt` (commit it) and
//! replayed first. `PROPTEST_CASES` sets the number of cases.

use crate::support::proptesting;

use std::process::Command;

use proptest::prelude::*;

/// Options that take a value.
const WITH_VALUE: &[&str] = &[
    "-X",
    "--request",
    "-H",
    "--header",
    "-d",
    "--data",
    "--data-ascii",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "-u",
    "--user",
    "-A",
    "--user-agent",
    "-e",
    "--referer",
    "-b",
    "--cookie",
];
/// Options without a value.
const SWITCHES: &[&str] = &[
    "--compressed",
    "-k",
    "--insecure",
    "--http1.1",
    "--http2",
    "--http3",
    "-L",
    "--location",
    "-s",
    "-S",
    "-sS",
    "--silent",
];
/// Options loadgate does not take.
const UNKNOWN: &[&str] = &[
    "--proxy",
    "-o",
    "-v",
    "-I",
    "--max-time",
    "-x",
    "-G",
    "--json",
    "-F",
    "--http0.9",
    "-sv",
    "--data-urlencod",
    "-Z",
];

/// A value: headers, data and any text (quotes, `${`, control characters, non-ASCII).
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("Accept: */*".to_string()),
        Just("X-A: ${HOME}".to_string()),
        Just("user:pass".to_string()),
        Just("a=1; b=2".to_string()),
        Just("@file".to_string()),
        Just("{\"k\": \"it's\"}".to_string()),
        "[a-zA-Z0-9 =:;@&%$'\"{}\\\\-]{0,16}",
        any::<String>(),
    ]
}

/// One word group of a command: an option and its value, a switch, or an unknown option.
#[derive(Debug, Clone)]
enum Part {
    Known(Vec<String>),
    Unknown(String),
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        4 => (prop::sample::select(WITH_VALUE), value())
            .prop_map(|(o, v)| Part::Known(vec![o.to_string(), v])),
        2 => prop::sample::select(SWITCHES).prop_map(|s| Part::Known(vec![s.to_string()])),
        1 => prop::sample::select(UNKNOWN).prop_map(|u| Part::Unknown(u.to_string())),
    ]
}

/// `loadgate curl --emit-spec -- WORDS`: exit code, stdout, stderr.
fn emit(words: &[String]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["curl", "--emit-spec", "--"])
        .args(words)
        .output()
        .expect("run loadgate");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The invariants of one case: `words` as run, `url` the URL they hold, `unknown` whether they
/// hold an option loadgate does not take.
fn judge(words: &[String], url: &str, unknown: bool) -> Result<(), TestCaseError> {
    let (code, out, err) = emit(words);
    prop_assert!(
        code == Some(0) || code == Some(2),
        "exit {:?}: {}",
        code,
        err
    );
    if code == Some(2) {
        prop_assert!(out.is_empty());
        let named = err.split('`').skip(1).step_by(2).any(|quoted| {
            words
                .iter()
                .any(|w| w.contains(quoted.split(' ').next().unwrap_or(quoted)))
        });
        prop_assert!(
            named || err.contains("no URL") || err.contains("cannot split"),
            "the refusal names nothing of the input: {}",
            err
        );
        return Ok(());
    }
    prop_assert!(
        !unknown,
        "an unknown option was dropped: {:?}\n{}",
        words,
        out
    );
    // Read as `loadgate run` reads a spec, and as plain YAML for the URL.
    let source = loadgate::spec::SourceSpec::parse("curl.yaml".into(), out.clone());
    prop_assert!(
        source.is_ok(),
        "not a spec's YAML: {:?}\n{}",
        source.err(),
        out
    );
    let value: Result<serde_json::Value, _> = serde_saphyr::from_str(&out);
    prop_assert!(value.is_ok(), "not YAML: {:?}\n{}", value.err(), out);
    let value = value.expect("checked");
    let written = value["targets"][0]["url"].as_str().map(str::to_string);
    prop_assert_eq!(written, Some(url.replace("${", "$${")), "{}", out);
    Ok(())
}

proptest! {
    #![proptest_config(proptesting::config(64, "tests/proptest-regressions/fuzz_curl.txt", 60_000))]

    /// Words as a shell passes them (after `--`).
    #[test]
    fn curl_words_never_panic_and_never_drop_an_option(
        parts in prop::collection::vec(part(), 0..6),
        at in any::<prop::sample::Index>(),
        path in "[a-z0-9/]{0,8}",
    ) {
        let url = format!("http://127.0.0.1:9/{path}");
        let mut words = vec!["curl".to_string()];
        let mut unknown = false;
        let cut = at.index(parts.len() + 1);
        for (i, part) in parts.iter().enumerate() {
            if i == cut {
                words.push(url.clone());
            }
            match part {
                Part::Known(w) => words.extend(w.iter().cloned()),
                Part::Unknown(u) => {
                    unknown = true;
                    words.push(u.clone());
                }
            }
        }
        if cut == parts.len() {
            words.push(url.clone());
        }
        judge(&words, &url, unknown)?;
    }

    /// The whole command as one string (as pasted), split as a shell would: any text.
    #[test]
    fn a_curl_string_never_panics(text in any::<String>(), tail in "[ a-zA-Z'\"\\\\-]{0,12}") {
        let (code, _, err) = emit(&[format!("curl http://127.0.0.1:9/ {text}{tail}")]);
        prop_assert!(code == Some(0) || code == Some(2), "exit {:?}: {}", code, err);
    }
}
