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

use crate::block::{block_base, block_size, payload, PREFIX};
use crate::devheap::in_arena;
use crate::pointer::{in_null_page, is_cusafe, tag_of, FOREIGN_WINDOW};
use crate::pseudo::PSEUDO_BIT;

/// Prefix of the marker global's name; the kernel's (mangled) name follows.
pub const LAYOUT_PREFIX: &str = "__cusafe_windows_";

/// The name of the marker global of the kernel named `kernel`.
pub fn layout_symbol(kernel: &str) -> String {
    format!("{LAYOUT_PREFIX}{kernel}")
}

/// Prefix of the index groups' marker globals ([`index_symbol`]).
pub const INDEX_PREFIX: &str = "__cusafe_index";

/// The marker global of index group `j` of the kernel named `kernel`: its size is the
/// group's element size.
pub fn index_symbol(kernel: &str, j: usize) -> String {
    format!("{INDEX_PREFIX}{j}_{kernel}")
}

/// The marker global of member `m` of index group `j` of the kernel named `kernel`:
/// its size is one more than the member's parameter index.
pub fn index_member_symbol(kernel: &str, j: usize, m: usize) -> String {
    format!("{INDEX_PREFIX}{j}m{m}_{kernel}")
}

/// Most index groups a kernel takes (each is two more parameters at every launch).
pub const MAX_INDEX_GROUPS: usize = 8;

/// Accesses through two or more windowed parameters at one index: member `p` reads or
/// writes `scale` bytes at `p + scale * x` (an LLVM `getelementptr T, p, x` with
/// `size(T) = scale`, a load or store of a `T`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexGroup {
    /// The element size, in bytes (at least 1).
    pub scale: u64,
    /// The members' parameter indices, ascending, each a parameter with a window.
    pub members: Vec<u32>,
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
    /// The index groups, whose bounds follow the windows.
    pub groups: Vec<IndexGroup>,
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
    /// The hidden parameters are not two 8-byte words per window and index group.
    Hidden {
        /// Windows the source parameters call for.
        windows: u32,
        /// Index groups the markers name.
        groups: u32,
        /// Hidden parameter sizes the driver reports.
        sizes: Vec<u64>,
    },
    /// An index group's markers name no member, one member, a parameter without a
    /// window, or an element size of 0.
    Group {
        /// The group.
        group: u32,
        /// What is wrong with it.
        why: String,
    },
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::TooFew { params, total } => write!(
                f,
                "its marker names {params} source parameters but it has {total} parameters"
            ),
            LayoutError::Hidden {
                windows,
                groups,
                sizes,
            } => write!(
                f,
                "it should have {} hidden 8-byte parameters for {windows} windows and \
                 {groups} index groups, it has sizes {sizes:?}",
                2 * (windows + groups)
            ),
            LayoutError::Group { group, why } => write!(f, "its index group {group} {why}"),
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
            groups: Vec::new(),
        }
    }

    /// The marker's bytes: 1 for a parameter with a window, else 0.
    pub fn marker(&self) -> Vec<u8> {
        (0..self.params)
            .map(|i| u8::from(self.windows.contains(&i)))
            .collect()
    }

    /// The layout of a kernel whose marker says `params` source parameters, whose
    /// index groups' markers say `groups`, and whose parameters (source and hidden)
    /// have `sizes` bytes each, checked: each group has two members or more, all with
    /// windows, and the hidden parameters are exactly the windows' and the groups'
    /// words.
    pub fn from_param_sizes(
        params: u32,
        sizes: &[u64],
        groups: Vec<IndexGroup>,
    ) -> Result<Layout, LayoutError> {
        let total = sizes.len() as u32;
        if total < params {
            return Err(LayoutError::TooFew { params, total });
        }
        let mut layout = Layout::of_sources(&sizes[..params as usize]);
        for (j, g) in groups.iter().enumerate() {
            let why = if g.members.len() < 2 {
                Some(format!("has {} members, not two or more", g.members.len()))
            } else if g.scale == 0 {
                Some("has an element size of 0".to_string())
            } else {
                g.members
                    .iter()
                    .find(|m| layout.windows.binary_search(m).is_err())
                    .map(|m| format!("names parameter {m}, which has no window"))
            };
            if let Some(why) = why {
                return Err(LayoutError::Group {
                    group: j as u32,
                    why,
                });
            }
        }
        let hidden = &sizes[params as usize..];
        let k = layout.windows.len() as u32;
        let g = groups.len() as u32;
        if hidden.len() as u32 != 2 * (k + g) || hidden.iter().any(|&b| b != 8) {
            return Err(LayoutError::Hidden {
                windows: k,
                groups: g,
                sizes: hidden.to_vec(),
            });
        }
        layout.groups = groups;
        Ok(layout)
    }
}

