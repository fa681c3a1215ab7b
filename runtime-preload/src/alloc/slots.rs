//! Slot bookkeeping for one window: which slots were ever handed out, and which
//! handed-out slots are free again (quarantined, oldest first).
//!
//! The rule that makes use-after-free detection work: a slot that was used once is
//! never handed out again while an unused slot remains; after that, the slot that
//! was freed the longest time ago comes back first.

use std::collections::VecDeque;

use crate::rng::Rng;

/// Slot state of one window.
#[derive(Clone, Debug)]
pub struct SlotMap {
    slots: u64,
    /// Bit per slot: handed out at least once. Allocated on first use.
    used: Vec<u64>,
    used_count: u64,
    quarantine: VecDeque<u64>,
}

/// A slot handed out by [`SlotMap::pick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Picked {
    /// Slot index in the window.
    pub slot: u64,
    /// Whether the slot was used before (it came out of quarantine).
    pub reused: bool,
}

impl SlotMap {
    /// A window with `slots` slots, none used.
    pub fn new(slots: u64) -> SlotMap {
        SlotMap {
            slots,
            used: Vec::new(),
            used_count: 0,
            quarantine: VecDeque::new(),
        }
    }

    /// Slots never handed out so far.
    pub fn unused(&self) -> u64 {
        self.slots - self.used_count
    }

    /// Hands out a random never-used slot, or else the oldest quarantined one, or
    /// `None` when every slot is in use.
    pub fn pick(&mut self, rng: &mut Rng) -> Option<Picked> {
        if self.used_count < self.slots {
            if self.used.is_empty() {
                self.used = vec![0; self.slots.div_ceil(64) as usize];
            }
            let slot = self.first_unused_from(rng.below(self.slots));
            self.used[(slot / 64) as usize] |= 1 << (slot % 64);
            self.used_count += 1;
            return Some(Picked {
                slot,
                reused: false,
            });
        }
        self.quarantine
            .pop_front()
            .map(|slot| Picked { slot, reused: true })
    }

    /// Puts a slot that is no longer in use into quarantine.
    pub fn retire(&mut self, slot: u64) {
        debug_assert!(slot < self.slots);
        self.quarantine.push_back(slot);
    }

    /// The first slot at or after `start` (wrapping around) whose used bit is clear.
    /// There must be one.
    fn first_unused_from(&self, start: u64) -> u64 {
        let words = self.used.len() as u64;
        let mut w = start / 64;
        // Ignore bits below `start` in its word on the first visit.
        let mut mask = !0u64 << (start % 64);
        for _ in 0..=words {
            let free = !self.used[w as usize] & mask;
            let bit = free.trailing_zeros() as u64;
            if free != 0 && w * 64 + bit < self.slots {
                return w * 64 + bit;
            }
            w = (w + 1) % words;
            mask = !0;
        }
        unreachable!("first_unused_from called on a full window")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_every_slot_once_before_reusing() {
        let mut m = SlotMap::new(100);
        let mut rng = Rng::new(1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            let p = m.pick(&mut rng).unwrap();
            assert!(!p.reused);
            assert!(seen.insert(p.slot));
            m.retire(p.slot);
        }
        assert_eq!(m.unused(), 0);
        // Now the oldest retired slot comes back first.
        let first = m.pick(&mut rng).unwrap();
        assert!(first.reused);
    }

    #[test]
    fn full_window_without_quarantine_is_exhausted() {
        let mut m = SlotMap::new(3);
        let mut rng = Rng::new(2);
        for _ in 0..3 {
            m.pick(&mut rng).unwrap();
        }
        assert_eq!(m.pick(&mut rng), None);
    }
}
