//! Generated artefacts checked for drift: the committed `schema/loadgate.schema.json` must be
//! exactly what `loadgate schema` prints for the current spec types.

use std::path::Path;

const REGENERATE: &str = "cargo run -p loadgate -- schema > schema/loadgate.schema.json";

#[test]
fn committed_spec_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/loadgate.schema.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}\nGenerate it from the repository root with `{REGENERATE}`",
            path.display()
        )
    });
    let current = serde_json::to_string_pretty(&loadgate::validate::spec_schema()).unwrap() + "\n";
    assert!(
        committed == current,
        "schema/loadgate.schema.json is stale: the spec types changed.\n\
         Regenerate it from the repository root with `{REGENERATE}` and commit it."
    );
}

#[test]
fn spec_schema_names_itself_and_its_dialect() {
    let schema = loadgate::validate::spec_schema();
    assert_eq!(schema["$id"], loadgate::spec::SPEC_SCHEMA_ID);
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["additionalProperties"], false);
}
