//! `cusafe gen write`: programs SEED..SEED+COUNT as one CUDA file, and beside a
//! planted file `FILE.plants.json`, where each bug is and what report it should give.

use std::path::{Path, PathBuf};

use clap::Args;
use cusafe_gen::emit::{self, Source};

use super::RecipeArgs;

/// `cusafe gen write`'s arguments.
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// First seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Programs in the file.
    #[arg(long, default_value_t = 1)]
    pub count: u64,
    /// What to generate.
    #[command(flatten)]
    pub recipe: RecipeArgs,
    /// Output file (`-` for standard output).
    #[arg(short, long, default_value = "-")]
    pub output: PathBuf,
    /// Also write each program's representation as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Print saved representations (a `--json` file, or a failure's `reduced.json`)
    /// instead of generating.
    #[arg(long, conflicts_with_all = ["seed", "count"])]
    pub from: Option<PathBuf>,
}

/// The programs saved in `path` (a list, or one program).
pub fn load_programs(path: &Path) -> Result<Vec<cusafe_gen::Program>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str::<Vec<cusafe_gen::Program>>(&text)
        .or_else(|_| serde_json::from_str(&text).map(|p| vec![p]))
        .map_err(|e| {
            format!(
                "{} is not a program's representation ({e}); give the --json file of gen write or a failure's reduced.json",
                path.display()
            )
        })
}

/// The file of programs `seeds` under `recipe`.
pub fn source(
    seeds: std::ops::Range<u64>,
    recipe: &RecipeArgs,
) -> (Vec<cusafe_gen::Program>, Source) {
    let programs: Vec<_> = seeds
        .map(|s| cusafe_gen::program(s, &recipe.recipe(s)))
        .collect();
    let src = emit::file(&programs);
    (programs, src)
}

/// Writes `text` to `path`, or to standard output for `-`.
pub fn put(path: &Path, text: &str) -> Result<(), String> {
    if path == Path::new("-") {
        print!("{text}");
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `cusafe gen write`.
pub fn run(a: &WriteArgs) -> Result<u8, String> {
    if a.count == 0 {
        return Err("--count must be at least 1".into());
    }
    let end = a
        .seed
        .checked_add(a.count)
        .ok_or("--seed plus --count overflows; use a smaller seed")?;
    let (programs, src) = match &a.from {
        Some(path) => {
            let programs = load_programs(path)?;
            let src = emit::file(&programs);
            (programs, src)
        }
        None => source(a.seed..end, &a.recipe),
    };
    put(&a.output, &src.text)?;
    if a.recipe.plant && a.output != Path::new("-") {
        let side = format!("{}.plants.json", a.output.display());
        let json = serde_json::to_string_pretty(&src.plants).map_err(|e| e.to_string())?;
        put(Path::new(&side), &json)?;
    }
    if let Some(j) = &a.json {
        let json = serde_json::to_string_pretty(&programs).map_err(|e| e.to_string())?;
        put(j, &json)?;
    }
    Ok(0)
}
