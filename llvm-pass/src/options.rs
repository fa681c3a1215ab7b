//! The pass's options: [`PassOptions`], read once from the `CUSAFE_PASS_*` environment
//! variables (names in `cusafe_format::pass_env`) when the pass first meets a device
//! module, then handed to whatever needs them. Each switch has a default; `0`/`1` (also
//! `false`/`true`) set it, unset or empty leaves the default. `CUSAFE_PASS_RECOVER` also
//! takes `skip`, and `CUSAFE_PASS_COVERAGE` takes `1`/`warp`/`0`. Any other value, bytes
//! that are not UTF-8 included, is an error: one line naming the variable and what it
//! accepts, which stops the compile. A misspelt value must not be taken silently for
//! "on" (before, anything but `0` was on, so `CUSAFE_PASS_CHECKS=off` built the checks)
//! or panic inside clang.

use std::ffi::OsString;

use crate::coverage;
use cusafe_format::pass_env;

/// A switch and its default.
#[derive(Clone, Copy, Debug)]
struct Switch {
    /// The variable.
    name: &'static str,
    /// Its value when unset or empty.
    default: bool,
    /// What it does, for the error message.
    what: &'static str,
}

/// `CUSAFE_PASS_STATS`: a checks line per function on stderr.
const STATS: Switch = Switch {
    name: pass_env::STATS,
    default: false,
    what: "1 prints a checks line per function",
};
/// `CUSAFE_PASS_VERIFY`: the LLVM verifier after instrumenting.
const VERIFY: Switch = Switch {
    name: pass_env::VERIFY,
    default: false,
    what: "1 runs the LLVM verifier after the pass",
};
/// `CUSAFE_PASS_CHECKS`: the memory checks.
const CHECKS: Switch = Switch {
    name: pass_env::CHECKS,
    default: true,
    what: "0 leaves the memory checks out (coverage only)",
};
/// `CUSAFE_PASS_OPT`: check elimination.
const OPT: Switch = Switch {
    name: pass_env::OPT,
    default: true,
    what: "0 turns check elimination off",
};
/// `CUSAFE_PASS_LAUNCH_BOUNDS`: launch-time windows.
const LAUNCH_BOUNDS: Switch = Switch {
    name: pass_env::LAUNCH_BOUNDS,
    default: true,
    what: "0 gives kernels no bounds at launch",
};
/// `CUSAFE_PASS_DEFER`: deferred branches (`elim::defer`).
const DEFER: Switch = Switch {
    name: pass_env::DEFER,
    default: true,
    what: "0 gives every check its branch before its access",
};
/// `CUSAFE_PASS_PREDICATE`: deferred accesses skipped, not sunk (`elim::defer`).
const PREDICATE: Switch = Switch {
    name: pass_env::PREDICATE,
    default: true,
    what: "0 sends a deferred access whose check failed to a sink instead of skipping it",
};
/// `CUSAFE_PASS_LIFT`: checks of loads under a branch built at the branch (`lift`).
const LIFT: Switch = Switch {
    name: pass_env::LIFT,
    default: true,
    what: "0 keeps the check of a load under an if in the load's block",
};
/// `CUSAFE_PASS_BOX_COPY`: kernel copies for blocks of a bounded shape (`box_copy`).
const BOX_COPY: Switch = Switch {
    name: pass_env::BOX_COPY,
    default: true,
    what: "0 gives no kernel a copy for blocks of a bounded shape",
};
/// `CUSAFE_PASS_INDEX_GROUPS`: index groups (`launch::add_index_groups`, `elim::index`).
const INDEX_GROUPS: Switch = Switch {
    name: pass_env::INDEX_GROUPS,
    default: true,
    what: "0 checks no index once for several kernel parameters",
};
/// `CUSAFE_PASS_OFFSETS`: checks on a dominating check's offset (`elim::offset`).
const OFFSETS: Switch = Switch {
    name: pass_env::OFFSETS,
    default: true,
    what: "0 makes every check build its own offset",
};
/// `CUSAFE_PASS_LOOP_SETS`: one branch for the loop ranges of one preheader
/// (`check::Checker::emit_loop_checks`).
const LOOP_SETS: Switch = Switch {
    name: pass_env::LOOP_SETS,
    default: true,
    what: "0 gives every loop range its own branch",
};
/// `CUSAFE_PASS_INLINE_COLD`: inlined cold paths.
const INLINE_COLD: Switch = Switch {
    name: pass_env::INLINE_COLD,
    default: true,
    what: "0 keeps the cold paths as calls",
};
/// `CUSAFE_PASS_RECOVER`: recover-mode cold paths (`skip`: also no merged checks).
const RECOVER: Switch = Switch {
    name: pass_env::RECOVER,
    default: false,
    what: "1 builds cold paths that go on after a report, skip also skips every failing access",
};

