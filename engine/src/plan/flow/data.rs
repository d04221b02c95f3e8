//! Data files, read and checked at plan time: CSV with a header row, or a JSON array of
//! objects. Each row gives every column; values are text.

use std::path::Path;

use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess, Visitor};

use super::{DataOrder, DataPlan};
use crate::plan::Shard;

/// Largest data file read, in bytes (64 MiB): the rows are kept in memory for the run.
pub(crate) const MAX_DATA_BYTES: u64 = 64 << 20;

/// A data file's columns and rows (row `r`, column `c`).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Table {
    /// Column names, in the file's order.
    pub(super) columns: Vec<String>,
    /// The rows, each with one value per column.
    pub(super) rows: Vec<Box<[String]>>,
}

/// Reads `file` (relative to `spec_dir`): `.csv` or `.json`. Errors say what is wrong and
/// where in the file.
pub(super) fn read_table(spec_dir: &Path, file: &str) -> Result<Table, String> {
    let full = spec_dir.join(file);
    let lower = file.to_ascii_lowercase();
    let is_csv = lower.ends_with(".csv");
    if !is_csv && !lower.ends_with(".json") {
        return Err(format!(
            "`{file}`: a data file is `.csv` (with a header row) or `.json` (an array of objects)"
        ));
    }
    let bytes = crate::files::bounded_read(&full, MAX_DATA_BYTES, "the data file")
        .map_err(|e| e.to_string())?;
    let table = if is_csv {
        csv_table(&bytes)
    } else {
        json_table(&bytes)
    }
    .map_err(|e| format!("`{file}`: {e}"))?;
    if let Some(i) = table.columns.iter().position(String::is_empty) {
        return Err(format!("`{file}`: column {} has no name", i + 1));
    }
    for (i, name) in table.columns.iter().enumerate() {
        if table.columns[..i].contains(name) {
            return Err(format!("`{file}`: column `{name}` is named twice"));
        }
    }
    if table.rows.is_empty() {
        return Err(format!("`{file}` has no rows"));
    }
    Ok(table)
}

impl DataPlan {
    /// Keeps shard `shard`'s rows of a file read `once` (K of N: rows K−1, K−1+N, K−1+2N, …,
    /// 0-based), so that no row goes to two shards; the N shards' rows are the file's. Rows
    /// read in order or at random are every shard's.
    pub(crate) fn shard(&mut self, shard: Shard) {
        if self.order == DataOrder::Once {
            let (first, step) = (shard.index as usize - 1, shard.count as usize);
            self.rows = self
                .rows
                .iter()
                .skip(first)
                .step_by(step)
                .cloned()
                .collect();
        }
    }
}

/// A CSV file with a header row; every record as long as the header.
fn csv_table(bytes: &[u8]) -> Result<Table, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(bytes);
    let reason = |e: csv::Error| match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => format!(
            "line {}: {len} field(s), but the header has {expected_len}: every row gives every \
             column",
            pos.as_ref().map_or(0, csv::Position::line)
        ),
        csv::ErrorKind::Utf8 { pos, .. } => format!(
            "line {}: not UTF-8 text",
            pos.as_ref().map_or(0, csv::Position::line)
        ),
        _ => e.to_string(),
    };
    let mut columns: Vec<String> = reader
        .headers()
        .map_err(reason)?
        .iter()
        .map(str::to_string)
        .collect();
    if let Some(first) = columns.first_mut() {
        // A byte order mark is not part of the first name.
        *first = first.trim_start_matches('\u{feff}').to_string();
    }
    if columns.iter().all(String::is_empty) {
        return Err("no header row: the first line names the columns".to_string());
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(reason)?;
        rows.push(record.iter().map(str::to_string).collect());
    }
    Ok(Table { columns, rows })
}

