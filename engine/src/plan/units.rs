//! Quantities with explicit units, as written in a spec: durations (`200ms`), percentages
//! (`0.1%`) and rates (`500/s`). A bare number is never a duration, a percentage or a rate.

use std::time::Duration;

/// Parses a duration with an explicit unit: `us`, `ms`, `s`, `m` or `h` (`1.5s`, `200ms`).
///
/// The grammar matches [`crate::spec::DURATION_PATTERN`]. Errors name what was expected.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
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
}
