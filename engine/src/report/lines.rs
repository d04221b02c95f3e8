//! Machine output for sweeps (`--format jsonl|csv` of `run`, `quick` and `curl`): one line
//! per run with the fields loadgen-rs prints (URL, protocol, throughput, percentiles, status
//! classes and codes, errors, elapsed time, connections, threads), appended to `--output`
//! across runs.
//!
//! The columns, in order (JSON keys and CSV header alike): `name` (the spec's), `url` (the
//! targets' URLs as the spec writes them, secrets shown as `${...}`: distinct, in order,
//! separated by a space; one for a one-line run), `protocol` (what the connections spoke:
//! `h1`, `h2`, `h3`, `grpc`, `ws`; several distinct ones separated by a space), `started_at`
//! (RFC 3339 UTC), `elapsed_s`, `model`, `connections` (closed model; the most in flight in
//! the open model), `streams`, `threads`, `requests`, `responses`, `errors`, `error_rate` (a
//! fraction), `rps`, `status_1xx` … `status_5xx`, `status_codes` (responses per status code:
//! a JSON object `{"200": 98, "404": 2}`; in CSV `200=98|404=2`, loadgen-rs's way of writing
//! a map in a field), `latency_min_us`, `latency_mean_us`, `latency_stdev_us`,
//! `latency_p10_us`, `latency_p25_us`, `latency_p50_us`, `latency_p75_us`, `latency_p90_us`,
//! `latency_p95_us`, `latency_p99_us`, `latency_p99_9_us`, `latency_p99_99_us`,
//! `latency_max_us` (empty or `null` without responses; the p10, p25, p75 and p99.99 of
//! results written before they existed too), `bytes_sent`, `bytes_received`, `passed`.
//!
//! CSV is written by the `csv` crate (RFC 4180: a field with a comma, quote or line break is
//! quoted, its quotes doubled; `null` is an empty field).

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::Value;

use crate::result::{OutError, RunResult};
use crate::spec::secrets::shown_url;

/// What a run prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LineFormat {
    /// The text summary.
    #[default]
    Text,
    /// One JSON object per line.
    Jsonl,
    /// One CSV row per run, under a header.
    Csv,
}

/// Where runs' lines go: stdout, or appended to a file (`--output`). With a file, stdout
/// still shows each run's text summary.
#[derive(Debug)]
pub struct LineSink {
    format: LineFormat,
    /// `--output`: its path, and the file opened for appending.
    output: Option<(PathBuf, std::fs::File)>,
    /// Stdout only: the CSV header has been printed.
    header_printed: bool,
}

impl LineSink {
    /// A sink for `format`, appending to `output` when given: the file is opened (created if
    /// need be) here, before any load is sent. Errors: it cannot be opened for appending.
    pub fn new(format: LineFormat, output: Option<PathBuf>) -> Result<LineSink, OutError> {
        let output = output
            .map(|path| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map(|file| (path.clone(), file))
                    .map_err(|e| OutError {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    })
            })
            .transpose()?;
        Ok(LineSink {
            format,
            output,
            header_printed: false,
        })
    }

    /// Whether stdout shows the text summaries (`--format text`, or `--output` given): what
    /// else a command has for a person (a sample response, a summary of rounds) goes there
    /// too, else to stderr, so that stdout stays machine-readable.
    pub fn stdout_is_text(&self) -> bool {
        self.format == LineFormat::Text || self.output.is_some()
    }

    /// Writes one run: `summary` (its text summary) and/or its line, `threads` being the
    /// run's worker threads. A CSV header goes before the first row on stdout, and into a
    /// file only when it is new or empty. Errors: the file cannot be written.
    pub fn write(
        &mut self,
        summary: &str,
        result: &RunResult,
        threads: usize,
    ) -> anyhow::Result<()> {
        let text = match self.format {
            LineFormat::Text => summary.to_string(),
            LineFormat::Jsonl => format!("{}\n", jsonl(result, threads)),
            LineFormat::Csv => format!("{}\n", csv_row(result, threads)),
        };
        let Some((path, file)) = &mut self.output else {
            if self.format == LineFormat::Csv && !self.header_printed {
                println!("{}", csv_header());
                self.header_printed = true;
            }
            print!("{text}");
            return Ok(());
        };
        print!("{summary}");
        let empty = file.metadata().map(|m| m.len() == 0).unwrap_or(true);
        let header = if self.format == LineFormat::Csv && empty {
            format!("{}\n", csv_header())
        } else {
            String::new()
        };
        // Whole or not at all: a line cut short by a full disk would have the next run's line
        // glued to it.
        crate::result::append_whole(file, format!("{header}{text}").as_bytes())
            .with_context(|| format!("cannot write `{}`", path.display()))
    }
}

