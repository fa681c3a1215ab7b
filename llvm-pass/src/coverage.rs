//! Device edge coverage for `cusafe fuzz` (`CUSAFE_PASS_COVERAGE`).
//!
//! Run first, on the program's own functions only (before the checks and the device
//! runtime exist, so neither the cold paths nor device-rt get ids): every critical edge
//! is split (shim `cusafe_split_critical_edges`, as SanitizerCoverage does), so that
//! each edge of the CFG ends in a block of its own or is the only way into its target;
//! then every block stores the byte 1 at `page + COVERAGE_OFFSET + id` at its first
//! insertion point (after the phis; in the entry block after its allocas, which stay
//! static), `page` being the runtime page's address, loaded once per function at its
//! entry (`rtpage::base`; the module's constant `__cusafe_rtpage`, by default
//! `RTPAGE_ADDR`). The constant `COVERAGE_OFFSET + id` is the store's immediate
//! (`st.global.u8 [%rd+offset]`); no other load, no atomic, one register (the page)
//! kept live: the runtime copies the map after each input and zeroes it
//! (`format::rtpage`).
//!
//! `id` is [`block_id`] of the module's source file name (its last path component),
//! the function's name and the block's ordinal in the function after the split: the
//! same source and compiler give the same ids in every build, whatever the build
//! directory, so a replay of a saved input lines up with the map it was found with.
//!
//! Two modes, measured against each other on a GPU:
//! * [`Mode::Store`] (`CUSAFE_PASS_COVERAGE=1`): every thread stores (a warp's stores to
//!   one byte are one transaction);
//! * [`Mode::Warp`] (`CUSAFE_PASS_COVERAGE=warp`): only the warp's leader stores — the
//!   lowest lane of `llvm.nvvm.activemask`, compared with
//!   `llvm.nvvm.read.ptx.sreg.laneid` — behind a branch.

use crate::ffi::cusafe_split_critical_edges;
use crate::ir::{first_non_phi, mark_nocheck, Ir};
use cusafe_format::rtpage::{COVERAGE_BYTES, COVERAGE_OFFSET};
use inkwell::values::{AsValueRef, FunctionValue};
use inkwell::IntPredicate;

/// How each block records that it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every thread stores the byte.
    Store,
    /// Only the warp's leader lane (lowest active lane) stores it.
    Warp,
}

/// The map index of block `ordinal` of `function` in the module built from `file`:
/// 64-bit FNV-1a over `file`, a 0 byte, `function`, a 0 byte and `ordinal` (4 bytes,
/// little endian), its high half xor-ed into its low half, modulo [`COVERAGE_BYTES`].
pub fn block_id(file: &str, function: &str, ordinal: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = file
        .bytes()
        .chain([0])
        .chain(function.bytes())
        .chain([0])
        .chain(ordinal.to_le_bytes());
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h ^ (h >> 32)) % COVERAGE_BYTES
}

/// The module's source file name without its directories (clang records the path as
/// given on the command line).
pub fn source_file(ir: &Ir) -> String {
    let full = ir
        .module()
        .get_source_file_name()
        .to_string_lossy()
        .into_owned();
    match full.rsplit_once(['/', '\\']) {
        Some((_, base)) => base.to_string(),
        None => full,
    }
}

/// Splits `f`'s critical edges and gives each of its blocks a coverage store (see the
/// module comment); `file` is [`source_file`]. Returns the number of blocks (coverage
/// points).
pub fn instrument<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>, mode: Mode, file: &str) -> u32 {
    let name = crate::ir::name(f);
    unsafe { cusafe_split_critical_edges(f.as_value_ref()) };
    let blocks = f.get_basic_blocks();
    let entry = f.get_first_basic_block();
    // Ids first: the warp mode's splits add blocks that get none.
    let points: Vec<_> = blocks
        .iter()
        .enumerate()
        .map(|(k, &bb)| {
            (
                first_non_phi(bb, Some(bb) == entry),
                block_id(file, &name, k as u32),
            )
        })
        .collect();
    // The page's address, before the entry's point (which the load goes before).
    let (page, at) = crate::rtpage::at_entry(ir, f);
    ir.at(at);
    let page = ir.b.build_int_to_ptr(page, ir.gptr, "cusafe.cov");
    let page = page.expect("positioned");
    for &(at, id) in &points {
        ir.at(at);
        if mode == Mode::Warp {
            let mask = ir
                .intrinsic("llvm.nvvm.activemask", &[], &[])
                .into_int_value();
            let lane = ir
                .intrinsic("llvm.nvvm.read.ptx.sreg.laneid", &[], &[])
                .into_int_value();
            let zero_poison = ir.ctx.bool_type().const_int(1, false);
            let first = ir.intrinsic(
                "llvm.cttz",
                &[ir.i32.into()],
                &[mask.into(), zero_poison.into()],
            );
            let first = first.into_int_value();
            let leader = ir.icmp(IntPredicate::EQ, lane, first);
            ir.at(ir.split_if(leader, at));
        }
        let addr = ir.byte_gep(page, ir.c64(COVERAGE_OFFSET + id));
        let store =
            ir.b.build_store(addr, ir.i8.const_int(1, false))
                .expect("positioned");
        mark_nocheck(ir, store);
    }
    points.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_pinned() {
        // The formula is part of the format: a change moves every saved map.
        assert_eq!(block_id("vec.cu", "_Z7add_onePii", 0), 0x922b);
        assert_eq!(block_id("vec.cu", "_Z7add_onePii", 1), 0xa2a2);
        assert_eq!(block_id("other.cu", "_Z7add_onePii", 0), 0x4a35);
    }

    #[test]
    fn ids_spread() {
        let ids: std::collections::HashSet<_> =
            (0..1000).map(|k| block_id("a.cu", "_Z1kPi", k)).collect();
        assert!(ids.len() > 980, "{} distinct of 1000", ids.len());
        assert!(ids.iter().all(|&i| i < COVERAGE_BYTES));
    }
}
