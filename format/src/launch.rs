//! Launch-time bounds: the window of every pointer argument of an instrumented kernel,
//! worked out by the host runtime at launch instead of by every device thread.
//!
//! The pass gives a kernel two hidden `i64` parameters, `start` and `limit` (the window
//! of [`launch_bounds`]), for each of its source parameters of 8 bytes ([`has_window`]:
//! every pointer, and the few 8-byte scalars, whose windows go unused), appended after
//! the source parameters in parameter order. It marks such a kernel with a device
//! global named [`layout_symbol`] of the kernel: one byte per source parameter, 1 where
//! the parameter has a window.
//!
//! The runtime's launch hooks learn a kernel's layout once, from driver queries alone
//! (no copy, so it works during stream capture): the marker's size is the source
//! parameter count `n`, `cuFuncGetParamInfo` the parameter sizes
//! ([`Layout::from_param_sizes`]). They then pass `n + 2k` arguments: the program's
//! `n`, then each window. A kernel without the marker is launched as it is.

use crate::block::{block_base, PREFIX};
use crate::pointer::{is_cusafe, tag_of};
use crate::pseudo::PSEUDO_BIT;

/// Prefix of the marker global's name; the kernel's (mangled) name follows.
pub const LAYOUT_PREFIX: &str = "__cusafe_windows_";

/// The name of the marker global of the kernel named `kernel`.
pub fn layout_symbol(kernel: &str) -> String {
    format!("{LAYOUT_PREFIX}{kernel}")
}

/// Whether a source parameter of `bytes` bytes gets a window.
pub const fn has_window(bytes: u64) -> bool {
    bytes == 8
}

/// Which parameters of a kernel carry hidden bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of source parameters (the arguments the program passes).
    pub params: u32,
    /// Indices of the parameters with a window, ascending, each below `params`.
    pub windows: Vec<u32>,
}

/// Why a kernel's parameters do not match its marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// The kernel has fewer parameters than the marker says it has source parameters.
    TooFew {
        /// Source parameters per the marker.
        params: u32,
        /// Parameters the driver reports.
        total: u32,
    },
    /// The hidden parameters are not two 8-byte words per window.
    Hidden {
        /// Windows the source parameters call for.
        windows: u32,
        /// Hidden parameter sizes the driver reports.
        sizes: Vec<u64>,
    },
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::TooFew { params, total } => write!(
                f,
                "its marker names {params} source parameters but it has {total} parameters"
            ),
            LayoutError::Hidden { windows, sizes } => write!(
                f,
                "it should have {} hidden 8-byte parameters for {windows} windows, it has \
                 sizes {sizes:?}",
                2 * windows
            ),
        }
    }
}

impl Layout {
    /// The layout of source parameters of `sizes` bytes each.
    pub fn of_sources(sizes: &[u64]) -> Layout {
        Layout {
            params: sizes.len() as u32,
            windows: (0..sizes.len() as u32)
                .filter(|&i| has_window(sizes[i as usize]))
                .collect(),
        }
    }

    /// The marker's bytes: 1 for a parameter with a window, else 0.
    pub fn marker(&self) -> Vec<u8> {
        (0..self.params)
            .map(|i| u8::from(self.windows.contains(&i)))
            .collect()
    }

    /// The layout of a kernel whose marker says `params` source parameters and whose
    /// parameters (source and hidden) have `sizes` bytes each, checked: the hidden
    /// parameters must be exactly the windows' words.
    pub fn from_param_sizes(params: u32, sizes: &[u64]) -> Result<Layout, LayoutError> {
        let total = sizes.len() as u32;
        if total < params {
            return Err(LayoutError::TooFew { params, total });
        }
        let layout = Layout::of_sources(&sizes[..params as usize]);
        let hidden = &sizes[params as usize..];
        let k = layout.windows.len() as u32;
        if hidden.len() as u32 != 2 * k || hidden.iter().any(|&b| b != 8) {
            return Err(LayoutError::Hidden {
                windows: k,
                sizes: hidden.to_vec(),
            });
        }
        Ok(layout)
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
    fn eight_byte_parameters_get_windows() {
        let l = Layout::of_sources(&[8, 4, 16, 8, 8]);
        assert_eq!(l.windows, vec![0, 3, 4]);
        assert_eq!(l.marker(), vec![1, 0, 0, 1, 1]);
        let all = [8, 4, 16, 8, 8, 8, 8, 8, 8, 8, 8];
        assert_eq!(Layout::from_param_sizes(5, &all), Ok(l));
    }

    #[test]
    fn parameters_that_do_not_match_the_marker_are_refused() {
        assert_eq!(
            Layout::from_param_sizes(3, &[8, 8]),
            Err(LayoutError::TooFew {
                params: 3,
                total: 2
            })
        );
        // One window but no hidden words (an uninstrumented kernel of the same name).
        assert_eq!(
            Layout::from_param_sizes(2, &[8, 4]),
            Err(LayoutError::Hidden {
                windows: 1,
                sizes: vec![]
            })
        );
        assert_eq!(
            Layout::from_param_sizes(1, &[8, 8, 4]),
            Err(LayoutError::Hidden {
                windows: 1,
                sizes: vec![8, 4]
            })
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
