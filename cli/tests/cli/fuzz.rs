//! `cusafe fuzz` end to end on a CPU-only target (no GPU in CI): a small record parser
//! built by `cusafe-clang++ --cusafe-fuzz` (host coverage, ASan, libcusafe_fuzz.a) with
//! two planted bugs — an ASan heap overflow through a trusted length and a null
//! dereference (which ASan's SEGV handler reports) — found, deduplicated, saved, replayed
//! and minimised; a crash that only follows an earlier overflow in the same persistent
//! process (ASan goes on after a host report) not saved; the statistics,
//! the plot, the one-process-per-input form and two clients sharing a corpus.
//!
//! Without the toolchain these tests print why and pass, except under CI (`CI=true`).

use std::path::{Path, PathBuf};

use crate::common::{output, tool, write, TempDir};

const BIN: &str = env!("CARGO_BIN_EXE_cusafe");
const CLANGXX: &str = env!("CARGO_BIN_EXE_cusafe-clangxx");

/// The target: `CUSAFE_FUZZ_TARGET` (persistent harness), records of `tag len bytes`.
const TARGET: &str = r#"#include <cusafe/fuzz.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static int sink, damaged;
static void record(const uint8_t *p, size_t n) {
  if (n < 2) return;
  uint8_t tag = p[0], len = p[1];
  if (tag == 'A') {
    char *buf = (char *)malloc(8);
    if (len <= n - 2) memcpy(buf, p + 2, len);   // planted: len may exceed 8
    if (len > 8 && len <= n - 2) damaged = 1;    // the damage it leaves for later inputs
    sink += buf[0];
    free(buf);
  } else if (tag == 'Z' && n > 3 && p[2] == 'Z' && p[3] == 'Z') {
    int *volatile q = nullptr;
    sink += *q;                                  // planted: null dereference
  } else if (tag == 'D' && damaged) {
    int *volatile r = nullptr;
    sink -= r[2];                                // only after an earlier overflow
  } else if (tag == 'M') {
    for (size_t i = 2; i < n && i < 10; i++) if (p[i] == 'a' + i) sink += (int)i;
  }
}
CUSAFE_FUZZ_TARGET(data, size) {
  record(data, size);
  return 0;
}
"#;

/// Line of the planted overflow in TARGET.
const OVERFLOW_LINE: u32 = 11;
/// Line of the planted null dereference.
const NULL_LINE: u32 = 17;

fn ready() -> bool {
    let lib = Path::new(BIN).parent().unwrap().join("libcusafe_fuzz.a");
    let clang = Path::new("/usr/lib/llvm-19/bin/clang++");
    let cuda = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.toolchain/cuda/lib64");
    let ok = lib.exists() && clang.exists() && cuda.exists();
    if !ok {
        let why = format!(
            "needs {}, {} and {} (scripts/build.sh)",
            lib.display(),
            clang.display(),
            cuda.display()
        );
        assert!(
            std::env::var("CI").is_err(),
            "CI must have the toolchain: {why}"
        );
        eprintln!("skipped: {why}");
    }
    ok
}

/// Builds `source` as `dir/<name>.cc` with `cusafe-clang++ --cusafe-fuzz`; the program.
fn compile(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.cc"));
    write(&src, source);
    let exe = dir.join(name);
    let (code, _, stderr) = output(
        tool(CLANGXX)
            .args(["--cusafe-fuzz", "-O1", "-g"])
            .arg(&src)
            .arg("-o")
            .arg(&exe),
    );
    assert_eq!(code, 0, "{stderr}");
    exe
}

fn build(dir: &Path) -> PathBuf {
    compile(dir, "tlv", TARGET)
}

