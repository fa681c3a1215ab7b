//! The output directory of a campaign:
//!
//! ```text
//! OUT/target.json          the command line and mode, for replay and minimise
//! OUT/stats.json           the latest statistics (rewritten every few seconds)
//! OUT/history.jsonl        one statistics line per interval (the plot's data)
//! OUT/plot.svg             edges and unique crashes over time (at the end)
//! OUT/queue/<client>/      client <client>'s corpus (inputs with new coverage)
//! OUT/crashes/<id>/        one directory per unique finding
//! OUT/work/<client>/       report files of the running target (scratch)
//! ```

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Paths under one output directory.
#[derive(Clone, Debug)]
pub struct OutDir {
    root: PathBuf,
}

impl OutDir {
    /// The layout under `root` (nothing is created).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        OutDir { root: root.into() }
    }

    /// Creates the directories a client needs.
    pub fn create(&self, client: usize) -> Result<()> {
        for d in [self.queue(client), self.crashes(), self.work(client)] {
            std::fs::create_dir_all(&d)
                .map_err(|e| Error::io(format!("cannot create {}", d.display()), e))?;
        }
        Ok(())
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The saved target description.
    pub fn target_json(&self) -> PathBuf {
        self.root.join("target.json")
    }
    /// `stem.ext` for client 0 (a single campaign), `stem-<client>.ext` for a client of
    /// several.
    fn per_client(&self, stem: &str, ext: &str, client: usize) -> PathBuf {
        if client == 0 {
            self.root.join(format!("{stem}.{ext}"))
        } else {
            self.root.join(format!("{stem}-{client}.{ext}"))
        }
    }
    /// The latest statistics of client `client` (`stats.json` for client 0).
    pub fn stats(&self, client: usize) -> PathBuf {
        self.per_client("stats", "json", client)
    }
    /// The statistics history of client `client`.
    pub fn history(&self, client: usize) -> PathBuf {
        self.per_client("history", "jsonl", client)
    }
    /// The plot.
    pub fn plot(&self) -> PathBuf {
        self.root.join("plot.svg")
    }
    /// The corpus of client `client`. Each client has its own directory: LibAFL's
    /// on-disk corpus names a file by its input's hash and writes it through a lock
    /// file, and clients that share entries (every entry one finds is sent to the
    /// others) would write the same names in one directory at the same time (seen as
    /// a client failing with "No such file or directory" under load).
    pub fn queue(&self, client: usize) -> PathBuf {
        self.root.join("queue").join(client.to_string())
    }
    /// The unique findings.
    pub fn crashes(&self) -> PathBuf {
        self.root.join("crashes")
    }
    /// Scratch files of client `client`.
    pub fn work(&self, client: usize) -> PathBuf {
        self.root.join("work").join(client.to_string())
    }
}
