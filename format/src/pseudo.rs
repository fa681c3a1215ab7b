//! Local-memory pseudo-pointers and stack epochs.
//!
//! A local array whose address escapes the function that owns it (passed to a call,
//! stored, returned) is re-laid-out as a block `[16-byte header | payload | >= 1 byte]`
//! aligned to its class size, and its escaping pointer carries the object's metadata in
//! the 17 bits above the 47-bit real address:
//!
//! ```text
//!  63     | 62 .. 58   | 57 .. 54 | 53    | 52 .. 48 | 47     | 46 .. 0
//!  poison | generation | depth    | space | class t  | pseudo | real generic address
//! ```
//! * class `t`: the block is `2^(t+3)` bytes, so `base = real & ~(2^(t+3) - 1)`; the
//!   header at `base` holds the exact payload size (u64; bit 63 set while the object is
//!   out of scope, [`OUT_OF_SCOPE`]); the payload starts at `base + LOCAL_PREFIX`.
//! * depth and generation: the stack epoch of the frame that owns the object. Per
//!   hardware thread slot the runtime keeps the current depth (a byte) and one
//!   generation byte per depth ([`crate::rtpage`]); each instrumented function with
//!   escaping locals increments both on entry and restores the depth on return. A
//!   pseudo-pointer is valid iff its depth `<=` the current depth and its generation
//!   equals the current generation at its depth; otherwise the frame is gone
//!   (use after return) or was replaced by a later call at the same depth.
//! * space: 0 local, 1 shared: then the class field is the index of the module's
//!   `__shared__` array ([`shared_tag_bits`]), depth and generation are 0, and there is
//!   no header (the module tells its arrays' start and size).
//!
//! Every instrumented access strips bits 47..63 before touching memory, so a pseudo
//! pointer always dereferences the real address.

/// Bit marking a pseudo-pointer.
pub const PSEUDO_BIT: u32 = 47;
/// Mask of the real generic address under a pseudo-pointer (bits 0..46).
pub const REAL_MASK: u64 = (1 << PSEUDO_BIT) - 1;
/// Lowest bit of the class field.
pub const CLASS_SHIFT: u32 = 48;
/// Class field mask (after shifting).
pub const CLASS_MASK: u64 = 0x1f;
/// Bit of the space field.
pub const SPACE_SHIFT: u32 = 53;
/// Lowest bit of the depth field.
pub const DEPTH_SHIFT: u32 = 54;
/// Depth field mask (after shifting); depths are kept modulo 16.
pub const DEPTH_MASK: u64 = 0xf;
/// Lowest bit of the generation field.
pub const GEN_SHIFT: u32 = 58;
/// Generation field mask (after shifting); generations are kept modulo 32.
pub const GEN_MASK: u64 = 0x1f;
/// Bit of a local object's header word set while the object is out of scope (after
/// `llvm.lifetime.end`, before the next `llvm.lifetime.start`); the low bits keep its size.
pub const OUT_OF_SCOPE: u64 = 1 << 63;
/// Header bytes before a local object's payload (keeps 16-byte payload alignment).
pub const LOCAL_PREFIX: u64 = 16;
/// Largest class for local objects (1 MiB blocks); larger escaping locals stay untagged.
pub const MAX_LOCAL_CLASS: u32 = 17;

/// The smallest class whose block holds the header, `size` bytes and one byte of slack.
pub const fn local_class(size: u64) -> Option<u32> {
    let need = LOCAL_PREFIX + size + 1;
    let bits = 64 - (need - 1).leading_zeros();
    let t = if bits < 4 { 1 } else { bits - 3 };
    if t > MAX_LOCAL_CLASS {
        None
    } else {
        Some(t)
    }
}

/// Tag bits for an object of class `t` owned by the frame at `depth` / `generation`.
pub const fn tag_bits(t: u32, depth: u64, generation: u64) -> u64 {
    (1 << PSEUDO_BIT)
        | ((t as u64 & CLASS_MASK) << CLASS_SHIFT)
        | ((depth & DEPTH_MASK) << DEPTH_SHIFT)
        | ((generation & GEN_MASK) << GEN_SHIFT)
}

/// Most `__shared__` arrays per module that get shared pseudo-pointers (the class
/// field holds the object's index).
pub const MAX_SHARED_OBJECTS: u32 = 32;

/// Tag bits for a pointer into the module's `__shared__` array number `index`: pseudo
/// bit, space bit, index in the class field, no epoch (shared memory lives as long as
/// the block). Device-rt bounds it by the module's `__cusafe_shared_start/size(index)`.
pub const fn shared_tag_bits(index: u32) -> u64 {
    (1 << PSEUDO_BIT) | (1 << SPACE_SHIFT) | ((index as u64 & CLASS_MASK) << CLASS_SHIFT)
}

/// Whether `p` is a pseudo-pointer.
pub const fn is_pseudo(p: u64) -> bool {
    (p >> PSEUDO_BIT) & 1 == 1
}

/// Fields of a pseudo-pointer: (class, depth, generation, real address).
pub const fn fields(p: u64) -> (u32, u64, u64, u64) {
    (
        ((p >> CLASS_SHIFT) & CLASS_MASK) as u32,
        (p >> DEPTH_SHIFT) & DEPTH_MASK,
        (p >> GEN_SHIFT) & GEN_MASK,
        p & REAL_MASK,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_fit_above_the_address() {
        let real = 0x7f26_9d00_0010u64;
        for t in 1..=MAX_LOCAL_CLASS {
            for d in 0..16 {
                for g in 0..32 {
                    let p = real | tag_bits(t, d, g);
                    assert!(is_pseudo(p));
                    assert_eq!(p >> 63, 0, "never sets the poison bit");
                    assert_eq!(fields(p), (t, d, g, real));
                }
            }
        }
        assert_eq!(local_class(0), Some(2)); // 17 bytes -> 32-byte block
        assert_eq!(local_class(15), Some(2));
        assert_eq!(local_class(16), Some(3));
        assert_eq!(local_class(1 << 20), None);
    }
}
