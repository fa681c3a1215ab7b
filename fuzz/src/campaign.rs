//! One client's campaign: LibAFL's fork-server executor over the target, host and
//! device edges as two map observers (both feed the corpus, counted apart), the
//! [`Oracle`] as the objective, havoc and token mutations, a stage of number changes for
//! text formats, and the loop that prints
//! the status line and writes the statistics.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cusafe_format::fuzz::{DEVICE_MAP_BYTES, DEVICE_MAP_OFFSET, HOST_MAP_BYTES, MAP_BYTES};
use libafl::corpus::{CachedOnDiskCorpus, Corpus, InMemoryCorpus};
use libafl::events::{
    EventFirer, EventReceiver, EventRestarter, ProgressReporter, SendExiting, SimpleEventManager,
};
use libafl::executors::forkserver::ForkserverExecutor;
use libafl::executors::StdChildArgs;
use libafl::feedbacks::{MapFeedbackMetadata, MaxMapFeedback, TimeFeedback};
use libafl::fuzzer::{Fuzzer, HasObjective, StdFuzzer};
use libafl::inputs::BytesInput;
use libafl::monitors::NopMonitor;
use libafl::mutators::{havoc_mutations, tokens_mutations, HavocScheduledMutator, Tokens};
use libafl::observers::{CanTrack, HitcountsMapObserver, StdMapObserver, TimeObserver};
use libafl::schedulers::{IndexesLenTimeMinimizerScheduler, QueueScheduler};
use libafl::stages::StdMutationalStage;
use libafl::state::{HasCorpus, HasExecutions, HasImported, HasSolutions, StdState};
use libafl::{feedback_or, HasMetadata, HasNamedMetadata};
use libafl_bolts::rands::StdRand;
use libafl_bolts::shmem::{ShMem, ShMemProvider, UnixShMemProvider};
use libafl_bolts::tuples::{tuple_list, Merge};
use libafl_bolts::{current_nanos, StdTargetArgs};

use crate::crashes::Crashes;
use crate::env::{self, ReportFiles};
use crate::finding::Reader;
use crate::memcheck::Memcheck;
use crate::numbers::AsciiNumberMutator;
use crate::oracle::{Baseline, Novelty, Oracle};
use crate::outdir::OutDir;
use crate::stats::Snapshot;
use crate::target::{Delivery, Target};
use crate::{Error, Result};

/// Names of the two coverage observers (and of their feedbacks' metadata).
pub const HOST_EDGES: &str = "host-edges";
/// See [`HOST_EDGES`].
pub const DEVICE_EDGES: &str = "device-edges";

/// A campaign's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Seed directories.
    pub inputs: Vec<PathBuf>,
    /// The output directory.
    pub out: OutDir,
    /// Timeout of one execution.
    pub timeout: Duration,
    /// Stop after this long.
    pub max_time: Option<Duration>,
    /// Stop after this many executions.
    pub max_execs: Option<u64>,
    /// An AFL-style dictionary (`name="token"` lines).
    pub dict: Option<PathBuf>,
    /// How often the status line and `stats.json` are refreshed.
    pub stats_every: Duration,
    /// Print only the final summary.
    pub quiet: bool,
    /// The baseline oracle: compute-sanitizer's path.
    pub memcheck: Option<String>,
    /// Let the target print to the terminal.
    pub debug_child: bool,
    /// The random seed (default: from the clock).
    pub seed: Option<u64>,
    /// The GPU this client's targets see (`CUDA_VISIBLE_DEVICES`), `None`: all.
    pub visible_device: Option<usize>,
}

/// What a client did.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The last statistics.
    pub stats: Snapshot,
    /// Saved findings of this run: (key, directory).
    pub saved: Vec<(String, PathBuf)>,
    /// memcheck runs (baseline).
    pub memcheck_runs: u64,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: i32) {
    STOP.store(true, Ordering::Relaxed);
}

/// Ctrl-C ends the loop cleanly (statistics and plot are written).
pub fn stop_on_interrupt() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc_signal(on_interrupt);
    }
}

