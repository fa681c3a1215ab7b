//! `cusafe-suite score`: turns a GPU run's logs into the found/missed/false-positive table.

use clap::Parser;
use cusafe_suite::{expect, score};
use std::path::PathBuf;

/// Scores a run made by scripts/gpu/run-examples.sh.
#[derive(Parser)]
#[command(version, about)]
enum Cli {
    /// Score a run directory against the programs' cusafe-expect markers.
    Score {
        /// Directory of the programs (`*.cu` with cusafe-expect markers).
        #[arg(long)]
        src: PathBuf,
        /// How the compiler saw that directory in file names (e.g. `examples`).
        #[arg(long)]
        prefix: String,
        /// Run directory holding logs/ and runs.tsv.
        #[arg(long)]
        run: PathBuf,
        /// Markdown table to write.
        #[arg(long)]
        md: PathBuf,
        /// JSON rows to write.
        #[arg(long)]
        json: PathBuf,
    },
}

fn main() {
    let Cli::Score {
        src,
        prefix,
        run,
        md,
        json,
    } = Cli::parse();
    let result = (|| -> Result<(), String> {
        let expects = expect::from_dir(&src, &prefix)?;
        let rows = score::score(&expects, &run);
        let env = std::fs::read_to_string(run.join("env.txt")).map_err(|e| {
            format!(
                "{}: {e}; pass the folder the GPU run wrote (it has env.txt, runs.tsv, logs/)",
                run.display()
            )
        })?;
        let header = format!("# Suite run\n\n```\n{}\n```", env.trim());
        std::fs::write(&md, score::markdown(&rows, &header))
            .map_err(|e| format!("{}: {e}", md.display()))?;
        let j = serde_json::to_string_pretty(&rows).expect("rows serialise");
        std::fs::write(&json, j).map_err(|e| format!("{}: {e}", json.display()))?;
        println!("wrote {} and {}", md.display(), json.display());
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("cusafe-suite: error: {e}");
        std::process::exit(2);
    }
}
