//! OTLP/HTTP metrics (<https://opentelemetry.io/docs/specs/otlp/#otlphttp>): the series as one
//! `ExportMetricsServiceRequest` in OTLP's JSON encoding (the protobuf JSON mapping with
//! lowerCamelCase keys, 64-bit integers as decimal strings), POSTed as `application/json`.
//!
//! One resource (`service.name` `loadgate`, `service.version` the engine's version), one
//! instrumentation scope (`loadgate`), one gauge per metric; each data point has the series'
//! labels as attributes (`spec`, `scope`, and `quantile` for latencies) and its time in
//! nanoseconds since the Unix epoch.

use serde_json::{Value, json};

use super::series::Series;

/// The headers of an OTLP/HTTP JSON request, besides `Content-Length`.
pub(crate) const HEADERS: [(&str, &str); 1] = [("Content-Type", "application/json")];

/// The body of the request that carries `series`: one gauge per metric, in the order the
/// metrics first appear, its data points in the series' order.
pub(crate) fn body(series: &[Series]) -> Vec<u8> {
    let mut metrics: Vec<(&str, Value)> = Vec::new();
    for s in series {
        let points = s.points.iter().map(|p| {
            json!({
                "attributes": s.labels.iter().map(|(k, v)| attribute(k, v)).collect::<Vec<_>>(),
                "timeUnixNano": i128::from(p.time_ms).saturating_mul(1_000_000).max(0).to_string(),
                "asDouble": p.value,
            })
        });
        let at = match metrics.iter().position(|(name, _)| *name == s.metric.name) {
            Some(at) => at,
            None => {
                metrics.push((
                    s.metric.name,
                    json!({
                        "name": s.metric.name,
                        "description": s.metric.help,
                        "unit": s.metric.unit,
                        "gauge": { "dataPoints": [] },
                    }),
                ));
                metrics.len() - 1
            }
        };
        if let Some(Value::Array(data)) = metrics[at].1.pointer_mut("/gauge/dataPoints") {
            data.extend(points);
        }
    }
    let version = env!("CARGO_PKG_VERSION");
    let request = json!({
        "resourceMetrics": [{
            "resource": {
                "attributes": [
                    attribute("service.name", "loadgate"),
                    attribute("service.version", version),
                ],
            },
            "scopeMetrics": [{
                "scope": { "name": "loadgate", "version": version },
                "metrics": metrics.into_iter().map(|(_, m)| m).collect::<Vec<_>>(),
            }],
        }],
    });
    serde_json::to_vec(&request).expect("JSON of strings and finite numbers")
}

/// The collector's answer to a request: an error when its `partialSuccess` says it rejected
/// data points (OTLP: a 200 with a partial success is not a retry but a failure to report).
pub(crate) fn check_answer(answer: &str) -> Result<(), String> {
    let Ok(answer) = serde_json::from_str::<Value>(answer) else {
        return Ok(());
    };
    let partial = &answer["partialSuccess"];
    let rejected = match &partial["rejectedDataPoints"] {
        Value::Number(n) => n.as_u64().unwrap_or(0),
        Value::String(s) => s.parse().unwrap_or(0),
        _ => 0,
    };
    if rejected == 0 {
        return Ok(());
    }
    let message = partial["errorMessage"].as_str().unwrap_or_default();
    Err(format!(
        "the collector rejected {rejected} data point(s): {}",
        crate::spec::printable(message)
    ))
}

/// An OTLP `KeyValue` with a string value.
fn attribute(key: &str, value: &str) -> Value {
    json!({ "key": key, "value": { "stringValue": value } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::series::{LATENCY_SECONDS, Point, REQUESTS_PER_SECOND};

    #[test]
    fn a_partial_success_is_a_failure() {
        assert_eq!(check_answer(""), Ok(()));
        assert_eq!(check_answer("{}"), Ok(()));
        assert_eq!(check_answer(r#"{"partialSuccess":{}}"#), Ok(()));
        let error =
            check_answer(r#"{"partialSuccess":{"rejectedDataPoints":"3","errorMessage":"bad"}}"#);
        assert_eq!(
            error,
            Err("the collector rejected 3 data point(s): bad".into())
        );
    }

    #[test]
    fn series_of_one_metric_share_its_gauge() {
        let series = |metric, quantile: Option<&str>, value| {
            let mut labels = vec![("spec", "api".to_string()), ("scope", "total".to_string())];
            labels.extend(quantile.map(|q| ("quantile", q.to_string())));
            Series {
                metric,
                labels,
                points: vec![Point {
                    time_ms: 1_700_000_000_123,
                    value,
                }],
            }
        };
        let body = body(&[
            series(LATENCY_SECONDS, Some("0.5"), 0.01),
            series(REQUESTS_PER_SECOND, None, 100.0),
            series(LATENCY_SECONDS, Some("0.99"), 0.05),
        ]);
        let request: Value = serde_json::from_slice(&body).unwrap();
        let resource = &request["resourceMetrics"][0];
        assert_eq!(
            resource["resource"]["attributes"][0],
            json!({"key": "service.name", "value": {"stringValue": "loadgate"}})
        );
        let metrics = resource["scopeMetrics"][0]["metrics"].as_array().unwrap();
        assert_eq!(metrics.len(), 2);
        assert_eq!(metrics[0]["name"], "loadgate_latency_seconds");
        assert_eq!(metrics[0]["unit"], "s");
        let points = metrics[0]["gauge"]["dataPoints"].as_array().unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!(points[1]["asDouble"], 0.05);
        assert_eq!(points[1]["timeUnixNano"], "1700000000123000000");
        assert_eq!(
            points[1]["attributes"][2],
            json!({"key": "quantile", "value": {"stringValue": "0.99"}})
        );
    }
}