/// What a device report does to the thread that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recover {
    /// The report ends the launch (the default).
    Off,
    /// The cold path returns and the access is skipped (`1`, `--cusafe-recover`).
    On,
    /// As `On`, and no check is merged, made per stride, batched or hoisted, so that
    /// every failing access is skipped (`skip`, `--cusafe-fuzz`).
    Skip,
}

/// The pass's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassOptions {
    /// A checks line per function on stderr (`CUSAFE_PASS_STATS=1`).
    pub stats: bool,
    /// The LLVM verifier after instrumenting (`CUSAFE_PASS_VERIFY=1`; the test scripts
    /// set it, since clang does not verify after plugins in release builds).
    pub verify: bool,
    /// The memory checks (`CUSAFE_PASS_CHECKS`, on by default). Off, the pass adds
    /// device coverage only: no checks, no launch-time windows, no re-laid-out locals
    /// or `__shared__` arrays, no device runtime (the coverage-only baseline of fuzz
    /// builds).
    pub checks: bool,
    /// Check elimination (`CUSAFE_PASS_OPT`, on by default).
    pub optimise: bool,
    /// Launch-time bounds for kernels (`CUSAFE_PASS_LAUNCH_BOUNDS`, on by default;
    /// they also need the checks and check elimination: [`Self::launch_windows`]).
    pub launch_bounds: bool,
    /// Deferred branches (`CUSAFE_PASS_DEFER`, on by default; trap-mode builds with
    /// check elimination only: `elim::defer`).
    pub defer: bool,
    /// A deferred access whose check failed is skipped, behind a branch ptxas
    /// predicates, rather than sent to a sink (`CUSAFE_PASS_PREDICATE`, on by default;
    /// with deferred branches only: `elim::defer`).
    pub predicate: bool,
    /// The check of a load that only one side of a branch makes is built at the branch,
    /// which then skips the load where it fails (`CUSAFE_PASS_LIFT`, on by default;
    /// with predicated deferred branches only: `lift`, `elim::defer`).
    pub lift: bool,
    /// Kernel copies for blocks of a bounded shape (`CUSAFE_PASS_BOX_COPY`, on by
    /// default; with check elimination and without coverage only: `box_copy`).
    pub box_copy: bool,
    /// Index groups (`CUSAFE_PASS_INDEX_GROUPS`, on by default; with launch-time
    /// windows in trap-mode builds only: [`Self::index_groups`]).
    pub index_groups: bool,
    /// Checks on a dominating check's offset (`CUSAFE_PASS_OFFSETS`, on by default;
    /// trap-mode builds only: `elim::offset`).
    pub offsets: bool,
    /// One branch for the loop ranges of one preheader (`CUSAFE_PASS_LOOP_SETS`, on by
    /// default).
    pub loop_sets: bool,
    /// Cold paths inlined (`CUSAFE_PASS_INLINE_COLD`, on by default; the IR tests turn
    /// it off to read the checks as calls).
    pub inline_cold: bool,
    /// Recover mode (`CUSAFE_PASS_RECOVER`).
    pub recover: Recover,
    /// Device edge coverage (`CUSAFE_PASS_COVERAGE`).
    pub coverage: Option<coverage::Mode>,
}

impl PassOptions {
    /// Reads the options from the environment.
    pub fn from_env() -> Result<Self, String> {
        let set: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        Self::read(|name| std::env::var_os(name), &set)
    }