/// The columns of one run (see the module's documentation), in order.
pub(crate) fn columns(result: &RunResult, threads: usize) -> Vec<(&'static str, Value)> {
    let total = &result.total;
    let mut classes = [0u64; 5];
    for (code, n) in &total.status_codes {
        if let Some(class) = code.chars().next().and_then(|c| c.to_digit(10))
            && (1..=5).contains(&class)
        {
            classes[class as usize - 1] += n;
        }
    }
    let targets = || result.targets.iter();
    let urls = distinct(targets().filter_map(|t| t.url.as_deref().map(shown_url)));
    let protocols =
        distinct(targets().filter_map(|t| t.transport.as_ref().map(|x| x.protocol.clone())));
    let codes: serde_json::Map<String, Value> = total
        .status_codes
        .iter()
        .map(|(code, n)| (code.clone(), Value::from(*n)))
        .collect();
    let latency = total.latency_us.as_ref();
    let l = |f: fn(&crate::result::LatencySummary) -> Value| latency.map_or(Value::Null, f);
    vec![
        ("name", Value::from(result.spec.name.clone())),
        ("url", urls),
        ("protocol", protocols),
        ("started_at", Value::from(result.started_at.clone())),
        ("elapsed_s", Value::from(result.duration_s)),
        ("model", Value::from(result.load.model.clone())),
        (
            "connections",
            Value::from(result.load.connections.or(result.load.max_in_flight)),
        ),
        ("streams", Value::from(result.load.streams)),
        ("threads", Value::from(threads)),
        ("requests", Value::from(total.requests)),
        ("responses", Value::from(total.responses)),
        ("errors", Value::from(total.errors)),
        ("error_rate", Value::from(total.error_rate)),
        ("rps", Value::from(total.rps)),
        ("status_1xx", Value::from(classes[0])),
        ("status_2xx", Value::from(classes[1])),
        ("status_3xx", Value::from(classes[2])),
        ("status_4xx", Value::from(classes[3])),
        ("status_5xx", Value::from(classes[4])),
        ("status_codes", Value::Object(codes)),
        ("latency_min_us", l(|s| s.min_us.into())),
        ("latency_mean_us", l(|s| s.mean_us.into())),
        ("latency_stdev_us", l(|s| s.stdev_us.into())),
        ("latency_p10_us", l(|s| s.p10_us.into())),
        ("latency_p25_us", l(|s| s.p25_us.into())),
        ("latency_p50_us", l(|s| s.p50_us.into())),
        ("latency_p75_us", l(|s| s.p75_us.into())),
        ("latency_p90_us", l(|s| s.p90_us.into())),
        ("latency_p95_us", l(|s| s.p95_us.into())),
        ("latency_p99_us", l(|s| s.p99_us.into())),
        ("latency_p99_9_us", l(|s| s.p99_9_us.into())),
        ("latency_p99_99_us", l(|s| s.p99_99_us.into())),
        ("latency_max_us", l(|s| s.max_us.into())),
        ("bytes_sent", Value::from(total.bytes_sent)),
        ("bytes_received", Value::from(total.bytes_received)),
        ("passed", Value::from(result.passed)),
    ]
}

