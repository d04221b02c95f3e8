//! How busy the whole machine was during a duet: the share of all CPUs' time that was not idle,
//! from the kernel's counters (`/proc/stat`'s `cpu` line, Linux: `proc(5)`), read before and
//! after the run. Services, loadgate and anything else on the machine count alike: a duet
//! loads both sides at once, and when they share a machine that doubles its load.

/// The `cpu` line of `/proc/stat`: time, in clock ticks, summed over all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CpuTicks {
    /// Idle and waiting for I/O.
    idle: u64,
    /// All of the fields (user, nice, system, idle, iowait, irq, softirq, steal).
    total: u64,
}

/// The machine's CPU ticks now; `None` where `/proc/stat` cannot be read (not Linux).
pub(super) fn ticks() -> Option<CpuTicks> {
    parse(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The share (0 to 1) of all CPUs' time that was busy between `before` and now; `None` when
/// either reading is missing or no tick passed.
pub(super) fn busy_since(before: Option<CpuTicks>) -> Option<f64> {
    busy_between(before?, ticks()?)
}

fn busy_between(before: CpuTicks, after: CpuTicks) -> Option<f64> {
    let total = after.total.checked_sub(before.total)?;
    let idle = after.idle.checked_sub(before.idle)?;
    (total > 0).then(|| total.saturating_sub(idle) as f64 / total as f64)
}

/// The `cpu ` line of `/proc/stat` text: `cpu user nice system idle iowait irq softirq steal
/// guest guest_nice` (guest time is already in user and nice, so it is left out).
fn parse(stat: &str) -> Option<CpuTicks> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if fields.len() < 4 {
        return None;
    }
    Some(CpuTicks {
        idle: fields[3] + fields.get(4).copied().unwrap_or(0),
        total: fields.iter().sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_share_of_two_readings() {
        let before = parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        let after = parse("cpu  400 0 150 850 100 0 0 0 0 0\n").unwrap();
        // 500 ticks passed, 100 of them idle or waiting.
        assert_eq!(busy_between(before, after), Some(0.8));
        assert_eq!(busy_between(after, after), None);
        assert!(parse("intr 1 2\n").is_none());
    }

    #[test]
    fn this_machine_is_read() {
        if cfg!(target_os = "linux") {
            assert!(ticks().is_some());
        }
    }
}