/// The window `(start, limit)` the device's root half would compute for the pointer
/// `p` (see the pass's `check.rs`), with `header(base)` the word the device would load
/// at a block base: an access of `len` bytes at `a` is in bounds when
/// `(a - start) + len` lies in `len..=limit` (wrapping arithmetic).
///
/// * a device-heap pointer (`devheap::in_arena`): the payload start of its block and
///   the most the block can hold: its header lives in device memory, which the host
///   does not read at launch, so such an argument is checked against its block's
///   capacity, not its exact size, and not for use after free;
/// * any other cusafe pointer: the payload start of its block, and the header's size
///   (0 once freed);
/// * a poisoned pointer or pseudo-pointer (bit 47 or above): `p` itself and 0, so every
///   access goes to the device's slow path, which sorts out the kind;
/// * a pointer in the null page: 0 and 0, so every access through it fails (the host
///   reports a null dereference: the root is in the null page);
/// * any other (foreign) pointer that `known(p)` says is memory the process may reach
///   (a driver allocation, registered or managed memory, ...): the device's
///   [`FOREIGN_WINDOW`]; else `p` and 0, so every access fails (a wild pointer: the
///   host names it so, its root being real memory nobody allocated).
///
/// The host knows more at launch than the device does in a kernel (which gives every
/// untagged root the foreign window): it can ask the driver about the argument.
pub fn launch_bounds(
    p: u64,
    header: impl FnOnce(u64) -> u64,
    known: impl FnOnce(u64) -> bool,
) -> (u64, u64) {
    if in_arena(p) {
        let t = tag_of(p);
        (block_base(p, t) + PREFIX, block_size(t) - PREFIX - 1)
    } else if is_cusafe(p) && p < 1 << PSEUDO_BIT {
        let base = block_base(p, tag_of(p));
        (payload(base), header(base))
    } else if p >= 1 << PSEUDO_BIT {
        (p, 0)
    } else if in_null_page(p) {
        (0, 0)
    } else if known(p) {
        FOREIGN_WINDOW
    } else {
        (p, 0)
    }
}

/// The device's verdict on an access of `len` bytes at `a` in the window
/// `(start, limit)`: in bounds or not.
pub const fn fits(a: u64, start: u64, limit: u64, len: u64) -> bool {
    let end = a.wrapping_sub(start).wrapping_add(len);
    end <= limit && end >= len
}

/// What the start of every window with a nonzero limit is a multiple of: the windows
/// [`launch_bounds`] gives and those the device's root half works out (a payload start,
/// the foreign window's). Windows with limit 0 fail every access whatever their start.
pub const START_ALIGN: u64 = 16;

/// The device's verdict on an access of `len` bytes at `a` where the access is aligned
/// to `len` and `len` is a power of two up to [`START_ALIGN`] (the IR says so): its last
/// byte in the window, one compare against the limit. Agrees with [`fits`] there: an
/// aligned access that starts below an aligned start ends below it too, so the
/// subtraction wraps for it as for the first byte.
pub const fn fits_aligned(a: u64, start: u64, limit: u64, len: u64) -> bool {
    a.wrapping_sub(start).wrapping_add(len - 1) < limit
}

/// The launch bounds `(lo, span)` of an index group of element size `scale` whose
/// members have the values `p` and windows `(start, limit)` of `members`: the device
/// compares the group's index `x` (an `i64`) as `x - lo <u span` (wrapping), true exactly
/// for the `x` at which every member's access of `scale` bytes at `p + scale * x` fits
/// its window ([`fits`]). `span` is 0 (every `x` fails) when some window is smaller than
/// one element or the members' ranges of `x` do not meet.
///
/// Exact for every `x` whose byte offset `scale * x` does not overflow 64 bits (the
/// program's own `getelementptr inbounds` makes that overflow undefined): the address
/// `p + scale * x` is then off its window as an integer exactly when it is modulo 2^64,
/// since windows lie below 2^64 without wrapping.
pub fn index_bounds(scale: u64, members: impl IntoIterator<Item = (u64, u64, u64)>) -> (u64, u64) {
    let s = i128::from(scale.max(1));
    let (mut lo, mut hi) = (i128::from(i64::MIN), i128::from(i64::MAX));
    for (p, start, limit) in members {
        let (p, start, limit) = (i128::from(p), i128::from(start), i128::from(limit));
        // Every byte in [start, start + limit): the access's first byte from `start` on,
        // its last below `start + limit`.
        let first = start - p;
        let last = start + limit - s - p;
        lo = lo.max(-((-first).div_euclid(s)));
        hi = hi.min(last.div_euclid(s));
    }
    if hi < lo {
        return (0, 0);
    }
    (lo as i64 as u64, (hi - lo + 1) as u64)
}

