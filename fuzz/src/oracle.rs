//! The objective: after every execution, read what the target's sanitizers wrote for
//! this input (cusafe's JSON, ASan's JSON through `libcusafe_fuzz.a`), fall back on the
//! way the process ended (a crash signal, a timeout), or — for the baseline — run
//! memcheck on inputs with new coverage; keep the input when its finding's key
//! `(kind, kernel or function, file:line)` is new.

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Instant;

use libafl::executors::ExitKind;
use libafl::feedbacks::{Feedback, StateInitializer};
use libafl::inputs::{BytesInput, HasTargetBytes};
use libafl_bolts::Named;

use crate::crashes::Crashes;
use crate::finding::{Finding, Reader};
use crate::memcheck::Memcheck;
use crate::symbolize::Symbolizer;
use crate::target::Target;

/// The baseline's novelty test: which map entries any input has reached.
#[derive(Debug)]
pub struct Novelty {
    map: *const u8,
    len: usize,
    seen: Vec<bool>,
}

impl Novelty {
    /// Watches the `len` bytes at `map` (the shared coverage map).
    ///
    /// # Safety
    /// `map` stays valid for `len` bytes while this lives.
    pub unsafe fn new(map: *const u8, len: usize) -> Self {
        Novelty {
            map,
            len,
            seen: vec![false; len],
        }
    }

    /// Whether the last run reached an entry no run reached before (and remembers it).
    pub fn fresh(&mut self) -> bool {
        // SAFETY: the constructor's contract.
        let map = unsafe { std::slice::from_raw_parts(self.map, self.len) };
        let mut fresh = false;
        for (s, &m) in self.seen.iter_mut().zip(map) {
            if m != 0 && !*s {
                *s = true;
                fresh = true;
            }
        }
        fresh
    }
}

/// The memcheck oracle with its novelty test.
#[derive(Debug)]
pub struct Baseline {
    /// The sanitizer runs.
    pub memcheck: Memcheck,
    /// Which inputs get one.
    pub novelty: Novelty,
}

/// The objective feedback.
#[derive(Debug)]
pub struct Oracle {
    target: Target,
    reader: Reader,
    sym: Symbolizer,
    crashes: Crashes,
    baseline: Option<Baseline>,
    work: PathBuf,
    replay: String,
    start: Instant,
    finds: Vec<(f64, String)>,
    quiet: bool,
}

impl Oracle {
    /// The oracle of a client whose target writes reports through `reader`; unique
    /// findings go to `crashes`; `replay` is the replay command with `{dir}` for the
    /// crash directory.
    pub fn new(
        target: Target,
        reader: Reader,
        crashes: Crashes,
        baseline: Option<Baseline>,
        replay: String,
        quiet: bool,
    ) -> Self {
        let work = reader.files().dir().join("memcheck");
        Oracle {
            target,
            reader,
            sym: Symbolizer::default(),
            crashes,
            baseline,
            work,
            replay,
            start: Instant::now(),
            finds: Vec::new(),
            quiet,
        }
    }

    /// Unique findings so far.
    pub fn unique(&self) -> usize {
        self.crashes.count()
    }

    /// (seconds since start, key) of each unique finding of this run.
    pub fn finds(&self) -> &[(f64, String)] {
        &self.finds
    }

    /// The findings saved by this run: (key, directory).
    pub fn crashes_saved(&self) -> Vec<(String, PathBuf)> {
        self.crashes.saved().to_vec()
    }

    /// The memcheck runs so far (baseline only).
    pub fn memcheck_runs(&self) -> u64 {
        self.baseline.as_ref().map_or(0, |b| b.memcheck.runs)
    }

    fn judge(&mut self, input: &[u8], exit: &ExitKind) -> Option<(Finding, String)> {
        let new = self.reader.take(&self.target.program, &mut self.sym);
        let mut text = new.text;
        let mut found = new.findings.into_iter().next();
        if found.is_none() {
            found = match exit {
                ExitKind::Crash => Some(Finding::from_end("crash", "signal")),
                ExitKind::Timeout => Some(Finding::from_end("timeout", "timeout")),
                _ => None,
            };
        }
        if found.is_none() {
            if let Some(b) = &mut self.baseline {
                if b.novelty.fresh() {
                    match b.memcheck.check(&self.target, input, &self.work) {
                        Ok(f) => {
                            if f.is_some() {
                                text = std::fs::read_to_string(self.work.join("output"))
                                    .unwrap_or_default();
                            }
                            found = f;
                        }
                        Err(e) => eprintln!("cusafe fuzz: warning: memcheck run failed: {e}"),
                    }
                }
            }
        }
        found.map(|f| (f, text))
    }
}

impl Named for Oracle {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("cusafe-oracle");
        &NAME
    }
}

impl<S> StateInitializer<S> for Oracle {}

impl<EM, OT, S> Feedback<EM, BytesInput, OT, S> for Oracle {
    fn is_interesting(
        &mut self,
        _state: &mut S,
        _manager: &mut EM,
        input: &BytesInput,
        _observers: &OT,
        exit_kind: &ExitKind,
    ) -> Result<bool, libafl::Error> {
        let owned = input.target_bytes();
        let bytes: &[u8] = &owned;
        let Some((finding, text)) = self.judge(bytes, exit_kind) else {
            return Ok(false);
        };
        if !self.crashes.is_new(&finding) {
            return Ok(false);
        }
        let replay = self.replay.clone();
        let saved = self
            .crashes
            .save(&finding, bytes, &text, &replay)
            .map_err(|e| libafl::Error::unknown(e.to_string()))?;
        if let Some(dir) = saved {
            let t = self.start.elapsed().as_secs_f64();
            self.finds.push((t, finding.key()));
            if !self.quiet {
                eprintln!(
                    "cusafe fuzz: [{t:>6.0}s] new finding: {} -> {}",
                    finding.summary(),
                    dir.display()
                );
            }
        }
        Ok(true)
    }
}
