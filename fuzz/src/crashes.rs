//! Unique findings on disk: `OUT/crashes/<nnn>-<kind>-<place>/` with the input, the
//! report as text and JSON, and a one-line replay command.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::finding::Finding;
use crate::{Error, Result};

/// The set of keys seen and the directory they are saved in.
#[derive(Debug)]
pub struct Crashes {
    dir: PathBuf,
    seen: HashSet<String>,
    saved: Vec<(String, PathBuf)>,
}

impl Crashes {
    /// Findings saved under `dir`; keys of directories already there count as seen
    /// (a resumed campaign does not save them again).
    pub fn open(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let mut seen = HashSet::new();
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if let Ok(k) = std::fs::read_to_string(e.path().join("key")) {
                    seen.insert(k.trim().to_string());
                }
            }
        }
        Crashes {
            dir,
            seen,
            saved: Vec::new(),
        }
    }

    /// Unique findings so far (this run and earlier ones in the same directory).
    pub fn count(&self) -> usize {
        self.seen.len()
    }

    /// The findings saved by this run, in order: (key, directory).
    pub fn saved(&self) -> &[(String, PathBuf)] {
        &self.saved
    }

    /// Whether `f`'s key is new.
    pub fn is_new(&self, f: &Finding) -> bool {
        !self.seen.contains(&f.key())
    }

    /// Saves `f` with its input and text report; `replay` is the command that replays
    /// it, `{dir}` standing for the crash directory. Returns the directory, or `None` when the key was seen before.
    pub fn save(
        &mut self,
        f: &Finding,
        input: &[u8],
        text: &str,
        replay: &str,
    ) -> Result<Option<PathBuf>> {
        let key = f.key();
        if !self.seen.insert(key.clone()) {
            return Ok(None);
        }
        let d = self
            .dir
            .join(format!("{:03}-{}", self.seen.len(), f.slug()));
        let io = |what: &str, p: &Path, e| Error::io(format!("cannot {what} {}", p.display()), e);
        std::fs::create_dir_all(&d).map_err(|e| io("create", &d, e))?;
        let write = |name: &str, bytes: &[u8]| {
            let p = d.join(name);
            std::fs::write(&p, bytes).map_err(|e| io("write", &p, e))
        };
        write("input", input)?;
        write("key", format!("{key}\n").as_bytes())?;
        write("report.txt", text.as_bytes())?;
        let mut json = serde_json::to_vec_pretty(&f.record).unwrap_or_default();
        json.push(b'\n');
        write("report.json", &json)?;
        let script = d.join("replay.sh");
        let mut s = std::fs::File::create(&script).map_err(|e| io("write", &script, e))?;
        let replay = replay.replace("{dir}", &d.display().to_string());
        writeln!(s, "#!/bin/sh\n{replay}").map_err(|e| io("write", &script, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755));
        }
        self.saved.push((key, d.clone()));
        Ok(Some(d))
    }
}
