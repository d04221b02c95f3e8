//! Quantities with explicit units, one vocabulary for the whole crate: parsing them as written
//! in a spec, and formatting them for every report and the console.
//!
//! - Parsing: durations (`200ms`) and rates (`500/s`). A bare number is never a duration or a
//!   rate.
//! - Formatting: a [`Unit`] (the `unit` field of the result and the comparison: `us`, `ratio`,
//!   `1/s`) formats its values ([`Unit::format`], [`Unit::format_signed`]); durations from µs
//!   ([`format_duration_us`]), relative changes ([`format_relative`]), changes of a metric
//!   ([`format_change`]) and byte counts ([`format_bytes`]). A missing value is [`MISSING`].
//!
//! This module depends on nothing else in the crate.

use std::time::Duration;

/// Shown for a value that does not exist (no baseline, no responses).
pub(crate) const MISSING: &str = "–";

/// The unit of a measured value, as named in the result and the comparison (`unit` fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Microseconds (`us`), formatted in a readable unit: `850us`, `1.23ms`, `2.50s`.
    Micros,
    /// A fraction (`ratio`, 0.01 = 1%), formatted as a percentage: `1.000%`.
    Ratio,
    /// Events per second (`1/s`): `512.0/s`.
    PerSecond,
    /// A plain number (a count, or a unit this loadgate does not know): `12`.
    Count,
}

impl Unit {
    /// The unit named `name`: `us`, `ratio` or `1/s`; any other name is a plain number
    /// ([`Unit::Count`]).
    pub(crate) fn from_name(name: &str) -> Unit {
        match name {
            "us" => Unit::Micros,
            "ratio" => Unit::Ratio,
            "1/s" => Unit::PerSecond,
            _ => Unit::Count,
        }
    }

    /// The unit's name in the result and the comparison: `us`, `ratio`, `1/s` or `count`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Unit::Micros => "us",
            Unit::Ratio => "ratio",
            Unit::PerSecond => "1/s",
            Unit::Count => "count",
        }
    }

    /// `value` in this unit, for reasons and reports: `1.23ms`, `0.150%`, `512.0/s`, `12`.
    pub(crate) fn format(self, value: f64) -> String {
        match self {
            Unit::Micros => {
                let sign = if value < 0.0 { "-" } else { "" };
                format!("{sign}{}", format_duration_us(value.abs()))
            }
            Unit::Ratio => format!("{:.3}%", value * 100.0),
            Unit::PerSecond => format!("{value:.1}/s"),
            Unit::Count => format!("{value}"),
        }
    }

    /// [`Unit::format`] with an explicit `+` for positive values: `+1.23ms`, `-5.0/s`.
    pub(crate) fn format_signed(self, value: f64) -> String {
        let text = self.format(value);
        if value > 0.0 {
            format!("+{text}")
        } else {
            text
        }
    }

    /// [`Unit::format`], or [`MISSING`] when there is no value.
    pub(crate) fn format_or_missing(self, value: Option<f64>) -> String {
        value.map_or_else(|| MISSING.to_string(), |v| self.format(v))
    }
}

/// A duration given in microseconds, in a readable unit: `850us`, `1.23ms`, `2.50s`.
pub(crate) fn format_duration_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0}us")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1_000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

/// A relative change (a fraction, 0.034 = 3.4%) as a signed percentage, `+3.4%`; [`MISSING`]
/// when absent or not finite.
pub(crate) fn format_relative(fraction: Option<f64>) -> String {
    match fraction {
        Some(v) if v.is_finite() => format!("{:+.1}%", v * 100.0),
        _ => MISSING.to_string(),
    }
}

/// The change of a metric between two runs: `relative` (a fraction of the baseline) when there
/// is one, `+3.4%`; else the absolute `change` in `unit`, `+1.20ms`, or `±0` when it is 0;
/// [`MISSING`] when neither exists.
pub(crate) fn format_change(relative: Option<f64>, change: Option<f64>, unit: Unit) -> String {
    match (relative, change) {
        (Some(r), _) => format_relative(Some(r)),
        (None, Some(0.0)) => "±0".to_string(),
        (None, Some(c)) => unit.format_signed(c),
        (None, None) => MISSING.to_string(),
    }
}

