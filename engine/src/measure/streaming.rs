//! A target's streamed responses (chunked bodies, HTTP/2 bodies without a length, Server-Sent
//! Events): time to first byte of the body, events, and the time between events.

use super::Recorder;

/// A target's streamed responses; the histograms (microseconds, 3 significant digits) are
/// made at their first sample ([`Recorder`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Streaming {
    /// Complete responses whose body was streamed.
    pub(crate) responses: u64,
    /// Of those, event streams (`text/event-stream`).
    pub(crate) sse_responses: u64,
    /// Events the event streams delivered.
    pub(crate) events: u64,
    /// Time to first byte of the body: from when the request was due (the latency's
    /// origin) to the body's first byte. The time to its last byte is the latency.
    pub(crate) ttfb_us: Recorder,
    /// Time between consecutive events of an event stream.
    pub(crate) event_gap_us: Recorder,
}

impl Streaming {
    /// Records one streamed response: an event stream (`sse`) or not, the time to its first
    /// body byte (`None` for an empty body), its events and the times between them.
    pub(crate) fn record(&mut self, sse: bool, ttfb_us: Option<u64>, events: u64, gaps_us: &[u64]) {
        self.responses += 1;
        self.sse_responses += u64::from(sse);
        self.events += events;
        if let Some(us) = ttfb_us {
            self.ttfb_us.record(us);
        }
        if !gaps_us.is_empty() {
            for &gap in gaps_us {
                self.event_gap_us.record(gap);
            }
        }
    }

    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &Streaming) {
        self.responses += other.responses;
        self.sse_responses += other.sse_responses;
        self.events += other.events;
        for (mine, theirs) in [
            (&mut self.ttfb_us, &other.ttfb_us),
            (&mut self.event_gap_us, &other.event_gap_us),
        ] {
            mine.merge(theirs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_merges() {
        let mut a = Streaming::default();
        a.record(true, Some(5_000), 3, &[100, 200]);
        a.record(false, None, 0, &[]);
        let mut b = Streaming::default();
        b.record(true, Some(7_000), 1, &[]);
        a.merge(&b);
        assert_eq!((a.responses, a.sse_responses, a.events), (3, 2, 4));
        assert_eq!(a.ttfb_us.len(), 2);
        assert_eq!(a.event_gap_us.len(), 2);
        assert!(Streaming::default().event_gap_us.is_empty());
    }
}
