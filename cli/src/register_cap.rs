//! Register caps for loop-clean kernels. The checks of a kernel whose loops run none
//! (every check of its loops moved to a preheader, or proven) still take registers
//! where they run, once per thread, and ptxas gives the whole kernel the count of its
//! busiest point: the loops then run at a lower occupancy than the plain build's for
//! code the plain build runs with fewer registers. hotspot3d's kernel took 48
//! registers against plain's 32 and ran 1.19x plain's time; built with
//! `-maxrregcount=32` it spilled 76 bytes before its loop and ran 0.97x (H200,
//! results/2026-11-28-h200-register-cap). Kernels with checks in their loops lost by the
//! same cap (lud 1.10x -> 1.19x, adi 1.04x -> 1.10x: spills in the loops), so only
//! loop-clean kernels are capped.
//!
//! After an instrumented compile, the pass has listed its loop-clean kernels
//! ([`pass_env::LOOP_CLEAN`]) and `cusafe-fatbinary` every instrumented kernel's
//! registers ([`REGISTERS_ENV`]). When a loop-clean kernel uses more than 32 registers
//! (below that a thread's registers never limit a block: 2048 threads of 32 fill an
//! SM's 65536), the device code is compiled once more without instrumentation for the
//! plain counts ([`plain_registers`](crate::plain_registers)), and [`decide`] picks the
//! cap; the compile then runs again with `-Xcuda-ptxas -maxrregcount=CAP`.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;

use cusafe_format::pass_env;

/// Where `cusafe-fatbinary` appends `MANGLED REGISTERS` for every kernel of every
/// instrumented cubin it packs (set by `cusafe-clang++`).
pub const REGISTERS_ENV: &str = "CUSAFE_REGISTER_REPORT";

/// Registers per thread at or below which a thread's registers never limit a block's
/// residency (2048 threads x 32 registers = an SM's 65536).
pub const FREE_REGISTERS: u32 = 32;

/// The flag that keeps the uncapped build.
pub const NO_CAP_FLAG: &str = "--cusafe-no-register-cap";

/// The count that costs as many threads per SM as `registers` does: at least
/// [`FREE_REGISTERS`], rounded up to ptxas's allocation unit of 8.
pub fn occupancy_class(registers: u32) -> u32 {
    registers.max(FREE_REGISTERS).div_ceil(8) * 8
}

/// A kernel the cap is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capped {
    /// Its symbol.
    pub mangled: String,
    /// Registers per thread instrumented, before the cap.
    pub registers: u32,
    /// Registers per thread in the plain build.
    pub plain: u32,
}

/// Why no cap is applied although a loop-clean kernel uses more registers than plain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A kernel with checks in its loops would also be capped, below its own count.
    CheckedLoops(String),
    /// The plain build's count of a loop-clean kernel is unknown (its compile failed).
    NoPlainCount(String),
    /// The command compiles this many CUDA sources: kernels are known by name, and two
    /// sources may define kernels of one name (anonymous namespaces).
    SeveralSources(usize),
}

impl std::fmt::Display for Refusal {
    /// The note `cusafe-clang++` prints, after "note: ".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self {
            Refusal::CheckedLoops(k) => format!(
                "kernel {} runs checks in its loops and would spill there",
                crate::resources::demangle(k)
            ),
            Refusal::NoPlainCount(k) => format!(
                "the plain build's count of kernel {} is unknown (its plain device compile failed)",
                crate::resources::demangle(k)
            ),
            Refusal::SeveralSources(n) => format!(
                "this command compiles {n} CUDA sources; compile each with its own command (-c) for the cap"
            ),
        };
        write!(
            f,
            "no register cap: {why} ({NO_CAP_FLAG} keeps this note away)"
        )
    }
}

/// Which loop-clean kernels use more than [`FREE_REGISTERS`] (the only ones a cap can
/// be for; without them no plain compile is needed).
pub fn candidates(registers: &HashMap<String, u32>, loop_clean: &HashSet<String>) -> Vec<String> {
    let mut out: Vec<String> = registers
        .iter()
        .filter(|&(k, &r)| r > FREE_REGISTERS && loop_clean.contains(k))
        .map(|(k, _)| k.clone())
        .collect();
    out.sort();
    out
}

