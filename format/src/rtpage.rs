//! The runtime page: device memory the runtime maps in the window of tag
//! [`RTPAGE_TAG`], one per device (the first at [`RTPAGE_ADDR`], the `n`-th at
//! [`device_page`]`(n)`). Instrumented device code finds its device's page through the
//! per-module constant [`RTPAGE_SYMBOL`] (default [`RTPAGE_ADDR`]: no set-up on the
//! first device).
//!
//! The runtime reserves the whole window of tag [`RTPAGE_TAG`] (a foreign tag, so the
//! checks never look at it) and maps one granule at its base. Layout (little endian):
//!
//! | offset | type | meaning |
//! |---|---|---|
//! | 0 | u64 | device address of the [report page](crate::report) (pinned, host-mapped) |
//! | 8 | u32 | option flags ([`FLAG_RECOVER`]) |
//! | 12 | u32 | [`RTPAGE_MAGIC`] once the runtime has filled the page |
//! | 16 | u32 | report records claimed so far (device `atomicAdd`; may pass the capacity) |
//!
//! | 1 MiB | u8 x [`COVERAGE_BYTES`] | device edge coverage: fuzz builds store 1 at their edges' ids |
//! | 2 MiB | u8 x [`EPOCH_SLOTS`] | current stack depth per hardware thread slot |
//! | 4 MiB | u8 x 16 x [`EPOCH_SLOTS`] | generation per slot and depth |
//!
//! The claim counter lives here, in device memory, because device atomics on pinned
//! host memory depend on PCIe atomics support; records themselves are plain stores.

use crate::pointer::window_base;

/// Tag whose window holds the runtime page (outside the cusafe classes 1..=35).
pub const RTPAGE_TAG: u32 = 36;
/// Device address of the runtime page.
pub const RTPAGE_ADDR: u64 = window_base(RTPAGE_TAG);
/// Offset of the report page pointer.
pub const RTPAGE_REPORT_PTR: u64 = 0;
/// Offset of the option flags.
pub const RTPAGE_FLAGS: u64 = 8;
/// Offset of the magic word.
pub const RTPAGE_MAGIC_OFFSET: u64 = 12;
/// Offset of the report-record claim counter (u32).
pub const RTPAGE_CLAIMED: u64 = 16;
/// Magic word ("CUSF") written last by the runtime.
pub const RTPAGE_MAGIC: u32 = 0x4653_5543;
/// Flag: recover mode (report and skip the access instead of trapping).
pub const FLAG_RECOVER: u32 = 1;

/// Name of the per-module constant (`u64` in the constant address space, weak, initialised
/// to [`RTPAGE_ADDR`]) through which instrumented device code finds its device's runtime
/// page. Module globals are per context, so the runtime gives each device its own page:
/// the first device it serves keeps [`RTPAGE_ADDR`] (nothing to write), and before an
/// instrumented kernel's first launch on another device it writes that device's page
/// address ([`device_page`]) into the kernel's module there.
pub const RTPAGE_SYMBOL: &str = "__cusafe_rtpage";

/// Distance between two devices' runtime pages in the window of [`RTPAGE_TAG`].
pub const RTPAGE_STRIDE: u64 = 16 << 20;

/// Device address of the runtime page of the `n`-th device the runtime serves
/// (`n = 0`: the first, at [`RTPAGE_ADDR`]).
pub const fn device_page(n: u32) -> u64 {
    RTPAGE_ADDR + n as u64 * RTPAGE_STRIDE
}

/// Bytes of the runtime page that carry meaning (up to and including the claim counter).
pub const RTPAGE_BYTES: usize = RTPAGE_CLAIMED as usize + 4;

/// The runtime page's contents as the runtime writes them at start-up: the report
/// page's device address, the option flags, the magic word and a zero claim counter
/// (little endian, see the table above).
pub fn contents(report_page: u64, flags: u32) -> [u8; RTPAGE_BYTES] {
    let mut b = [0u8; RTPAGE_BYTES];
    let at = |off: u64| off as usize;
    b[at(RTPAGE_REPORT_PTR)..at(RTPAGE_REPORT_PTR) + 8].copy_from_slice(&report_page.to_le_bytes());
    b[at(RTPAGE_FLAGS)..at(RTPAGE_FLAGS) + 4].copy_from_slice(&flags.to_le_bytes());
    b[at(RTPAGE_MAGIC_OFFSET)..at(RTPAGE_MAGIC_OFFSET) + 4]
        .copy_from_slice(&RTPAGE_MAGIC.to_le_bytes());
    b
}

/// Offset from the runtime page of the device edge-coverage map: code built with
/// `--cusafe-fuzz` stores the byte 1 at `page + COVERAGE_OFFSET + id` when it takes edge
/// `id` (`page`: the function's one load of [`RTPAGE_SYMBOL`]; the offset is the store's
/// immediate; no atomic). The runtime copies the map into the fuzzer's map after each
/// input and zeroes it.
pub const COVERAGE_OFFSET: u64 = 1 << 20;
/// Bytes of the device edge-coverage map (edge ids are taken modulo this).
pub const COVERAGE_BYTES: u64 = 1 << 16;

/// Hardware thread slots with epoch state: `(smid * 64 + warpid) * 32 + laneid` for
/// up to 256 SMs, 64 warps per SM and 32 lanes.
pub const EPOCH_SLOTS: u64 = 256 * 64 * 32;
/// Offset from [`RTPAGE_ADDR`] of the current stack depth of each slot (one byte each).
pub const EPOCH_DEPTH_OFFSET: u64 = 2 << 20;
/// Generation bytes kept per slot, one per depth modulo 16.
pub const EPOCH_GENS_PER_SLOT: u64 = 16;
/// Offset from [`RTPAGE_ADDR`] of the generations: slot `s`, depth `d` at `s * 16 + d`.
pub const EPOCH_GEN_OFFSET: u64 = 4 << 20;
/// Bytes the runtime maps (zeroed) at [`RTPAGE_ADDR`]: the page, the depths and the
/// generations, rounded up to the 2 MiB granule (12 MiB).
pub const RTPAGE_MAPPED_BYTES: u64 =
    (EPOCH_GEN_OFFSET + EPOCH_SLOTS * EPOCH_GENS_PER_SLOT).div_ceil(2 << 20) * (2 << 20);

// The epoch state fits between the page and the end of the mapping.
const _: () = assert!(RTPAGE_BYTES as u64 <= COVERAGE_OFFSET);
const _: () = assert!(COVERAGE_OFFSET + COVERAGE_BYTES <= EPOCH_DEPTH_OFFSET);
const _: () = assert!(EPOCH_DEPTH_OFFSET + EPOCH_SLOTS <= EPOCH_GEN_OFFSET);
const _: () = assert!(RTPAGE_MAPPED_BYTES == 12 << 20);
const _: () = assert!(RTPAGE_MAPPED_BYTES <= RTPAGE_STRIDE);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_layout() {
        let b = contents(0x7f00_1234_5600, FLAG_RECOVER);
        assert_eq!(
            u64::from_le_bytes(b[0..8].try_into().unwrap()),
            0x7f00_1234_5600
        );
        assert_eq!(
            u32::from_le_bytes(b[8..12].try_into().unwrap()),
            FLAG_RECOVER
        );
        assert_eq!(
            u32::from_le_bytes(b[12..16].try_into().unwrap()),
            RTPAGE_MAGIC
        );
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 0);
    }
}
