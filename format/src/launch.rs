//! Launch-time bounds: the window of every pointer argument of an instrumented kernel,
//! worked out by the host runtime at launch instead of by every device thread.
//!
//! The pass gives a kernel two hidden `i64` parameters per pointer parameter it checks,
//! appended after the source parameters in parameter order: `start`, `limit` (the
//! window of [`launch_bounds`]). It records which parameters they belong to in a device
//! global named [`layout_symbol`] of the kernel, an array of little-endian `u32`:
//!
//! | index | meaning |
//! |---|---|
//! | 0 | [`LAYOUT_MAGIC`] |
//! | 1 | [`LAYOUT_VERSION`] |
//! | 2 | number of source parameters `n` |
//! | 3 | number of checked pointer parameters `k` |
//! | 4.. | the `k` parameter indices, ascending |
//!
//! The runtime's launch hooks read that global once per kernel, then pass
//! `n + 2k` arguments: the program's `n`, then each checked pointer's window. A kernel
//! without the global is launched as it is.

use crate::block::{block_base, PREFIX};
use crate::pointer::{is_cusafe, tag_of};
use crate::pseudo::PSEUDO_BIT;

/// First word of a kernel layout ("CSKL").
pub const LAYOUT_MAGIC: u32 = 0x4c4b_5343;
/// Layout format version.
pub const LAYOUT_VERSION: u32 = 1;
/// Prefix of the layout global's name; the kernel's (mangled) name follows.
pub const LAYOUT_PREFIX: &str = "__cusafe_layout_";

/// The name of the layout global of the kernel named `kernel`.
pub fn layout_symbol(kernel: &str) -> String {
    format!("{LAYOUT_PREFIX}{kernel}")
}

/// Which parameters of a kernel carry hidden bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of source parameters (the arguments the program passes).
    pub params: u32,
    /// Indices of the checked pointer parameters, ascending, each below `params`.
    pub pointers: Vec<u32>,
}

/// Why a layout global could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// Shorter than its header or its index list.
    Truncated,
    /// The first word is not [`LAYOUT_MAGIC`].
    BadMagic(u32),
    /// Written by a pass of another layout version.
    Version(u32),
    /// Indices not ascending or not below the parameter count.
    BadIndex(u32),
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::Truncated => write!(f, "the kernel layout is truncated"),
            LayoutError::BadMagic(m) => write!(f, "the kernel layout has magic {m:#x}"),
            LayoutError::Version(v) => write!(
                f,
                "the kernel layout has version {v}, this runtime reads version \
                 {LAYOUT_VERSION} (rebuild the program with this cusafe)"
            ),
            LayoutError::BadIndex(i) => {
                write!(f, "the kernel layout names parameter {i} out of order")
            }
        }
    }
}

impl Layout {
    /// The words of the layout global.
    pub fn to_words(&self) -> Vec<u32> {
        let mut w = vec![
            LAYOUT_MAGIC,
            LAYOUT_VERSION,
            self.params,
            self.pointers.len() as u32,
        ];
        w.extend(&self.pointers);
        w
    }

    /// Parses the bytes of a layout global (trailing bytes ignored).
    pub fn from_bytes(bytes: &[u8]) -> Result<Layout, LayoutError> {
        let word = |i: usize| {
            bytes
                .get(4 * i..4 * i + 4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .ok_or(LayoutError::Truncated)
        };
        if word(0)? != LAYOUT_MAGIC {
            return Err(LayoutError::BadMagic(word(0)?));
        }
        if word(1)? != LAYOUT_VERSION {
            return Err(LayoutError::Version(word(1)?));
        }
        let params = word(2)?;
        let k = word(3)? as usize;
        let mut pointers: Vec<u32> = Vec::with_capacity(k.min(4096));
        for i in 0..k {
            let p = word(4 + i)?;
            if p >= params || pointers.last().is_some_and(|&q| q >= p) {
                return Err(LayoutError::BadIndex(p));
            }
            pointers.push(p);
        }
        Ok(Layout { params, pointers })
    }
}

/// The window `(start, limit)` the device's root half would compute for the pointer
/// `p` (see the pass's `check.rs`), with `header(base)` the word the device would load
/// at a block base: an access of `len` bytes at `a` is in bounds when
/// `(a - start) + len` lies in `len..=limit` (wrapping arithmetic).
///
/// * a cusafe pointer: the payload start of its block, and the header's size (0 once
///   freed);
/// * a poisoned pointer or pseudo-pointer (bit 47 or above): `p` itself and 0, so every
///   access goes to the device's slow path, which sorts out the kind;
/// * any other (foreign) pointer: the whole address space.
pub fn launch_bounds(p: u64, header: impl FnOnce(u64) -> u64) -> (u64, u64) {
    if is_cusafe(p) && p < 1 << PSEUDO_BIT {
        let base = block_base(p, tag_of(p));
        (base + PREFIX, header(base))
    } else if p >= 1 << PSEUDO_BIT {
        (p, 0)
    } else {
        (0, u64::MAX)
    }
}

/// The device's verdict on an access of `len` bytes at `a` in the window
/// `(start, limit)`: in bounds or not.
pub const fn fits(a: u64, start: u64, limit: u64, len: u64) -> bool {
    let end = a.wrapping_sub(start).wrapping_add(len);
    end <= limit && end >= len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_round_trips() {
        let l = Layout {
            params: 5,
            pointers: vec![0, 2, 4],
        };
        let bytes: Vec<u8> = l.to_words().iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(Layout::from_bytes(&bytes), Ok(l));
    }

    #[test]
    fn bad_layouts_are_refused() {
        let enc = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|w| w.to_le_bytes()).collect() };
        assert_eq!(
            Layout::from_bytes(&enc(&[1, 1, 1, 0])),
            Err(LayoutError::BadMagic(1))
        );
        assert_eq!(
            Layout::from_bytes(&enc(&[LAYOUT_MAGIC, 9, 1, 0])),
            Err(LayoutError::Version(9))
        );
        assert_eq!(
            Layout::from_bytes(&enc(&[LAYOUT_MAGIC, LAYOUT_VERSION, 3, 2, 1])),
            Err(LayoutError::Truncated)
        );
        assert_eq!(
            Layout::from_bytes(&enc(&[LAYOUT_MAGIC, LAYOUT_VERSION, 3, 2, 1, 1])),
            Err(LayoutError::BadIndex(1))
        );
        assert_eq!(
            Layout::from_bytes(&enc(&[LAYOUT_MAGIC, LAYOUT_VERSION, 3, 1, 3])),
            Err(LayoutError::BadIndex(3))
        );
    }

    #[test]
    fn foreign_pointers_are_unbounded_and_poisoned_ones_empty() {
        assert_eq!(
            launch_bounds(0x7f00_1234_0000, |_| panic!("no header")),
            (0, u64::MAX)
        );
        assert_eq!(launch_bounds(0, |_| panic!("no header")), (0, u64::MAX));
        let poisoned = (1u64 << 63) | (3 << 41);
        assert_eq!(
            launch_bounds(poisoned, |_| panic!("no header")),
            (poisoned, 0)
        );
    }
}