    /// Reads the options from `get` (a variable's value, if set), given the names of
    /// the variables that are set: the first bad value, or a `CUSAFE_PASS_*` name the
    /// pass does not read, as the error line.
    pub fn read(get: impl Fn(&str) -> Option<OsString>, set: &[String]) -> Result<Self, String> {
        let on = |s: Switch| -> Result<bool, String> {
            match get(s.name) {
                None => Ok(s.default),
                Some(raw) => raw
                    .to_str()
                    .and_then(|v| parse(s, v))
                    .ok_or_else(|| refused(s, &raw)),
            }
        };
        if let Some(name) = set
            .iter()
            .find(|k| k.starts_with("CUSAFE_PASS_") && !KNOWN.contains(&k.as_str()))
        {
            return Err(format!(
                "{name} is not a variable the pass reads (it reads {}); unset it",
                KNOWN.join(", ")
            ));
        }
        let (stats, verify, checks) = (on(STATS)?, on(VERIFY)?, on(CHECKS)?);
        let (optimise, launch_bounds, inline_cold) =
            (on(OPT)?, on(LAUNCH_BOUNDS)?, on(INLINE_COLD)?);
        let (defer, box_copy, index_groups) = (on(DEFER)?, on(BOX_COPY)?, on(INDEX_GROUPS)?);
        let (loop_sets, predicate, lift) = (on(LOOP_SETS)?, on(PREDICATE)?, on(LIFT)?);
        let offsets = on(OFFSETS)?;
        let recover = match on(RECOVER)? {
            false => Recover::Off,
            true if get(RECOVER.name).is_some_and(|v| v == "skip") => Recover::Skip,
            true => Recover::On,
        };
        Ok(PassOptions {
            stats,
            verify,
            checks,
            optimise,
            launch_bounds,
            defer,
            predicate,
            lift,
            box_copy,
            index_groups,
            offsets,
            loop_sets,
            inline_cold,
            recover,
            coverage: coverage_mode(get(pass_env::COVERAGE))?,
        })
    }

    /// Whether kernels get launch-time windows: checks, check elimination and launch
    /// bounds all on.
    pub fn launch_windows(&self) -> bool {
        self.checks && self.optimise && self.launch_bounds
    }

    /// Whether kernels get index groups: launch-time windows, the switch on, and a
    /// trap-mode build.
    pub fn index_groups(&self) -> bool {
        self.launch_windows() && self.index_groups && !self.recover_build()
    }

    /// Whether checks of loads under a branch are lifted to the branch (`lift`): the
    /// switch on, with predicated deferred branches, in a trap-mode build that checks.
    pub fn lifts(&self) -> bool {
        self.lift && self.defer && self.predicate && self.checks && !self.recover_build()
    }

    /// Whether the build keeps going after a device report (recover or skip).
    pub fn recover_build(&self) -> bool {
        self.recover != Recover::Off
    }
}

/// The `CUSAFE_PASS_*` variables the pass reads, and `CUSAFE_PASS_PLUGIN` (where
/// `cusafe-clang++` finds the pass).
const KNOWN: [&str; 17] = [
    pass_env::STATS,
    pass_env::VERIFY,
    pass_env::CHECKS,
    pass_env::OPT,
    pass_env::LAUNCH_BOUNDS,
    pass_env::DEFER,
    pass_env::PREDICATE,
    pass_env::LIFT,
    pass_env::BOX_COPY,
    pass_env::INDEX_GROUPS,
    pass_env::OFFSETS,
    pass_env::LOOP_SETS,
    pass_env::INLINE_COLD,
    pass_env::RECOVER,
    pass_env::COVERAGE,
    pass_env::LOOP_CLEAN,
    pass_env::PLUGIN,
];

/// The coverage mode `CUSAFE_PASS_COVERAGE` asks for: unset, empty or `0` none, `1`
/// [`coverage::Mode::Store`], `warp` [`coverage::Mode::Warp`]; anything else is an
/// error.
fn coverage_mode(raw: Option<OsString>) -> Result<Option<coverage::Mode>, String> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    match raw.to_str() {
        Some("" | "0") => Ok(None),
        Some("1") => Ok(Some(coverage::Mode::Store)),
        Some("warp") => Ok(Some(coverage::Mode::Warp)),
        Some(v) => Err(format!(
            "{}={v}: accepted values are 1 (a store per edge) and warp (the warp's leader stores)",
            pass_env::COVERAGE
        )),
        None => Err(format!(
            "{}: environment variable was not valid unicode: {raw:?}",
            pass_env::COVERAGE
        )),
    }
}

