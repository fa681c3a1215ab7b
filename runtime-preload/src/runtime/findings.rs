//! Findings: the report page polled after hooked calls, host reports, the halt, and
//! the exit check (last poll, leaks, summary, exit status).

use std::backtrace::Backtrace;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::leaks::{self, Decision};
use super::{capture, initialized, Runtime, Wait, LEAKS_SHOWN};
use crate::alloc::BlockTable;
use crate::check::{check_range, ApiRange};
use crate::cuda::real::{
    is_device_fault, CudaError, DEVICE_FAULTS, INVALID_VALUE, NOT_READY, SUCCESS,
};
use crate::report::host::{api_error_report, leak_report};
use crate::report::json::{cuda_error_without_finding, FAULT_WITHOUT_FINDING};
use crate::report::refine::refine;
use crate::report::text::leak_summary;
use crate::report::{Origin, Report};

/// Registered with `atexit` at start-up. With a fuzzer's map attached, the coverage of
/// the last input is collected first (a process per input relies on it; errors are
/// ignored: the exit check follows).
///
/// `exit` may come from one thread while another is inside a hooked CUDA call, holding
/// one of the runtime's locks for as long as that call takes (a wait for a kernel that
/// still runs, say): the exit path waits at most `EXIT_LOCK_WAIT` in all for such a
/// lock, then goes on without what it guards (says so), never deadlocks. Device reports
/// already on the report page are printed (and written as JSON) either way.
pub(super) extern "C" fn at_exit() {
    if let Some(rt) = initialized() {
        let wait = Wait::at_exit();
        super::fuzz::collect_at_exit(wait);
        rt.finish(wait);
    }
}

/// `r` with the device its record came from (`None`: the home device's page).
fn on_device(mut r: Report, from: Option<i32>) -> Report {
    if let Origin::Device { device, .. } = &mut r.origin {
        *device = from;
    }
    r
}

/// A successful launch polls the report page when it is the process's
/// `LAUNCH_POLL_EVERY`-th, `2 * LAUNCH_POLL_EVERY`-th, ... launch
/// ([`Runtime::after_launch`]).
const LAUNCH_POLL_EVERY: u64 = 16;

/// How much of a report page a poll reads.
#[derive(Clone, Copy, Debug)]
enum Scan {
    /// Every slot not taken before.
    All,
    /// From the first slot not taken to the first empty one (`PageReader::poll_new`).
    New,
}

impl Runtime {
    /// Writes a report and counts it. When the process uses several devices (or one
    /// other than device 0), a device report names the home device if it came without
    /// one, and a host report about a buffer says which device the buffer is on.
    fn emit(&self, r: &Report) {
        match self.heap().filter(|h| h.device != 0 || h.sides.any()) {
            Some(h) => {
                let mut r = r.clone();
                match &mut r.origin {
                    Origin::Device { device, .. } => {
                        device.get_or_insert(h.device);
                    }
                    Origin::Host { .. } => {
                        if let Some(b) = &r.buffer {
                            let (id, d) = (b.block.id, b.block.device);
                            r.detail
                                .push_str(&format!(" (buffer #{id} is on device {d})"));
                        }
                    }
                }
                self.sink.emit(&r);
            }
            None => self.sink.emit(r),
        }
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Ends the process with `exitcode`.
    fn halt(&self) -> ! {
        // SAFETY: flushes the program's stdio buffers (its output so far), then ends the
        // process without running exit handlers; the reports were written already.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(self.options.exitcode)
        }
    }

    /// Prints a host-side report with the program's call site; in halt mode the
    /// process ends here.
    pub fn report(&self, mut r: Report) {
        r.call_site = Some(Arc::new(Backtrace::force_capture()));
        self.emit(&r);
        if self.options.halt_on_error {
            self.halt();
        }
    }

    /// Checks the ranges of a copy or set call. `Err` carries the error code the hook
    /// returns (recover mode) instead of making the call.
    pub fn check_ranges(&self, ranges: &[ApiRange]) -> Result<(), CudaError> {
        if self.heap().is_none() {
            return Ok(());
        }
        for range in ranges {
            if let Some(r) = self.with_table(|t| check_range(range, t)) {
                self.report(r);
                return Err(INVALID_VALUE);
            }
        }
        Ok(())
    }

    /// [`Runtime::after_call`] for the hooked call `api`, which returned `err`: with
    /// `report_api_errors=1` an error it returned is reported first (device faults have
    /// their own note; "not ready" is an answer). The report does not halt: the program's
    /// own handling of the error runs as it would without cusafe.
    pub fn after_api(&self, api: &'static str, err: CudaError) -> CudaError {
        self.report_api_error(api, err);
        self.after_call(err)
    }

