//! The spec corpus: every `tests/specs/valid/*.yaml` and `examples/*.yaml` must resolve into
//! a plan, and every `tests/specs/invalid/*.yaml` must produce exactly the diagnostics in its
//! sibling `*.expected` file, one per line, as `loadgate validate` prints them.
//!
//! After changing a message, regenerate the expected files and review the diff:
//!
//! ```sh
//! UPDATE_EXPECT=1 cargo test -p loadgate --test spec_corpus
//! git diff engine/tests/specs
//! ```

use std::path::{Path, PathBuf};

use loadgate::plan::Plan;
use loadgate::spec::SourceSpec;
use loadgate::validate;

/// The environment the corpus is validated in: `API_TOKEN` and `LOADGATE` are set, nothing
/// else is.
fn var(name: &str) -> Option<String> {
    match name {
        "API_TOKEN" => Some("t0ken".to_string()),
        "LOADGATE" => Some("/usr/local/bin/loadgate".to_string()),
        _ => None,
    }
}

/// The `*.yaml` files in `dir` (relative to the package root), sorted.
fn specs(dir: &str) -> Vec<PathBuf> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
        .map(|entry| Path::new(dir).join(entry.unwrap().file_name()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no specs in {dir}");
    specs
}

/// Loads and validates `path` as `loadgate validate` does; on failure, the diagnostics one
/// per line (a YAML syntax error is one line too).
fn check(path: &Path) -> Result<Plan, String> {
    let source = SourceSpec::read(path).map_err(|e| format!("{e}\n"))?;
    validate::check(&source, &var).map_err(|diagnostics| {
        diagnostics
            .0
            .iter()
            .map(|d| format!("{d}\n"))
            .collect::<String>()
    })
}

#[test]
fn valid_specs_resolve_into_a_plan() {
    let mut failures = Vec::new();
    for path in specs("tests/specs/valid") {
        match check(&path) {
            Ok(plan) => {
                assert!(!plan.targets.is_empty(), "{}: no targets", path.display());
                assert_eq!(plan.spec_hash.len(), 64, "{}", path.display());
            }
            Err(diagnostics) => failures.push(format!("{}:\n{diagnostics}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "valid specs were rejected:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_examples_are_valid_specs() {
    for path in specs("../examples") {
        if let Err(diagnostics) = check(&path) {
            panic!("{}:\n{diagnostics}", path.display());
        }
    }
}

#[test]
fn invalid_specs_produce_exactly_the_expected_diagnostics() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v != "0");
    let mut failures = Vec::new();
    for path in specs("tests/specs/invalid") {
        let expected_path = path.with_extension("expected");
        let actual = match check(&path) {
            Ok(_) => {
                failures.push(format!(
                    "{}: accepted, but should be invalid",
                    path.display()
                ));
                continue;
            }
            Err(actual) => actual,
        };
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            failures.push(format!(
                "{}:\n--- expected ({})\n{expected}+++ actual\n{actual}",
                path.display(),
                expected_path.display(),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the new output is right, regenerate with \
         `UPDATE_EXPECT=1 cargo test -p loadgate --test spec_corpus` and review the diff.",
        failures.join("\n")
    );
}

#[test]
fn every_expected_file_belongs_to_an_invalid_spec() {
    let orphans: Vec<PathBuf> = std::fs::read_dir("tests/specs/invalid")
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "expected"))
        .filter(|path| !path.with_extension("yaml").exists())
        .collect();
    assert!(
        orphans.is_empty(),
        "expected files without a spec: {orphans:?}"
    );
}

#[test]
fn the_full_valid_spec_is_resolved_as_written() {
    let plan = check(Path::new("tests/specs/valid/full.yaml")).unwrap();
    let service = plan.service.as_ref().expect("a service");
    assert_eq!(service.command[0], "/usr/local/bin/loadgate");
    assert!(
        service
            .env
            .contains(&("TOKEN".to_string(), "t0ken".to_string()))
    );
    let names: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["list users", "create user", "echo"]);
    let create = String::from_utf8_lossy(&plan.targets[1].request).into_owned();
    assert!(create.ends_with("{\"name\": \"Ada\"}\n"), "{create}");
    assert!(
        create.contains("Authorization: Bearer t0ken\r\n"),
        "{create}"
    );
    let echo = String::from_utf8_lossy(&plan.targets[2].request).into_owned();
    assert!(echo.starts_with("PUT /echo HTTP/1.1\r\n"), "{echo}");
    assert!(
        echo.ends_with(r#"{"price": "${not a variable}"}"#),
        "{echo}"
    );
    assert_eq!(plan.targets[0].weight, 3);
    // 1 per-target threshold and 8 over the whole run.
    assert_eq!(plan.slo.len(), 9);
}

#[test]
fn an_endpoint_from_the_environment_is_shown_as_written() {
    let text = "\
version: 1
name: endpoints
defaults:
  base_url: \"${TARGET_URL}\"
targets:
  - name: from env
    path: /users
  - name: port from env
    url: \"http://127.0.0.1:${PORT}/\"
  - name: written
    url: \"http://127.0.0.1:8080/a?token=${API_TOKEN}\"
load:
  connections: 1
  duration: 1s
";
    let source = SourceSpec::parse(PathBuf::from("endpoints.yaml"), text.to_string()).unwrap();
    let var = |name: &str| match name {
        "TARGET_URL" => Some("http://secret-host.internal:9000".to_string()),
        "PORT" => Some("9001".to_string()),
        "API_TOKEN" => Some("t0ken".to_string()),
        _ => None,
    };
    let plan = validate::check(&source, &var).unwrap();
    let shown: Vec<String> = plan.targets.iter().map(|t| t.display_endpoint()).collect();
    assert_eq!(
        shown,
        [
            "${TARGET_URL}/users",
            "http://127.0.0.1:${PORT}/",
            "127.0.0.1:8080"
        ]
    );
}