/// The device's verdict on an index group's index `x` with launch bounds `(lo, span)`
/// ([`index_bounds`]): in bounds for every member or not.
pub const fn fits_index(x: i64, lo: u64, span: u64) -> bool {
    (x as u64).wrapping_sub(lo) < span
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
        assert_eq!(Layout::from_param_sizes(5, &all, Vec::new()), Ok(l));
    }

    #[test]
    fn parameters_that_do_not_match_the_marker_are_refused() {
        assert_eq!(
            Layout::from_param_sizes(3, &[8, 8], Vec::new()),
            Err(LayoutError::TooFew {
                params: 3,
                total: 2
            })
        );
        // One window but no hidden words (an uninstrumented kernel of the same name).
        assert_eq!(
            Layout::from_param_sizes(2, &[8, 4], Vec::new()),
            Err(LayoutError::Hidden {
                windows: 1,
                groups: 0,
                sizes: vec![]
            })
        );
        assert_eq!(
            Layout::from_param_sizes(1, &[8, 8, 4], Vec::new()),
            Err(LayoutError::Hidden {
                windows: 1,
                groups: 0,
                sizes: vec![8, 4]
            })
        );
    }

    #[test]
    fn index_groups_take_two_words_each_after_the_windows() {
        let g = IndexGroup {
            scale: 4,
            members: vec![0, 2],
        };
        let sizes = [8, 4, 8, 8, 8, 8, 8, 8, 8];
        let l = Layout::from_param_sizes(3, &sizes, vec![g.clone()]).expect("a layout");
        assert_eq!((l.windows, l.groups), (vec![0, 2], vec![g.clone()]));
        // The group's words missing: an older build of the kernel.
        assert_eq!(
            Layout::from_param_sizes(3, &sizes[..7], vec![g.clone()]),
            Err(LayoutError::Hidden {
                windows: 2,
                groups: 1,
                sizes: vec![8; 4]
            })
        );
        let bad = |members: Vec<u32>, scale| {
            let e = Layout::from_param_sizes(3, &sizes, vec![IndexGroup { scale, members }]);
            e.map_err(|e| e.to_string())
        };
        assert_eq!(
            bad(vec![0, 1], 4),
            Err("its index group 0 names parameter 1, which has no window".into())
        );
        assert_eq!(
            bad(vec![0], 4),
            Err("its index group 0 has 1 members, not two or more".into())
        );
        assert_eq!(
            bad(vec![0, 2], 0),
            Err("its index group 0 has an element size of 0".into())
        );
    }

    #[test]
    fn index_bounds_are_where_every_member_fits() {
        // Two float arrays of 10 and 8 elements, the second passed 2 elements in.
        let a = (0x1000, 0x1000, 40);
        let b = (0x2008, 0x2000, 40);
        let (lo, span) = index_bounds(4, [a, b]);
        for x in -20i64..20 {
            let every = [a, b]
                .iter()
                .all(|&(p, s, l)| fits(p.wrapping_add((4 * x) as u64), s, l, 4));
            assert_eq!(fits_index(x, lo, span), every, "x = {x}");
        }
        assert_eq!((lo, span), (0, 8));
        // A window smaller than an element, and ranges that do not meet: no x.
        assert_eq!(index_bounds(8, [(0x1000, 0x1000, 4), a]).1, 0);
        assert_eq!(
            index_bounds(4, [(0x1000, 0x1000, 8), (0x2000 + 8, 0x2000, 8)]).1,
            0
        );
        // A null or poisoned member's window is empty: every index fails, and the cold
        // path then names that member.
        let no_header = |_| panic!("no header");
        let poisoned = (1u64 << 63) | (3 << 41);
        for p in [0, poisoned] {
            let (start, limit) = launch_bounds(p, no_header, |_| false);
            assert_eq!(index_bounds(4, [a, (p, start, limit)]).1, 0);
        }
        // A foreign member (memory the driver knows) narrows nothing a cusafe one allows.
        let (fs, fl) = FOREIGN_WINDOW;
        assert_eq!(index_bounds(4, [a, (0x7f00_0000_0000, fs, fl)]), (0, 10));
    }

    /// The bounds the pass's `verdicts-index.ll` driver passes by hand are the ones the
    /// runtime would work out for its set-ups.
    #[test]
    fn index_bounds_of_the_verdicts_driver() {
        let c = (12288, 12288, 12);
        assert_eq!(index_bounds(4, [(4096, 4096, 16), c]), (0, 3));
        assert_eq!(index_bounds(4, [(4104, 4096, 16), c]), (0, 2));
    }

    #[test]
    fn foreign_pointers_get_the_foreign_window_unless_null_or_unknown() {
        let no_header = |_| panic!("no header");
        assert_eq!(
            launch_bounds(0x7f00_1234_0000, no_header, |_| true),
            FOREIGN_WINDOW
        );
        assert_eq!(
            launch_bounds(0x7f00_1234_0000, no_header, |_| false),
            (0x7f00_1234_0000, 0)
        );
        assert_eq!(launch_bounds(0, no_header, |_| panic!("not asked")), (0, 0));
        assert_eq!(
            launch_bounds(0xfff8, no_header, |_| panic!("not asked")),
            (0, 0)
        );
        let poisoned = (1u64 << 63) | (3 << 41);
        assert_eq!(
            launch_bounds(poisoned, no_header, |_| panic!("not asked")),
            (poisoned, 0)
        );
        // The foreign window: real memory passes, the null page and beyond 2^47 fail.
        let (s, l) = FOREIGN_WINDOW;
        assert!(fits(0x7f00_1234_0000, s, l, 8));
        assert!(!fits(0x10, s, l, 4));
        assert!(!fits((1 << 47) - 2, s, l, 4));
        assert!(fits((1 << 47) - 4, s, l, 4));
    }
}
