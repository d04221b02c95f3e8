//! Shards: one process's share of a run spread over several machines (`loadgate run --shard
//! K/N`), and when the shards start together (`--start-at`).
//!
//! A shard applies its share of the load: connections, arrival rates, `max_in_flight` and
//! request counts are split so that the N shares add up exactly to the spec's (remainders
//! over the first shards); stages keep their timing. `loadgate merge` adds the shards' results
//! back into one (`result::merge`).

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (`K/N`, 1-based: `1/4` … `4/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K: which shard, from 1 to `count`.
    pub index: u32,
    /// N: how many shards the run is spread over, at least 1.
    pub count: u32,
}

/// The most shards a run may be spread over (as many as `loadgate merge` takes).
pub const MAX_SHARDS: u32 = 1024;

impl FromStr for Shard {
    type Err = String;

    /// Parses `K/N` with `1 ≤ K ≤ N ≤` [`MAX_SHARDS`]. Errors: another shape, K or N out of
    /// range.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let shape = || format!("`{s}` is not a shard: give K/N, e.g. 1/4 (shard 1 of 4)");
        let (k, n) = s.trim().split_once('/').ok_or_else(shape)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| shape())?,
            n.trim().parse().map_err(|_| shape())?,
        );
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("`{s}`: the shard count must be 1 to {MAX_SHARDS}"));
        }
        if index == 0 || index > count {
            return Err(format!("`{s}`: the shard index must be 1 to {count}"));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(" 1 / 1 ".parse(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "1/2/3", "1/1025"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 3, count: 8 }.to_string(), "3/8");
    }
}
