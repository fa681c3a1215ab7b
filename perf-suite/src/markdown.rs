//! The markdown table and summary lines.

use crate::build::NOOPT_DEFAULT;
use crate::table::{describe, Report, Row, COMPARISONS};

/// A time in ms with about four significant digits.
pub fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.1}")
    } else if x >= 10.0 {
        format!("{x:.2}")
    } else if x >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "–".to_string(), f)
}

fn times(x: f64) -> String {
    format!("{x:.3}×")
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn verified(r: &Row, mode: &str) -> &'static str {
    match r.mode(mode) {
        Some(m) if m.runs == 0 => "–",
        Some(m) if m.verified => "✓",
        _ => "✗",
    }
}

fn row(r: &Row) -> String {
    let b = &r.build;
    let usage = |build: &str| b.usage.get(build);
    let regs = |build: &str| usage(build).map_or("?".into(), |u| u.max_registers.to_string());
    let spill = |build: &str| usage(build).map_or("?".into(), |u| u.max_spill_bytes.to_string());
    let checks = |build: &str| b.checks.get(build);
    let check_cell = match (checks("cusafe"), checks("noopt")) {
        (None, None) => "?".to_string(),
        (c, n) => format!(
            "{} ({})",
            c.map_or("?".into(), |c| c.checks.to_string()),
            n.map_or("?".into(), |n| n.checks.to_string())
        ),
    };
    let elim = checks("cusafe").map_or("?".into(), |c| {
        format!("{} / {} / {}", c.proven, c.removed, c.hoisted)
    });
    let mem = |m: Option<f64>| opt(m, |x| format!("{x:.1}"));
    let mut memcheck = opt(r.memcheck.per_iter_ms, ms);
    if let Some(n) = r.memcheck.memcheck_errors.filter(|n| *n > 0) {
        memcheck += &format!(" ({n} errors)");
    }
    let checksum = match r.checksum_match {
        Some(true) => "same",
        Some(false) => "DIFFERS",
        None => "–",
    };
    let status = if r.problems.is_empty() {
        "ok".to_string()
    } else {
        describe(&r.problems)
    };
    let cells = [
        r.workload.clone(),
        opt(r.plain.per_iter_ms, ms),
        opt(r.cusafe.per_iter_ms, ms),
        opt(r.noopt.per_iter_ms, ms),
        opt(r.nvcc.per_iter_ms, ms),
        opt(r.ratio("cusafe/plain"), times),
        opt(r.ratio("noopt/plain"), times),
        opt(r.ratio("cusafe/nvcc"), times),
        opt(r.ratio("preload/plain"), times),
        memcheck,
        opt(r.ratio("memcheck/cusafe"), times),
        format!("{} → {} ({})", regs("plain"), regs("cusafe"), regs("noopt")),
        format!("{} → {}", spill("plain"), spill("cusafe")),
        format!(
            "{} / {}",
            mem(r.plain.peak_mem_mib),
            mem(r.cusafe.peak_mem_mib)
        ),
        check_cell,
        elim,
        format!(
            "{} {} {} {}",
            verified(r, "plain"),
            verified(r, "cusafe"),
            verified(r, "noopt"),
            verified(r, "nvcc")
        ),
        checksum.to_string(),
        status,
    ];
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    format!("| {} |\n", cells.join(" | "))
}

/// What the noopt column is, for the note under the table.
fn noopt_what(env: &str) -> String {
    if env == NOOPT_DEFAULT {
        format!("the cusafe build with check elimination off (`{env}`)")
    } else {
        format!("the cusafe build made with `{env}` (the bundle's NOOPT_ENV)")
    }
}

/// The noopt column's short label, for the summary lines.
fn noopt_short(env: &str) -> String {
    if env == NOOPT_DEFAULT {
        "check elimination off".to_string()
    } else {
        env.to_string()
    }
}

/// The whole markdown document: env.txt as a header, one table, the summary lines.
pub fn render(report: &Report) -> String {
    let mut s = format!("# Perf suite run\n\n```\n{}\n", report.env.trim());
    if let Some(c) = &report.build_commit {
        s += &format!("build COMMIT: {c}\n");
    }
    s += "```\n\n";
    s += "| workload | plain ms | cusafe ms | noopt ms | nvcc ms | cusafe/plain | noopt/plain | cusafe/nvcc | preload/plain | memcheck ms | memcheck/cusafe | registers plain → cusafe (noopt) | spill bytes plain → cusafe | peak MiB plain / cusafe | checks cusafe (noopt) | proven / removed / hoisted | verified plain cusafe noopt nvcc | checksum cusafe vs plain | status |\n";
    s += &format!("|{}\n", "---|".repeat(19));
    for r in &report.rows {
        s += &row(r);
    }
    s += &format!(
        "\nTimes are kernel time per pass (cudaEvents around the timed passes), the median over the repetitions; noopt is {noopt}; nvcc is the workload built on the GPU machine with its nvcc -O3 (the user's usual build, no sanitizer); preload is the plain build with the runtime preloaded (its allocator and hooks, no check); memcheck is the plain build's one pass (`--quick`) under compute-sanitizer memcheck. Registers and spill bytes are the most of any of the workload's kernels (ptxas -v). Checks are summed over the instrumented functions; proven / removed / hoisted are the cusafe build's.\n\n## Summary\n\n",
        noopt = noopt_what(&report.noopt_env)
    );
    let noopt_label = format!(" ({})", noopt_short(&report.noopt_env));
    for a in &report.summary.comparisons {
        let what = COMPARISONS
            .iter()
            .find(|c| c.0 == a.comparison)
            .map_or("", |c| match c.1 {
                "noopt" => noopt_label.as_str(),
                "preload" => " (the runtime's allocator and hooks alone)",
                "memcheck" => " (compute-sanitizer vs cusafe)",
                "plain" => " (clang's plain build vs nvcc's)",
                _ => "",
            });
        match (a.geomean, a.floored_geomean, &a.max) {
            (Some(g), Some(f), Some(m)) => {
                s += &format!(
                    "- {}{what}: geomean {} (each ratio floored at 1.0: {}) over {} workload{}, max {} ({})\n",
                    a.comparison,
                    times(g),
                    times(f),
                    a.workloads.len(),
                    if a.workloads.len() == 1 { "" } else { "s" },
                    times(m.ratio),
                    m.workload
                )
            }
            _ => s += &format!("- {}{what}: no workload ran cleanly\n", a.comparison),
        }
    }
    for m in &report.summary.metrics {
        s += &format!(
            "- {} {}: plain {:.1}, cusafe {:.1} (drop {:.1}%)",
            m.workload, m.metric, m.plain, m.cusafe, m.drop_percent
        );
        if let Some(n) = m.noopt {
            s += &format!(", noopt {n:.1}");
        }
        if !m.clean {
            s += " — not a clean run, see the table";
        }
        s += "\n";
    }
    for a in &report.summary.comparisons {
        if a.excluded.is_empty() {
            s += &format!("- excluded from {}: none\n", a.comparison);
            continue;
        }
        let list: Vec<String> = a
            .excluded
            .iter()
            .map(|e| format!("{} ({})", e.workload, describe(&e.problems)))
            .collect();
        s += &format!("- excluded from {}: {}\n", a.comparison, list.join(", "));
    }
    for n in &report.summary.notes {
        s += &format!("- note: {n}\n");
    }
    s
}