/// The value of `v` read as a switch: `None` for a value it does not take.
fn parse(s: Switch, v: &str) -> Option<bool> {
    match v {
        "" => Some(s.default),
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        "skip" if s.name == RECOVER.name => Some(true),
        _ => None,
    }
}

/// The error line for a value `s` does not take.
fn refused(s: Switch, raw: &std::ffi::OsStr) -> String {
    let extra = if s.name == RECOVER.name { ", skip" } else { "" };
    format!(
        "{}={}: accepted values are 0 and 1 (also false, true{extra}; unset or empty: {}); {}",
        s.name,
        shown(raw),
        u8::from(s.default),
        s.what
    )
}

/// `raw` for a message: lossy UTF-8, control characters escaped (one line).
fn shown(raw: &std::ffi::OsStr) -> String {
    let mut out = String::new();
    for c in raw.to_string_lossy().chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn read(pairs: &[(&str, OsString)]) -> Result<PassOptions, String> {
        let set: Vec<String> = pairs.iter().map(|(n, _)| n.to_string()).collect();
        PassOptions::read(
            |name| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.clone())
            },
            &set,
        )
    }

    #[test]
    fn defaults_and_known_values() {
        let d = read(&[]).unwrap();
        assert!(!d.stats && !d.verify && d.checks && d.optimise && d.inline_cold);
        assert!(d.launch_windows() && !d.recover_build() && d.coverage.is_none());
        for v in ["", "0", "1", "true", "false"] {
            for s in [
                STATS,
                VERIFY,
                CHECKS,
                OPT,
                LAUNCH_BOUNDS,
                INLINE_COLD,
                RECOVER,
            ] {
                assert!(read(&[(s.name, v.into())]).is_ok(), "{}={v}", s.name);
            }
        }
        assert!(read(&[(CHECKS.name, "".into())]).unwrap().checks);
        assert!(!read(&[(OPT.name, "0".into())]).unwrap().launch_windows());
        let r = |v: &str| read(&[(RECOVER.name, v.into())]).unwrap().recover;
        assert_eq!(
            [r("skip"), r("1"), r("true"), r("0"), r("")],
            [
                Recover::Skip,
                Recover::On,
                Recover::On,
                Recover::Off,
                Recover::Off
            ]
        );
        let c = |v: &str| read(&[(pass_env::COVERAGE, v.into())]).unwrap().coverage;
        assert_eq!(
            [c("1"), c("warp"), c("0"), c("")],
            [
                Some(coverage::Mode::Store),
                Some(coverage::Mode::Warp),
                None,
                None
            ]
        );
    }

    #[test]
    fn garbage_is_one_line_naming_the_variable() {
        let e = read(&[("CUSAFE_PASS_CHECKS", "off".into())]).unwrap_err();
        assert_eq!(
            e,
            "CUSAFE_PASS_CHECKS=off: accepted values are 0 and 1 (also false, true; unset or empty: 1); 0 leaves the memory checks out (coverage only)"
        );
        let e = read(&[("CUSAFE_PASS_STATS", "skip".into())]).unwrap_err();
        assert!(e.starts_with("CUSAFE_PASS_STATS=skip: "), "{e}");
        let e = read(&[("CUSAFE_PASS_RECOVER", "2".into())]).unwrap_err();
        assert!(e.contains("(also false, true, skip;"), "{e}");
        let e = read(&[("CUSAFE_PASS_OPT", OsString::from_vec(b"\xff\n".to_vec()))]).unwrap_err();
        assert!(e.starts_with("CUSAFE_PASS_OPT=\u{fffd}\\n: "), "{e}");
        assert!(!e.contains('\n'));
        let e = read(&[(pass_env::COVERAGE, "2".into())]).unwrap_err();
        assert!(
            e.starts_with("CUSAFE_PASS_COVERAGE=2: accepted values are 1"),
            "{e}"
        );
    }

    #[test]
    fn a_variable_the_pass_does_not_read_is_refused() {
        let e = read(&[("CUSAFE_PASS_BATCH_MOVE", "1".into())]).unwrap_err();
        assert!(
            e.starts_with("CUSAFE_PASS_BATCH_MOVE is not a variable the pass reads (it reads CUSAFE_PASS_STATS, "),
            "{e}"
        );
        assert!(e.ends_with("; unset it"), "{e}");
        assert!(read(&[("CUSAFE_PASS_PLUGIN", "/x.so".into())]).is_ok());
    }
}
