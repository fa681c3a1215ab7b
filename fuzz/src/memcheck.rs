//! The cuFuzz-style baseline oracle: a coverage-only build runs once per input, and
//! every input that reaches new coverage runs again under `compute-sanitizer --tool
//! memcheck` in a separate process. Its text report is the only record memcheck
//! gives, so it is parsed here (the first error's kind, kernel and file:line). API
//! errors are not reported (`--report-api-errors no`): in a coverage-only build the
//! cusafe runtime's own probing calls fail by design (measured: cuModuleGetGlobal's
//! "named symbol not found" on every input).

use std::path::Path;
use std::time::Duration;

use crate::finding::Finding;
use crate::runner;
use crate::symbolize::Symbolizer;
use crate::target::Target;
use crate::Result;

/// The memcheck oracle.
#[derive(Clone, Debug)]
pub struct Memcheck {
    /// The compute-sanitizer executable.
    pub program: String,
    /// Timeout of one memcheck run.
    pub timeout: Duration,
    /// Runs so far.
    pub runs: u64,
}

impl Memcheck {
    /// Memcheck through `program` (e.g. `compute-sanitizer`).
    pub fn new(program: impl Into<String>, timeout: Duration) -> Self {
        Memcheck {
            program: program.into(),
            timeout,
            runs: 0,
        }
    }

    /// Runs `input` under memcheck; the first error it reports, if any.
    pub fn check(&mut self, target: &Target, input: &[u8], work: &Path) -> Result<Option<Finding>> {
        self.runs += 1;
        let prefix = [
            self.program.clone(),
            "--tool".into(),
            "memcheck".into(),
            "--print-limit".into(),
            "1".into(),
            // The runtime's own failing probes (a window under ASan's shadow, a module
            // global it looks up) would count as findings otherwise.
            "--report-api-errors".into(),
            "no".into(),
        ];
        let out = runner::run(
            target,
            input,
            work,
            self.timeout,
            &prefix,
            &mut Symbolizer::default(),
        )?;
        Ok(parse(&out.output))
    }
}

/// The first memcheck error in `text`.
pub fn parse(text: &str) -> Option<Finding> {
    let mut lines = text
        .lines()
        .map(|l| l.trim_start_matches("========= ").trim());
    let head = lines.find(|l| {
        l.starts_with("Invalid ")
            || l.starts_with("Out-of-range")
            || l.starts_with("Misaligned")
            || l.starts_with("Program hit")
    })?;
    let kind = if head.starts_with("Invalid __global__") {
        "invalid-global-access"
    } else if head.starts_with("Invalid __shared__") {
        "invalid-shared-access"
    } else if head.starts_with("Invalid __local__") {
        "invalid-local-access"
    } else if head.starts_with("Program hit") {
        "cuda-api-error"
    } else {
        "memcheck-error"
    };
    let at = lines.find(|l| l.starts_with("at "));
    let (place, file, line) = at
        .map(|l| {
            let l = l.trim_start_matches("at ");
            let (func, loc) = l.rsplit_once(" in ").unwrap_or((l, ""));
            let func = func.rsplit_once("+0x").map_or(func, |(f, _)| f);
            let (file, line) = loc.rsplit_once(':').unwrap_or((loc, "0"));
            (
                func.to_string(),
                file.to_string(),
                line.parse().unwrap_or(0),
            )
        })
        .unwrap_or_default();
    Some(Finding {
        tool: "memcheck".into(),
        kind: kind.into(),
        side: "device".into(),
        place,
        file,
        line,
        record: serde_json::json!({"tool": "memcheck", "report": head}),
    })
}
