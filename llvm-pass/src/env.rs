//! The `CUSAFE_PASS_*` environment variables, read in one place. Each is a switch with
//! a default; `0`/`1` (also `false`/`true`) set it, unset or empty leaves the default.
//! `CUSAFE_PASS_RECOVER` also takes `skip`, and `CUSAFE_PASS_COVERAGE` takes `warp`
//! (`coverage::mode`). Any other value, bytes that are not UTF-8 included, stops the
//! compile in [`validate`] with one line naming the variable and what it accepts: a
//! misspelt value must not be taken silently for "on" (before, anything but `0` was
//! on, so `CUSAFE_PASS_CHECKS=off` built the checks) or panic inside clang.

use std::ffi::OsString;

/// A switch and its default.
#[derive(Clone, Copy, Debug)]
pub struct Switch {
    /// The variable.
    pub name: &'static str,
    /// Its value when unset or empty.
    pub default: bool,
    /// What it does, for the error message.
    pub what: &'static str,
}

/// `CUSAFE_PASS_STATS`: a checks line per function on stderr.
pub const STATS: Switch = Switch {
    name: "CUSAFE_PASS_STATS",
    default: false,
    what: "1 prints a checks line per function",
};
/// `CUSAFE_PASS_VERIFY`: the LLVM verifier after instrumenting.
pub const VERIFY: Switch = Switch {
    name: "CUSAFE_PASS_VERIFY",
    default: false,
    what: "1 runs the LLVM verifier after the pass",
};
/// `CUSAFE_PASS_CHECKS`: the memory checks.
pub const CHECKS: Switch = Switch {
    name: "CUSAFE_PASS_CHECKS",
    default: true,
    what: "0 leaves the memory checks out (coverage only)",
};
/// `CUSAFE_PASS_OPT`: check elimination.
pub const OPT: Switch = Switch {
    name: "CUSAFE_PASS_OPT",
    default: true,
    what: "0 turns check elimination off",
};
/// `CUSAFE_PASS_LAUNCH_BOUNDS`: launch-time windows.
pub const LAUNCH_BOUNDS: Switch = Switch {
    name: "CUSAFE_PASS_LAUNCH_BOUNDS",
    default: true,
    what: "0 gives kernels no bounds at launch",
};
/// `CUSAFE_PASS_INLINE_COLD`: inlined cold paths.
pub const INLINE_COLD: Switch = Switch {
    name: "CUSAFE_PASS_INLINE_COLD",
    default: true,
    what: "0 keeps the cold paths as calls",
};
/// `CUSAFE_PASS_BATCH_MOVE`: pure arithmetic moved up to a batch's first access.
pub const BATCH_MOVE: Switch = Switch {
    name: "CUSAFE_PASS_BATCH_MOVE",
    default: false,
    what: "1 moves pure arithmetic up to a batch's first access",
};
/// `CUSAFE_PASS_RECOVER`: recover-mode cold paths (`skip`: also no merged checks).
pub const RECOVER: Switch = Switch {
    name: "CUSAFE_PASS_RECOVER",
    default: false,
    what: "1 builds cold paths that go on after a report, skip also skips every failing access",
};

/// Every switch.
pub const SWITCHES: [Switch; 8] = [
    STATS,
    VERIFY,
    CHECKS,
    OPT,
    LAUNCH_BOUNDS,
    INLINE_COLD,
    BATCH_MOVE,
    RECOVER,
];

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

/// The switch's value; the default for a value [`validate`] refuses.
pub fn on(s: Switch) -> bool {
    std::env::var_os(s.name)
        .and_then(|v| v.to_str().and_then(|v| parse(s, v)))
        .unwrap_or(s.default)
}

/// Whether `CUSAFE_PASS_RECOVER` is `skip`.
pub fn recover_skip() -> bool {
    std::env::var_os(RECOVER.name).is_some_and(|v| v == "skip")
}

/// Checks every switch's value as given by `get` (the environment in the pass): the
/// first bad one as the error line.
pub fn validate_with(get: impl Fn(&str) -> Option<OsString>) -> Result<(), String> {
    for s in SWITCHES {
        let Some(raw) = get(s.name) else {
            continue;
        };
        let ok = raw.to_str().and_then(|v| parse(s, v)).is_some();
        if !ok {
            let extra = if s.name == RECOVER.name { ", skip" } else { "" };
            return Err(format!(
                "{}={}: accepted values are 0 and 1 (also false, true{extra}; unset or empty: {}); {}",
                s.name,
                shown(&raw),
                u8::from(s.default),
                s.what
            ));
        }
    }
    Ok(())
}

/// Checks every switch in the environment.
pub fn validate() -> Result<(), String> {
    validate_with(|name| std::env::var_os(name))
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

    fn check(pairs: &[(&str, OsString)]) -> Result<(), String> {
        validate_with(|name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn known_values_pass() {
        for v in ["", "0", "1", "true", "false"] {
            for s in SWITCHES {
                assert_eq!(check(&[(s.name, v.into())]), Ok(()), "{}={v}", s.name);
            }
        }
        assert_eq!(check(&[("CUSAFE_PASS_RECOVER", "skip".into())]), Ok(()));
        assert_eq!(parse(CHECKS, ""), Some(true));
        assert_eq!(parse(STATS, ""), Some(false));
        assert_eq!(parse(RECOVER, "skip"), Some(true));
    }

    #[test]
    fn garbage_is_one_line_naming_the_variable() {
        let e = check(&[("CUSAFE_PASS_CHECKS", "off".into())]).unwrap_err();
        assert_eq!(
            e,
            "CUSAFE_PASS_CHECKS=off: accepted values are 0 and 1 (also false, true; unset or empty: 1); 0 leaves the memory checks out (coverage only)"
        );
        let e = check(&[("CUSAFE_PASS_STATS", "skip".into())]).unwrap_err();
        assert!(e.starts_with("CUSAFE_PASS_STATS=skip: "), "{e}");
        let e = check(&[("CUSAFE_PASS_RECOVER", "2".into())]).unwrap_err();
        assert!(e.contains("(also false, true, skip;"), "{e}");
        let e = check(&[("CUSAFE_PASS_OPT", OsString::from_vec(b"\xff\n".to_vec()))]).unwrap_err();
        assert!(e.starts_with("CUSAFE_PASS_OPT=\u{fffd}\\n: "), "{e}");
        assert!(!e.contains('\n'));
    }
}
