//! Expectations, read from the programs themselves: the buggy line carries
//! `// cusafe-expect: KIND`; a program without a marker must run clean.

use std::path::Path;

/// What one program should produce.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Expectation {
    /// Program name (file stem).
    pub program: String,
    /// Source path as given to the compiler (relative, e.g. `examples/x.cu`).
    pub file: String,
    /// `None` for correct programs; else the report kind and its 1-based line.
    pub bug: Option<(String, u32)>,
}

/// Reads the marker of one source file's text.
pub fn from_source(program: &str, file: &str, text: &str) -> Result<Expectation, String> {
    let mut bug = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(pos) = line.find("cusafe-expect:") {
            let kind = line[pos + "cusafe-expect:".len()..]
                .split_whitespace()
                .next()
                .unwrap_or("");
            if kind.is_empty() {
                return Err(format!(
                    "{file}:{}: cusafe-expect: needs a report kind",
                    i + 1
                ));
            }
            if bug.is_some() {
                return Err(format!(
                    "{file}:{}: more than one cusafe-expect marker; one bug per program",
                    i + 1
                ));
            }
            bug = Some((kind.to_string(), i as u32 + 1));
        }
    }
    Ok(Expectation {
        program: program.into(),
        file: file.into(),
        bug,
    })
}

/// Reads every `*.cu` of `dir`; `prefix` is how the compiler saw the directory
/// (e.g. `examples`), so that file names match the reports.
pub fn from_dir(dir: &Path, prefix: &str) -> Result<Vec<Expectation>, String> {
    let mut out = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
    {
        let stem = p.file_stem().expect("file").to_string_lossy().into_owned();
        let text =
            std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let file = format!(
            "{prefix}/{}",
            p.file_name().expect("file").to_string_lossy()
        );
        out.push(from_source(&stem, &file, &text)?);
    }
    Ok(out)
}