/// The cap for a compile whose instrumented kernels use `registers`, of which
/// `loop_clean` run no check in their loops, given the plain build's counts `plain`:
/// [`FREE_REGISTERS`], when every loop-clean kernel above it has a plain count within
/// it, some loop-clean kernel uses more, and no other kernel does (it would spill in its
/// loops). `Ok(None)`: nothing to cap. Only the step to full occupancy is taken: it is
/// the one measured to pay (hotspot3d 48 -> 32 registers, 1.19x -> 0.97x of plain),
/// while smaller steps did not (hotspot3d 46 -> 39: the same time; adi's column sweep
/// at -O2, 48 -> 40: 0.4% slower; results/2026-11-28-h200-register-cap).
pub fn decide(
    registers: &HashMap<String, u32>,
    loop_clean: &HashSet<String>,
    plain: &HashMap<String, u32>,
) -> Result<Option<(u32, Vec<Capped>)>, Refusal> {
    let wanted = candidates(registers, loop_clean);
    let mut cap = FREE_REGISTERS;
    for k in &wanted {
        let p = plain
            .get(k)
            .ok_or_else(|| Refusal::NoPlainCount(k.clone()))?;
        cap = cap.max(occupancy_class(*p));
    }
    let mut capped: Vec<Capped> = wanted
        .iter()
        .filter(|k| registers[*k] > cap)
        .map(|k| Capped {
            mangled: k.clone(),
            registers: registers[k],
            plain: plain[k],
        })
        .collect();
    if capped.is_empty() || cap > FREE_REGISTERS {
        return Ok(None);
    }
    let mut others: Vec<&String> = registers
        .iter()
        .filter(|&(k, &r)| r > cap && !loop_clean.contains(k))
        .map(|(k, _)| k)
        .collect();
    others.sort();
    if let Some(k) = others.first() {
        return Err(Refusal::CheckedLoops((*k).clone()));
    }
    capped.sort_by(|a, b| a.mangled.cmp(&b.mangled));
    Ok(Some((cap, capped)))
}

/// Whether the user already chose a register limit (`-maxrregcount` for ptxas, or
/// clang's `--maxrregcount`... any argument naming it): theirs stands.
pub fn user_limit(args: &[OsString]) -> bool {
    args.iter()
        .any(|a| a.to_string_lossy().contains("maxrregcount"))
}

/// The arguments that add the cap to a clang command.
pub fn cap_args(cap: u32) -> [OsString; 2] {
    ["-Xcuda-ptxas".into(), format!("-maxrregcount={cap}").into()]
}

/// `MANGLED REGISTERS` lines (the [`REGISTERS_ENV`] file), the most per kernel.
pub fn read_registers(text: &str) -> HashMap<String, u32> {
    let mut out: HashMap<String, u32> = HashMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if let (Some(k), Some(Ok(r)), None) =
            (words.next(), words.next().map(str::parse), words.next())
        {
            let e = out.entry(k.to_owned()).or_insert(r);
            *e = (*e).max(r);
        }
    }
    out
}

/// The kernels listed one per line (the [`pass_env::LOOP_CLEAN`] file).
pub fn read_loop_clean(text: &str) -> HashSet<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The two report files of one compile, in `dir`, as environment assignments for
/// clang (the pass and `cusafe-fatbinary` append to them).
pub fn report_env(dir: &Path) -> [(String, String); 2] {
    [
        (
            pass_env::LOOP_CLEAN.to_owned(),
            dir.join("loop-clean.txt").to_string_lossy().into_owned(),
        ),
        (
            REGISTERS_ENV.to_owned(),
            dir.join("registers.txt").to_string_lossy().into_owned(),
        ),
    ]
}

