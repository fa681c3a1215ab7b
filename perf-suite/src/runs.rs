//! runs.tsv: one row per run, written by scripts/gpu/run-perf.sh (workload, mode, rep,
//! exit status, wall seconds and the fields of the workload's PERF result line, empty
//! when it printed none). Columns are found by their header names.

/// The columns run-perf.sh writes, in its order.
pub const COLUMNS: [&str; 13] = [
    "workload",
    "mode",
    "rep",
    "rc",
    "wall_s",
    "iters",
    "kernel_ms",
    "per_iter_ms",
    "verified",
    "checksum",
    "peak_mem_mib",
    "metric",
    "value",
];

/// A workload's own figure on its result line (e.g. `tokens_per_s`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Metric {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// The PERF result line of one run (perf-suite/harness.h prints it).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Perf {
    /// Timed passes.
    pub iters: u32,
    /// Kernel time of all timed passes, ms.
    pub kernel_ms: Option<f64>,
    /// Kernel time per pass, ms.
    pub per_iter_ms: f64,
    /// The output matched the workload's reference.
    pub verified: bool,
    /// Checksum of the output (`0x...`; empty when absent).
    pub checksum: String,
    /// Peak device memory the workload used, MiB.
    pub peak_mem_mib: Option<f64>,
    /// The workload's own figure, when it prints one.
    pub metric: Option<Metric>,
}

/// One run: a row of runs.tsv.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Run {
    /// Workload name.
    pub workload: String,
    /// plain, cusafe, noopt or memcheck.
    pub mode: String,
    /// Repetition, from 1.
    pub rep: u32,
    /// Exit status (124: timed out).
    pub rc: i32,
    /// Wall seconds of the whole process.
    pub wall_s: Option<f64>,
    /// The result line; `None` when the run printed none.
    pub perf: Option<Perf>,
}

/// Parses runs.tsv.
pub fn parse(tsv: &str) -> Result<Vec<Run>, String> {
    let mut lines = tsv
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or("runs.tsv is empty")?;
    let cols: Vec<&str> = header.split('\t').map(str::trim).collect();
    for need in ["workload", "mode", "rep", "rc"] {
        if !cols.contains(&need) {
            return Err(format!(
                "runs.tsv: the header has no '{need}' column (is it a run-perf.sh run?): {header}"
            ));
        }
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let get = |name: &str| -> Option<&str> {
            let k = cols.iter().position(|c| *c == name)?;
            f.get(k).map(|s| s.trim()).filter(|s| !s.is_empty())
        };
        let bad =
            |name: &str, v: &str| format!("runs.tsv line {}: {name} '{v}' is not a number", i + 1);
        let int = |name: &str| -> Result<Option<i64>, String> {
            get(name)
                .map(|v| v.parse::<i64>().map_err(|_| bad(name, v)))
                .transpose()
        };
        let float = |name: &str| -> Result<Option<f64>, String> {
            get(name)
                .map(|v| v.parse::<f64>().map_err(|_| bad(name, v)))
                .transpose()
        };
        let workload = get("workload")
            .ok_or_else(|| format!("runs.tsv line {}: no workload", i + 1))?
            .to_string();
        let mode = get("mode")
            .ok_or_else(|| format!("runs.tsv line {}: no mode", i + 1))?
            .to_string();
        let perf = match float("per_iter_ms")? {
            None => None,
            Some(per_iter_ms) => Some(Perf {
                iters: int("iters")?.unwrap_or(0).try_into().unwrap_or(0),
                kernel_ms: float("kernel_ms")?,
                per_iter_ms,
                verified: get("verified") == Some("1"),
                checksum: get("checksum").unwrap_or("").to_string(),
                peak_mem_mib: float("peak_mem_mib")?,
                metric: match (get("metric"), float("value")?) {
                    (Some(name), Some(value)) => Some(Metric {
                        name: name.to_string(),
                        value,
                    }),
                    _ => None,
                },
            }),
        };
        out.push(Run {
            workload,
            mode,
            rep: int("rep")?.unwrap_or(1).try_into().unwrap_or(1),
            rc: int("rc")?
                .ok_or_else(|| format!("runs.tsv line {}: no rc", i + 1))?
                .try_into()
                .unwrap_or(-1),
            wall_s: float("wall_s")?,
            perf,
        });
    }
    Ok(out)
}
