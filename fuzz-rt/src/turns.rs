//! The persistent harness API of `<cusafe/fuzz.h>`: `cusafe_fuzz_loop`,
//! `cusafe_fuzz_data`, `cusafe_fuzz_size` and `cusafe_fuzz_main`.
//!
//! A turn ends at the next `cusafe_fuzz_loop` call: the runtime waits for the device,
//! prints this input's reports and copies the device edges into the engine's map;
//! then the process stops itself (`SIGSTOP`) and the fork server reports the input as
//! done. The engine writes the next input and resumes it. A dead CUDA context (a
//! trap, a fault) cannot run another input: the process aborts and the engine starts
//! a fresh one; the input stays with the engine as a crash.

use std::ffi::{c_char, c_int, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Mutex;

use cusafe_format::fuzz::TURNS_ENV;

use crate::device::{self, Collected};
use crate::input::{self, Source};
use crate::server;

/// Outside the engine, runs the one input this many times in one process and prints
/// the rate: the persistent loop's cost per input without the fuzzer (a benchmark of
/// builds with and without device coverage on the same inputs).
pub const REPEAT_ENV: &str = "CUSAFE_FUZZ_REPEAT";

/// Turns before a persistent process is replaced when `CUSAFE_FUZZ_TURNS` is unset.
pub const DEFAULT_TURNS: u32 = 10_000;

struct Turns {
    started: bool,
    done: u32,
    /// Outside the engine: run the one input this many times (`CUSAFE_FUZZ_REPEAT`).
    repeat: u32,
    since: Option<std::time::Instant>,
    arg: Option<PathBuf>,
    data: Vec<u8>,
}

static STATE: Mutex<Turns> = Mutex::new(Turns {
    started: false,
    done: 0,
    repeat: 1,
    since: None,
    arg: None,
    data: Vec::new(),
});

fn end_turn() {
    if let Collected::ContextLost(rc) = device::collect() {
        eprintln!(
            "cusafe fuzz target: the CUDA context is lost after this input (runtime said {rc}); \
             ending the process so that the fuzzer starts a fresh one"
        );
        // SAFETY: abort ends the process with SIGABRT, a crash to the engine.
        unsafe { libc::abort() };
    }
}

fn next(max_turns: u32) -> bool {
    let mut st = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if st.started {
        end_turn();
        st.done += 1;
        if !server::persistent() {
            if st.done < st.repeat {
                return true;
            }
            if let Some(t) = st.since.filter(|_| st.repeat > 1) {
                let s = t.elapsed().as_secs_f64();
                eprintln!(
                    "cusafe fuzz target: {} runs of one input in {s:.3} s ({:.1} runs/s)",
                    st.done,
                    f64::from(st.done) / s
                );
            }
            return false;
        }
        if st.done >= max_turns.max(1) {
            return false;
        }
        // SAFETY: stops this process until the fork server resumes it with the next
        // input in shared memory.
        unsafe { libc::raise(libc::SIGSTOP) };
        st.data = input::shared();
        return true;
    }
    st.started = true;
    st.repeat = std::env::var(REPEAT_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1u32)
        .max(1);
    st.since = Some(std::time::Instant::now());
    st.data = if server::persistent() {
        input::shared()
    } else {
        match Source::pick(st.arg.take()).read() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("cusafe fuzz target: error: {e}");
                std::process::exit(2);
            }
        }
    };
    true
}

/// Starts the next turn: 1 while there is an input, 0 when the loop is over.
#[no_mangle]
pub extern "C" fn cusafe_fuzz_loop(max_turns: u32) -> c_int {
    c_int::from(next(max_turns))
}

/// The current input's bytes (valid until the next `cusafe_fuzz_loop`).
#[no_mangle]
pub extern "C" fn cusafe_fuzz_data() -> *const u8 {
    STATE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .data
        .as_ptr()
}

/// The current input's length.
#[no_mangle]
pub extern "C" fn cusafe_fuzz_size() -> usize {
    STATE.lock().unwrap_or_else(|e| e.into_inner()).data.len()
}

/// Turns per process: `CUSAFE_FUZZ_TURNS`, else [`DEFAULT_TURNS`].
pub fn turns_from_env() -> u32 {
    std::env::var(TURNS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_TURNS)
}

/// The `main` of `CUSAFE_FUZZ_TARGET`: runs `one` on each input.
///
/// # Safety
/// `argv` holds `argc` valid C strings; `one` is a valid function.
#[no_mangle]
pub unsafe extern "C" fn cusafe_fuzz_main(
    argc: c_int,
    argv: *const *const c_char,
    one: extern "C" fn(*const u8, usize) -> c_int,
) -> c_int {
    if argc > 2 {
        eprintln!(
            "usage: program [INPUT_FILE]  (one input file, or the input on stdin; got {} arguments)",
            argc - 1
        );
        return 2;
    }
    if argc == 2 && !server::persistent() {
        // SAFETY: argv[1] is a valid C string (caller's contract).
        let a = unsafe { CStr::from_ptr(*argv.add(1)) };
        let arg = PathBuf::from(std::ffi::OsStr::from_bytes(a.to_bytes()));
        STATE.lock().unwrap_or_else(|e| e.into_inner()).arg = Some(arg);
    }
    let turns = turns_from_env();
    while next(turns) {
        let (p, n) = (cusafe_fuzz_data(), cusafe_fuzz_size());
        one(p, n);
    }
    0
}
