//! `cusafe gen check`: runs a built batch (on a machine with a GPU) and judges it.
//!
//! - Clean batches: every binary runs all its programs; each program's checksum lines
//!   must equal the reference's (the plain build at the lowest level, or with
//!   `--against BASE` the base batch's, for EMI variants), and no report may appear.
//!   Each failing program is saved as `failures/<seed>/program.{cu,json}` for
//!   `cusafe gen reduce`.
//! - Planted batches: every cusafe binary runs each program alone (`argv[1]`); the
//!   program is found when a report has the planted kind at the planted line.
//!   `--memcheck N` also runs compute-sanitizer's memcheck on the plain build of the
//!   first N programs, for comparison.
//!
//! Writes `check.json` (every verdict) and prints a summary; exit status 1 when a
//! clean batch shows a difference or report, or a planted bug is missed.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use super::build::{BuildReport, Job, Manifest};
use super::write::put;

/// `cusafe gen check`'s arguments.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The batch directory (`cusafe gen build -o DIR`).
    pub dir: PathBuf,
    /// The base batch an EMI batch must agree with (same seeds).
    #[arg(long)]
    pub against: Option<PathBuf>,
    /// Seconds one run may take.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Runs at the same time.
    #[arg(short, long, default_value_t = 4)]
    pub jobs: usize,
    /// Planted batches: also run compute-sanitizer memcheck on the plain build of the
    /// first N programs.
    #[arg(long, default_value_t = 0)]
    pub memcheck: usize,
    /// The compute-sanitizer to use.
    #[arg(long, default_value = "compute-sanitizer")]
    pub compute_sanitizer: PathBuf,
}

/// How one run ended.
#[derive(Clone, Debug, Serialize)]
struct Run {
    status: Option<i32>,
    timed_out: bool,
    seconds: f64,
    stdout: String,
    stderr: String,
    reports: Vec<Value>,
}

/// Runs `cmd` with `CUSAFE_OPTIONS` writing JSON reports to `<base>.json` (and its
/// output to `<base>.stdout`, `<base>.stderr`), within `timeout`.
fn run_one(mut cmd: Command, base: &Path, timeout: Duration) -> Result<Run, String> {
    let with = |ext: &str| PathBuf::from(format!("{}.{ext}", base.display()));
    let (json, out_path, err_path) = (with("json"), with("stdout"), with("stderr"));
    let json = json.as_path();
    let _ = std::fs::remove_file(json);
    let out = File::create(&out_path)
        .map_err(|e| format!("cannot create {}: {e}", out_path.display()))?;
    let err = File::create(&err_path)
        .map_err(|e| format!("cannot create {}: {e}", err_path.display()))?;
    cmd.env("CUSAFE_OPTIONS", format!("json_path={}", json.display()))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let t = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let (status, timed_out) = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break (s.code(), false);
        }
        if t.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    let reports = read(json)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Ok(Run {
        status,
        timed_out,
        seconds: t.elapsed().as_secs_f64(),
        stdout: read(&out_path),
        stderr: read(&err_path),
        reports,
    })
}

/// Each program's output lines (`p<seed> ...`), by seed.
fn by_program(stdout: &str) -> BTreeMap<u64, Vec<String>> {
    let mut m: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix('p') else {
            continue;
        };
        if let Some(seed) = rest.split(' ').next().and_then(|s| s.parse().ok()) {
            m.entry(seed).or_default().push(line.to_string());
        }
    }
    m
}

/// The program a report belongs to, from its kernel's namespace (`p<seed>::k<n>`).
fn report_seed(r: &Value) -> Option<u64> {
    let k = r.get("kernel")?.as_str()?;
    let start = k.find('p')?;
    k[start + 1..].split("::").next()?.parse().ok()
}

