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

/// Parses a rate with its unit `/s` (`500/s`, `2.5/s`) into events per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
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
}