/// A number of bytes in binary units: `512 B`, `1.5 KiB`, `3.2 MiB`, `1.25 GiB`.
pub(crate) fn format_bytes(n: u64) -> String {
    let n = n as f64;
    if n < 1024.0 {
        format!("{n} B")
    } else if n < 1024.0 * 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else if n < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", n / (1024.0 * 1024.0 * 1024.0))
    }
}

/// Parses a duration with an explicit unit: `us`, `ms`, `s`, `m` or `h` (`1.5s`, `200ms`).
///
/// The grammar matches `spec::DURATION_PATTERN`. Errors name what was expected.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            format!("`{text}` has no unit: write a duration with a unit, e.g. `200ms` or `1.5s`")
        })?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: expected e.g. `200ms` or `1.5s`"))?;
    let seconds_per_unit = match unit {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "`{text}` has unknown unit `{unit}`: use us, ms, s, m or h"
            ));
        }
    };
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds > 1e9 {
        return Err(format!("`{text}` is too long a duration"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses a rate with its unit `/s` (`500/s`, `2.5/s`) into events per second.
pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let number = text
        .strip_suffix("/s")
        .ok_or_else(|| format!("`{text}` needs the unit `/s`, e.g. `500/s`"))?;
    match number.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate >= 0.0 => Ok(rate),
        _ => Err(format!("`{text}` is not a rate such as `500/s`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_units() {
        let cases: &[(&str, Option<Duration>)] = &[
            ("200ms", Some(Duration::from_millis(200))),
            ("1.5s", Some(Duration::from_millis(1500))),
            ("250us", Some(Duration::from_micros(250))),
            ("2m", Some(Duration::from_secs(120))),
            ("1h", Some(Duration::from_secs(3600))),
            ("0s", Some(Duration::ZERO)),
            ("200", None),
            ("ms", None),
            ("1.2.3s", None),
            ("10 parsecs", None),
            ("5d", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration(text).ok(), *want, "{text}");
        }
    }

    #[test]
    fn rates_need_units() {
        assert_eq!(parse_rate("500/s"), Ok(500.0));
        assert_eq!(parse_rate("2.5/s"), Ok(2.5));
        assert!(
            parse_rate("500")
                .unwrap_err()
                .contains("needs the unit `/s`")
        );
        assert!(parse_rate("fast/s").unwrap_err().contains("not a rate"));
        assert!(parse_rate("-1/s").is_err());
    }

    #[test]
    fn values_format_in_their_unit() {
        let cases = [
            (Unit::Micros, 850.0, "850us"),
            (Unit::Micros, 1_234.0, "1.23ms"),
            (Unit::Micros, 2_500_000.0, "2.50s"),
            (Unit::Micros, -1_500.0, "-1.50ms"),
            (Unit::Ratio, 0.0015, "0.150%"),
            (Unit::PerSecond, 512.0, "512.0/s"),
            (Unit::Count, 12.0, "12"),
        ];
        for (unit, value, want) in cases {
            assert_eq!(unit.format(value), want, "{unit:?} {value}");
        }
        assert_eq!(Unit::Micros.format_signed(2_000.0), "+2.00ms");
        assert_eq!(Unit::PerSecond.format_signed(-5.0), "-5.0/s");
        assert_eq!(Unit::Ratio.format_or_missing(None), MISSING);
        for name in ["us", "ratio", "1/s"] {
            assert_eq!(Unit::from_name(name).name(), name);
        }
    }

    #[test]
    fn changes_are_relative_when_they_can_be() {
        assert_eq!(format_relative(Some(0.034)), "+3.4%");
        assert_eq!(format_relative(Some(f64::INFINITY)), MISSING);
        assert_eq!(
            format_change(Some(-0.5), Some(-10.0), Unit::Micros),
            "-50.0%"
        );
        assert_eq!(format_change(None, Some(0.0), Unit::Ratio), "±0");
        assert_eq!(format_change(None, Some(0.02), Unit::Ratio), "+2.000%");
        assert_eq!(format_change(None, None, Unit::Ratio), MISSING);
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
    }
}
