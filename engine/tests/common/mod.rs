//! Helpers of the comparison and report tests: run a spec in-process against the built-in
//! target and get its result.

#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

use loadgate::result::RunResult;
use loadgate::{result, run, spec, validate};

/// Runs in one test binary take turns: concurrent runs on a 2-core machine would disturb each
/// other's latency.
static TURN: Mutex<()> = Mutex::new(());

/// Takes this binary's turn to run load.
pub fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// A spec of one target on `base_url` with `?delay=DELAY`, closed model, and `regression`
/// (YAML lines at top level, may be empty).
pub fn delay_spec(
    name: &str,
    base_url: &str,
    delay: &str,
    duration: &str,
    regression: &str,
) -> String {
    format!(
        "version: 1\nname: {name}\ntargets:\n  - name: slow\n    url: {base_url}/x?delay={delay}\n\
         load:\n  connections: 8\n  duration: {duration}\n  warmup: 1s\nslo:\n  errors: [\"rate < 1%\"]\n{regression}"
    )
}

/// Validates `text` (written to `dir/spec.yaml`) and runs it to a result, in-process.
pub fn run_spec_text(dir: &Path, text: &str) -> RunResult {
    let path = dir.join("spec.yaml");
    std::fs::write(&path, text).unwrap();
    let source = spec::SourceSpec::read(&path).unwrap();
    let plan = validate::check(&source, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let output = run::execute(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {})
        .expect("the run is carried out");
    result::build(&plan, &output)
}
