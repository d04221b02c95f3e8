//! Upstream time as the server reports it in response headers: Envoy's
//! `X-Envoy-Upstream-Service-Time` (whole milliseconds) and the `dur` values of the W3C
//! `Server-Timing` header (milliseconds, per metric name), in histograms of microseconds.

use super::Recorder;

/// Most `Server-Timing` metric names recorded per target; `dur` values of further names are
/// counted in [`Upstream::server_timing_dropped`].
pub(crate) const MAX_SERVER_TIMING_NAMES: usize = 8;

/// Longest `Server-Timing` metric name recorded, in bytes; longer names are ignored.
const MAX_NAME_BYTES: usize = 64;

/// A target's upstream-time histograms, in microseconds (3 significant digits), each made at
/// its first sample ([`Recorder`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Upstream {
    /// `X-Envoy-Upstream-Service-Time`, per response that had it.
    pub(crate) envoy_us: Recorder,
    /// Per `Server-Timing` metric name (the first [`MAX_SERVER_TIMING_NAMES`] seen), its
    /// `dur` values.
    pub(crate) server_timing_us: Vec<(String, Recorder)>,
    /// `dur` values of metric names beyond the first [`MAX_SERVER_TIMING_NAMES`], not
    /// recorded.
    pub(crate) server_timing_dropped: u64,
}

impl Upstream {
    /// Records one response's upstream headers: the Envoy header's value in microseconds,
    /// and its `Server-Timing` field values (joined by `,`). Returns at once when the
    /// response had neither.
    #[inline]
    pub(crate) fn record(&mut self, envoy_us: Option<u64>, server_timing: &[u8]) {
        if let Some(us) = envoy_us {
            self.envoy_us.record(us);
        }
        if !server_timing.is_empty() {
            server_timing_durations(server_timing, |name, dur_ms| {
                self.record_metric(name, (dur_ms * 1000.0).round() as u64);
            });
        }
    }

    /// Records `us` under metric `name`, a new name only while there is room.
    fn record_metric(&mut self, name: &[u8], us: u64) {
        let i = match self
            .server_timing_us
            .iter()
            .position(|(n, _)| n.as_bytes() == name)
        {
            Some(i) => i,
            None if self.server_timing_us.len() < MAX_SERVER_TIMING_NAMES => {
                let name = String::from_utf8_lossy(name).into_owned();
                self.server_timing_us.push((name, Recorder::precise()));
                self.server_timing_us.len() - 1
            }
            None => {
                self.server_timing_dropped += 1;
                return;
            }
        };
        self.server_timing_us[i].1.record(us);
    }

    /// Adds `other` into `self`: histograms of the same name added; names beyond the
    /// first [`MAX_SERVER_TIMING_NAMES`] counted as dropped.
    pub(crate) fn merge(&mut self, other: &Upstream) {
        self.envoy_us.merge(&other.envoy_us);
        for (name, h) in &other.server_timing_us {
            match self.server_timing_us.iter().position(|(n, _)| n == name) {
                Some(i) => self.server_timing_us[i].1.merge(h),
                None if self.server_timing_us.len() < MAX_SERVER_TIMING_NAMES => {
                    self.server_timing_us.push((name.clone(), h.clone()));
                }
                None => self.server_timing_dropped += h.len(),
            }
        }
        self.server_timing_dropped += other.server_timing_dropped;
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.envoy_us.is_empty()
            && self.server_timing_us.is_empty()
            && self.server_timing_dropped == 0
    }
}