/// A campaign's statistics file.
fn stats(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn seeds(dir: &Path) -> PathBuf {
    let s = dir.join("seeds");
    write(&s.join("a"), "A\x03xyz");
    write(&s.join("m"), "M\x00cd");
    write(&s.join("d"), "D\x00");
    s
}

fn crash_dirs(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("crashes"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn key(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("key"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn campaign_finds_dedups_replays_and_minimizes() {
    if !ready() {
        return;
    }
    let t = TempDir::new("fuzz");
    let exe = build(t.path());
    let out = t.path().join("out");
    let (code, _, stderr) = output(
        tool(BIN)
            .args(["fuzz", "-i"])
            .arg(seeds(t.path()))
            .arg("-o")
            .arg(&out)
            .args(["-V", "20", "--stats-every", "1", "--seed", "7", "--"])
            .arg(&exe),
    );
    assert_eq!(code, 1, "a campaign that found something exits 1: {stderr}");
    let dirs = crash_dirs(&out);
    let keys: Vec<String> = dirs.iter().map(|d| key(d)).collect();
    let overflow = format!(
        "heap-buffer-overflow|record(unsigned char const*, unsigned long)|{}:{OVERFLOW_LINE}",
        t.path().join("tlv.cc").display()
    );
    assert!(keys.contains(&overflow), "{keys:?}\n{stderr}");
    let null = format!(
        "null-deref|record(unsigned char const*, unsigned long)|{}:{NULL_LINE}",
        t.path().join("tlv.cc").display()
    );
    assert!(
        keys.contains(&null),
        "the null dereference (ASan's SEGV handler names it): {keys:?}"
    );
    assert_eq!(
        keys.len(),
        2,
        "one directory per unique finding, none for the crash that only follows an \
         earlier overflow in the same process: {keys:?}"
    );
    for d in &dirs {
        for f in ["input", "report.txt", "report.json", "replay.sh", "key"] {
            assert!(d.join(f).is_file(), "{} lacks {f}", d.display());
        }
    }
    // stats.json, history and the plot.
    let stats = stats(&out.join("stats.json"));
    assert_eq!(stats["unique_crashes"], 2);
    assert!(stats["execs"].as_u64().unwrap() > 100, "{stats}");
    assert!(stats["host_edges"].as_u64().unwrap() >= 5, "{stats}");
    assert_eq!(stats["mode"], "persistent");
    assert!(
        stats["unreproduced"].as_u64().unwrap() > 0,
        "a 'D' input after a recovered overflow crashes, and a fresh run does not: {stats}"
    );
    let svg = std::fs::read_to_string(out.join("plot.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("unique crashes"));
    // Replay: the same finding again, exit 1.
    let od = dirs.iter().find(|d| key(d) == overflow).unwrap();
    let (code, stdout, _) = output(tool(BIN).args(["fuzz", "replay"]).arg(od));
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("heap-buffer-overflow (host asan) in record"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("tlv.cc:{OVERFLOW_LINE}")),
        "{stdout}"
    );
    // Minimise: smaller or equal, same finding.
    let (code, stdout, stderr) = output(tool(BIN).args(["fuzz", "minimize"]).arg(od));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let min = std::fs::read(od.join("input.min")).unwrap();
    assert!(min.len() <= std::fs::read(od.join("input")).unwrap().len());
    assert_eq!(min[0], b'A', "{min:?}");
    assert!(min[1] as usize > 8, "still overflows: {min:?}");
    // plot from the directory.
    let (code, stdout, _) = output(tool(BIN).args(["fuzz", "plot"]).arg(&out));
    assert_eq!(
        (code, stdout.trim()),
        (0, out.join("plot.svg").to_str().unwrap())
    );
}

#[test]
fn process_per_input_and_two_clients() {
    if !ready() {
        return;
    }
    let t = TempDir::new("fuzz2");
    let exe = build(t.path());
    // One process per input: the input file in place of @@.
    let out = t.path().join("out1");
    let (code, _, stderr) = output(
        tool(BIN)
            .args(["fuzz", "--no-persistent", "-q", "-i"])
            .arg(seeds(t.path()))
            .arg("-o")
            .arg(&out)
            .args(["-V", "6", "--"])
            .arg(&exe)
            .arg("@@"),
    );
    assert!(code == 0 || code == 1, "{stderr}");
    let one = stats(&out.join("stats.json"));
    assert_eq!(one["mode"], "file", "{one}");
    // Two clients, one corpus: each client takes entries the other found.
    let out = t.path().join("out2");
    let (_, _, stderr) = output(
        tool(BIN)
            .args([
                "fuzz",
                "--clients",
                "2",
                "--broker-port",
                "17391",
                "-q",
                "-i",
            ])
            .arg(seeds(t.path()))
            .arg("-o")
            .arg(&out)
            .args(["-V", "10", "--"])
            .arg(&exe),
    );
    let mut imported = 0;
    for c in 1..=2 {
        let s = stats(&out.join(format!("stats-{c}.json")));
        assert!(s["execs"].as_u64().unwrap() > 0, "{s}");
        imported += s["imported"].as_u64().unwrap();
    }
    assert!(
        imported > 0,
        "no corpus entry crossed between the clients\n{stderr}"
    );
}

/// A target with an 8-byte magic compare that fuzzing alone does not pass in seconds.
const MAGIC: &str = r#"#include <cusafe/fuzz.h>
#include <cstdint>
#include <cstring>
static volatile int sink;
CUSAFE_FUZZ_TARGET(data, size) {
  if (size < 8) return 0;
  uint64_t v;
  memcpy(&v, data, 8);
  if (v == 0x1122334455667788ull) { sink = 1; if (size > 8 && data[8] == 'x') sink = 2; }
  else if (data[0] == 'a') sink = 3;
  return 0;
}
"#;

fn host_edges(path: &Path) -> u64 {
    stats(path)["host_edges"].as_u64().unwrap()
}

#[test]
fn a_second_launcher_joins_through_the_broker() {
    if !ready() {
        return;
    }
    let t = TempDir::new("fuzz5");
    let exe = compile(t.path(), "magic", MAGIC);
    // Only the joining side knows the magic input.
    let plain = t.path().join("plain");
    write(&plain.join("1"), "aaaaaaaaa");
    let magic = t.path().join("magic-seeds");
    write(&magic.join("1"), "aaaaaaaaa");
    std::fs::write(magic.join("2"), b"\x88\x77\x66\x55\x44\x33\x22\x11y").unwrap();
    let (out_a, out_b) = (t.path().join("a"), t.path().join("b"));
    let mut first = tool(BIN);
    first
        .args([
            "fuzz",
            "--clients",
            "2",
            "--broker-port",
            "17393",
            "-q",
            "-i",
        ])
        .arg(&plain)
        .arg("-o")
        .arg(&out_a)
        .args(["-V", "16", "--"])
        .arg(&exe);
    let first = std::thread::spawn(move || output(&mut first));
    std::thread::sleep(std::time::Duration::from_secs(4));
    let (code, _, e) = output(
        tool(BIN)
            .args([
                "fuzz",
                "--clients",
                "2",
                "--broker-port",
                "17394",
                "--broker",
                "127.0.0.1:17393",
                "-q",
                "-i",
            ])
            .arg(&magic)
            .arg("-o")
            .arg(&out_b)
            .args(["-V", "6", "--"])
            .arg(&exe),
    );
    assert_eq!(code, 0, "{e}");
    let (code, _, e) = first.join().unwrap();
    assert_eq!(code, 0, "{e}");
    let joined = host_edges(&out_b.join("stats-1.json"));
    for c in 1..=2 {
        let got = host_edges(&out_a.join(format!("stats-{c}.json")));
        assert!(
            got >= joined,
            "client {c} of the first launcher has {got} host edges, the joining side {joined}: \
             the magic input did not cross the broker link\n{e}"
        );
    }
}

#[test]
fn clear_errors() {
    let t = TempDir::new("fuzz3");
    let seeds = t.path().join("seeds");
    write(&seeds.join("a"), "x");
    let out = t.path().join("out");
    let run = |args: &[&str]| {
        let mut c = tool(BIN);
        c.arg("fuzz").args(args);
        output(&mut c)
    };
    let (code, _, e) = run(&["-o", "o", "--", "/bin/true"]);
    assert_eq!(code, 2);
    assert!(
        e.contains("no seeds: give a seed directory with -i DIR"),
        "{e}"
    );
    let (s, o) = (seeds.to_str().unwrap(), out.to_str().unwrap());
    let (code, _, e) = run(&["-i", s, "-o", o, "--", "/bin/true", "@@"]);
    assert_eq!(code, 2);
    assert!(
        e.contains("was not built for fuzzing") && e.contains("--cusafe-fuzz"),
        "{e}"
    );
    let (code, _, e) = run(&["-i", s, "-o", o, "--", "./no-such-program", "@@"]);
    assert_eq!(code, 2);
    assert!(e.contains("cannot find the target program"), "{e}");
    let (code, _, e) = run(&["-i", s, "-o", o]);
    assert_eq!(code, 2);
    assert!(e.contains("no target"), "{e}");
    let (code, _, e) = output(tool(BIN).env("CUSAFE_FUZZ_LOG", "loud").args([
        "fuzz",
        "-i",
        s,
        "-o",
        o,
        "--",
        "/bin/true",
        "@@",
    ]));
    assert_eq!(code, 2);
    assert!(
        e.contains("CUSAFE_FUZZ_LOG=loud: use one of error, warn, info, debug, trace"),
        "{e}"
    );
    let empty = t.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, e) = run(&["replay", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(e.contains("no target.json above"), "{e}");
}

#[test]
fn missing_at_at_is_an_error_for_a_whole_program() {
    if !ready() {
        return;
    }
    let t = TempDir::new("fuzz4");
    let exe = compile(
        t.path(),
        "whole",
        "#include <cstdio>\nint main(int c, char **v) { return c > 1 && v[1][0] == 'x'; }\n",
    );
    let seeds = t.path().join("seeds");
    write(&seeds.join("a"), "x");
    let (code, _, e) = output(
        tool(BIN)
            .args(["fuzz", "-i"])
            .arg(&seeds)
            .args(["-o"])
            .arg(t.path().join("out"))
            .arg("--")
            .arg(&exe),
    );
    assert_eq!(code, 2);
    assert!(e.contains("has no @@") && e.contains("--stdin"), "{e}");
}
