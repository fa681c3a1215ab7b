//! `cusafe report --sarif` over JSON lines as the runtime writes them
//! (`cli/tests/fixtures/reports.jsonl`: device, host API, leak and fault-without-finding
//! reports from several processes, with allocation and free sites); every log it writes
//! is checked against the SARIF 2.1.0 schema.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};

use crate::common::{output, tool, TempDir};

#[path = "../../src/report/schema_check.rs"]
mod schema_check;

const BIN: &str = env!("CARGO_BIN_EXE_cusafe");
const FIXTURE: &str = include_str!("../fixtures/reports.jsonl");

/// The fixture split into one file per process, as `json_path=...%p` would leave it.
fn per_process(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for line in FIXTURE.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let path = dir.join(format!("cusafe.{}.jsonl", v["pid"]));
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{line}").unwrap();
        if !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

/// Runs `cusafe report` with `stdin`; returns (status, stdout, stderr).
fn with_stdin(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = tool(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Parses a log and checks it against the schema.
fn valid_log(text: &str) -> Value {
    let log: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    schema_check::assert_valid(&log);
    log
}

fn report(args: &[&str]) -> (i32, String, String) {
    output(tool(BIN).arg("report").args(args))
}

#[test]
fn sarif_over_files_of_several_processes() {
    let dir = TempDir::new("sarif-files");
    let files = per_process(dir.path());
    assert_eq!(files.len(), 6);
    let out = dir.path().join("out.sarif");
    let mut args = vec![
        "--sarif",
        "--srcroot",
        "/work/app",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (code, stdout, stderr) = report(&args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    let mut lines = stderr.lines();
    assert_eq!(
        lines.next(),
        Some("cusafe report: 12 reports -> 6 results, 3 notifications")
    );
    assert!(lines
        .next()
        .unwrap()
        .contains("runs[0].invocations[0].toolExecutionNotifications"));

    let log = valid_log(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"]
        .as_str()
        .unwrap()
        .contains("sarif-schema-2.1.0.json"));
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "cusafe");
    let results = run["results"].as_array().unwrap();
    let summary: Vec<(String, Value, Value, i64)> = results
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                loc["artifactLocation"].clone(),
                loc["region"]["startLine"].clone(),
                r["occurrenceCount"].as_i64().unwrap(),
            )
        })
        .collect();
    let src = |uri: &str| json!({"uri": uri, "uriBaseId": "SRCROOT"});
    assert_eq!(
        summary,
        [
            ("heap-buffer-overflow".into(), src("vec.cu"), json!(12), 2),
            (
                "use-after-free".into(),
                src("kernels/consume.cu"),
                json!(31),
                1
            ),
            ("double-free".into(), src("src/heap%20dev.cu"), json!(8), 1),
            (
                "api-out-of-bounds".into(),
                src("examples/memcpy_overflow.cu"),
                json!(12),
                1
            ),
            ("double-free".into(), src("util.cu"), json!(40), 1),
            ("leak".into(), src("main.cu"), json!(50), 3),
        ]
    );
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notes.len(), 3);
    assert_eq!(notes[2]["associatedRule"]["id"], "leak");
    assert_eq!(notes[2]["properties"]["occurrences"], 1);
}

#[test]
fn sarif_reads_stdin_and_writes_stdout() {
    let (code, stdout, stderr) = with_stdin(&["report", "--sarif"], FIXTURE);
    assert_eq!(code, 0, "{stderr}");
    let log = valid_log(&stdout);
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 6);
    // Without --srcroot: relative paths stay relative, absolute ones are file:// URIs.
    let uris: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        uris,
        [
            "vec.cu",
            "file:///work/app/kernels/consume.cu",
            "src/heap%20dev.cu",
            "file:///work/app/examples/memcpy_overflow.cu",
            "file:///work/app/util.cu",
            "file:///work/app/main.cu"
        ]
    );
    assert!(log["runs"][0].get("originalUriBaseIds").is_none());

    // `-` is stdin too, and the same input gives the same log.
    let (code, again, stderr) = with_stdin(&["report", "--sarif", "-"], FIXTURE);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(again, stdout);
}

#[test]
fn sarif_of_an_empty_input_is_a_valid_log_without_results() {
    let dir = TempDir::new("sarif-empty");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let (code, stdout, stderr) = report(&["--sarif", empty.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        "cusafe report: 0 reports -> 0 results, 0 notifications\n"
    );
    let log = valid_log(&stdout);
    assert_eq!(log["runs"][0]["results"], json!([]));
    assert_eq!(log["runs"][0]["tool"]["driver"]["rules"], json!([]));
}

#[test]
fn sarif_names_the_file_and_line_of_a_malformed_line() {
    let dir = TempDir::new("sarif-bad");
    let good = FIXTURE.lines().next().unwrap();
    let out = dir.path().join("out.sarif");
    let cases = [
        (
            format!("{good}\n==4242==ERROR: cusafe: heap-buffer-overflow in kernel k\n"),
            ":2: not JSON (",
        ),
        (
            format!("\n{}\n", good.replace("\"line\":12", "\"line\":-1")),
            ":2: not a cusafe report: invalid value: integer `-1`",
        ),
        (
            "{\"kind\":\"leak\"}\n".to_string(),
            ":1: not a cusafe report: missing field `where`",
        ),
    ];
    for (text, what) in cases {
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, &text).unwrap();
        let (code, stdout, stderr) = report(&[
            "--sarif",
            "-o",
            out.to_str().unwrap(),
            input.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stdout, "");
        let expected = format!("cusafe report: error: {}{what}", input.display());
        assert!(stderr.starts_with(&expected), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "no log is written when an input is bad");
    }

    let (code, _, stderr) = report(&["--sarif", "/nonexistent/cusafe.jsonl"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("cusafe report: error: cannot open /nonexistent/cusafe.jsonl: "),
        "{stderr}"
    );
    let (code, _, stderr) = report(&["--sarif", "-o", "/nonexistent/out.sarif", "/dev/null"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cusafe report: error: cannot write /nonexistent/out.sarif: "),
        "{stderr}"
    );
}

#[test]
fn sarif_is_required_as_the_format() {
    let (code, _, stderr) = report(&["/dev/null"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--sarif"), "{stderr}");
}

#[test]
fn sarif_schema_check_rejects_broken_logs() {
    let (code, stdout, stderr) = with_stdin(&["report", "--sarif"], FIXTURE);
    assert_eq!(code, 0, "{stderr}");
    let log = valid_log(&stdout);
    assert_eq!(schema_check::errors(&log), Vec::<String>::new());
    // (JSON pointer, value put there): each breaks the schema, each must be caught.
    let location = "/runs/0/results/0/locations/0/physicalLocation";
    let breakages = [
        ("/version".to_string(), json!("2.0.0")),
        ("/runs/0/tool".to_string(), json!({})),
        (format!("{location}/region/startLine"), json!(0)),
        // A space is not allowed in a URI: only the format check sees this one.
        (format!("{location}/artifactLocation/uri"), json!("a b.cu")),
        ("/runs/0/results/0/level".to_string(), json!("fatal")),
    ];
    for (at, value) in breakages {
        let mut broken = log.clone();
        *broken.pointer_mut(&at).unwrap() = value;
        let errors = schema_check::errors(&broken);
        assert!(
            errors.iter().any(|e| e.contains(at.as_str())),
            "a break at {at} went unnoticed: {errors:?}"
        );
    }
}
