//! A histogram of microseconds that costs nothing until its first sample and then only what
//! the largest value recorded needs: what a target's (and its seconds') records are made of,
//! so that a target costs memory for what it measured, not for the widest range it could.
//!
//! HdrHistogram keeps `2 × 10^digits` counters per power of two beyond the first (rounded up to
//! a power of two: 2,048 at 3 significant digits, 256 at 2), 8 bytes each. A histogram made
//! for the whole range, 1 µs to an hour, holds 23,552 counters at 3 digits (184 KiB) and 3,328
//! at 2 (26 KiB), recorded into or not. A [`Recorder`] is made at its first sample with the
//! range that sample needs (at 3 digits, 16 KiB for values below 2.048 ms) and grows by one
//! power of two at a time (8 KiB each at 3 digits: 40 KiB for values up to 16 ms, 64 KiB up to
//! 131 ms). The buckets are the same as the whole range's: a value lands in the same bucket,
//! percentiles are the same to the microsecond, and its encoding ([`super::encode_histogram`])
//! is the same bytes.

use std::ops::Deref;
use std::sync::LazyLock;

use hdrhistogram::{AdditionError, Histogram};

use super::MAX_LATENCY_US;

/// An empty histogram of each precision, what an unrecorded [`Recorder`] reads as.
static EMPTY: LazyLock<[Histogram<u64>; 2]> = LazyLock::new(|| [growing(2, 2), growing(3, 2)]);

/// A histogram of `digits` significant digits, from 1 µs, made to hold `high` (at least 2)
/// and growing as larger values are recorded or added.
fn growing(digits: u8, high: u64) -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, high.clamp(2, MAX_LATENCY_US), digits)
        .expect("valid histogram bounds");
    h.auto(true);
    h
}

/// A latency histogram in microseconds (values above [`MAX_LATENCY_US`] are recorded as it),
/// made at its first sample and grown to its largest value; reads as an empty histogram of its
/// precision until then (`Deref`).
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    /// Significant digits: 2 or 3.
    digits: u8,
    histogram: Option<Histogram<u64>>,
}

impl Recorder {
    /// An empty recorder of 3 significant digits (0.1%: a target's latency and phases).
    pub(crate) const fn precise() -> Self {
        Recorder {
            digits: 3,
            histogram: None,
        }
    }

    /// An empty recorder of 2 significant digits (1%: a span's latency, enough for its p50
    /// and p99).
    pub(crate) const fn coarse() -> Self {
        Recorder {
            digits: 2,
            histogram: None,
        }
    }

    /// Records `value_us` microseconds (above [`MAX_LATENCY_US`]: recorded as it).
    #[inline]
    pub(crate) fn record(&mut self, value_us: u64) {
        let value_us = value_us.min(MAX_LATENCY_US);
        match &mut self.histogram {
            Some(h) => {
                if h.record(value_us).is_err() {
                    // Growing failed (it cannot below `MAX_LATENCY_US` on 64 bits): clamp.
                    h.saturating_record(value_us);
                }
            }
            None => {
                let mut h = growing(self.digits, value_us);
                h.saturating_record(value_us);
                self.histogram = Some(h);
            }
        }
    }

    /// Adds the samples of `other` (any bounds and precision; values in its buckets are
    /// recorded at this recorder's precision). Errors: growing to hold them failed (it cannot
    /// on 64 bits).
    pub(crate) fn add(&mut self, other: &Histogram<u64>) -> Result<(), AdditionError> {
        if other.is_empty() {
            return Ok(());
        }
        let digits = self.digits;
        self.histogram
            .get_or_insert_with(|| growing(digits, other.max()))
            .add(other)
    }

    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &Recorder) {
        if let Some(h) = &other.histogram {
            self.add(h).expect("a growing histogram takes any value");
        }
    }
}

impl Default for Recorder {
    /// [`Recorder::precise`].
    fn default() -> Self {
        Recorder::precise()
    }
}

impl Deref for Recorder {
    type Target = Histogram<u64>;

    /// The histogram; an empty one of the same precision before the first sample.
    fn deref(&self) -> &Histogram<u64> {
        self.histogram
            .as_ref()
            .unwrap_or(&EMPTY[usize::from(self.digits == 3)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{decode_histogram, encode_histogram, latency_histogram};

    /// Values from 0 to 40 s, spread over many powers of two.
    fn values() -> impl Iterator<Item = u64> {
        (0..4_000u64).map(|i| i * i * 2_503 % 40_000_000)
    }

    #[test]
    fn records_as_the_whole_range_does_and_encodes_the_same_bytes() {
        let mut whole = latency_histogram();
        let mut r = Recorder::precise();
        assert!(r.is_empty());
        assert_eq!(r.value_at_quantile(0.99), 0);
        for v in values().chain([MAX_LATENCY_US + 5]) {
            whole.saturating_record(v);
            r.record(v);
        }
        assert_eq!(r.len(), whole.len());
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(r.value_at_quantile(q), whole.value_at_quantile(q), "{q}");
        }
        assert_eq!((r.min(), r.max()), (whole.min(), whole.max()));
        assert_eq!(encode_histogram(&r), encode_histogram(&whole));
        assert_eq!(decode_histogram(&encode_histogram(&r)).unwrap(), whole);
    }

    #[test]
    fn costs_nothing_until_recorded_and_grows_with_the_largest_value() {
        let mut r = Recorder::precise();
        assert!(r.histogram.is_none());
        r.record(900);
        let small = r.histogram.as_ref().unwrap().distinct_values();
        assert_eq!(small, 2_048, "16 KiB below 2.048 ms");
        r.record(100_000);
        let grown = r.histogram.as_ref().unwrap().distinct_values();
        assert_eq!(grown, 8 * 1_024, "64 KiB up to 131 ms");
        assert!(grown < latency_histogram().distinct_values() / 2);
    }

    #[test]
    fn merges_and_adds_whatever_their_ranges() {
        let (mut a, mut b) = (Recorder::precise(), Recorder::precise());
        a.record(10);
        b.record(5_000_000);
        b.record(70);
        a.merge(&b);
        a.merge(&Recorder::precise());
        assert_eq!((a.len(), a.min(), a.max()), (3, 10, b.max()));
        // A value of an hour or more: its bucket reaches past the hour, and still merges.
        let mut hour = Recorder::precise();
        hour.record(u64::MAX);
        assert!(hour.max() > MAX_LATENCY_US);
        a.merge(&hour);
        let mut whole = latency_histogram();
        whole.add(&*a).unwrap();
        assert_eq!(encode_histogram(&a), encode_histogram(&whole));
        assert_eq!(decode_histogram(&encode_histogram(&a)).unwrap().len(), 4);
        let mut c = Recorder::precise();
        c.add(&a).unwrap();
        c.add(&latency_histogram()).unwrap();
        assert_eq!(encode_histogram(&c), encode_histogram(&a));
        let mut coarse = Recorder::coarse();
        coarse.record(1_234);
        assert!(coarse.equivalent(coarse.max(), 1_234));
        assert_eq!(coarse.sigfig(), 2);
        assert_eq!(Recorder::coarse().sigfig(), 2);
        assert_eq!(Recorder::precise().sigfig(), 3);
    }
}
