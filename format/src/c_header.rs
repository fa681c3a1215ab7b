//! The formats as a C header, for the C code that must agree with them: the device
//! runtime (`device-rt/cusafe_rt.c`, compiled to bitcode by `llvm-pass/build.rs`) and
//! the runtime's test fixtures (`runtime-preload/tests/fixtures/fake_cudart.c`). Both
//! are compiled with `-include` of the header [`c_header`] returns instead of
//! repeating these values.
//!
//! Every constant becomes `#define CUSAFE_<NAME> <value>ull`: the scalars of
//! [`SCALARS`], the record's field offsets as `CUSAFE_REC_<FIELD>`
//! ([`report::field`](crate::report::field)) and the device kinds as
//! `CUSAFE_KIND_<name>` ([`DeviceKind::c_name`]). Symbol names C code declares become
//! `#define CUSAFE_<NAME> <identifier>` ([`NAMES`]: `CUSAFE_RTPAGE_SYMBOL`, the
//! runtime page's per-module constant, which device-rt declares by that macro). A
//! constant C code needs is added here; a record field or a device kind reaches C by
//! being added to its list in [`report`](crate::report).

use crate::report::DeviceKind;
use crate::{
    block, devheap as dh, packed as pk, pointer as pt, pseudo as ps, report as rep, rtpage as rt,
};

/// The scalar constants C code uses, as (name after `CUSAFE_`, value).
pub const SCALARS: &[(&str, u64)] = &[
    // The runtime page (rtpage.rs).
    ("RTPAGE_ADDR", rt::RTPAGE_ADDR),
    ("RTPAGE_REPORT_PTR", rt::RTPAGE_REPORT_PTR),
    ("RTPAGE_FLAGS", rt::RTPAGE_FLAGS),
    ("RTPAGE_CLAIMED", rt::RTPAGE_CLAIMED),
    ("FLAG_RECOVER", rt::FLAG_RECOVER as u64),
    ("COVERAGE_OFFSET", rt::COVERAGE_OFFSET),
    ("COVERAGE_BYTES", rt::COVERAGE_BYTES),
    ("EPOCH_DEPTH_OFFSET", rt::EPOCH_DEPTH_OFFSET),
    ("EPOCH_GEN_OFFSET", rt::EPOCH_GEN_OFFSET),
    ("EPOCH_GENS_PER_SLOT", rt::EPOCH_GENS_PER_SLOT),
    // The report page, records and check sites (report.rs).
    ("PAGE_HEADER_BYTES", rep::PAGE_HEADER_BYTES as u64),
    ("RECORD_BYTES", rep::RECORD_BYTES as u64),
    ("PAGE_CAPACITY", rep::PAGE_CAPACITY as u64),
    ("LOC_OFFSET", rep::LOC_OFFSET as u64),
    ("LOC_BYTES", rep::LOC_BYTES as u64),
    ("STATE_WRITING", rep::STATE_WRITING as u64),
    ("STATE_COMPLETE", rep::STATE_COMPLETE as u64),
    ("NO_HEADER", rep::NO_HEADER),
    ("SITE_FLAGS_OFFSET", rep::SITE_FLAGS_OFFSET as u64),
    ("SITE_LOC_OFFSET", rep::SITE_LOC_OFFSET as u64),
    ("OBJECT_LOCAL", rep::OBJECT_LOCAL as u64),
    ("OBJECT_SHARED", rep::OBJECT_SHARED as u64),
    ("OBJECT_SPACES", rep::OBJECT_SPACES as u64),
    // Global pointers and blocks (pointer.rs, block.rs).
    ("TAG_SHIFT", pt::TAG_SHIFT as u64),
    ("MIN_TAG", pt::MIN_TAG as u64),
    ("MAX_TAG", pt::MAX_TAG as u64),
    ("PREFIX", block::PREFIX),
    ("HEADER_BYTES", block::HEADER_BYTES),
    ("FIRST_SLOTTED_CLASS", block::FIRST_SLOTTED_CLASS as u64),
    ("SLOT_SHIFT", block::SLOT_SHIFT as u64),
    ("HEADER_SLOTS", block::HEADER_SLOTS),
    // Packed blocks (packed.rs): the step of class t is 1 << (t - FIRST_PACKED_CLASS +
    // PACKED_FIRST_STEP_SHIFT).
    ("FIRST_PACKED_CLASS", pk::FIRST_PACKED_CLASS as u64),
    ("LAST_PACKED_CLASS", pk::LAST_PACKED_CLASS as u64),
    (
        "PACKED_FIRST_STEP_SHIFT",
        pk::step_shift(pk::FIRST_PACKED_CLASS) as u64,
    ),
    ("PACKED_FIELD_SHIFT", pk::FIELD_SHIFT as u64),
    ("PACKED_FIELD_MASK", pk::FIELD_MASK),
    ("PACKED_POW2_FIELD", pk::POW2_FIELD as u64),
    ("PACKED_SLAB_STEPS_SHIFT", pk::SLAB_STEPS_SHIFT as u64),
    ("PACKED_UNDERFLOW", pk::UNDERFLOW),
    ("PACKED_HEADER_GAP", pk::HEADER_GAP),
    // Local and shared pseudo-pointers (pseudo.rs).
    ("PSEUDO_BIT", ps::PSEUDO_BIT as u64),
    ("CLASS_SHIFT", ps::CLASS_SHIFT as u64),
    ("CLASS_MASK", ps::CLASS_MASK),
    ("SPACE_SHIFT", ps::SPACE_SHIFT as u64),
    ("DEPTH_SHIFT", ps::DEPTH_SHIFT as u64),
    ("DEPTH_MASK", ps::DEPTH_MASK),
    ("GEN_SHIFT", ps::GEN_SHIFT as u64),
    ("GEN_MASK", ps::GEN_MASK),
    ("OUT_OF_SCOPE", ps::OUT_OF_SCOPE),
    ("LOCAL_PREFIX", ps::LOCAL_PREFIX),
    // The device heap's state (devheap.rs).
    ("DH_STATE_OFFSET", dh::STATE_OFFSET),
    ("DH_ARENA_OFFSET", dh::ARENA_OFFSET),
    ("DH_ARENA_BYTES", dh::ARENA_BYTES),
    ("DH_BUMP", dh::BUMP),
    ("DH_FIRST_CLASS", dh::FIRST_CLASS),
    ("DH_LAST_CLASS", dh::LAST_CLASS),
    ("DH_FALLBACKS", dh::FALLBACKS),
    ("DH_QUEUES", dh::QUEUES),
    ("DH_QUEUE_BYTES", dh::QUEUE_BYTES),
    ("DH_NEXT_OFFSET", dh::NEXT_OFFSET),
];

