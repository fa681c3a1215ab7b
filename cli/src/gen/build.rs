//! `cusafe gen build`: generates a batch (COUNT programs, PER_FILE to a file) and
//! builds every file plain and with cusafe at each optimisation level, in parallel.
//! With `--device-only` (CI, no GPU) each file is only compiled through the pass with
//! the LLVM verifier on and ptxas run, at each level.
//!
//! The batch directory:
//! - `src/fNNN.cu`, the sources (compiled from the batch directory, so reports name
//!   `src/fNNN.cu`);
//! - `manifest.json`: the recipe, each file's seeds and planted bugs;
//! - `bin/fNNN.{plain,cusafe}.O<n>` (or `obj/` for device-only builds);
//! - `build.json`: every build's result and time, the pass's counters summed, and the
//!   programs of each failing build that fail alone (each program is built alone to
//!   find them), with the cause (`ptxas crashed` or the first error line);
//! - `failures/<seed>-<build>/`: each failing build's program reduced (`reduced.cu`,
//!   `reduced.json`, the compiler's `stderr.txt`), with the seed; a program that fails
//!   the same way in another build is reduced once (the other holds `same-as`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::write::{put, source};
use super::RecipeArgs;

/// `cusafe gen build`'s arguments.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The batch directory (created).
    #[arg(short, long)]
    pub out: PathBuf,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Programs.
    #[arg(long, default_value_t = 100)]
    pub count: u64,
    /// Programs per file (one binary runs them all, or one by index).
    #[arg(long, default_value_t = 25)]
    pub per_file: u64,
    /// What to generate.
    #[command(flatten)]
    pub recipe: RecipeArgs,
    /// Optimisation levels.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2,3")]
    pub opt: Vec<u8>,
    /// Only compile device code through the pass (verifier and ptxas), no binaries.
    #[arg(long)]
    pub device_only: bool,
    /// No plain builds (planted batches need only the cusafe ones).
    #[arg(long)]
    pub no_plain: bool,
    /// Parallel compiler runs.
    #[arg(short, long, default_value_t = 2)]
    pub jobs: usize,
    /// The compiler driver (default: cusafe-clang++ beside this executable).
    #[arg(long)]
    pub cxx: Option<PathBuf>,
    /// Do not reduce failing builds.
    #[arg(long)]
    pub no_reduce: bool,
}

/// One file of the batch, as `manifest.json` lists it.
#[derive(Debug, Serialize, Deserialize)]
pub struct FileEntry {
    /// Name without extension (`f000`).
    pub name: String,
    /// Seeds of its programs, in index order.
    pub seeds: Vec<u64>,
    /// Its planted bugs.
    pub plants: Vec<cusafe_gen::emit::PlantSite>,
}

/// `manifest.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// `--emi`, if any (`dead` or `live`).
    pub emi: Option<String>,
    /// Bug mode.
    pub plant: bool,
    /// `--kernels` it was generated with.
    pub kernels: u32,
    /// `--statements` it was generated with.
    pub statements: u32,
    /// The files.
    pub files: Vec<FileEntry>,
}

/// One compiler run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    /// File name (`f000`).
    pub file: String,
    /// `plain` or `cusafe`.
    pub flavor: String,
    /// Optimisation level.
    pub opt: u8,
    /// It built.
    pub ok: bool,
    /// Seconds it took.
    pub seconds: f64,
    /// The binary or object (relative to the batch directory).
    pub output: String,
}

/// A program that fails to build on its own, found by building each program of a
/// failing file alone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramFailure {
    /// The program's seed.
    pub seed: u64,
    /// Its file (`f000`).
    pub file: String,
    /// `plain` or `cusafe`.
    pub flavor: String,
    /// Optimisation level.
    pub opt: u8,
    /// What failed: `ptxas crashed` or the compiler's first error line.
    pub cause: String,
}

/// `build.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct BuildReport {
    /// Every compiler run.
    pub jobs: Vec<Job>,
    /// The pass's counters (`CUSAFE_PASS_STATS`), summed per optimisation level.
    pub stats: BTreeMap<String, BTreeMap<String, u64>>,
    /// The programs of failing builds that fail alone.
    #[serde(default)]
    pub failed_programs: Vec<ProgramFailure>,
    /// Failing builds, reduced (directories under `failures/`).
    pub failures: Vec<String>,
}

