//! Prometheus remote write 1.0 (<https://prometheus.io/docs/specs/prw/remote_write_spec/>): the
//! series as a protobuf `WriteRequest` (`prometheus/prompb/remote.proto` and `types.proto`),
//! compressed in snappy's block format, POSTed with the spec's three headers.
//!
//! The protobuf is encoded here, by hand: four messages of two to four fields (a label, a
//! sample, a series, a request, and the metadata of each metric), whose wire format
//! (<https://protobuf.dev/programming-guides/encoding/>) is a tag, then a varint, 8 bytes, or a
//! length and bytes. A code generator (prost and its derive macros) would cost more build than
//! the 60 lines it replaces; the encoding is checked against Prometheus itself
//! (tests/it/export.rs).

use super::series::Series;

/// The headers of a remote write request, besides `Content-Length` (remote write 1.0).
pub(crate) const HEADERS: [(&str, &str); 3] = [
    ("Content-Encoding", "snappy"),
    ("Content-Type", "application/x-protobuf"),
    ("X-Prometheus-Remote-Write-Version", "0.1.0"),
];

/// `MetricMetadata.MetricType.GAUGE` in `types.proto`.
const GAUGE: u64 = 2;

/// The body of one remote write request that carries `series`: a snappy-compressed (block
/// format) `WriteRequest`, with the metadata of its metrics.
pub(crate) fn body(series: &[Series]) -> Vec<u8> {
    let request = write_request(series);
    snap::raw::Encoder::new()
        .compress_vec(&request)
        .expect("snappy compresses any input up to 4 GiB")
}

/// The protobuf `WriteRequest` of `series`: `timeseries` (field 1) in order, each with its
/// labels sorted by name (`__name__` first) and its samples in time order, then one
/// `metadata` (field 3) per metric.
fn write_request(series: &[Series]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in series {
        let mut labels: Vec<(&str, &str)> =
            s.labels.iter().map(|(n, v)| (*n, v.as_str())).collect();
        labels.push(("__name__", s.metric.name));
        labels.sort_unstable();
        let mut ts = Vec::new();
        for (name, value) in labels {
            let mut label = Vec::new();
            bytes_field(&mut label, 1, name.as_bytes());
            bytes_field(&mut label, 2, value.as_bytes());
            bytes_field(&mut ts, 1, &label);
        }
        for p in &s.points {
            let mut sample = Vec::new();
            tag(&mut sample, 1, 1);
            sample.extend_from_slice(&p.value.to_le_bytes());
            tag(&mut sample, 2, 0);
            // int64 as a varint: two's complement, 10 bytes when negative.
            varint(&mut sample, p.time_ms as u64);
            bytes_field(&mut ts, 2, &sample);
        }
        bytes_field(&mut out, 1, &ts);
    }
    let mut metrics: Vec<_> = series.iter().map(|s| s.metric).collect();
    metrics.sort_unstable_by_key(|m| m.name);
    metrics.dedup();
    for metric in metrics {
        let mut meta = Vec::new();
        tag(&mut meta, 1, 0);
        varint(&mut meta, GAUGE);
        bytes_field(&mut meta, 2, metric.name.as_bytes());
        bytes_field(&mut meta, 4, metric.help.as_bytes());
        bytes_field(&mut meta, 5, prometheus_unit(metric.unit).as_bytes());
        bytes_field(&mut out, 3, &meta);
    }
    out
}

/// The unit as Prometheus' metadata writes it: `seconds`, `ratio`, or none.
fn prometheus_unit(ucum: &str) -> &'static str {
    match ucum {
        "s" => "seconds",
        "1" => "ratio",
        _ => "",
    }
}

/// A field's key: its number and wire type (0 varint, 1 64-bit, 2 length-delimited).
fn tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// A length-delimited field: key, length, bytes.
fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    tag(out, field, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A base-128 varint, least significant group first.
fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::series::{LATENCY_SECONDS, Point};

    #[test]
    fn varints_are_base_128_least_significant_first() {
        let encode = |v| {
            let mut out = Vec::new();
            varint(&mut out, v);
            out
        };
        assert_eq!(encode(0), [0]);
        assert_eq!(encode(1), [1]);
        assert_eq!(encode(150), [0x96, 0x01]);
        assert_eq!(encode(300), [0xac, 0x02]);
        assert_eq!(encode(u64::MAX).len(), 10);
    }

    fn one_series(points: usize) -> Series {
        Series {
            metric: LATENCY_SECONDS,
            labels: vec![
                ("spec", "api".into()),
                ("scope", "total".into()),
                ("quantile", "0.99".into()),
            ],
            points: (0..points)
                .map(|i| Point {
                    time_ms: 1_700_000_000_000 + i as i64 * 1000,
                    value: 0.25,
                })
                .collect(),
        }
    }

    #[test]
    fn a_series_is_encoded_with_sorted_labels_and_its_samples() {
        let request = write_request(&[one_series(1)]);
        // timeseries (field 1) and its length, then its first label (field 1): __name__
        // sorts first.
        assert_eq!(request[0], 0x0a);
        let length_bytes = 1 + request[1..].iter().position(|b| b & 0x80 == 0).unwrap();
        let label = b"\x0a\x08__name__\x12\x18loadgate_latency_seconds";
        let first = &request[1 + length_bytes..];
        assert_eq!(&first[..2], [0x0a, label.len() as u8]);
        assert_eq!(&first[2..2 + label.len()], label);
        let text = String::from_utf8_lossy(&request);
        let order: Vec<_> = ["__name__", "quantile", "scope", "spec"]
            .iter()
            .map(|l| text.find(l).expect("every label"))
            .collect();
        assert!(order.is_sorted(), "labels sorted by name: {order:?}");
        // The sample: value 0.25 as 8 little-endian bytes, then the timestamp's varint.
        let mut sample = vec![0x09];
        sample.extend_from_slice(&0.25f64.to_le_bytes());
        sample.push(0x10);
        varint(&mut sample, 1_700_000_000_000);
        let at = request
            .windows(sample.len())
            .position(|w| w == sample.as_slice());
        assert!(at.is_some(), "the sample is encoded");
    }

    #[test]
    fn the_body_is_snappys_block_format() {
        let series = vec![one_series(3), one_series(2)];
        let decoded = snap::raw::Decoder::new()
            .decompress_vec(&body(&series))
            .unwrap();
        assert_eq!(decoded, write_request(&series));
    }
}
