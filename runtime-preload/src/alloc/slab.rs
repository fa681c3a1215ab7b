//! One packed slab (`cusafe_format::packed`): where its blocks' headers and spans
//! fall, and the state of each of its 2 MiB granules. The allocator frontend
//! (`mod.rs`) does the mapping; this is the bookkeeping and the arithmetic.
//!
//! Block `k`'s *span* is `[header_k, header_k + L)`: its header, its payload and the
//! slack up to the next block's header. Spans tile the slab from `slab + step - 16`, so
//! each byte of a granule belongs to at most one block, and a span (`L < 2 MiB`)
//! touches one granule or two.

use std::ops::RangeInclusive;

use cusafe_format::block::{GRANULE, HEADER_BYTES};
use cusafe_format::packed::{extent, payload_at, slab_blocks, slab_bytes, HEADER_GAP};

use super::backend::Fill;

/// What one granule of a slab holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granule<H> {
    /// Nothing: no block's span reached it yet (or none will: the slab's tail).
    Unmapped,
    /// A chunk, read-write; `live` live blocks have a span that touches it.
    Mapped {
        /// The chunk.
        handle: H,
        /// Live blocks whose span touches the granule.
        live: u64,
    },
    /// Every block whose span touches it was handed out and freed, and no later block
    /// can touch it: its chunk went back (the zero tombstone may cover it).
    Retired,
}

/// A packed slab of sub-window `(class, field)` on `device`.
#[derive(Debug)]
pub struct Slab<H> {
    /// Its address (aligned to its size).
    pub va: u64,
    /// The class (tag).
    pub class: u32,
    /// The sub-window field: blocks are `extent(class, field)` bytes apart.
    pub field: u32,
    /// The device whose memory backs it.
    pub device: i32,
    /// Blocks handed out so far: the index of the next one.
    pub next: u64,
    /// Its granules, lowest first.
    pub granules: Vec<Granule<H>>,
}

impl<H: Copy> Slab<H> {
    /// An empty slab at `va` (nothing mapped).
    pub fn new(va: u64, class: u32, field: u32, device: i32) -> Slab<H> {
        Slab {
            va,
            class,
            field,
            device,
            next: 0,
            granules: vec![Granule::Unmapped; (slab_bytes(class) / GRANULE) as usize],
        }
    }

    /// Bytes from one block to the next.
    pub fn extent(&self) -> u64 {
        extent(self.class, self.field)
    }

    /// Blocks the slab holds.
    pub fn cap(&self) -> u64 {
        slab_blocks(self.class, self.field)
    }

    /// Whether every block was handed out.
    pub fn is_full(&self) -> bool {
        self.next >= self.cap()
    }

    /// Whether the slab is done with: full, and no granule mapped any more.
    pub fn is_spent(&self) -> bool {
        self.is_full()
            && self
                .granules
                .iter()
                .all(|g| !matches!(g, Granule::Mapped { .. }))
    }

    /// Payload address of block `k`.
    pub fn payload(&self, k: u64) -> u64 {
        payload_at(self.va, self.class, self.field, k)
    }

    /// Header address of block `k` (where its span starts).
    pub fn header(&self, k: u64) -> u64 {
        self.payload(k) - HEADER_GAP
    }

    /// The index of the block whose payload starts at `payload`.
    pub fn index_of(&self, payload: u64) -> u64 {
        (payload - self.payload(0)) / self.extent()
    }

    /// Address of granule `g`.
    pub fn granule_va(&self, g: usize) -> u64 {
        self.va + g as u64 * GRANULE
    }

    /// The granule holding `va`.
    pub fn granule_of(&self, va: u64) -> usize {
        ((va - self.va) / GRANULE) as usize
    }

    /// The granules block `k`'s span touches.
    pub fn span_granules(&self, k: u64) -> RangeInclusive<usize> {
        let start = self.header(k);
        self.granule_of(start)..=self.granule_of(start + self.extent() - 1)
    }

    /// Where the next block's span starts, or the slab's end once it is full: no later
    /// block touches memory below it.
    pub fn bump(&self) -> u64 {
        if self.is_full() {
            self.va + slab_bytes(self.class)
        } else {
            self.header(self.next)
        }
    }

    /// Whether granule `g` can retire: mapped, no live block touches it and no later
    /// block will (it lies wholly below [`Slab::bump`]).
    pub fn retirable(&self, g: usize) -> bool {
        matches!(self.granules[g], Granule::Mapped { live: 0, .. })
            && self.granule_va(g) + GRANULE <= self.bump()
    }

