//! Start-up under the engine: the shared maps and the fork server.
//!
//! The fork server forks before `main`, so every child creates its own CUDA context: a
//! process that has initialised CUDA cannot fork usable children (the driver's state,
//! its threads and the device mappings do not survive `fork`), which is why the
//! server must start in a constructor and why persistent mode keeps one child alive
//! across inputs instead of forking after set-up.

use std::sync::atomic::{AtomicBool, Ordering};

use cusafe_format::fuzz::{DEVICE_MAP_BYTES, DEVICE_MAP_OFFSET, HOST_MAP_BYTES, MAP_BYTES};
use libafl_bolts::shmem::{ShMemProvider, UnixShMemProvider};
use libafl_targets::{
    coverage::{__afl_map_size, EDGES_MAP_PTR, MAX_EDGES_FOUND, SHM_FUZZING},
    map_input_shared_memory, map_shared_memory, start_forkserver, MaybePersistentForkserverParent,
};

use crate::device;

/// Whether this process runs under `cusafe fuzz` (the shared map is mapped).
static UNDER_FUZZER: AtomicBool = AtomicBool::new(false);
/// Whether inputs come through shared memory, many per process (persistent mode).
static PERSISTENT: AtomicBool = AtomicBool::new(false);

/// Whether the engine runs this process.
pub fn under_fuzzer() -> bool {
    UNDER_FUZZER.load(Ordering::Relaxed)
}

/// Whether this process takes many inputs from shared memory.
pub fn persistent() -> bool {
    PERSISTENT.load(Ordering::Relaxed)
}

/// Host guards assigned so far (one per instrumented edge).
pub fn host_edges() -> usize {
    // SAFETY: written only by the guard-init constructors, which ran before.
    unsafe { MAX_EDGES_FOUND }
}

fn fail(msg: &str) -> ! {
    eprintln!("cusafe fuzz target: error: {msg}");
    std::process::exit(2);
}

/// Maps the engine's maps and serves forks; returns in each child (and at once when
/// no engine is there).
pub fn start() {
    if std::env::var_os("__AFL_SHM_ID").is_none() {
        return;
    }
    let mut provider = UnixShMemProvider::new()
        .unwrap_or_else(|e| fail(&format!("cannot open shared memory: {e}")));
    if let Err(e) = map_shared_memory(&mut provider) {
        fail(&format!(
            "cannot map the fuzzer's coverage map ({e}); run the program under `cusafe fuzz`"
        ));
    }
    let edges = host_edges();
    if edges > HOST_MAP_BYTES {
        fail(&format!(
            "{edges} host edges do not fit the {HOST_MAP_BYTES}-entry host map: build only the \
             files under test with --cusafe-fuzz"
        ));
    }
    let persistent = std::env::var("__AFL_PERSISTENT").is_ok_and(|v| v == "1");
    if persistent {
        if let Err(e) = map_input_shared_memory(&mut provider) {
            fail(&format!("cannot map the fuzzer's input buffer ({e})"));
        }
    }
    // SAFETY: single-threaded start-up, before main; the statics belong to
    // libafl_targets and are read by start_forkserver below.
    let map = unsafe {
        __afl_map_size = MAP_BYTES;
        SHM_FUZZING = u32::from(persistent);
        EDGES_MAP_PTR
    };
    // SAFETY: the engine's map holds MAP_BYTES bytes and stays mapped for the process.
    unsafe { device::attach(map.add(DEVICE_MAP_OFFSET), DEVICE_MAP_BYTES) };
    UNDER_FUZZER.store(true, Ordering::Relaxed);
    PERSISTENT.store(persistent, Ordering::Relaxed);
    let mut parent = MaybePersistentForkserverParent::new();
    if let Err(e) = start_forkserver(&mut parent) {
        fail(&format!("fork server: {e}"));
    }
    // In the child: it must not outlive the fork server (which ends when the engine
    // does, even by SIGKILL) with its CUDA context; stopped between inputs, it would
    // ignore any other signal.
    // SAFETY: prctl with PR_SET_PDEATHSIG and a signal number.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
}