/// Calls `each(name, dur)` for every metric of a `Server-Timing` field value that has a valid
/// `dur` parameter (milliseconds, finite, not negative). The grammar is the W3C's (Server
/// Timing, §3, "The Server-Timing Header Field"): metrics separated by commas, each a name
/// (a token) and parameters after semicolons, `name=value` with a token or a quoted string
/// as value; only the first `dur` of a metric counts. Malformed metrics are skipped. No
/// allocation.
pub(crate) fn server_timing_durations(value: &[u8], mut each: impl FnMut(&[u8], f64)) {
    for metric in split_unquoted(value, b',') {
        let mut parts = split_unquoted(metric, b';');
        let name = parts.next().unwrap_or_default().trim_ascii();
        if name.is_empty() || name.len() > MAX_NAME_BYTES || !name.iter().all(|&b| is_tchar(b)) {
            continue;
        }
        let dur = parts.find_map(|param| {
            let (key, value) = param.split_at(param.iter().position(|&b| b == b'=')?);
            key.trim_ascii()
                .eq_ignore_ascii_case(b"dur")
                .then(|| unquote(value[1..].trim_ascii()))
        });
        let dur = dur
            .and_then(|v| std::str::from_utf8(v).ok()?.parse::<f64>().ok())
            .filter(|d| d.is_finite() && *d >= 0.0);
        if let Some(dur) = dur {
            each(name, dur);
        }
    }
}

/// The pieces of `bytes` between separators `sep` outside quoted strings (RFC 9110 §5.6.4:
/// `"` opens and closes, `\` escapes the next byte).
fn split_unquoted(bytes: &[u8], sep: u8) -> impl Iterator<Item = &[u8]> {
    let (mut quoted, mut escaped) = (false, false);
    bytes.split(move |&b| {
        if escaped {
            escaped = false;
        } else if quoted && b == b'\\' {
            escaped = true;
        } else if b == b'"' {
            quoted = !quoted;
        } else if b == sep && !quoted {
            return true;
        }
        false
    })
}

/// A quoted string's content (escapes left as they are: a number has none), or `value`.
fn unquote(value: &[u8]) -> &[u8] {
    match value {
        [b'"', inner @ .., b'"'] => inner,
        _ => value,
    }
}

/// A token character (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn durations(value: &str) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        server_timing_durations(value.as_bytes(), |n, d| {
            out.push((String::from_utf8(n.to_vec()).unwrap(), d))
        });
        out
    }

    #[test]
    fn server_timing_values_are_parsed_as_the_w3c_grammar_says() {
        let s = |n: &str, d: f64| (n.to_string(), d);
        assert_eq!(
            durations(r#"db;dur=53, app;dur=47.2 , cache;desc="Cache, Read";dur=23.2"#),
            vec![s("db", 53.0), s("app", 47.2), s("cache", 23.2)]
        );
        assert_eq!(
            durations(r#"miss, total;DUR="1.5";dur=9, edge ; dur = 4"#),
            vec![s("total", 1.5), s("edge", 4.0)]
        );
        assert_eq!(
            durations(r#"a;desc="x\";dur=1";dur=2"#),
            vec![s("a", 2.0)],
            "a quoted `;` and escaped quote are not separators"
        );
        for bad in [
            "dur=5",
            "bad name;dur=1",
            "x;dur=-1",
            "x;dur=NaN",
            "x;dur=1ms",
            ";dur=1",
        ] {
            assert_eq!(durations(bad), vec![], "{bad}");
        }
    }

    #[test]
    fn at_most_eight_names_and_exact_merge() {
        let mut a = Upstream::default();
        assert!(a.is_empty());
        a.record(Some(7_000), b"");
        a.record(None, b"db;dur=1.5,app;dur=0.25");
        let many: Vec<String> = (0..10).map(|i| format!("m{i};dur=1")).collect();
        a.record(None, many.join(",").as_bytes());
        assert_eq!(a.server_timing_us.len(), MAX_SERVER_TIMING_NAMES);
        assert_eq!(a.server_timing_dropped, 4, "m6..m9");
        let (name, db) = &a.server_timing_us[0];
        assert_eq!(name, "db");
        assert!(db.equivalent(db.max(), 1_500));
        assert!(
            a.server_timing_us[1]
                .1
                .equivalent(a.server_timing_us[1].1.max(), 250)
        );
        let mut b = Upstream::default();
        b.record(Some(9_000), b"db;dur=2, new;dur=3");
        a.merge(&b);
        assert_eq!(a.envoy_us.len(), 2);
        assert_eq!(a.server_timing_us[0].1.len(), 2);
        assert_eq!(a.server_timing_dropped, 5, "`new` had no room");
    }
}
