//! Latencies in bounded memory ([`Latency`]): a log-linear histogram of microseconds, fine
//! enough that a percentile reads at most 1/128 (0.79%) above the true value.

use std::time::Duration;

/// A latency histogram in bounded memory, for percentiles within 1% of the truth.
///
/// Latencies are counted in whole microseconds, in log-linear buckets: one per microsecond
/// below 128 µs, then 128 buckets per power of two (each 1/128 of its power of two wide).
/// [`Latency::percentile`] gives the largest value of the bucket that holds the exact
/// nearest-rank percentile `v`, so the answer is never more than `v / 128` above `v`
/// (0.78125%), and never below `v` cut to whole microseconds (exact, to the microsecond,
/// below 128 µs). [`Latency::max`] is exact, to the nanosecond.
///
/// Memory: a page of 128 counts (1 KiB) per power of two of microseconds that holds a
/// latency, allocated with its first one (a method's latencies span a dozen powers of two
/// or so), at most 58 pages (58 KiB) whatever the log; nothing per latency.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    /// [`PAGES`] pages once a latency is recorded, `None` until one of its own is.
    pages: Vec<Option<Box<[u64; SUB]>>>,
    count: u64,
    max: Duration,
}

/// Sub-bucket bits: 2^7 buckets per power of two, so a bucket is at most 1/128 of its
/// lowest value wide (1/100 is the promise).
const BITS: u32 = 7;

/// Buckets per page.
const SUB: usize = 1 << BITS;

/// Pages: the microseconds below [`SUB`] one by one, then one page per power of two from
/// 2^7 to 2^63.
const PAGES: usize = 64 - BITS as usize + 1;

impl Latency {
    pub(super) fn add(&mut self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let index = bucket(micros);
        if self.pages.is_empty() {
            self.pages.resize_with(PAGES, || None);
        }
        if let Some(page) = self.pages.get_mut(index / SUB) {
            let page = page.get_or_insert_with(|| Box::new([0; SUB]));
            if let Some(n) = page.get_mut(index % SUB) {
                *n += 1;
            }
        }
        self.count += 1;
        self.max = self.max.max(latency);
    }

    /// Latencies recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest latency (zero when none), exact.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The `p`-th percentile (`p` in 0..=100, nearest rank), `None` when nothing was
    /// recorded: the largest value of the bucket holding it, never above [`Latency::max`].
    /// With `v` the exact percentile, the answer is at least `v` cut to whole microseconds
    /// and at most `v + v / 128`: at most 0.79% above the true value.
    pub fn percentile(&self, p: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let p = p.clamp(0.0, 100.0);
        // The rank of the percentile, 1-based: nearest-rank method.
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (at, page) in self.pages.iter().enumerate() {
            let Some(page) = page else { continue };
            for (slot, &n) in page.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    let (_, upper) = bounds(at * SUB + slot);
                    return Some(Duration::from_micros(upper).min(self.max));
                }
            }
        }
        Some(self.max)
    }
}

/// The bucket of a latency in microseconds: page times [`SUB`] plus slot.
fn bucket(micros: u64) -> usize {
    if micros < SUB as u64 {
        return micros as usize;
    }
    let shift = 63 - micros.leading_zeros() - BITS;
    // The top bit and the next seven: 128..=255 once shifted, the low seven are the slot.
    let slot = (micros >> shift) as usize & (SUB - 1);
    (shift as usize + 1) * SUB + slot
}

/// The smallest and the largest microseconds bucket `index` holds.
fn bounds(index: usize) -> (u64, u64) {
    let (page, slot) = (index / SUB, (index % SUB) as u128);
    if page == 0 {
        return (slot as u64, slot as u64);
    }
    if page >= PAGES {
        return (u64::MAX, u64::MAX);
    }
    // In u128: the last bucket ends at 2^64 - 1, its end plus one does not fit in u64.
    let shift = page - 1;
    let lower = (SUB as u128 + slot) << shift;
    let upper = lower + (1 << shift) - 1;
    (u64::try_from(lower).unwrap_or(u64::MAX), u64::try_from(upper).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets() {
        #[rustfmt::skip]
        let cases: &[(u64, u64, u64)] = &[
            (0, 0, 0), (1, 1, 1), (127, 127, 127), (128, 128, 128), (255, 255, 255),
            (256, 256, 257), (257, 256, 257), (1000, 1000, 1003), (1003, 1000, 1003),
            (3_600_000_000, 3_590_324_224, 3_607_101_439),
            (u64::MAX, 18_374_686_479_671_623_680, u64::MAX),
        ];
        for &(micros, lower, upper) in cases {
            assert_eq!(bounds(bucket(micros)), (lower, upper), "{micros}");
        }
        // Buckets tile the microseconds: each starts where the one before ends.
        for index in 1..PAGES * SUB {
            assert_eq!(bounds(index).0, bounds(index - 1).1 + 1, "{index}");
        }
        assert_eq!(bucket(u64::MAX), PAGES * SUB - 1);
    }

    /// Percentiles of known samples against the exact nearest-rank percentile: never below
    /// it cut to whole microseconds, never more than 1/128 of it above.
    #[test]
    fn percentiles_within_one_128th() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 11
        };
        // 1 µs to 1 h, spread evenly over the powers of two (nanoseconds included).
        let hour = 3_600_000_000_000f64;
        let log_uniform: Vec<Duration> = (0..20_000)
            .map(|_| {
                let unit = next() as f64 / (1u64 << 53) as f64;
                Duration::from_nanos((1000.0 * (hour / 1000.0).powf(unit)) as u64)
            })
            .collect();
        let narrow: Vec<Duration> =
            (0..5_000).map(|_| Duration::from_nanos(1_000_000 + next() % 1_000_000)).collect();
        let small: Vec<Duration> =
            (0..1_000).map(|_| Duration::from_nanos(next() % 128_000)).collect();
        let edges: Vec<Duration> = (7..40)
            .flat_map(|k| [(1u64 << k) - 1, 1 << k, (1 << k) + 1])
            .map(Duration::from_micros)
            .collect();
        let bimodal: Vec<Duration> = (0..1_001)
            .map(|n| if n % 3 == 0 { Duration::from_secs(10) } else { Duration::from_micros(100) })
            .collect();
        #[rustfmt::skip]
        let cases: &[(&str, &[Duration])] = &[
            ("1 µs to 1 h", &log_uniform),
            ("1 ms to 2 ms", &narrow),
            ("below 128 µs", &small),
            ("either side of each power of two", &edges),
            ("100 µs and 10 s", &bimodal),
            ("one latency", &[Duration::from_millis(1234)]),
            ("one hour", &[Duration::from_secs(3600)]),
        ];
        let percentiles = [0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0];
        for &(name, samples) in cases {
            let mut latency = Latency::default();
            for &d in samples {
                latency.add(d);
            }
            let mut sorted = samples.to_vec();
            sorted.sort();
            for p in percentiles {
                let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).max(1);
                let exact = sorted[rank - 1];
                let got = latency.percentile(p).unwrap();
                let floor = Duration::from_micros(exact.as_micros() as u64);
                assert!(got >= floor, "{name} p{p}: {got:?} below {exact:?}");
                assert!(
                    got.as_nanos() * 128 <= exact.as_nanos() * 129,
                    "{name} p{p}: {got:?} for {exact:?}"
                );
                if exact.as_micros() < 128 {
                    assert_eq!(got, floor, "{name} p{p}");
                }
            }
            assert_eq!(latency.max(), sorted[sorted.len() - 1], "{name}");
        }
    }
}
