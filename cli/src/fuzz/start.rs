//! `cusafe fuzz [OPTIONS] -- PROGRAM [ARGS]`: a campaign.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use cusafe_fuzz::campaign::{self, Settings};
use cusafe_fuzz::launch::{self, Spread};
use cusafe_fuzz::outdir::OutDir;
use cusafe_fuzz::target::{DeliveryChoice, Target};
use cusafe_fuzz::{plot, stats, Error, Result};

/// The campaign's options.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// Seed directory (repeatable).
    #[arg(short = 'i', long = "input", value_name = "DIR")]
    pub inputs: Vec<PathBuf>,
    /// Output directory (queue/, crashes/, stats.json, plot.svg).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Timeout of one execution, in milliseconds (a process per input pays CUDA's
    /// start-up, ~0.1-0.5 s, inside it).
    #[arg(short = 't', long, default_value_t = 5000, value_name = "MS")]
    pub timeout: u64,
    /// Stop after this many seconds.
    #[arg(short = 'V', long = "max-time", value_name = "SECONDS")]
    pub max_time: Option<u64>,
    /// Stop after this many executions.
    #[arg(long = "max-execs", value_name = "N")]
    pub max_execs: Option<u64>,
    /// AFL-style dictionary (name="token" lines).
    #[arg(short = 'x', long = "dict", value_name = "FILE")]
    pub dict: Option<PathBuf>,
    /// The program reads its input from standard input (no @@ in its arguments).
    #[arg(long)]
    pub stdin: bool,
    /// One process per input even when the program has a persistent harness.
    #[arg(long = "no-persistent")]
    pub no_persistent: bool,
    /// Inputs per persistent process before it is replaced.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub turns: u32,
    /// Baseline oracle (cuFuzz-style): instead of trusting in-process reports alone, run
    /// every input with new coverage again under this compute-sanitizer.
    #[arg(long, value_name = "COMPUTE_SANITIZER")]
    pub memcheck: Option<String>,
    /// Clients on this machine sharing one corpus through LibAFL's launcher and broker.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub clients: usize,
    /// TCP port of the broker started here (with --clients > 1).
    #[arg(long = "broker-port", default_value_t = 1337, value_name = "PORT")]
    pub broker_port: u16,
    /// Also link this machine's broker to the broker of a campaign on another machine
    /// (its HOST:PORT): corpus entries then flow both ways.
    #[arg(long, value_name = "HOST:PORT")]
    pub broker: Option<std::net::SocketAddr>,
    /// Deal the clients over this many GPUs (client n sees GPU n % N through
    /// CUDA_VISIBLE_DEVICES); default: every client sees every GPU.
    #[arg(long, value_name = "N")]
    pub gpus: Option<usize>,
    /// Seconds between status lines and stats.json updates.
    #[arg(long = "stats-every", default_value_t = 2, value_name = "SECONDS")]
    pub stats_every: u64,
    /// Random seed (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Only the final summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Let the target print to the terminal.
    #[arg(long = "debug-child")]
    pub debug_child: bool,
    /// The program and its arguments, @@ where the input file goes.
    #[arg(last = true, value_name = "PROGRAM")]
    pub command: Vec<String>,
}

/// Runs the campaign; the exit status is 0, or 1 if it found something.
pub fn run(a: &StartArgs) -> Result<u8> {
    if a.inputs.is_empty() {
        return Err(Error::Usage(
            "no seeds: give a seed directory with -i DIR".into(),
        ));
    }
    let out = a
        .out
        .clone()
        .ok_or_else(|| Error::Usage("no output directory: give one with -o DIR".into()))?;
    let choice = DeliveryChoice {
        stdin: a.stdin,
        no_persistent: a.no_persistent,
    };
    cusafe_fuzz::logging::init_from_env()?;
    let target = Target::from_command(&a.command, choice, a.turns)?;
    let out = OutDir::new(out);
    out.create(0)?;
    let json = serde_json::to_string_pretty(&target).unwrap_or_default();
    std::fs::write(out.target_json(), json)
        .map_err(|e| Error::io(format!("cannot write {}", out.target_json().display()), e))?;
    let settings = Settings {
        inputs: a.inputs.clone(),
        out: out.clone(),
        timeout: Duration::from_millis(a.timeout),
        max_time: a.max_time.map(Duration::from_secs),
        max_execs: a.max_execs,
        dict: a.dict.clone(),
        stats_every: Duration::from_secs(a.stats_every.max(1)),
        quiet: a.quiet,
        memcheck: a.memcheck.clone(),
        debug_child: a.debug_child,
        seed: a.seed,
        visible_device: None,
    };
    if a.clients > 1 || a.broker.is_some() {
        let spread = Spread {
            clients: a.clients,
            broker_port: a.broker_port,
            remote_broker: a.broker,
            gpus: a.gpus,
        };
        launch::run(&target, &settings, &spread)?;
        let mut found = 0;
        for c in 1..=a.clients {
            if let Ok(s) = std::fs::read_to_string(out.stats(c)) {
                if let Ok(snap) = serde_json::from_str::<stats::Snapshot>(&s) {
                    eprintln!("cusafe fuzz: client {c}: {}", snap.line());
                    found = found.max(snap.unique_crashes);
                }
            }
        }
        return Ok(u8::from(found > 0));
    }
    campaign::stop_on_interrupt();
    let summary = campaign::run(&target, &settings, 0)?;
    let history = stats::read_history(&out.history(0)).unwrap_or_default();
    let title = format!("cusafe fuzz: {}", target.program.display());
    let _ = std::fs::write(out.plot(), plot::svg(&history, &title));
    eprintln!("cusafe fuzz: done: {}", summary.stats.line());
    for (key, dir) in &summary.saved {
        eprintln!("  {key}\n    {}", dir.display());
    }
    eprintln!(
        "cusafe fuzz: statistics in {}, plot in {}",
        out.stats(0).display(),
        out.plot().display()
    );
    Ok(u8::from(summary.stats.unique_crashes > 0))
}
