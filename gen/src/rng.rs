//! The generator's random choices: a seeded xorshift generator (the same seed gives
//! the same program on every machine and release) with the few draws it needs.

use rand_core::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;

/// A seeded source of choices.
pub struct Choices(XorShiftRng);

impl Choices {
    /// The choices of `seed`.
    pub fn new(seed: u64) -> Self {
        Choices(XorShiftRng::seed_from_u64(seed))
    }

    /// A uniform value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        debug_assert!(n > 0);
        (((self.0.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }

    /// A uniform value in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }

    /// Any 32-bit value.
    pub fn word(&mut self) -> u32 {
        (self.0.next_u64() >> 32) as u32
    }

    /// One of `items` (non-empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }

    /// An index chosen with the given weights (not all zero).
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut r = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return i;
            }
            r -= w;
        }
        unreachable!("weights sum to total")
    }
}
