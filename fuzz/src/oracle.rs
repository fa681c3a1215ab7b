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
use crate::runner;
use crate::symbolize::Symbolizer;
use crate::target::{Delivery, Target};

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
    timeout: std::time::Duration,
    unconfirmed_timeouts: u64,
    /// Whether the persistent process has gone on after a host (ASan) report: its
    /// memory may be corrupt, so its new findings are confirmed by a fresh run.
    tainted: bool,
    unreproduced: u64,
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
        timeout: std::time::Duration,
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
            timeout,
            unconfirmed_timeouts: 0,
            tainted: false,
            unreproduced: 0,
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
        let recovered_host = new.findings.iter().any(|f| f.tool == "asan");
        let mut found = new.primary().cloned();
        let mut text = new.text;
        let tainted = self.tainted;
        if matches!(exit, ExitKind::Crash | ExitKind::Timeout) {
            // The process that went on after a host report has ended.
            self.tainted = false;
        } else if recovered_host && self.target.delivery == Delivery::Shared {
            self.tainted = true;
        }
        if tainted && found.as_ref().is_some_and(|f| self.crashes.is_new(f)) {
            // The fresh run's verdict stands, whatever the process's end said.
            return self.confirm(input, &mut text).map(|f| (f, text));
        }
        if found.is_none() {
            found = match exit {
                ExitKind::Crash => self.explain_crash(input),
                ExitKind::Timeout => self.confirm_timeout(input),
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

impl Oracle {
    /// A new finding of a tainted persistent process counts only when a fresh one-off
    /// run of the input reports it too (or another finding, which then counts instead):
    /// after ASan went on past an out-of-bounds write, a later input may meet the
    /// damage rather than a bug of its own.
    fn confirm(&mut self, input: &[u8], text: &mut String) -> Option<Finding> {
        match self.rerun(input, "confirm") {
            Ok(o) => {
                let f = o.reports.primary().cloned();
                if f.is_some() {
                    *text = if o.reports.text.is_empty() {
                        o.output
                    } else {
                        o.reports.text
                    };
                } else {
                    self.unreproduced += 1;
                }
                f
            }
            Err(e) => {
                eprintln!(
                    "cusafe fuzz: warning: cannot re-run an input to confirm its finding: {e}"
                );
                None
            }
        }
    }

    /// Findings of a tainted process that a fresh run did not reproduce.
    pub fn unreproduced(&self) -> u64 {
        self.unreproduced
    }

    /// A timeout counts only when a fresh one-off run of the input, given
    /// [`TIMEOUT_CONFIRM_FACTOR`] times the time, also runs out of it (as AFL++
    /// confirms hangs). A persistent process that is replaced pays CUDA's start-up
    /// inside its first input's time, which a loaded machine can stretch past the
    /// timeout: measured on an H100 with 18 campaigns sharing 16 cores, 4 false
    /// timeouts in 7.5 minutes on bug-free targets.
    fn confirm_timeout(&mut self, input: &[u8]) -> Option<Finding> {
        self.unconfirmed_timeouts += 1;
        let again = self.rerun(input, "timeout");
        match again {
            Ok(o) if o.timed_out => {
                self.unconfirmed_timeouts -= 1;
                Some(Finding::from_end("timeout", "timeout"))
            }
            Ok(o) => o.reports.primary().cloned(),
            Err(e) => {
                eprintln!("cusafe fuzz: warning: cannot re-run a timed-out input: {e}");
                None
            }
        }
    }

    /// A crash without a report. In a persistent process the report may have been
    /// printed by an earlier input (recover mode reports a site once per process) and
    /// this input's fault followed it: a fresh one-off run says which finding it is.
    fn explain_crash(&mut self, input: &[u8]) -> Option<Finding> {
        let plain = Finding::from_end("crash", "signal");
        if self.target.delivery != Delivery::Shared {
            return Some(plain);
        }
        match self.rerun(input, "crash") {
            Ok(o) => Some(o.finding().unwrap_or(plain)),
            Err(_) => Some(plain),
        }
    }

    /// A fresh one-off run of `input` with [`TIMEOUT_CONFIRM_FACTOR`] times the
    /// timeout, its files under `work/<dir>`.
    fn rerun(&mut self, input: &[u8], dir: &str) -> crate::Result<runner::Outcome> {
        let work = self.reader.files().dir().join(dir);
        let timeout = self.timeout * TIMEOUT_CONFIRM_FACTOR;
        runner::run(&self.target, input, &work, timeout, &[], &mut self.sym)
    }

    /// Timeouts that a second, longer run did not confirm.
    pub fn unconfirmed_timeouts(&self) -> u64 {
        self.unconfirmed_timeouts
    }
}

/// How much longer the confirming run of a timed-out input may take.
pub const TIMEOUT_CONFIRM_FACTOR: u32 = 4;

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
