//! The pass's check counts, from the stats lines `CUSAFE_PASS_STATS=1` prints (one per
//! instrumented function):
//! `cusafe: kernel NAME: N checks (...), A arithmetic rules, P proven in bounds,
//! R removed (dominated), H hoisted (loop ...), U unchecked (...)`.
//! Each figure is found by its phrase, so older lines without "removed" or "hoisted"
//! (or new phrases added later) still parse; a missing figure counts 0.

use regex::Regex;
use std::path::Path;
use std::sync::LazyLock;

/// Check counts summed over the functions of one build of one workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Checks {
    /// Instrumented functions (stats lines).
    pub functions: u64,
    /// Checks emitted ("N checks").
    pub checks: u64,
    /// Accesses proven in bounds at compile time ("P proven in bounds").
    pub proven: u64,
    /// Checks removed as dominated by another ("R removed").
    pub removed: u64,
    /// Checks hoisted out of loops ("H hoisted").
    pub hoisted: u64,
}

static LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^cusafe: .*?: (\d+) checks\b").expect("regex"));
static PROVEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d+) proven in bounds\b").expect("regex"));
static REMOVED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d+) removed\b").expect("regex"));
static HOISTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d+) hoisted\b").expect("regex"));

fn count(re: &Regex, line: &str) -> u64 {
    re.captures(line)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or(0)
}

/// Sums the stats lines of `text` (a build's stderr); other lines are skipped.
pub fn parse(text: &str) -> Checks {
    let mut c = Checks::default();
    for line in text.lines() {
        let Some(m) = LINE.captures(line) else {
            continue;
        };
        c.functions += 1;
        c.checks += m[1].parse::<u64>().unwrap_or(0);
        c.proven += count(&PROVEN, line);
        c.removed += count(&REMOVED, line);
        c.hoisted += count(&HOISTED, line);
    }
    c
}

/// Reads and sums a stats file; `None` when it does not exist.
pub fn load(path: &Path) -> Result<Option<Checks>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(parse(&text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}
