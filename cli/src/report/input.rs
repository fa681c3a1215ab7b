//! Reading the runtime's JSON lines (`CUSAFE_OPTIONS=json_path=...`, written by the
//! runtime's `report/json.rs`): one object per line, blank lines skipped, anything else an
//! error that names the file and line.

use std::fmt;
use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

/// Where the runtime saw the error (`"where"` in the JSON line).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    /// In a kernel.
    Device,
    /// In a host API call (or at exit, for leaks).
    Host,
}

/// The memory access of a report (`"access"`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub struct Access {
    /// A write (else a read).
    pub write: bool,
    /// An atomic read-modify-write.
    pub atomic: bool,
    /// A range of a memory intrinsic or API call.
    pub range: bool,
    /// Bytes accessed.
    pub size: u64,
}

/// The buffer a report concerns (`"buffer"`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Buffer {
    /// Allocation id within its process.
    pub id: u64,
    /// Exact payload size in bytes.
    pub size: u64,
    /// Offset of the access from the payload start (negative: before it).
    pub offset: i64,
    /// Whether the buffer was freed.
    pub freed: bool,
    /// Where it was allocated (frames as in [`Fields::call_site`]; with `alloc_backtrace=1`).
    pub alloc_site: Option<Vec<String>>,
    /// Where it was freed (likewise).
    pub free_site: Option<Vec<String>>,
}

/// One JSON line, the fields the conversion reads (others are kept in [`Report::raw`]).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Fields {
    /// Report kind, e.g. `heap-buffer-overflow` or `cuda-error-without-finding`.
    pub kind: String,
    /// Process id of the reporting program.
    pub pid: Option<u32>,
    /// Device or host.
    #[serde(rename = "where")]
    pub place: Place,
    /// Kernel name (device reports; the kernel launched last for a fault without a finding).
    pub kernel: Option<String>,
    /// Source file of a device report ("" when unknown).
    pub file: Option<String>,
    /// Source line of a device report (0 when unknown).
    pub line: Option<u32>,
    /// Source column of a device report (0 when unknown).
    pub col: Option<u32>,
    /// threadIdx.
    pub thread: Option<[u32; 3]>,
    /// blockIdx.
    pub block: Option<[u32; 3]>,
    /// The API of a host report, e.g. `cudaMemcpy`.
    pub api: Option<String>,
    /// The operand the host check looked at, e.g. `dst`.
    pub operand: Option<String>,
    /// The access, if the report is about one.
    pub access: Option<Access>,
    /// The address accessed or passed, as a hex string.
    pub address: Option<String>,
    /// The buffer concerned, if known.
    pub buffer: Option<Buffer>,
    /// The runtime's sentence on the address and the buffer.
    pub detail: Option<String>,
    /// Host call site, innermost frame first: `"function at file:line:col"` or `"function"`.
    pub call_site: Option<Vec<String>>,
    /// What to do about it (every kind but `cuda-error-without-finding`).
    pub hint: Option<String>,
    /// CUDA error code (`cuda-error-without-finding`).
    pub code: Option<i32>,
    /// CUDA error name (`cuda-error-without-finding`).
    pub name: Option<String>,
    /// Kernels launched since the last successful wait (`cuda-error-without-finding`).
    pub suspects: Option<Vec<String>>,
}

/// One report as read: its fields and the whole JSON object.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The fields the conversion uses.
    pub fields: Fields,
    /// The line's JSON object, as written.
    pub raw: Value,
}

/// Why an input could not be read.
#[derive(Debug, PartialEq, Eq)]
pub struct InputError {
    /// The input's name (a path, or `<stdin>`).
    pub source: String,
    /// 1-based line number (0: the input as a whole).
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.source, self.what)
        } else {
            write!(f, "{}:{}: {}", self.source, self.line, self.what)
        }
    }
}

impl std::error::Error for InputError {}

/// Reads every report of `input`, named `source` in errors.
pub fn read(source: &str, input: impl BufRead) -> Result<Vec<Report>, InputError> {
    let mut reports = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let err = |what: String| InputError {
            source: source.to_string(),
            line: i + 1,
            what,
        };
        let line = line.map_err(|e| err(format!("cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        reports.push(parse(&line).map_err(err)?);
    }
    Ok(reports)
}

/// Parses one non-blank line.
fn parse(line: &str) -> Result<Report, String> {
    let raw: Value = serde_json::from_str(line).map_err(|e| {
        format!(
            "not JSON ({e}); `cusafe report` reads the JSON lines of \
             CUSAFE_OPTIONS=json_path=FILE, not the text report"
        )
    })?;
    if !raw.is_object() {
        return Err("not a cusafe report: the line is JSON but not an object".to_string());
    }
    let fields = Fields::deserialize(&raw).map_err(|e| format!("not a cusafe report: {e}"))?;
    if fields.kind.is_empty() {
        return Err("not a cusafe report: empty `kind`".to_string());
    }
    Ok(Report { fields, raw })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_are_skipped_and_lines_numbered_from_one() {
        let text = "\n{\"kind\":\"leak\",\"where\":\"host\",\"api\":\"cudaMalloc\"}\n  \n";
        let reports = read("a.jsonl", text.as_bytes()).unwrap();
        assert_eq!(reports.len(), 1);
        assert_eq!(reports[0].fields.kind, "leak");
        assert_eq!(reports[0].fields.place, Place::Host);
        assert_eq!(reports[0].fields.api.as_deref(), Some("cudaMalloc"));

        let text = "{\"kind\":\"leak\",\"where\":\"host\"}\n\n==1==ERROR: cusafe: leak\n";
        let e = read("b.jsonl", text.as_bytes()).unwrap_err();
        assert_eq!((e.source.as_str(), e.line), ("b.jsonl", 3));
        assert!(e.to_string().starts_with("b.jsonl:3: not JSON ("), "{e}");
        assert!(e.to_string().contains("json_path"), "{e}");
    }

    #[test]
    fn wrong_shapes_are_named() {
        let cases = [
            ("[1,2]", "not an object"),
            ("{\"where\":\"host\"}", "missing field `kind`"),
            ("{\"kind\":\"leak\"}", "missing field `where`"),
            (
                "{\"kind\":\"leak\",\"where\":\"gpu\"}",
                "unknown variant `gpu`",
            ),
            (
                "{\"kind\":\"x\",\"where\":\"device\",\"line\":\"7\"}",
                "invalid type",
            ),
            ("{\"kind\":\"\",\"where\":\"device\"}", "empty `kind`"),
        ];
        for (line, what) in cases {
            let e = read("c", line.as_bytes()).unwrap_err();
            assert!(
                e.to_string().starts_with("c:1: not a cusafe report: "),
                "{e}"
            );
            assert!(e.what.contains(what), "{line}: {e}");
        }
    }

    #[test]
    fn unknown_fields_are_kept_in_raw() {
        let line = "{\"kind\":\"leak\",\"where\":\"host\",\"new_field\":[1]}";
        let r = &read("d", line.as_bytes()).unwrap()[0];
        assert_eq!(r.raw["new_field"], serde_json::json!([1]));
    }
}
