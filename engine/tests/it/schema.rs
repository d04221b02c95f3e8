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

/// Every `(path, node)` of a JSON Schema document, depth first.
fn nodes<'a>(
    value: &'a serde_json::Value,
    path: String,
    out: &mut Vec<(String, &'a serde_json::Value)>,
) {
    match value {
        serde_json::Value::Object(map) => {
            out.push((path.clone(), value));
            for (k, v) in map {
                nodes(v, format!("{path}/{k}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                nodes(v, format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The published schemas use standard keywords only (ajv in strict mode refuses schemars'
/// `uint64`, `double`... formats; `scripts/check-schemas` runs ajv itself): no `format`
/// at all (none of the types needs one JSON Schema defines), every integer with a `minimum` (0 or more),
/// and every property of the result and the verdict described.
#[test]
fn published_schemas_use_standard_keywords_and_describe_every_property() {
    let schemas = [
        ("spec", loadgate::validate::spec_schema()),
        ("result", loadgate::result::schema()),
        ("verdict", loadgate::report::verdict::schema()),
    ];
    for (name, schema) in &schemas {
        let mut all = Vec::new();
        nodes(schema, "#".to_string(), &mut all);
        for (path, node) in &all {
            assert!(node.get("format").is_none(), "{name}: a format at {path}");
            let integer = match node.get("type") {
                Some(serde_json::Value::String(t)) => t == "integer",
                Some(serde_json::Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            if integer {
                // Every integer of these types is unsigned: at least 0 (or a higher minimum).
                let minimum = node["minimum"].as_u64();
                assert!(
                    minimum.is_some(),
                    "{name}: an integer without a minimum at {path}"
                );
            }
            if *name == "spec" {
                continue;
            }
            if let Some(props) = node.get("properties").and_then(|p| p.as_object()) {
                for (prop, schema) in props {
                    let text = schema["description"].as_str().unwrap_or_default();
                    assert!(
                        !text.trim().is_empty(),
                        "{name}: {path}/properties/{prop} has no description"
                    );
                }
            }
        }
        assert!(all.len() > 50, "{name}: {} nodes", all.len());
    }
}
