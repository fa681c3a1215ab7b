//! `cusafe-perf`: the table of a perf-suite GPU run (`table`).

use clap::Parser;
use cusafe_perf::{markdown, table};
use std::path::PathBuf;

/// Tables of perf-suite runs made by scripts/gpu/run-perf.sh.
#[derive(Parser)]
#[command(version, about)]
enum Cli {
    /// Per-workload times, ratios, registers, memory and checks, and the summary.
    Table {
        /// Run directory holding env.txt, runs.tsv and logs/. Repeat it for a suite
        /// run split over several device calls (each workload in one of them).
        #[arg(long, required = true)]
        run: Vec<PathBuf>,
        /// Pool a workload's reps over the --run folders that have it (reruns of the
        /// same bundle, e.g. the launch-bound workloads at more reps); without it a
        /// workload may be in one folder only.
        #[arg(long)]
        pool: bool,
        /// The bundle scripts/build-perf.sh built (ptxas.tsv, stats, COMMIT).
        #[arg(long)]
        build: PathBuf,
        /// Markdown to write (default RUN/table.md, the first --run).
        #[arg(long)]
        md: Option<PathBuf>,
        /// JSON to write (default RUN/table.json, the first --run).
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn run(cli: Cli) -> Result<(), String> {
    match cli {
        Cli::Table {
            run,
            pool,
            build,
            md,
            json,
        } => {
            let report = table::load(&run, &build, pool)?;
            let md = md.unwrap_or_else(|| run[0].join("table.md"));
            let json = json.unwrap_or_else(|| run[0].join("table.json"));
            std::fs::write(&md, markdown::render(&report))
                .map_err(|e| format!("{}: {e}", md.display()))?;
            std::fs::write(&json, table::json(&report))
                .map_err(|e| format!("{}: {e}", json.display()))?;
            println!(
                "wrote {} and {} ({} workloads)",
                md.display(),
                json.display(),
                report.rows.len()
            );
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("cusafe-perf: error: {e}");
        std::process::exit(2);
    }
}