/// The symbol names C code uses, as (name after `CUSAFE_`, the symbol): each becomes
/// `#define CUSAFE_<NAME> <symbol>`, a C identifier (not a string), so that C can
/// declare the symbol through the macro.
pub const NAMES: &[(&str, &str)] = &[
    // The runtime page's per-module constant (rtpage.rs).
    ("RTPAGE_SYMBOL", rt::RTPAGE_SYMBOL),
];

/// Every constant of the header as (name after `CUSAFE_`, value): [`SCALARS`], then
/// the record fields (`REC_<FIELD>`), then the device kinds (`KIND_<name>`).
pub fn defines() -> Vec<(String, u64)> {
    let scalars = SCALARS.iter().map(|&(n, v)| (n.to_string(), v));
    let fields = rep::field::ALL
        .iter()
        .map(|&(n, off)| (format!("REC_{n}"), off as u64));
    let kinds = DeviceKind::ALL
        .iter()
        .map(|&k| (format!("KIND_{}", k.c_name()), k as u64));
    scalars.chain(fields).chain(kinds).collect()
}

/// The C header: one `#define CUSAFE_<NAME> <value>ull` per entry of [`defines`] and
/// one `#define CUSAFE_<NAME> <symbol>` per entry of [`NAMES`], inside an include guard.
pub fn c_header() -> String {
    let mut h = String::from(
        "/* cusafe's formats for C, generated from the cusafe-format crate\n \
         * (format/src/c_header.rs): do not edit. */\n\
         #ifndef CUSAFE_FORMAT_H\n\
         #define CUSAFE_FORMAT_H\n",
    );
    for (name, value) in defines() {
        h.push_str(&format!("#define CUSAFE_{name} {value}ull\n"));
    }
    for (name, symbol) in NAMES {
        h.push_str(&format!("#define CUSAFE_{name} {symbol}\n"));
    }
    h.push_str("#endif /* CUSAFE_FORMAT_H */\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The header's `#define CUSAFE_<NAME> <value>ull` lines, parsed back.
    fn parsed() -> HashMap<String, u64> {
        let header = c_header();
        let mut map = HashMap::new();
        let names: Vec<_> = NAMES.iter().map(|(n, _)| format!("CUSAFE_{n}")).collect();
        for line in header.lines().filter(|l| l.starts_with("#define CUSAFE_")) {
            let mut words = line.split_whitespace().skip(1);
            let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else {
                continue; // the include guard
            };
            if names.iter().any(|n| n == name) {
                continue; // a symbol name (`names_are_identifiers`)
            }
            let name = name.strip_prefix("CUSAFE_").expect("prefix");
            let value = value.strip_suffix("ull").expect("ull suffix");
            let old = map.insert(name.to_string(), value.parse().expect("decimal value"));
            assert!(old.is_none(), "CUSAFE_{name} defined twice");
        }
        map
    }

    #[test]
    fn defines_every_constant_once() {
        let map = parsed();
        assert_eq!(map.len(), defines().len());
        for (name, value) in defines() {
            assert_eq!(map.get(&name), Some(&value), "CUSAFE_{name}");
        }
    }

    #[test]
    fn defines_every_record_field() {
        let map = parsed();
        for (field, off) in rep::field::ALL {
            assert_eq!(
                map.get(&format!("REC_{field}")),
                Some(&(off as u64)),
                "{field}"
            );
        }
        assert_eq!(map["REC_STATE"], 0);
        assert_eq!(map["REC_KIND"], 4);
        assert_eq!(map["REC_LOC"], map["LOC_OFFSET"]);
    }

    #[test]
    fn defines_every_kind() {
        let map = parsed();
        for k in DeviceKind::ALL {
            let name = format!("KIND_{}", k.c_name());
            assert_eq!(map.get(&name), Some(&(k as u64)), "{name}");
            assert_eq!(DeviceKind::from_u32(k as u32), Some(k));
        }
        assert_eq!(DeviceKind::from_u32(0), None);
        assert_eq!(DeviceKind::from_u32(DeviceKind::ALL.len() as u32 + 1), None);
        // The names device-rt uses.
        assert_eq!(map["KIND_POISONED"], DeviceKind::PoisonedPointer as u64);
        assert_eq!(map["KIND_OBJECT"], DeviceKind::ObjectOutOfBounds as u64);
        assert_eq!(
            map["KIND_INVALID_FREE"],
            DeviceKind::DeviceInvalidFree as u64
        );
    }

    #[test]
    fn packed_steps_follow_from_the_first() {
        // C code computes a packed class's step from these two (fake_cudart.c).
        let map = parsed();
        for t in pk::FIRST_PACKED_CLASS..=pk::LAST_PACKED_CLASS {
            let shift = u64::from(t) - map["FIRST_PACKED_CLASS"] + map["PACKED_FIRST_STEP_SHIFT"];
            assert_eq!(shift, u64::from(pk::step_shift(t)), "class {t}");
        }
        assert_eq!(map["LAST_PACKED_CLASS"], u64::from(pk::LAST_PACKED_CLASS));
    }

    #[test]
    fn names_are_identifiers() {
        let h = c_header();
        for (name, symbol) in NAMES {
            assert!(
                h.contains(&format!("\n#define CUSAFE_{name} {symbol}\n")),
                "{name}"
            );
            let mut chars = symbol.chars();
            assert!(chars
                .next()
                .is_some_and(|c| c == '_' || c.is_ascii_alphabetic()));
            assert!(
                chars.all(|c| c == '_' || c.is_ascii_alphanumeric()),
                "{symbol}"
            );
        }
        assert!(h.contains("\n#define CUSAFE_RTPAGE_SYMBOL __cusafe_rtpage\n"));
    }

    #[test]
    fn header_is_guarded() {
        let h = c_header();
        assert!(h.contains("#ifndef CUSAFE_FORMAT_H\n#define CUSAFE_FORMAT_H\n"));
        assert!(h.ends_with("#endif /* CUSAFE_FORMAT_H */\n"));
    }
}
