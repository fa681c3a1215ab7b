//! `cusafe gen reduce`: shrinks one program over the generator's representation while
//! a test command (as C-Reduce's interestingness test) still exits 0 on it. The
//! command gets the candidate's CUDA file as its last argument; on a machine with a GPU
//! and the toolchain it can build the candidate plain and with cusafe and compare
//! (`scripts/gen-difftest.sh`).

use std::path::PathBuf;
use std::process::Command;

use clap::Args;

use super::write::put;
use super::RecipeArgs;

/// `cusafe gen reduce`'s arguments.
#[derive(Debug, Args)]
pub struct ReduceArgs {
    /// The program's seed (with the same recipe flags it was generated with).
    #[arg(long, required_unless_present = "from")]
    pub seed: Option<u64>,
    /// Start from a saved representation (`reduced.json`, or `gen write --json`'s
    /// first program) instead of a seed.
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// How it was generated.
    #[command(flatten)]
    pub recipe: RecipeArgs,
    /// The test: a command (run by `sh -c`, with the candidate file appended) that
    /// exits 0 while the candidate still shows the failure.
    #[arg(long)]
    pub test: String,
    /// Output directory (`reduced.cu`, `reduced.json`).
    #[arg(short, long)]
    pub out: PathBuf,
}

/// Runs `cusafe gen reduce`.
pub fn run(a: &ReduceArgs) -> Result<u8, String> {
    let start: cusafe_gen::Program = match (&a.from, a.seed) {
        (Some(path), _) => super::write::load_programs(path)?
            .into_iter()
            .next()
            .ok_or_else(|| format!("{} holds no program", path.display()))?,
        (None, Some(seed)) => cusafe_gen::program(seed, &a.recipe.recipe(seed)),
        (None, None) => return Err("give --seed or --from".into()),
    };
    std::fs::create_dir_all(&a.out)
        .map_err(|e| format!("cannot create {}: {e}", a.out.display()))?;
    let candidate = a.out.join("candidate.cu");
    let mut error = None;
    let mut test = |p: &cusafe_gen::Program| -> bool {
        if error.is_some() {
            return false;
        }
        let text = cusafe_gen::emit::file(std::slice::from_ref(p)).text;
        if let Err(e) = put(&candidate, &text) {
            error = Some(e);
            return false;
        }
        match Command::new("sh")
            .arg("-c")
            .arg(format!("{} \"$0\"", a.test))
            .arg(&candidate)
            .status()
        {
            Ok(s) => s.success(),
            Err(e) => {
                error = Some(format!("cannot run the test command: {e}"));
                false
            }
        }
    };
    if !test(&start) {
        return Err(error.unwrap_or_else(|| {
            "the test command does not call the starting program interesting (exit status not 0); check it on the unreduced program first".into()
        }));
    }
    let (small, tests) = cusafe_gen::reduce::reduce(&start, &mut test);
    if let Some(e) = error {
        return Err(e);
    }
    let text = cusafe_gen::emit::file(std::slice::from_ref(&small)).text;
    put(&a.out.join("reduced.cu"), &text)?;
    put(
        &a.out.join("reduced.json"),
        &serde_json::to_string_pretty(&small).map_err(|e| e.to_string())?,
    )?;
    let _ = std::fs::remove_file(&candidate);
    println!(
        "cusafe gen reduce: {} lines from {} after {tests} tests: {}",
        text.lines().count(),
        cusafe_gen::emit::file(std::slice::from_ref(&start))
            .text
            .lines()
            .count(),
        a.out.join("reduced.cu").display()
    );
    Ok(0)
}
