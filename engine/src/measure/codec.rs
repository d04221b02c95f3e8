//! The histograms' text encoding, as results carry them: HdrHistogram V2 + DEFLATE, base64
//! (standard alphabet). Here, beneath `run` and `result`, so that the run can encode each
//! second's histograms as soon as the second is final (`run::collect`); `result` re-exports
//! both functions.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

use super::MAX_LATENCY_US;

/// Encodes a histogram as HdrHistogram V2 + DEFLATE, base64 (standard alphabet), with the
/// whole range's bounds (1 µs to [`MAX_LATENCY_US`]) in its header whatever range it was
/// grown to ([`super::Recorder`]): the same bytes for the same samples.
pub(crate) fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let whole;
    let histogram = if histogram.high() != MAX_LATENCY_US {
        let mut h = Histogram::new_with_bounds(1, MAX_LATENCY_US, histogram.sigfig())
            .expect("valid histogram bounds");
        h.add(histogram).expect("a smaller range adds");
        whole = h;
        &whole
    } else {
        histogram
    };
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .expect("serializing into a Vec does not fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes a histogram written by `encode_histogram`. Errors: bad base64 or histogram data.
pub fn decode_histogram(text: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
    Ok(Deserializer::new().deserialize(&mut bytes.as_slice())?)
}