/// A JSON array of objects whose values are strings, numbers or booleans; the columns are
/// the first object's keys, in its order, and every object has exactly those.
fn json_table(bytes: &[u8]) -> Result<Table, String> {
    // serde_json's message may quote a value; the file may hold secrets: say where instead.
    let objects: Vec<Object> = serde_json::from_slice(bytes).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Syntax => "not valid JSON",
            serde_json::error::Category::Eof => "the file ends early",
            serde_json::error::Category::Data | serde_json::error::Category::Io => {
                "not an object in an array"
            }
        };
        format!(
            "expected a JSON array of objects: {what} at line {}, column {}",
            e.line(),
            e.column()
        )
    })?;
    let columns: Vec<String> = objects
        .first()
        .map(|o| o.0.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut rows = Vec::with_capacity(objects.len());
    for (i, object) in objects.into_iter().enumerate() {
        let mut row = vec![None; columns.len()];
        for (key, value) in object.0 {
            let Some(c) = columns.iter().position(|name| *name == key) else {
                return Err(format!(
                    "[{i}] has `{key}`, which the first object has not: every row gives the \
                     same columns"
                ));
            };
            let text = match value {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                other => {
                    // The kind only: a data file may hold secrets.
                    let kind = match other {
                        serde_json::Value::Null => "null",
                        serde_json::Value::Array(_) => "an array",
                        _ => "an object",
                    };
                    return Err(format!(
                        "[{i}].{key} is {kind}: values are strings, numbers or booleans"
                    ));
                }
            };
            if row[c].replace(text).is_some() {
                return Err(format!("[{i}] has `{key}` twice"));
            }
        }
        if let Some(c) = row.iter().position(Option::is_none) {
            return Err(format!(
                "[{i}] has no `{}`: every row gives every column",
                columns[c]
            ));
        }
        rows.push(row.into_iter().map(Option::unwrap_or_default).collect());
    }
    Ok(Table { columns, rows })
}

/// A JSON object with its keys in the file's order (serde_json's map sorts them).
struct Object(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Object, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Object;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Object(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Object, A::Error> {
                Err(serde::de::Error::custom(
                    "expected an object, found an array",
                ))
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> Result<Table, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
        read_table(dir.path(), name)
    }

    fn rows(table: &Table) -> Vec<Vec<&str>> {
        table
            .rows
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect()
    }

    #[test]
    fn csv_with_a_header_and_quoted_fields() {
        let table = read(
            "users.csv",
            "\u{feff}user,password\nada,\"se,cret\"\nbob,x\n",
        )
        .unwrap();
        assert_eq!(table.columns, ["user", "password"]);
        assert_eq!(rows(&table), [["ada", "se,cret"], ["bob", "x"]]);
    }

    #[test]
    fn json_rows_in_the_files_column_order_with_numbers_and_booleans_as_text() {
        let table = read(
            "users.json",
            r#"[{"user": "ada", "id": 7, "admin": true}, {"admin": false, "id": 1.5, "user": "bob"}]"#,
        )
        .unwrap();
        assert_eq!(table.columns, ["user", "id", "admin"]);
        assert_eq!(
            rows(&table),
            [["ada", "7", "true"], ["bob", "1.5", "false"]]
        );
    }

    #[test]
    fn wrong_files_say_what_and_where() {
        let cases = [
            (
                "a.csv",
                "user,pw\nada,1\nbob\n",
                "line 3: 1 field(s), but the header has 2",
            ),
            ("a.csv", "user,pw\n", "has no rows"),
            ("a.csv", "user,user\n1,2\n", "column `user` is named twice"),
            ("a.csv", "user,\n1,2\n", "column 2 has no name"),
            (
                "a.json",
                r#"{"user": "ada"}"#,
                "expected a JSON array of objects",
            ),
            ("a.json", "[]", "has no rows"),
            (
                "a.json",
                r#"[{"u": "a"}, {"u": "b", "v": 1}]"#,
                "[1] has `v`",
            ),
            (
                "a.json",
                r#"[{"u": "a", "v": 1}, {"u": "b"}]"#,
                "[1] has no `v`",
            ),
            ("a.json", r#"[{"u": null}]"#, "[0].u is null"),
            (
                "a.json",
                r#"[{"u": {"pw": "x"}}]"#,
                "[0].u is an object: values are",
            ),
            ("a.txt", "x", "is `.csv`"),
        ];
        for (name, text, want) in cases {
            let err = read(name, text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
            // Values are never quoted: a data file may hold secrets.
            assert!(!err.contains("secret") && !err.contains("pw"), "{err}");
        }
        let dir = tempfile::tempdir().unwrap();
        let err = read_table(dir.path(), "missing.csv").unwrap_err();
        assert!(err.starts_with("cannot read the data file `"), "{err}");
    }
}
