//! The committed `schema/result.schema.json` must be what `loadgate schema result` prints.

#[test]
fn committed_result_schema_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../schema/result.schema.json");
    let committed = std::fs::read_to_string(path).expect("schema/result.schema.json exists");
    let generated = serde_json::to_string_pretty(&loadgate::result::schema()).unwrap() + "\n";
    assert!(
        committed == generated,
        "schema/result.schema.json is stale: regenerate it with \
         `cargo run -p loadgate -- schema result > schema/result.schema.json`"
    );
}
