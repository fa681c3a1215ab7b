//! A small, fast pseudo-random generator (SplitMix64) for slot placement. Not
//! cryptographic: it spreads blocks over the windows so that freed addresses do not
//! come back, it does not hide them from an attacker.

/// SplitMix64 state.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator with a fixed seed (tests, reproducible runs).
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator seeded from the kernel's random source (falls back to time and pid).
    pub fn from_os() -> Rng {
        let mut seed = 0u64;
        // SAFETY: getrandom writes at most 8 bytes into `seed`.
        let n = unsafe { libc::getrandom((&mut seed as *mut u64).cast(), 8, 0) };
        if n != 8 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            seed = t ^ (u64::from(std::process::id()) << 32);
        }
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`), by multiply-shift (negligible bias for our `n`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_varies() {
        let mut r = Rng::new(7);
        let v: Vec<u64> = (0..1000).map(|_| r.below(10)).collect();
        assert!(v.iter().all(|&x| x < 10));
        assert!((0..10).all(|d| v.contains(&d)));
    }
}