    /// [`Runtime::after_api`] for the process's `launch`-th launch, which returned
    /// `err`. The report page is read only after a launch that failed and after every
    /// [`LAUNCH_POLL_EVERY`]-th, and then only up to its first empty slot
    /// (`PageReader::poll_new`; every other hooked call reads it all): the host pays
    /// for a launch's poll in a launch-bound program, and the kernel just launched has
    /// rarely run yet. Every synchronising, copying, allocating or freeing call still
    /// polls, so a finding is printed by the program's next such call at the latest.
    pub fn after_launch(&self, api: &'static str, err: CudaError, launch: u64) -> CudaError {
        self.report_api_error(api, err);
        if err != SUCCESS || launch % LAUNCH_POLL_EVERY == 0 {
            self.poll_scan(err, Wait::Block, Scan::New);
        }
        err
    }

    /// With `report_api_errors=1`, reports the error `err` that the hooked call `api`
    /// returned (see [`Runtime::after_api`]).
    fn report_api_error(&self, api: &'static str, err: CudaError) {
        if self.options.report_api_errors
            && err != SUCCESS
            && err != NOT_READY
            && !is_device_fault(err)
        {
            let mut r = api_error_report(api, err);
            r.call_site = Some(Arc::new(Backtrace::force_capture()));
            self.emit(&r);
        }
    }

    /// Polls the report page after a call that returned `err`; returns `err`.
    pub fn after_call(&self, err: CudaError) -> CudaError {
        self.poll(err, Wait::Block);
        err
    }

    /// Reports new device findings; notes a device fault that came without one; halts
    /// after findings in halt mode. The page reader's and the block table's locks are
    /// taken as `wait` says (a record is reported without its buffer when the table
    /// stays busy).
    pub(super) fn poll(&self, err: CudaError, wait: Wait) {
        self.poll_scan(err, wait, Scan::All);
    }

    /// [`Runtime::poll`], reading each report page as `scan` says; all of it after a
    /// device fault, whose note says whether a finding came with it.
    fn poll_scan(&self, err: CudaError, wait: Wait, scan: Scan) {
        let scan = if is_device_fault(err) {
            Scan::All
        } else {
            scan
        };
        let Some((page, reader)) = &self.page else {
            return;
        };
        // The home device's page, then those of the other devices served.
        let sides = self.heap().into_iter().flat_map(|h| h.sides.all());
        let pages = std::iter::once((None, page, reader))
            .chain(sides.filter_map(|s| s.page.as_ref().map(|(p, r)| (Some(s.device), p, r))));
        let (mut records, mut saw_any, mut newly_full) = (Vec::new(), false, false);
        for (device, page, reader) in pages {
            let Some(mut rd) = wait.lock(reader) else {
                self.sink.message(
                    "cusafe: the report page could not be read at exit (another thread held it); device findings not yet printed are lost\n",
                );
                return;
            };
            let was_full = rd.is_full();
            // SAFETY: the page is PAGE_BYTES of pinned memory for the whole process.
            let got = match scan {
                Scan::All => unsafe { rd.poll(page.host()) },
                Scan::New => unsafe { rd.poll_new(page.host()) },
            };
            records.extend(got.into_iter().map(|r| (device, r)));
            saw_any |= rd.saw_any();
            newly_full |= rd.is_full() && !was_full;
        }
        if !records.is_empty() {
            let table = self.heap().map(|h| wait.lock(&h.alloc));
            let busy = matches!(table, Some(None));
            let reports: Vec<_> = match &table {
                Some(Some(a)) => records
                    .iter()
                    .map(|(d, rec)| on_device(refine(rec, a.table()), *d))
                    .collect(),
                _ => {
                    let empty = BlockTable::default();
                    records
                        .iter()
                        .map(|(d, rec)| on_device(refine(rec, &empty), *d))
                        .collect()
                }
            };
            drop(table);
            for mut r in reports {
                if busy {
                    r.detail.push_str(
                        " (buffer unknown: another thread held cusafe's block table when the process exited)",
                    );
                }
                self.emit(&r);
            }
        }
        if newly_full {
            self.sink.message(
                "cusafe: the report page is full (64 findings): later device findings are dropped\n",
            );
        }
        if is_device_fault(err) && !saw_any && !self.fault_noted.swap(true, Ordering::Relaxed) {
            let name = DEVICE_FAULTS
                .iter()
                .find(|&&(c, _)| c == err)
                .map_or("", |&(_, n)| n);
            let mut suspects = self.unsynced_kernel_names();
            if suspects.is_empty() {
                suspects.extend(self.last_kernel_name());
            }
            let which = match suspects.as_slice() {
                [] => String::new(),
                [one] => format!(
                    "; the faulting kernel is {one} (the only kernel launched since the last successful synchronisation)"
                ),
                [.., last] => format!(
                    "; the faulting kernel is one of those launched since the last successful synchronisation: {} (last: {last}); run with CUDA_LAUNCH_BLOCKING=1 to name the one",
                    suspects.join(", ")
                ),
            };
            self.sink.message(&format!(
                "cusafe: note: CUDA error {err} ({name}) came without a cusafe finding{which}: \
                 {FAULT_WITHOUT_FINDING}\n"
            ));
            self.sink.json(&cuda_error_without_finding(
                err,
                name,
                &suspects,
                self.sink.pid(),
            ));
        }
        if !records.is_empty() && self.options.halt_on_error {
            self.halt();
        }
        // Findings came (now or earlier) and the launch still died: in recover mode that is
        // device code built to trap at its first report.
        if saw_any
            && !self.options.halt_on_error
            && is_device_fault(err)
            && !self.fault_noted.swap(true, Ordering::Relaxed)
        {
            self.sink.message(&format!(
                "cusafe: note: the launch ended at a device report (CUDA error {err}) although \
                 halt_on_error=0: device code built without --cusafe-recover stops at its first \
                 report; rebuild it with `cusafe-clang++ --cusafe-recover` to keep going\n"
            ));
        }
    }

