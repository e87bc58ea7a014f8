//! Latencies in bounded memory ([`Latency`]): a log-linear histogram of microseconds.

use std::time::Duration;

/// A latency histogram in bounded memory: microseconds in log-linear buckets (16 per power
/// of two), so percentiles are exact below 16 µs and within 1/16 above; the maximum is exact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    buckets: Vec<u64>,
    count: u64,
    max: Duration,
}

/// Sub-buckets per power of two.
const SUB: u64 = 16;

impl Latency {
    pub(super) fn add(&mut self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let index = bucket(micros);
        if self.buckets.len() <= index {
            self.buckets.resize(index + 1, 0);
        }
        if let Some(slot) = self.buckets.get_mut(index) {
            *slot += 1;
        }
        self.count += 1;
        self.max = self.max.max(latency);
    }

    /// Latencies recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest latency (zero when none).
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The `p`-th percentile (`p` in 0..=100, nearest rank), `None` when nothing was
    /// recorded: the upper bound of the bucket holding it, never above [`Latency::max`].
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let p = p.clamp(0.0, 100.0);
        // The rank of the percentile, 1-based: nearest-rank method.
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let upper = lower_bound(index + 1).saturating_sub(1);
                return Some(Duration::from_micros(upper).min(self.max));
            }
        }
        Some(self.max)
    }
}

fn bucket(micros: u64) -> usize {
    if micros < SUB {
        return micros as usize;
    }
    let exponent = u64::from(63 - micros.leading_zeros()); // at least 4
    let sub = (micros >> (exponent - 4)) & (SUB - 1);
    ((exponent - 3) * SUB + sub) as usize
}

fn lower_bound(index: usize) -> u64 {
    let index = index as u64;
    if index < SUB {
        return index;
    }
    let exponent = index / SUB + 3;
    let sub = index % SUB;
    // Past the last bucket (the upper bound of the last one) the value no longer fits.
    u64::try_from(u128::from(SUB + sub) << (exponent - 4)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets() {
        #[rustfmt::skip]
        let cases: &[(u64, u64)] = &[(0, 0), (15, 15), (16, 16), (17, 17), (31, 31), (32, 32), (33, 32), (1000, 992), (u64::MAX, 17870283321406128128)];
        assert_eq!(lower_bound(bucket(u64::MAX) + 1), u64::MAX);
        for &(micros, lower) in cases {
            assert_eq!(lower_bound(bucket(micros)), lower, "{micros}");
            assert!(lower_bound(bucket(micros)) <= micros);
        }
    }
}
