//! The committed `schema/verdict.schema.json` must be what `loadgate schema verdict` prints.

#[test]
fn committed_verdict_schema_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/verdict.schema.json");
    let committed = std::fs::read_to_string(path).expect("schema/verdict.schema.json exists");
    let generated =
        serde_json::to_string_pretty(&loadgate::report::verdict::schema()).unwrap() + "\n";
    assert!(
        committed == generated,
        "schema/verdict.schema.json is stale: regenerate it with \
         `cargo run -p loadgate -- schema verdict > schema/verdict.schema.json`"
    );
}
