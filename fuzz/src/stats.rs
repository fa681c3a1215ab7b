//! What the user sees while a campaign runs: the status line, `stats.json` (rewritten
//! every few seconds) and `history.jsonl` (one line per interval, the plot's data).

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The statistics at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Seconds since the campaign started.
    pub elapsed_s: f64,
    /// Target executions.
    pub execs: u64,
    /// Executions per second over the whole campaign.
    pub execs_per_s: f64,
    /// Inputs in the corpus.
    pub corpus: usize,
    /// Corpus entries taken from other clients.
    pub imported: usize,
    /// Host edges seen.
    pub host_edges: usize,
    /// Device edges seen.
    pub device_edges: usize,
    /// Unique findings.
    pub unique_crashes: usize,
    /// Timeouts a longer second run did not confirm (not objectives).
    pub unconfirmed_timeouts: u64,
    /// Findings of a persistent process that had gone on after a host report, which a
    /// fresh run of the same input did not reproduce (not saved: the earlier report
    /// may have left the process's memory corrupt).
    #[serde(default)]
    pub unreproduced: u64,
    /// Seconds since the last new finding or corpus entry (`None`: nothing found yet).
    pub since_last_find_s: Option<f64>,
    /// Seconds at which each unique finding was first seen, with its key.
    pub finds: Vec<(f64, String)>,
    /// How inputs reach the target (`persistent`, `file`, `stdin`).
    pub mode: String,
}

impl Snapshot {
    /// The one-line status.
    pub fn line(&self) -> String {
        let last = self
            .since_last_find_s
            .map_or("-".to_string(), |s| format!("{s:.0}s"));
        format!(
            "[{:>6.0}s] exec/s {:>7.1} | execs {:>8} | corpus {:>5} | host edges {:>5} | device edges {:>5} | unique crashes {:>3} | last find {}",
            self.elapsed_s,
            self.execs_per_s,
            self.execs,
            self.corpus,
            self.host_edges,
            self.device_edges,
            self.unique_crashes,
            last
        )
    }

    /// Writes `stats.json` (atomically, through a temporary file).
    pub fn write(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("json.tmp");
        let body = serde_json::to_vec_pretty(self).unwrap_or_default();
        std::fs::write(&tmp, body)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }

    /// Appends one history line.
    pub fn append(&self, path: &Path) -> Result<()> {
        let mut row = self.clone();
        row.finds.clear();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        let mut line = serde_json::to_vec(&row).unwrap_or_default();
        line.push(b'\n');
        f.write_all(&line)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    }
}

/// Reads a history file (lines that do not parse are skipped).
pub fn read_history(path: &Path) -> Result<Vec<Snapshot>> {
    let s = std::fs::read_to_string(path).map_err(|e| {
        Error::io(
            format!(
                "cannot read {} (is this a `cusafe fuzz` output directory?)",
                path.display()
            ),
            e,
        )
    })?;
    Ok(s.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}