/// The note printed when the compile is run again with the cap.
pub fn note(cap: u32, capped: &[Capped]) -> String {
    let kernels: Vec<String> = capped
        .iter()
        .map(|c| {
            format!(
                "{} ({} registers, plain build {})",
                crate::resources::demangle(&c.mangled),
                c.registers,
                c.plain
            )
        })
        .collect();
    format!(
        "the loops of {} run no check, but the checks outside them took registers that \
         lower every loop's occupancy; device code rebuilt with -Xcuda-ptxas \
         -maxrregcount={cap} (ptxas spills outside the loops instead; {NO_CAP_FLAG} keeps \
         the uncapped build)",
        kernels.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, u32)]) -> HashMap<String, u32> {
        pairs.iter().map(|&(k, r)| (k.to_owned(), r)).collect()
    }

    fn set(names: &[&str]) -> HashSet<String> {
        names.iter().map(|&k| k.to_owned()).collect()
    }

    #[test]
    fn classes_round_up_to_eight_and_never_below_the_free_count() {
        assert_eq!(occupancy_class(16), 32);
        assert_eq!(occupancy_class(32), 32);
        assert_eq!(occupancy_class(33), 40);
        assert_eq!(occupancy_class(40), 40);
        assert_eq!(occupancy_class(78), 80);
    }

    #[test]
    fn a_loop_clean_kernel_above_its_plain_class_is_capped_there() {
        let regs = map(&[("hot3d", 48), ("small", 20)]);
        let got = decide(
            &regs,
            &set(&["hot3d"]),
            &map(&[("hot3d", 32), ("small", 16)]),
        );
        let (cap, capped) = got.unwrap().unwrap();
        assert_eq!(cap, 32);
        assert_eq!(
            capped,
            vec![Capped {
                mangled: "hot3d".into(),
                registers: 48,
                plain: 32
            }]
        );
    }

    #[test]
    fn nothing_is_capped_within_the_plain_class() {
        // 39 instrumented, 38 plain: the same threads per SM.
        let regs = map(&[("matvec", 39)]);
        assert_eq!(
            decide(&regs, &set(&["matvec"]), &map(&[("matvec", 38)])),
            Ok(None)
        );
        // A kernel with checks in its loops is never a candidate on its own.
        let regs = map(&[("lud", 78)]);
        assert!(candidates(&regs, &set(&[])).is_empty());
        assert_eq!(decide(&regs, &set(&[]), &map(&[("lud", 48)])), Ok(None));
    }

    #[test]
    fn a_checked_kernel_above_the_cap_refuses_it() {
        let regs = map(&[("clean", 48), ("checked", 64)]);
        let got = decide(
            &regs,
            &set(&["clean"]),
            &map(&[("clean", 32), ("checked", 39)]),
        );
        assert_eq!(got, Err(Refusal::CheckedLoops("checked".into())));
        // Below the cap it is not touched, and the cap stands.
        let regs = map(&[("clean", 48), ("checked", 30)]);
        let got = decide(
            &regs,
            &set(&["clean"]),
            &map(&[("clean", 32), ("checked", 24)]),
        );
        assert_eq!(got.unwrap().unwrap().0, 32);
    }

    #[test]
    fn only_the_step_to_full_occupancy_is_taken() {
        let regs = map(&[("a", 56), ("b", 48)]);
        let clean = set(&["a", "b"]);
        // Both plain counts within 32: both capped there.
        let (cap, capped) = decide(&regs, &clean, &map(&[("a", 30), ("b", 32)]))
            .unwrap()
            .unwrap();
        assert_eq!(cap, 32);
        assert_eq!(capped.len(), 2);
        // One needs 40 plain: a cap of 40 would be a partial step, not taken.
        assert_eq!(
            decide(&regs, &clean, &map(&[("a", 36), ("b", 32)])),
            Ok(None)
        );
        let got = decide(&regs, &clean, &map(&[("a", 30)]));
        assert_eq!(got, Err(Refusal::NoPlainCount("b".into())));
    }

    #[test]
    fn reports_read_back_keeping_the_most_per_kernel() {
        let r = read_registers("k 40\nk 48\nj 32\nbad line here\nx notanumber\n");
        assert_eq!(r, map(&[("k", 48), ("j", 32)]));
        assert_eq!(read_loop_clean("a\n\n b \n"), set(&["a", "b"]));
    }

    #[test]
    fn refusals_say_why_and_how_to_keep_the_note_away() {
        let text = Refusal::CheckedLoops("_Z3ludPf".into()).to_string();
        assert!(
            text.starts_with("no register cap: kernel lud(float*) runs checks in its loops"),
            "{text}"
        );
        let text = Refusal::SeveralSources(2).to_string();
        assert!(
            text.contains("compiles 2 CUDA sources; compile each with its own command"),
            "{text}"
        );
        for r in [
            Refusal::CheckedLoops("k".into()),
            Refusal::NoPlainCount("k".into()),
            Refusal::SeveralSources(3),
        ] {
            assert!(r
                .to_string()
                .ends_with("(--cusafe-no-register-cap keeps this note away)"));
        }
    }

    #[test]
    fn a_user_limit_is_seen_in_any_spelling() {
        let args = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        assert!(user_limit(&args("-O3 -Xcuda-ptxas -maxrregcount=40 a.cu")));
        assert!(user_limit(&args("--maxrregcount=40 a.cu")));
        assert!(!user_limit(&args("-O3 a.cu")));
    }
}