    /// The fill that zeroes the header of every block `j >= k` of the slab whose header
    /// lies in granule `g`, one row per header `L` bytes apart, or `None` when none does.
    pub fn header_fill(&self, g: usize, k: u64) -> Option<Fill> {
        let (l, first) = (self.extent(), self.header(0));
        let (start, end) = (self.granule_va(g), self.granule_va(g) + GRANULE);
        // Headers `first + j L` with start <= header < end.
        let lo = start.saturating_sub(first).div_ceil(l).max(k);
        let hi = end.saturating_sub(first).div_ceil(l).min(self.cap());
        (lo < hi).then(|| Fill {
            va: first + lo * l,
            value: 0,
            words: HEADER_BYTES / 4,
            rows: hi - lo,
            pitch: l,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cusafe_format::block::{block_base, header_addr, payload, tile_len};
    use cusafe_format::packed::{class_for, sub_window_base, UNDERFLOW};

    fn slab(t: u32, f: u32, n: u64) -> Slab<u32> {
        Slab::new(sub_window_base(t, f) + n * slab_bytes(t), t, f, 0)
    }

    #[test]
    fn the_slab_agrees_with_the_format() {
        let s = slab(14, 100, 7);
        for k in [0, 1, 50, s.cap() - 1] {
            let p = s.payload(k);
            let key = block_base(p, s.class);
            assert_eq!(key, p - UNDERFLOW);
            assert_eq!(payload(key), p);
            assert_eq!(header_addr(key), s.header(k));
            assert_eq!(tile_len(p), s.extent());
            assert_eq!(s.index_of(p), k);
        }
        assert_eq!(s.granules.len(), 4); // 8 MiB
    }

    #[test]
    fn spans_tile_the_slab_and_touch_one_or_two_granules() {
        let (t, f) = class_for(1 << 20).unwrap();
        let s = slab(t, f, 0);
        let mut end = s.header(0);
        for k in 0..s.cap() {
            assert_eq!(s.header(k), end, "spans follow each other");
            end += s.extent();
            let g = s.span_granules(k);
            assert!(g.end() - g.start() <= 1);
            assert_eq!(*g.start(), s.granule_of(s.header(k)));
            assert_eq!(*g.end(), s.granule_of(end - 1));
        }
        assert!(end <= s.va + slab_bytes(t));
        // The first block of a 1 MiB class fits in granule 0; the second crosses into 1.
        assert_eq!(s.span_granules(0), 0..=0);
        assert_eq!(s.span_granules(1), 0..=1);
    }

    #[test]
    fn header_fills_cover_exactly_the_headers_in_a_granule() {
        for (t, f) in [(13u32, 0u32), (13, 16), (16, 254), (18, 128), (18, 254)] {
            let mut s = slab(t, f, 3);
            for g in 0..s.granules.len() {
                for k in [0, 5] {
                    let want: Vec<u64> = (k..s.cap())
                        .map(|j| s.header(j))
                        .filter(|&h| s.granule_of(h) == g)
                        .collect();
                    let got: Vec<u64> = s
                        .header_fill(g, k)
                        .map(|f| {
                            f.ranges()
                                .map(|(a, b)| {
                                    assert_eq!(b - a, HEADER_BYTES);
                                    a
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    assert_eq!(got, want, "class {t} field {f} granule {g} from {k}");
                }
            }
            s.next = s.cap();
            assert_eq!(s.bump(), s.va + slab_bytes(t));
        }
    }

    #[test]
    fn a_granule_retires_only_below_the_bump_point() {
        let (t, f) = class_for(4096).unwrap();
        let mut s = slab(t, f, 1);
        s.granules[0] = Granule::Mapped { handle: 1, live: 0 };
        s.next = 1;
        assert!(!s.retirable(0), "the next block starts in granule 0");
        // The block before the first one with its header in granule 1 straddles the
        // boundary; once it is handed out, granule 0 is behind the bump point.
        let first_in_1 = (0..s.cap())
            .find(|&j| s.granule_of(s.header(j)) == 1)
            .unwrap();
        assert_eq!(s.span_granules(first_in_1 - 1), 0..=1);
        s.next = first_in_1 - 1;
        assert!(!s.retirable(0));
        s.next = first_in_1;
        assert!(s.retirable(0));
        s.granules[0] = Granule::Mapped { handle: 1, live: 1 };
        assert!(!s.retirable(0));
        s.granules[0] = Granule::Retired;
        assert!(!s.retirable(0) && !s.is_spent());
        s.next = s.cap();
        s.granules.iter_mut().for_each(|g| *g = Granule::Retired);
        // The tail after the last block may never have been mapped.
        s.granules[1] = Granule::Unmapped;
        assert!(s.is_spent());
        s.granules[1] = Granule::Mapped { handle: 1, live: 0 };
        assert!(!s.is_spent());
    }
}
