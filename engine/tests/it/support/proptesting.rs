//! The proptest configuration shared by the property and fuzz tests (`properties`, `fuzz_http`,
//! `fuzz_curl` and `merge`, in `tests/it/`; `scripts/fuzz` runs the first three in rounds).

use proptest::prelude::ProptestConfig;
use proptest::test_runner::FileFailurePersistence;

/// `default_cases` cases, unless `PROPTEST_CASES` says otherwise; failures saved to `file`
/// (relative to `engine/`) for replay; shrinking stops after `max_shrink_ms` milliseconds.
pub fn config(default_cases: u32, file: &'static str, max_shrink_ms: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(file))),
        max_shrink_time: max_shrink_ms,
        ..ProptestConfig::default()
    }
}