/// One JSON object, the columns in order.
pub(crate) fn jsonl(result: &RunResult, threads: usize) -> String {
    let fields: Vec<String> = columns(result, threads)
        .into_iter()
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// The column names, in order (checked against [`columns`] by a test).
const COLUMN_NAMES: [&str; 36] = [
    "name",
    "url",
    "protocol",
    "started_at",
    "elapsed_s",
    "model",
    "connections",
    "streams",
    "threads",
    "requests",
    "responses",
    "errors",
    "error_rate",
    "rps",
    "status_1xx",
    "status_2xx",
    "status_3xx",
    "status_4xx",
    "status_5xx",
    "status_codes",
    "latency_min_us",
    "latency_mean_us",
    "latency_stdev_us",
    "latency_p10_us",
    "latency_p25_us",
    "latency_p50_us",
    "latency_p75_us",
    "latency_p90_us",
    "latency_p95_us",
    "latency_p99_us",
    "latency_p99_9_us",
    "latency_p99_99_us",
    "latency_max_us",
    "bytes_sent",
    "bytes_received",
    "passed",
];

/// The CSV header: the column names.
pub(crate) fn csv_header() -> String {
    csv_record(COLUMN_NAMES.iter().map(|n| n.to_string()))
}

/// One CSV row: `null` as an empty field, `status_codes` as `200=98|404=2`, the rest as JSON
/// writes it (text unquoted).
pub(crate) fn csv_row(result: &RunResult, threads: usize) -> String {
    csv_record(columns(result, threads).into_iter().map(|(_, v)| {
        match v {
            Value::Null => String::new(),
            Value::String(s) => s,
            Value::Object(map) => map
                .iter()
                .map(|(k, n)| format!("{k}={n}"))
                .collect::<Vec<_>>()
                .join("|"),
            other => other.to_string(),
        }
    }))
}

/// `fields` as one CSV record (RFC 4180 quoting, by the `csv` crate), without its line end.
fn csv_record(fields: impl IntoIterator<Item = String>) -> String {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(fields).expect("writing CSV to memory");
    let bytes = writer.into_inner().expect("flushing CSV to memory");
    let mut text = String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8");
    text.pop();
    text
}

/// The distinct `values`, in their first order, separated by a space; `null` when none.
fn distinct(values: impl Iterator<Item = String>) -> Value {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    if seen.is_empty() {
        Value::Null
    } else {
        Value::from(seen.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline() -> RunResult {
        crate::result::read(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/baseline.json"
        )))
        .unwrap()
    }

    #[test]
    fn the_header_names_the_columns() {
        let result = baseline();
        let names: Vec<&str> = columns(&result, 2).iter().map(|(k, _)| *k).collect();
        assert_eq!(names, COLUMN_NAMES);
        assert_eq!(csv_header().split(',').count(), names.len());
    }

    /// A URL with a comma, a quote and a line break, a name with a quote, and a secret query
    /// value: a CSV reader gives back each field whole, the secret shown as `${...}`.
    #[test]
    fn lines_round_trip_through_a_csv_reader() {
        let mut result = baseline();
        result.spec.name = "say \"hi\", twice".to_string();
        result.targets.truncate(1);
        result.targets[0].url = Some("http://127.0.0.1:9/a,b?q=\"x\"\ny&token=s3cret".into());
        result.targets[0].transport = Some(crate::result::TransportResult {
            requested: "auto".into(),
            protocol: "h2".into(),
            tls: None,
            alt_svc_h3: None,
        });
        result.total.status_codes = [("200".to_string(), 7), ("404".to_string(), 2)].into();
        let text = format!("{}\n{}\n", csv_header(), csv_row(&result, 2));
        assert!(!text.contains("s3cret"), "{text}");
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        let field = |name: &str| {
            let i = header.iter().position(|h| h == name).unwrap();
            rows[0][i].to_string()
        };
        assert_eq!(field("name"), "say \"hi\", twice");
        assert_eq!(
            field("url"),
            "http://127.0.0.1:9/a,b?q=\"x\"\ny&token=${...}"
        );
        assert_eq!(field("protocol"), "h2");
        assert_eq!(field("status_codes"), "200=7|404=2");
        assert_eq!(field("status_4xx"), "2");
        assert_eq!(rows[0].len(), COLUMN_NAMES.len());

        let json: Value = serde_json::from_str(&jsonl(&result, 2)).unwrap();
        assert_eq!(json["url"], field("url").as_str());
        assert_eq!(
            json["status_codes"],
            serde_json::json!({"200": 7, "404": 2})
        );
    }

    /// Several targets: their distinct URLs and protocols, separated by a space; none: null.
    #[test]
    fn several_targets_list_their_urls() {
        let mut result = baseline();
        let cols = |r: &RunResult| -> Vec<Value> {
            columns(r, 1).into_iter().take(3).map(|(_, v)| v).collect()
        };
        assert_eq!(
            cols(&result)[1],
            "http://127.0.0.1:40907/a?delay=5ms http://127.0.0.1:40907/b?delay=5ms&status=200"
        );
        assert_eq!(cols(&result)[2], Value::Null);
        for t in &mut result.targets {
            t.url = None;
        }
        assert_eq!(cols(&result)[1], Value::Null);
    }
}