    /// The exit check: last poll, leaks, summary; exits with `exitcode` when anything
    /// was reported. Locks are taken as `wait` says.
    fn finish(&self, wait: Wait) {
        if std::process::id() != self.pid {
            return;
        }
        self.poll(SUCCESS, wait);
        let mut leaked = 0;
        let context_died = self.fault_noted.load(Ordering::Relaxed);
        let unchecked = if context_died {
            0
        } else {
            self.device_heap_fallbacks(wait)
        };
        if unchecked > 0 {
            self.sink.message(&format!(
                "cusafe: note: {unchecked} in-kernel allocation(s) (malloc/new in device code) were served by the real device heap, unchecked: larger than the {} MiB arena allows, or the arena was used up; raise CUSAFE_OPTIONS=device_heap_mb\n",
                self.options.device_heap_mb
            ));
        }
        let check = match leaks::decide(self.options.detect_leaks) {
            Decision::Check => true,
            Decision::Skip(why) => {
                if let Some(why) = why {
                    self.trace(1, || why);
                }
                false
            }
        };
        if context_died && check {
            // The program stopped mid-way on a device fault: what it did not free is not news.
            self.sink.message(
                "cusafe: leak check skipped: the CUDA context failed (see the note above)\n",
            );
        }
        let blocks = match (check, context_died, self.heap()) {
            // Blocks whose free was deferred during a stream capture count as freed.
            (true, false, Some(h)) => match (
                wait.lock(&self.kept),
                h.live_blocks(wait),
                capture::deferred_blocks(wait),
            ) {
                (Some(kept), Some(live), Some(deferred)) => Some(
                    live.into_iter()
                        .filter(|b| !kept.contains(&b.ptr) && !deferred.contains(&b.ptr))
                        .collect::<Vec<_>>(),
                ),
                _ => {
                    self.sink.message(
                        "cusafe: leak check skipped: another thread was inside a CUDA call holding cusafe's allocator when the process exited (let the threads doing CUDA work finish before exit to get the leak check)\n",
                    );
                    None
                }
            },
            _ => None,
        };
        if let Some(live) = blocks {
            for b in live.iter().take(LEAKS_SHOWN) {
                self.sink.emit(&leak_report(b));
            }
            if live.len() > LEAKS_SHOWN {
                self.sink.message(&format!(
                    "cusafe: ... and {} more leaked blocks\n",
                    live.len() - LEAKS_SHOWN
                ));
            }
            if !live.is_empty() {
                let bytes = live.iter().map(|b| b.size).sum();
                self.sink
                    .message(&leak_summary(self.sink.pid(), live.len(), bytes));
            }
            leaked = live.len();
        }
        if let (true, Some(stats)) = (
            self.options.verbosity >= 1,
            self.heap().and_then(|h| h.stats(wait)),
        ) {
            self.sink
                .message(&format!("cusafe: exit statistics: {stats:?}\n"));
        }
        if self.errors.load(Ordering::Relaxed) > 0 || leaked > 0 {
            self.halt();
        }
    }
}
