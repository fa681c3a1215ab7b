//! Header granules of slotted blocks (`cusafe_format::block`, classes from
//! `FIRST_SLOTTED_CLASS`): 2 MiB of physical memory mapped over the first granule of
//! every slotted block that uses it, each block reading its own 16-byte slot
//! (`header_slot(base)`). Two blocks whose bases give the same slot need different
//! granules; this is the bookkeeping of which slots of which granule are taken.

use cusafe_format::block::HEADER_SLOTS;

/// One header granule: its physical memory, a bit per slot in use, and whether it was
/// zeroed (at its first mapping).
#[derive(Debug)]
struct Granule<H> {
    handle: H,
    taken: Vec<u64>,
    zeroed: bool,
}

/// The header granules made so far.
#[derive(Debug)]
pub struct HeaderGranules<H> {
    granules: Vec<Granule<H>>,
}

impl<H> Default for HeaderGranules<H> {
    fn default() -> Self {
        HeaderGranules {
            granules: Vec::new(),
        }
    }
}

impl<H: Copy> HeaderGranules<H> {
    /// The first granule whose `slot` is free, as (index, handle, zeroed yet).
    pub fn with_free(&self, slot: u64) -> Option<(usize, H, bool)> {
        let (word, bit) = ((slot / 64) as usize, slot % 64);
        self.granules
            .iter()
            .position(|g| g.taken[word] & (1 << bit) == 0)
            .map(|i| (i, self.granules[i].handle, self.granules[i].zeroed))
    }

    /// Adds a granule (not zeroed yet) with every slot free and returns its index.
    pub fn add(&mut self, handle: H) -> usize {
        self.granules.push(Granule {
            handle,
            taken: vec![0; (HEADER_SLOTS / 64) as usize],
            zeroed: false,
        });
        self.granules.len() - 1
    }

    /// Notes that granule `index` was zeroed.
    pub fn set_zeroed(&mut self, index: usize) {
        self.granules[index].zeroed = true;
    }

    /// Marks `slot` of granule `index` taken.
    pub fn take(&mut self, index: usize, slot: u64) {
        let w = &mut self.granules[index].taken[(slot / 64) as usize];
        debug_assert!(*w & (1 << (slot % 64)) == 0, "slot {slot} taken twice");
        *w |= 1 << (slot % 64);
    }

    /// Marks `slot` of granule `index` free again.
    pub fn give_back(&mut self, index: usize, slot: u64) {
        self.granules[index].taken[(slot / 64) as usize] &= !(1 << (slot % 64));
    }

    /// Forgets every granule and returns their handles.
    pub fn drain(&mut self) -> Vec<H> {
        self.granules.drain(..).map(|g| g.handle).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_slot_sends_the_next_block_to_another_granule() {
        let mut h = HeaderGranules::default();
        assert_eq!(h.with_free(7), None);
        let a = h.add(10u32);
        assert_eq!(h.with_free(7), Some((a, 10, false)));
        h.set_zeroed(a);
        h.take(a, 7);
        assert_eq!(h.with_free(7), None);
        assert_eq!(h.with_free(8), Some((a, 10, true)));
        let b = h.add(11);
        assert_eq!(h.with_free(7), Some((b, 11, false)));
        h.give_back(a, 7);
        assert_eq!(h.with_free(7), Some((a, 10, true)));
        assert_eq!(h.drain(), vec![10, 11]);
        assert_eq!(h.with_free(7), None);
    }
}
