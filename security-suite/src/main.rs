//! `cusafe-suite`: turns a GPU run's logs into the found/missed/false-positive table
//! (`score`), and checks a suite's manifest against its programs (`check-manifest`).

use clap::Parser;
use cusafe_suite::manifest::Manifest;
use cusafe_suite::{expect, score};
use std::path::{Path, PathBuf};

/// Scores runs made by scripts/gpu/run-examples.sh; checks suite manifests.
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
        /// JSON rows and totals to write.
        #[arg(long)]
        json: PathBuf,
        /// The suite's manifest (e.g. security-suite/manifest.toml): adds classes,
        /// memory spaces, per-class and per-space totals, and expected misses.
        #[arg(long)]
        manifest: Option<PathBuf>,
        /// Score only the programs the run has a row for in runs.tsv (a run of part of
        /// the suite, such as scripts/gpu/run-multigpu.sh's).
        #[arg(long)]
        ran_only: bool,
    },
    /// Check that a manifest is well formed, lists every program of --src exactly
    /// once, and agrees with each program's cusafe-expect marker.
    CheckManifest {
        /// The manifest (e.g. security-suite/manifest.toml).
        #[arg(long)]
        manifest: PathBuf,
        /// Directory of the programs (e.g. security-suite/programs).
        #[arg(long)]
        src: PathBuf,
    },
}

fn checked(
    manifest: &Path,
    src: &Path,
    prefix: &str,
) -> Result<(Manifest, Vec<expect::Expectation>), String> {
    let m = Manifest::load(manifest)?;
    let expects = expect::from_dir(src, prefix)?;
    if expects.is_empty() {
        return Err(format!(
            "no .cu programs in {}; pass the programs' directory as --src",
            src.display()
        ));
    }
    m.check(&expects).map_err(|e| {
        format!(
            "{} disagrees with the programs in {}:\n{e}",
            manifest.display(),
            src.display()
        )
    })?;
    Ok((m, expects))
}

fn run(cli: Cli) -> Result<(), String> {
    match cli {
        Cli::Score {
            src,
            prefix,
            run,
            md,
            json,
            manifest,
            ran_only,
        } => {
            let (m, expects) = match &manifest {
                Some(path) => {
                    let (m, e) = checked(path, &src, &prefix)?;
                    (Some(m), e)
                }
                None => (None, expect::from_dir(&src, &prefix)?),
            };
            let expects = if ran_only {
                let ran = score::ran(&expects, &run);
                if ran.is_empty() {
                    return Err(format!(
                        "--ran-only: {} has no runs.tsv row for any program of {}; pass the folder the GPU run wrote",
                        run.display(),
                        src.display()
                    ));
                }
                ran
            } else {
                expects
            };
            let rows = score::score_with(&expects, m.as_ref(), &run);
            let env = std::fs::read_to_string(run.join("env.txt")).map_err(|e| {
                format!(
                    "{}: {e}; pass the folder the GPU run wrote (it has env.txt, runs.tsv, logs/)",
                    run.display()
                )
            })?;
            let header = format!("# Suite run\n\n```\n{}\n```", env.trim());
            std::fs::write(&md, score::markdown(&rows, &header))
                .map_err(|e| format!("{}: {e}", md.display()))?;
            std::fs::write(&json, score::json(&rows))
                .map_err(|e| format!("{}: {e}", json.display()))?;
            println!("wrote {} and {}", md.display(), json.display());
        }
        Cli::CheckManifest { manifest, src } => {
            let prefix = src.display().to_string();
            let (m, _) = checked(&manifest, &src, &prefix)?;
            let count = |f: &dyn Fn(&cusafe_suite::manifest::Entry) -> bool| {
                m.entries().filter(|e| f(e)).count()
            };
            let multi = count(&|e| e.devices > 1);
            let multi = if multi > 0 {
                format!(" ({multi} need several GPUs)")
            } else {
                String::new()
            };
            println!(
                "{}: {} programs{multi}: {} bugs ({} spatial, {} temporal; {} in scope, {} out of scope), {} correct; every program has an entry and its marker agrees",
                manifest.display(),
                count(&|_| true),
                count(&|e| e.is_bug()),
                count(&|e| e.class == "spatial"),
                count(&|e| e.class == "temporal"),
                count(&|e| e.is_bug() && e.in_scope),
                count(&|e| !e.in_scope),
                count(&|e| !e.is_bug()),
            );
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run(Cli::parse()) {
        eprintln!("cusafe-suite: error: {e}");
        std::process::exit(2);
    }
}