fn load<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(p).map_err(|e| {
        format!(
            "cannot read {}: {e}; is this a batch directory built by `cusafe gen build`?",
            p.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not valid: {e}", p.display()))
}

/// Runs `tasks` on `jobs` threads.
fn parallel<T: Send, R: Send>(tasks: Vec<T>, jobs: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let queue = Mutex::new(tasks.into_iter().enumerate().collect::<Vec<_>>());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let Some((i, t)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let r = f(t);
                done.lock().unwrap().push((i, r));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Runs `cusafe gen check`.
pub fn run(a: &CheckArgs) -> Result<u8, String> {
    let manifest: Manifest = load(&a.dir.join("manifest.json"))?;
    let build: BuildReport = load(&a.dir.join("build.json"))?;
    let runs = a.dir.join("runs");
    std::fs::create_dir_all(&runs).map_err(|e| format!("cannot create {}: {e}", runs.display()))?;
    let bins: Vec<Job> = build
        .jobs
        .into_iter()
        .filter(|j| j.ok && j.output.starts_with("bin/"))
        .collect();
    if bins.is_empty() {
        return Err(format!(
            "{} has no built binaries; build without --device-only",
            a.dir.display()
        ));
    }
    if manifest.plant {
        planted(a, &manifest, &bins, &runs)
    } else {
        clean(a, &manifest, &bins, &runs)
    }
}

#[derive(Serialize)]
struct Difference {
    seed: u64,
    file: String,
    build: String,
    expected: Vec<String>,
    got: Vec<String>,
}

fn build_name(j: &Job) -> String {
    format!("{}.{}.O{}", j.file, j.flavor, j.opt)
}

fn clean(a: &CheckArgs, manifest: &Manifest, bins: &[Job], runs: &Path) -> Result<u8, String> {
    let timeout = Duration::from_secs(a.timeout);
    let results = parallel(bins.to_vec(), a.jobs, |j| {
        let base = runs.join(build_name(&j));
        let r = run_one(Command::new(a.dir.join(&j.output)), &base, timeout);
        (j, r)
    });
    let mut outputs = BTreeMap::new();
    for (j, r) in results {
        outputs.insert(build_name(&j), (j, r?));
    }
    // The reference of each file: the plain build at the lowest level (of the base
    // batch with --against).
    let mut reference: BTreeMap<String, BTreeMap<u64, Vec<String>>> = BTreeMap::new();
    for f in &manifest.files {
        let out = match &a.against {
            Some(base) => {
                let mut levels: Vec<_> = std::fs::read_dir(base.join("runs"))
                    .map_err(|e| format!("cannot read {}/runs: {e}; run `cusafe gen check` on the base batch first", base.display()))?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(&format!("{}.plain.O", f.name)) && n.ends_with(".stdout"))
                    .collect();
                levels.sort();
                let first = levels
                    .first()
                    .ok_or_else(|| format!("{} has no plain run of {}", base.display(), f.name))?;
                std::fs::read_to_string(base.join("runs").join(first)).map_err(|e| e.to_string())?
            }
            None => outputs
                .values()
                .find(|(j, _)| j.file == f.name && j.flavor == "plain")
                .or_else(|| outputs.values().find(|(j, _)| j.file == f.name))
                .map(|(_, r)| r.stdout.clone())
                .unwrap_or_default(),
        };
        reference.insert(f.name.clone(), by_program(&out));
    }
    let mut diffs = Vec::new();
    let mut reports = Vec::new();
    let mut programs = 0;
    for f in &manifest.files {
        programs += f.seeds.len();
        let want = &reference[&f.name];
        for (name, (j, r)) in outputs.iter().filter(|(_, (j, _))| j.file == f.name) {
            let got = by_program(&r.stdout);
            for &seed in &f.seeds {
                let expected = want.get(&seed).cloned().unwrap_or_default();
                let actual = got.get(&seed).cloned().unwrap_or_default();
                if expected.is_empty() || expected != actual {
                    diffs.push(Difference {
                        seed,
                        file: f.name.clone(),
                        build: name.clone(),
                        expected,
                        got: actual,
                    });
                }
            }
            for rep in &r.reports {
                reports.push(serde_json::json!({
                    "build": name, "seed": report_seed(rep), "report": rep,
                }));
            }
            if j.flavor == "cusafe" && r.reports.is_empty() && r.status != Some(0) {
                reports.push(serde_json::json!({
                    "build": name, "seed": null,
                    "report": {"kind": "exit", "status": r.status, "timed_out": r.timed_out,
                               "stderr": r.stderr.lines().rev().take(5).collect::<Vec<_>>()},
                }));
            }
        }
    }
    // A failing program leaves the context broken for the programs after it in the same
    // binary: each of those that printed an error or nothing runs again alone.
    let (diffs, cascaded) = rerun_cascades(a, manifest, &outputs, diffs, &mut reports, runs)?;
    let mut failing: Vec<u64> = diffs.iter().map(|d| d.seed).collect();
    failing.extend(reports.iter().filter_map(|r| r["seed"].as_u64()));
    failing.sort();
    failing.dedup();
    save_failures(a, manifest, &failing)?;
    let reported = !reports.is_empty();
    let summary = serde_json::json!({
        "programs": programs,
        "builds": outputs.len(),
        "runs_seconds": outputs.values().map(|(_, r)| r.seconds).sum::<f64>(),
        "differences": diffs,
        "cascaded_reruns": cascaded,
        "reports": reports,
        "failing_seeds": failing,
    });
    put(
        &a.dir.join("check.json"),
        &serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?,
    )?;
    println!(
        "cusafe gen check: {programs} programs, {} binaries: {} output differences, {} reports, {} failing programs",
        outputs.len(),
        summary["differences"].as_array().map_or(0, |d| d.len()),
        summary["reports"].as_array().map_or(0, |d| d.len()),
        failing.len()
    );
    Ok(u8::from(!failing.is_empty() || reported))
}

/// Runs again, alone, every program that failed after an earlier failure in the same
/// binary (a sticky CUDA error, or a halted run, ends every program after it); keeps
/// the differences that remain and the reports the reruns give. Returns the remaining
/// differences and how many programs were rerun.
fn rerun_cascades(
    a: &CheckArgs,
    manifest: &Manifest,
    outputs: &BTreeMap<String, (Job, Run)>,
    diffs: Vec<Difference>,
    reports: &mut Vec<Value>,
    runs: &Path,
) -> Result<(Vec<Difference>, usize), String> {
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    let index_of = |file: &str, seed: u64| {
        manifest
            .files
            .iter()
            .find(|f| f.name == file)
            .and_then(|f| f.seeds.iter().position(|&s| s == seed))
    };
    for d in &diffs {
        let i = index_of(&d.file, d.seed).unwrap_or(usize::MAX);
        let e = first.entry(d.build.clone()).or_insert(i);
        *e = (*e).min(i);
    }
    let broken =
        |d: &Difference| d.got.is_empty() || d.got.iter().any(|l| l.contains("cuda-error"));
    let mut keep = Vec::new();
    let mut tasks = Vec::new();
    for d in diffs {
        let i = index_of(&d.file, d.seed);
        match (i, outputs.get(&d.build)) {
            (Some(i), Some((j, _))) if broken(&d) && Some(&i) != first.get(&d.build) => {
                tasks.push((d, i, j.clone()))
            }
            _ => keep.push(d),
        }
    }
    let n = tasks.len();
    let timeout = Duration::from_secs(a.timeout);
    let results = parallel(tasks, a.jobs, |(d, i, j)| {
        let mut cmd = Command::new(a.dir.join(&j.output));
        cmd.arg(i.to_string());
        let r = run_one(cmd, &runs.join(format!("{}.{i}.alone", d.build)), timeout);
        (d, r)
    });
    for (mut d, r) in results {
        let r = r?;
        for rep in &r.reports {
            reports.push(serde_json::json!({
                "build": d.build, "seed": report_seed(rep), "report": rep, "alone": true,
            }));
        }
        d.got = by_program(&r.stdout).remove(&d.seed).unwrap_or_default();
        if d.got != d.expected {
            keep.push(d);
        }
    }
    Ok((keep, n))
}

/// Saves each failing seed's program (text and representation) for reduction.
fn save_failures(a: &CheckArgs, manifest: &Manifest, seeds: &[u64]) -> Result<(), String> {
    let recipe = super::RecipeArgs {
        emi: match manifest.emi.as_deref() {
            Some("dead") => Some(super::EmiArg::Dead),
            Some("live") => Some(super::EmiArg::Live),
            _ => None,
        },
        plant: manifest.plant,
        kernels: manifest.kernels,
        statements: manifest.statements,
    };
    for &seed in seeds {
        let p = cusafe_gen::program(seed, &recipe.recipe(seed));
        let d = a.dir.join("failures").join(seed.to_string());
        std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        put(
            &d.join("program.cu"),
            &cusafe_gen::emit::file(std::slice::from_ref(&p)).text,
        )?;
        put(
            &d.join("program.json"),
            &serde_json::to_string_pretty(&p).map_err(|e| e.to_string())?,
        )?;
    }
    Ok(())
}

#[derive(Clone, Debug, Serialize)]
struct PlantVerdict {
    seed: u64,
    file: String,
    build: String,
    space: String,
    fault: String,
    write: bool,
    expected: String,
    line: u32,
    found: bool,
    first: Option<String>,
    status: Option<i32>,
}

fn planted(a: &CheckArgs, manifest: &Manifest, bins: &[Job], runs: &Path) -> Result<u8, String> {
    let timeout = Duration::from_secs(a.timeout);
    let mut tasks = Vec::new();
    for f in &manifest.files {
        for site in &f.plants {
            for j in bins
                .iter()
                .filter(|j| j.file == f.name && j.flavor == "cusafe")
            {
                tasks.push((f.name.clone(), site.clone(), j.clone()));
            }
        }
    }
    let verdicts = parallel(
        tasks,
        a.jobs,
        |(file, site, j)| -> Result<PlantVerdict, String> {
            let name = format!("{}.{}", build_name(&j), site.index);
            let mut cmd = Command::new(a.dir.join(&j.output));
            cmd.arg(site.index.to_string());
            let r = run_one(cmd, &runs.join(&name), timeout)?;
            let src = format!("src/{file}.cu");
            let found = r.reports.iter().any(|rep| {
                rep["kind"] == site.kind.as_str()
                    && rep["line"].as_u64() == Some(u64::from(site.line))
                    && rep["file"].as_str().is_some_and(|f| f.ends_with(&src))
            });
            let first = r.reports.first().map(|rep| {
                format!(
                    "{} at {}:{}",
                    rep["kind"].as_str().unwrap_or("?"),
                    rep["file"].as_str().unwrap_or("?"),
                    rep["line"]
                )
            });
            Ok(PlantVerdict {
                seed: site.seed,
                file,
                build: build_name(&j),
                space: format!("{:?}", site.plant.space),
                fault: format!("{:?}", site.plant.fault),
                write: site.plant.write,
                expected: site.kind.clone(),
                line: site.line,
                found,
                first,
                status: r.status,
            })
        },
    );
    let verdicts: Vec<PlantVerdict> = verdicts.into_iter().collect::<Result<_, _>>()?;
    let memcheck = memcheck(a, manifest, bins, runs)?;
    let found = verdicts.iter().filter(|v| v.found).count();
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for v in &verdicts {
        let e = by_kind
            .entry(format!(
                "{} {} {}",
                v.space,
                v.fault,
                if v.write { "write" } else { "read" }
            ))
            .or_default();
        e.0 += usize::from(v.found);
        e.1 += 1;
    }
    let summary = serde_json::json!({
        "programs": manifest.files.iter().map(|f| f.plants.len()).sum::<usize>(),
        "runs": verdicts.len(),
        "found": found,
        "by_kind": by_kind.iter().map(|(k, (f, n))| serde_json::json!({"kind": k, "found": f, "runs": n})).collect::<Vec<_>>(),
        "misses": verdicts.iter().filter(|v| !v.found).collect::<Vec<_>>(),
        "memcheck": memcheck,
    });
    put(
        &a.dir.join("check.json"),
        &serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?,
    )?;
    println!(
        "cusafe gen check: {} planted runs, {found} found at the right kind and line ({:.1}%)",
        verdicts.len(),
        100.0 * found as f64 / verdicts.len().max(1) as f64
    );
    for v in verdicts.iter().filter(|v| !v.found).take(20) {
        println!(
            "  missed: seed {} {} ({} {} {}) expected {} at line {}, got {}",
            v.seed,
            v.build,
            v.space,
            v.fault,
            if v.write { "write" } else { "read" },
            v.expected,
            v.line,
            v.first.as_deref().unwrap_or("no report")
        );
    }
    Ok(u8::from(found < verdicts.len()))
}

/// compute-sanitizer memcheck on the plain builds of the first `a.memcheck` planted
/// programs: found when it reports an error at the planted line.
fn memcheck(
    a: &CheckArgs,
    manifest: &Manifest,
    bins: &[Job],
    runs: &Path,
) -> Result<Value, String> {
    if a.memcheck == 0 {
        return Ok(Value::Null);
    }
    let mut tasks = Vec::new();
    for f in &manifest.files {
        let Some(j) = bins
            .iter()
            .find(|j| j.file == f.name && j.flavor == "plain")
        else {
            continue;
        };
        for site in &f.plants {
            if tasks.len() < a.memcheck {
                tasks.push((f.name.clone(), site.clone(), j.clone()));
            }
        }
    }
    let timeout = Duration::from_secs(a.timeout.max(300));
    let results = parallel(tasks, a.jobs, |(file, site, j)| -> Result<Value, String> {
        let mut cmd = Command::new(&a.compute_sanitizer);
        cmd.args(["--tool", "memcheck", "--print-limit", "4"])
            .arg(a.dir.join(&j.output))
            .arg(site.index.to_string());
        let name = format!("{}.{}.memcheck", build_name(&j), site.index);
        let r = run_one(cmd, &runs.join(&name), timeout)?;
        let text = format!("{}{}", r.stdout, r.stderr);
        let errors = text.matches("========= Invalid").count()
            + text.matches("========= Malloc/Free error").count();
        // memcheck names the file by its base name.
        let at_line = format!(" {file}.cu:{}", site.line);
        Ok(serde_json::json!({
            "seed": site.seed, "space": format!("{:?}", site.plant.space),
            "fault": format!("{:?}", site.plant.fault), "write": site.plant.write,
            "detected": errors > 0, "at_line": text.contains(&at_line),
        }))
    });
    let results: Vec<Value> = results.into_iter().collect::<Result<_, _>>()?;
    let detected = results.iter().filter(|r| r["detected"] == true).count();
    let at_line = results.iter().filter(|r| r["at_line"] == true).count();
    println!(
        "cusafe gen check: memcheck on {} planted programs: {detected} detected, {at_line} at the planted line",
        results.len()
    );
    Ok(
        serde_json::json!({"runs": results.len(), "detected": detected, "at_line": at_line, "results": results}),
    )
}