/// The driver to use.
fn cxx(a: &Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(c) = a {
        return Ok(c.clone());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let c = exe.with_file_name("cusafe-clang++");
    if c.exists() {
        Ok(c)
    } else {
        Err(format!(
            "{} is missing; build it (scripts/build.sh) or pass --cxx",
            c.display()
        ))
    }
}

/// The compiler command of one build of `src` (relative to `dir`) into `output`.
fn command(
    cxx: &Path,
    dir: &Path,
    src: &str,
    flavor: &str,
    opt: u8,
    device_only: bool,
    output: &str,
) -> Command {
    let mut c = Command::new(cxx);
    c.current_dir(dir);
    if flavor == "plain" {
        c.arg("--cusafe-no-instrument");
    }
    // Line tables only: reports need lines, and full -g would also turn ptxas's
    // optimisations off. No PTX in the fatbinary: the cubin is for the GPU at hand,
    // and the batch stays small enough to carry.
    c.arg(format!("-O{opt}"))
        .arg("-gline-tables-only")
        .arg("--no-cuda-include-ptx=all")
        // A ptxas crash is recorded in build.json; no reproducer files in /tmp.
        .arg("-fno-crash-diagnostics");
    if device_only {
        c.args(["--cuda-device-only", "-c"]);
        c.env(cusafe_format::pass_env::VERIFY, "1");
    }
    c.env(cusafe_format::pass_env::STATS, "1");
    c.arg(src).arg("-o").arg(output);
    c
}

/// Runs one build; returns success, seconds and the compiler's standard error.
fn compile(mut c: Command) -> Result<(bool, f64, String), String> {
    let t = Instant::now();
    let out = c
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", c.get_program()))?;
    Ok((
        out.status.success(),
        t.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Adds the counters of `CUSAFE_PASS_STATS` lines (`N label, M label, ...`) to `into`.
pub fn add_stats(stderr: &str, into: &mut BTreeMap<String, u64>) {
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix("cusafe: kernel ") else {
            continue;
        };
        *into.entry("kernels".into()).or_default() += 1;
        let Some((_, counters)) = rest.split_once(": ") else {
            continue;
        };
        for part in counters.split([',', '(', ';']) {
            let part = part.trim().trim_end_matches(')');
            let mut words = part.splitn(2, ' ');
            if let (Some(n), Some(label)) = (words.next(), words.next()) {
                if let Ok(n) = n.parse::<u64>() {
                    let label = label.split(" (").next().unwrap_or(label).trim();
                    *into.entry(label.to_string()).or_default() += n;
                }
            }
        }
    }
}

/// Runs `cusafe gen build`.
pub fn run(a: &BuildArgs) -> Result<u8, String> {
    if a.count == 0 || a.per_file == 0 {
        return Err("--count and --per-file must be at least 1".into());
    }
    if a.opt.iter().any(|&o| o > 3) {
        return Err("--opt takes levels 0 to 3, e.g. --opt 0,1,2,3".into());
    }
    let cxx = cxx(&a.cxx)?;
    let dir = &a.out;
    for sub in ["src", "bin", "obj", "failures"] {
        std::fs::create_dir_all(dir.join(sub))
            .map_err(|e| format!("cannot create {}: {e}", dir.join(sub).display()))?;
    }
    let mut manifest = Manifest {
        emi: a.recipe.emi.map(|e| format!("{e:?}").to_lowercase()),
        plant: a.recipe.plant,
        kernels: a.recipe.kernels,
        statements: a.recipe.statements,
        files: Vec::new(),
    };
    let mut programs = BTreeMap::new();
    let mut first = a.seed;
    let last = a
        .seed
        .checked_add(a.count)
        .ok_or("--seed plus --count overflows")?;
    while first < last {
        let end = (first + a.per_file).min(last);
        let name = format!("f{:03}", manifest.files.len());
        let (progs, src) = source(first..end, &a.recipe);
        put(&dir.join("src").join(format!("{name}.cu")), &src.text)?;
        programs.insert(name.clone(), progs);
        manifest.files.push(FileEntry {
            name,
            seeds: (first..end).collect(),
            plants: src.plants,
        });
        first = end;
    }
    put(
        &dir.join("manifest.json"),
        &serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?,
    )?;
    let flavors: &[&str] = if a.no_plain || a.device_only {
        &["cusafe"]
    } else {
        &["plain", "cusafe"]
    };
    let mut todo = Vec::new();
    for f in &manifest.files {
        for &flavor in flavors {
            for &opt in &a.opt {
                todo.push((f.name.clone(), flavor.to_string(), opt));
            }
        }
    }
    let total = todo.len();
    let queue = Mutex::new(todo);
    let report = Mutex::new(BuildReport::default());
    let stderrs = Mutex::new(BTreeMap::new());
    let error = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..a.jobs.max(1) {
            s.spawn(|| loop {
                let Some((file, flavor, opt)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let output = if a.device_only {
                    format!("obj/{file}.{flavor}.O{opt}.o")
                } else {
                    format!("bin/{file}.{flavor}.O{opt}")
                };
                let src = format!("src/{file}.cu");
                let c = command(&cxx, dir, &src, &flavor, opt, a.device_only, &output);
                match compile(c) {
                    Ok((ok, seconds, stderr)) => {
                        let mut r = report.lock().unwrap();
                        if flavor == "cusafe" {
                            add_stats(&stderr, r.stats.entry(format!("O{opt}")).or_default());
                        }
                        if !ok {
                            stderrs
                                .lock()
                                .unwrap()
                                .insert((file.clone(), flavor.clone(), opt), stderr);
                        }
                        r.jobs.push(Job {
                            file,
                            flavor,
                            opt,
                            ok,
                            seconds,
                            output,
                        });
                        let done = r.jobs.len();
                        if done % 10 == 0 || done == total {
                            eprintln!("cusafe gen build: {done}/{total} builds");
                        }
                    }
                    Err(e) => {
                        *error.lock().unwrap() = Some(e);
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().unwrap() {
        return Err(e);
    }
    let mut report = report.into_inner().unwrap();
    report
        .jobs
        .sort_by(|x, y| (&x.file, &x.flavor, x.opt).cmp(&(&y.file, &y.flavor, y.opt)));
    let mut reduced = Vec::new();
    for ((file, flavor, opt), stderr) in stderrs.into_inner().unwrap() {
        eprintln!(
            "cusafe gen build: {file} ({flavor}, -O{opt}) failed:\n{}",
            tail(&stderr)
        );
        let build = Build {
            cxx: &cxx,
            dir,
            flavor: &flavor,
            opt,
            device_only: a.device_only,
        };
        let alone = isolate(&build, &programs[&file])?;
        if alone.is_empty() {
            eprintln!("cusafe gen build: no program of {file} fails alone (-O{opt})");
        }
        for (p, err) in &alone {
            report.failed_programs.push(ProgramFailure {
                seed: p.seed,
                file: file.clone(),
                flavor: flavor.clone(),
                opt,
                cause: cause(err),
            });
        }
        if let (false, Some((p, err))) = (a.no_reduce, alone.first()) {
            report
                .failures
                .push(reduce_failure(&build, p, err, &mut reduced)?);
        }
    }
    put(
        &dir.join("build.json"),
        &serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?,
    )?;
    let failed = report.jobs.iter().filter(|j| !j.ok).count();
    let secs: f64 = report.jobs.iter().map(|j| j.seconds).sum();
    println!(
        "cusafe gen build: {} programs in {} files, {} builds, {failed} failed, {secs:.0} s of compiler time",
        a.count,
        manifest.files.len(),
        report.jobs.len()
    );
    let mut seeds: Vec<u64> = report.failed_programs.iter().map(|f| f.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    if !seeds.is_empty() {
        let crashes = report
            .failed_programs
            .iter()
            .filter(|f| f.cause == PTXAS_CRASH)
            .count();
        println!(
            "  {} programs fail alone in some build (seeds {seeds:?}); {crashes} of {} such builds are ptxas crashes",
            seeds.len(),
            report.failed_programs.len()
        );
    }
    for (level, s) in &report.stats {
        println!(
            "  {level}: {} kernels, {} checks",
            s.get("kernels").unwrap_or(&0),
            s.get("checks").unwrap_or(&0)
        );
    }
    Ok(u8::from(failed > 0))
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// The first `error` line of a compiler's output: what must stay the same while the
/// program shrinks.
fn first_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or("")
        .to_string()
}

/// What `cause` says when ptxas itself crashed: a fault of ptxas, not of the program.
pub const PTXAS_CRASH: &str = "ptxas crashed";

/// What went wrong in a failing build: [`PTXAS_CRASH`] or the first error line.
fn cause(stderr: &str) -> String {
    if stderr.contains("ptxas command failed due to signal") {
        PTXAS_CRASH.to_string()
    } else {
        first_error(stderr)
    }
}

/// One build configuration, applied to single programs in `scratch`.
struct Build<'a> {
    cxx: &'a Path,
    dir: &'a Path,
    flavor: &'a str,
    opt: u8,
    device_only: bool,
}

impl Build<'_> {
    /// Builds `p` alone; returns success and the compiler's standard error.
    fn one(&self, p: &cusafe_gen::Program) -> Result<(bool, String), String> {
        let scratch = self.dir.join("failures").join("scratch");
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
        let text = cusafe_gen::emit::file(std::slice::from_ref(p)).text;
        put(&scratch.join("c.cu"), &text)?;
        let out = if self.device_only { "c.o" } else { "c.bin" };
        let c = command(
            self.cxx,
            &scratch,
            "c.cu",
            self.flavor,
            self.opt,
            self.device_only,
            out,
        );
        let (ok, _, stderr) = compile(c)?;
        Ok((ok, stderr))
    }
}

/// The programs of a failing file that fail alone, each with the compiler's output.
fn isolate<'p>(
    b: &Build,
    progs: &'p [cusafe_gen::Program],
) -> Result<Vec<(&'p cusafe_gen::Program, String)>, String> {
    let mut failing = Vec::new();
    for p in progs {
        let (ok, stderr) = b.one(p)?;
        if !ok {
            failing.push((p, stderr));
        }
    }
    Ok(failing)
}

/// Reduces a program that fails alone while the same first error line recurs, and
/// saves it under `failures/`; returns the directory's name.
fn reduce_failure(
    b: &Build,
    p: &cusafe_gen::Program,
    stderr: &str,
    done: &mut Vec<(u64, String, String)>,
) -> Result<String, String> {
    let want = first_error(stderr);
    let name = format!("{}-{}-O{}", p.seed, b.flavor, b.opt);
    let out = b.dir.join("failures").join(&name);
    if let Some((_, _, earlier)) = done.iter().find(|(s, e, _)| *s == p.seed && *e == want) {
        // The same program failed the same way in another build: reduced once.
        std::fs::create_dir_all(&out)
            .map_err(|e| format!("cannot create {}: {e}", out.display()))?;
        put(&out.join("stderr.txt"), stderr)?;
        put(&out.join("same-as"), &format!("{earlier}\n"))?;
        return Ok(name);
    }
    let mut err = None;
    let (small, tests) = cusafe_gen::reduce::reduce(p, |c| match b.one(c) {
        Ok((ok, e)) => !ok && first_error(&e) == want,
        Err(e) => {
            err = Some(e);
            false
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    done.push((p.seed, want, name.clone()));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let (_, stderr) = b.one(&small)?;
    put(
        &out.join("reduced.cu"),
        &cusafe_gen::emit::file(std::slice::from_ref(&small)).text,
    )?;
    put(
        &out.join("reduced.json"),
        &serde_json::to_string_pretty(&small).map_err(|e| e.to_string())?,
    )?;
    put(&out.join("stderr.txt"), &stderr)?;
    put(&out.join("seed"), &format!("{}\n", p.seed))?;
    eprintln!(
        "cusafe gen build: program {} reduced in {tests} tests: {}",
        p.seed,
        out.display()
    );
    Ok(name)
}