unsafe fn libc_signal(h: extern "C" fn(i32)) {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    // SA_RESTART: a read from the fork server that the signal interrupts goes on (it
    // ended the campaign with EINTR, and without its statistics, when `timeout -s INT`
    // stopped 18 campaigns at once on the GPU machine).
    let action = SigAction::new(SigHandler::Handler(h), SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: see stop_on_interrupt.
    let _ = unsafe { sigaction(Signal::SIGINT, &action) };
}

fn covered(state: &impl HasNamedMetadata, name: &str) -> usize {
    state
        .named_metadata::<MapFeedbackMetadata<u8>>(name)
        .map_or(0, |m| m.num_covered_map_indexes)
}

fn load_tokens(dict: &Option<PathBuf>) -> Result<Tokens> {
    let mut t = Tokens::new();
    if let Some(d) = dict {
        t.add_from_file(d).map_err(|e| {
            Error::Usage(format!(
                "cannot read the dictionary {} ({e}): it takes AFL-style lines name=\"token\"",
                d.display()
            ))
        })?;
    }
    Ok(t)
}

fn check_inputs(inputs: &[PathBuf]) -> Result<()> {
    for d in inputs {
        let n = std::fs::read_dir(d)
            .map_err(|e| Error::io(format!("cannot read the seed directory {}", d.display()), e))?
            .flatten()
            .filter(|e| e.path().is_file())
            .count();
        if n == 0 {
            return Err(Error::Usage(format!(
                "no seeds in {}: put at least one input file there (even a one-byte file)",
                d.display()
            )));
        }
    }
    Ok(())
}

/// Runs one client's campaign until a limit or Ctrl-C.
pub fn run(target: &Target, s: &Settings, client: usize) -> Result<Summary> {
    let mgr = SimpleEventManager::new(NopMonitor::new());
    run_with(target, s, client, mgr)
}

/// [`run`] with a given event manager (the launcher's, for several clients).
pub fn run_with<EM>(target: &Target, s: &Settings, client: usize, mut mgr: EM) -> Result<Summary>
where
    EM: EventFirer<BytesInput, ClientState>
        + EventReceiver<BytesInput, ClientState>
        + EventRestarter<ClientState>
        + ProgressReporter<ClientState>
        + SendExiting,
{
    check_inputs(&s.inputs)?;
    s.out.create(client)?;
    let files = ReportFiles::new(s.out.work(client));
    let persistent = target.delivery == Delivery::Shared;

    let mut provider = UnixShMemProvider::new().map_err(Error::from)?;
    let mut shmem = provider.new_shmem(MAP_BYTES).map_err(Error::from)?;
    // SAFETY: the client is single-threaded here; the executor reads the variable from
    // this process's environment and the target inherits it.
    unsafe { shmem.write_to_env("__AFL_SHM_ID") }.map_err(Error::from)?;
    let map_ptr = shmem.as_mut_ptr();
    // SAFETY: both slices lie inside the shared map, which outlives the campaign.
    let (host, device) = unsafe {
        (
            std::slice::from_raw_parts_mut(map_ptr, HOST_MAP_BYTES),
            std::slice::from_raw_parts_mut(map_ptr.add(DEVICE_MAP_OFFSET), DEVICE_MAP_BYTES),
        )
    };
    // SAFETY: the slices stay valid for the observers' lifetime (this function).
    let host_obs =
        unsafe { HitcountsMapObserver::new(StdMapObserver::new(HOST_EDGES, host)).track_indices() };
    let device_obs = unsafe { StdMapObserver::new(DEVICE_EDGES, device) };
    let time_obs = TimeObserver::new("time");

    let mut feedback = feedback_or!(
        MaxMapFeedback::new(&host_obs),
        MaxMapFeedback::new(&device_obs),
        TimeFeedback::new(&time_obs)
    );
    let baseline = s.memcheck.as_ref().map(|p| Baseline {
        memcheck: Memcheck::new(p.clone(), s.timeout * 20),
        // SAFETY: the map outlives the oracle (both live in this function).
        novelty: unsafe { Novelty::new(map_ptr, MAP_BYTES) },
    });
    let me = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "cusafe".into());
    let replay = format!("exec {me} fuzz replay \"{{dir}}\"");
    let mut objective = Oracle::new(
        target.clone(),
        Reader::new(files.clone()),
        Crashes::open(s.out.crashes()),
        baseline,
        replay,
        s.quiet,
        s.timeout,
    );
    let mut state: ClientState = StdState::new(
        StdRand::with_seed(s.seed.unwrap_or_else(current_nanos) ^ client as u64),
        CachedOnDiskCorpus::new(s.out.queue(client), 4096)?,
        InMemoryCorpus::new(),
        &mut feedback,
        &mut objective,
    )?;
    let scheduler = IndexesLenTimeMinimizerScheduler::new(&host_obs, QueueScheduler::new());
    let mut fuzzer = StdFuzzer::new(scheduler, feedback, objective);

    let mut tokens = load_tokens(&s.dict)?;
    let mut builder = ForkserverExecutor::builder()
        .program(target.program.clone())
        .debug_child(s.debug_child)
        .envs(env::vars(
            &files,
            persistent,
            target.turns,
            s.memcheck.is_none(),
        ))
        .env("AFL_MAP_SIZE", MAP_BYTES.to_string())
        .envs(
            s.visible_device
                .map(|d| ("CUDA_VISIBLE_DEVICES".to_string(), d.to_string())),
        )
        .coverage_map_size(MAP_BYTES)
        .timeout(s.timeout)
        // A persistent child waits between inputs stopped (SIGSTOP), where only SIGKILL
        // reaches it: with LibAFL's default SIGTERM, every campaign's last child stayed
        // behind with its CUDA context, and later campaigns on the GPU ran at ~1 exec/s.
        .kill_signal(nix::sys::signal::Signal::SIGKILL)
        .is_persistent(persistent)
        .autotokens(&mut tokens);
    builder = match target.delivery {
        Delivery::File => builder.parse_afl_cmdline(target.args.clone()),
        Delivery::Stdin => builder.args(target.args.clone()),
        Delivery::Shared => builder
            .args(target.args.clone())
            .shmem_provider(&mut provider),
    };
    let mut executor = builder
        .build(tuple_list!(time_obs, host_obs, device_obs))
        .map_err(|e| Error::Target(format!("cannot start the target's fork server: {e}")))?;
    if !tokens.is_empty() {
        state.add_metadata(tokens);
    }

    state.load_initial_inputs(&mut fuzzer, &mut executor, &mut mgr, &s.inputs)?;
    if state.corpus().count() == 0 {
        // Every seed crashed or timed out: fuzz from them anyway.
        state.load_initial_inputs_forced(&mut fuzzer, &mut executor, &mut mgr, &s.inputs)?;
    }

    let mutator =
        HavocScheduledMutator::with_max_stack_pow(havoc_mutations().merge(tokens_mutations()), 6);
    // Text formats: a stage of single number changes (skips inputs without digits).
    let mut stages = tuple_list!(
        StdMutationalStage::new(mutator),
        StdMutationalStage::new(AsciiNumberMutator)
    );

    let start = Instant::now();
    let mut last_stats = Instant::now();
    let mut last_find = None::<Instant>;
    let mut last_counts = (0usize, 0usize);
    let mode = match target.delivery {
        Delivery::Shared => "persistent",
        Delivery::File => "file",
        Delivery::Stdin => "stdin",
    };
    let snapshot = |state: &ClientState, oracle: &Oracle, last_find: Option<Instant>| Snapshot {
        elapsed_s: start.elapsed().as_secs_f64(),
        execs: *state.executions(),
        execs_per_s: *state.executions() as f64 / start.elapsed().as_secs_f64().max(1e-9),
        corpus: state.corpus().count(),
        imported: *state.imported(),
        host_edges: covered(state, HOST_EDGES),
        device_edges: covered(state, DEVICE_EDGES),
        unique_crashes: oracle.unique(),
        unconfirmed_timeouts: oracle.unconfirmed_timeouts(),
        unreproduced: oracle.unreproduced(),
        since_last_find_s: last_find.map(|t| t.elapsed().as_secs_f64()),
        finds: oracle.finds().to_vec(),
        mode: mode.into(),
    };
    loop {
        if let Err(e) = fuzzer.fuzz_one(&mut stages, &mut executor, &mut state, &mut mgr) {
            // A stop request may still cut a wait short: end as if the loop had.
            if !STOP.load(Ordering::Relaxed) {
                return Err(e.into());
            }
        }
        let counts = (state.corpus().count(), state.solutions().count());
        if counts != last_counts {
            last_counts = counts;
            last_find = Some(Instant::now());
        }
        let done = STOP.load(Ordering::Relaxed)
            || s.max_time.is_some_and(|t| start.elapsed() >= t)
            || s.max_execs.is_some_and(|n| *state.executions() >= n);
        if done || last_stats.elapsed() >= s.stats_every {
            last_stats = Instant::now();
            let snap = snapshot(&state, fuzzer.objective(), last_find);
            snap.write(&s.out.stats(client))?;
            snap.append(&s.out.history(client))?;
            if !s.quiet {
                eprintln!("cusafe fuzz: {}", snap.line());
            }
        }
        if done {
            break;
        }
    }
    mgr.send_exiting()?;
    let stats = snapshot(&state, fuzzer.objective(), last_find);
    Ok(Summary {
        saved: fuzzer.objective().crashes_saved(),
        memcheck_runs: fuzzer.objective().memcheck_runs(),
        stats,
    })
}

/// The state of one client.
pub type ClientState =
    StdState<CachedOnDiskCorpus<BytesInput>, BytesInput, StdRand, InMemoryCorpus<BytesInput>>;
