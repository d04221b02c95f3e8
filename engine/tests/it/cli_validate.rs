//! `loadgate validate` as a user runs it: the built binary, its exit code and its output.

use std::process::{Command, Output};

/// Runs `loadgate validate SPEC` from the package root, with `API_TOKEN` set.
fn validate(spec: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["validate", spec])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("API_TOKEN", "t0ken")
        .env_remove("API_KEY")
        .env_remove("TARGET_HOST")
        .output()
        .expect("loadgate runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_valid_spec_exits_0() {
    let out = validate("tests/specs/valid/full.yaml");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("tests/specs/valid/full.yaml: valid (3 target(s), 9 threshold(s))"),
        "{stdout}"
    );
}

#[test]
fn an_invalid_spec_exits_2_and_lists_every_problem_with_its_line() {
    let out = validate("tests/specs/invalid/unknown_field.yaml");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let expected = [
        "loadgate: error: invalid spec (3 errors):",
        "  tests/specs/invalid/unknown_field.yaml:4:1: descripton: unknown field `descripton`; did you mean `description`?",
        "  tests/specs/invalid/unknown_field.yaml:7:5: defaults.timout: unknown field `timout`; did you mean `timeout`?",
        "  tests/specs/invalid/unknown_field.yaml:11:5: targets[0].methd: unknown field `methd`; did you mean `method`?",
    ];
    assert_eq!(stderr.lines().collect::<Vec<_>>(), expected, "{stderr}");
    assert!(out.stdout.is_empty(), "stdout: {}", text(&out.stdout));
}

#[test]
fn a_semantic_error_exits_2() {
    let out = validate("tests/specs/invalid/missing_variable.yaml");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("missing_variable.yaml:8:16: defaults.headers.X-Api-Key: environment variable `API_KEY` is not set"),
        "{stderr}"
    );
}

#[test]
fn a_flow_variable_used_before_it_is_defined_is_shown_at_its_line() {
    let out = validate("tests/specs/invalid/flow_undefined_variable.yaml");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "  tests/specs/invalid/flow_undefined_variable.yaml:18:15: flows[0].steps[1].path: \
             `{{id}}` is used before step `id` extracts it"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "flow_undefined_variable.yaml:21:19: flows[0].steps[1].headers.X-Etag: `{{etag}}` is \
             set by this step's own `extract`"
        ),
        "{stderr}"
    );
}

#[test]
fn a_valid_flow_spec_exits_0_and_counts_its_steps_as_targets() {
    let out = validate("tests/specs/valid/flows.yaml");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "tests/specs/valid/flows.yaml: valid (2 flow(s) of 4 step(s), 5 threshold(s))"
        ),
        "{stdout}"
    );
}

#[test]
fn a_yaml_syntax_error_exits_2_with_line_and_column() {
    let out = validate("tests/specs/invalid/syntax_error.yaml");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("loadgate: error: tests/specs/invalid/syntax_error.yaml:9:15: "),
        "{stderr}"
    );
}

#[test]
fn a_missing_file_exits_2_and_names_it() {
    let out = validate("tests/specs/no_such_spec.yaml");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot read spec `tests/specs/no_such_spec.yaml`"),
        "{stderr}"
    );
    // The OS's reason once, not once more for the error's source.
    assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
}

/// The message of `loadgate validate` on a spec over the size limit, from `path`.
fn assert_too_large(out: &Output, path: &str) {
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "spec `{path}` is larger than 10 MiB: a spec is a small YAML file"
        )),
        "{stderr}"
    );
}

#[test]
fn a_spec_over_10_mib_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    // Valid YAML (comments only), one byte over the limit.
    let mut text = "# padding padding padding padding padding padding\n".repeat(210_000);
    text.truncate(10 * 1024 * 1024 + 1);
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    assert_too_large(&validate(path), path);
}

#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_without_reading_it_all() {
    let started = std::time::Instant::now();
    let out = validate("/dev/zero");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot read spec `/dev/zero`: it is a device, not a regular file"),
        "{stderr}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn errors_show_the_specs_text_never_a_value_from_the_environment() {
    // Not URLs: the user part would be taken for a scheme, the rest for a path.
    let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["validate", "tests/specs/secret/from_env.yaml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TARGET_URL", "admin:hunter2-s3cret@10.9.8.7:8080")
        .env("TARGET_SNI", "not a name hunter2-s3cret")
        .output()
        .expect("loadgate runs");
    assert_eq!(out.status.code(), Some(2), "stderr: {}", text(&out.stderr));
    let stderr = text(&out.stderr);
    for secret in ["hunter2", "admin", "10.9.8.7", "not a name"] {
        assert!(!stderr.contains(secret), "`{secret}` leaked: {stderr}");
    }
    let expected = [
        "loadgate: error: invalid spec (4 errors):",
        "  tests/specs/secret/from_env.yaml:7:13: defaults.base_url: `${TARGET_URL}`: with its variables replaced, it does not start with `http://` or `https://`; add the scheme to the variable's value",
        "  tests/specs/secret/from_env.yaml:12:10: targets[1].url: `${TARGET_URL}/x`: with its variables replaced, it does not start with `http://` or `https://`; add the scheme to the variable's value",
        "  tests/specs/secret/from_env.yaml:16:20: targets[2].tls.server_name: `${TARGET_SNI}`: invalid dns name",
        // Then the OS's reason.
        "  tests/specs/secret/from_env.yaml:20:16: targets[3].tls.ca_file: `${TARGET_SNI}/ca.pem` cannot be read: ",
    ];
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{stderr}");
    for (line, want) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(want),
            "{line:?} does not start with {want:?}"
        );
    }
}

#[test]
fn schema_prints_the_committed_schema() {
    let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .arg("schema")
        .output()
        .expect("loadgate runs");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schema/loadgate.schema.json"
    ))
    .unwrap();
    assert_eq!(text(&out.stdout), committed);
}
