//! The manifest's rules, its cross-check against markers, and scoring with it.

use cusafe_suite::expect::{from_dir, from_source, Expectation};
use cusafe_suite::manifest::Manifest;
use cusafe_suite::score::{json, markdown, score_with, totals, Verdict};
use std::path::{Path, PathBuf};

const GOOD: &str = r#"
[[program]]
name = "ovf"
class = "spatial"
subclass = "linear"
space = "global"
kind = "heap-buffer-overflow"
in_scope = true

[[program]]
name = "managed"
class = "spatial"
subclass = "managed"
space = "managed"
kind = "heap-buffer-overflow"
in_scope = false
reason = "managed memory is foreign"

[[program]]
name = "uaf"
class = "temporal"
subclass = "uaf-immediate"
space = "global"
kind = "use-after-free"
in_scope = true

[[program]]
name = "ok"
class = "correct"
subclass = "idioms"
space = "shared"
kind = "none"
in_scope = true
"#;

fn expectations() -> Vec<Expectation> {
    vec![
        from_source(
            "managed",
            "p/managed.cu",
            "a\nb[9] = 1; // cusafe-expect: heap-buffer-overflow\n",
        )
        .unwrap(),
        from_source("ok", "p/ok.cu", "int main() {}\n").unwrap(),
        from_source(
            "ovf",
            "p/ovf.cu",
            "x[n] = 0; // cusafe-expect: heap-buffer-overflow\n",
        )
        .unwrap(),
        from_source(
            "uaf",
            "p/uaf.cu",
            "\n\nf(p); // cusafe-expect: use-after-free\n",
        )
        .unwrap(),
    ]
}

fn parse_err(text: &str) -> String {
    Manifest::parse(text, "m.toml").expect_err("must be rejected")
}

/// GOOD with `from` replaced by `to` (which must occur).
fn edited(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn a_good_manifest_agrees_with_its_markers() {
    let m = Manifest::parse(GOOD, "m.toml").expect("valid");
    assert_eq!(m.entries().count(), 4);
    m.check(&expectations()).expect("agrees");
}

#[test]
fn fields_are_checked_against_their_vocabularies() {
    let e = parse_err(&edited("class = \"spatial\"", "class = \"spacial\""));
    assert!(
        e.contains("program \"ovf\"") && e.contains("class = \"spacial\" is not one of"),
        "{e}"
    );
    let e = parse_err(&edited("space = \"global\"", "space = \"texture\""));
    assert!(
        e.contains("space = \"texture\"") && e.contains("\"dynamic-shared\""),
        "{e}"
    );
    let e = parse_err(&edited("kind = \"use-after-free\"", "kind = \"uaf\""));
    assert!(e.contains("kind = \"uaf\" is not one of"), "{e}");
    let e = parse_err(&edited("subclass = \"linear\"", "subclass = \" \""));
    assert!(e.contains("subclass is empty"), "{e}");
    let e = parse_err(&edited("name = \"ovf\"", "name = \"ovf.cu\""));
    assert!(e.contains("file stem"), "{e}");
}

#[test]
fn unknown_and_missing_fields_are_errors() {
    let e = parse_err(&edited(
        "in_scope = true\n",
        "in_scope = true\nexpected = \"x\"\n",
    ));
    assert!(e.contains("m.toml") && e.contains("expected"), "{e}");
    let e = parse_err(&edited("space = \"shared\"\n", ""));
    assert!(e.contains("space"), "{e}");
    let e = parse_err("[[program]]\nname = \"x\"\n");
    assert!(e.contains("missing field"), "{e}");
    let e = parse_err("# nothing yet\n");
    assert!(e.contains("no [[program]] entries"), "{e}");
}

#[test]
fn scope_needs_a_reason_exactly_when_out() {
    let e = parse_err(&edited("reason = \"managed memory is foreign\"\n", ""));
    assert!(e.contains("in_scope = false needs a reason"), "{e}");
    let e = parse_err(&edited(
        "kind = \"use-after-free\"\nin_scope = true\n",
        "kind = \"use-after-free\"\nin_scope = true\nreason = \"because\"\n",
    ));
    assert!(e.contains("reason is only for in_scope = false"), "{e}");
    let e = parse_err(&edited(
        "kind = \"none\"\nin_scope = true\n",
        "kind = \"none\"\nin_scope = false\nreason = \"r\"\n",
    ));
    assert!(
        e.contains("a correct program cannot be out of scope"),
        "{e}"
    );
}

#[test]
fn class_and_kind_must_agree() {
    let e = parse_err(&edited("kind = \"none\"", "kind = \"double-free\""));
    assert!(
        e.contains("a correct program expects kind = \"none\""),
        "{e}"
    );
    let e = parse_err(&edited("kind = \"use-after-free\"", "kind = \"none\""));
    assert!(e.contains("a bug program needs the report kind"), "{e}");
}

#[test]
fn duplicates_are_errors_and_all_problems_come_at_once() {
    let twice = format!("{GOOD}\n[[program]]\nname = \"ok\"\nclass = \"correct\"\nsubclass = \"s\"\nspace = \"global\"\nkind = \"none\"\nin_scope = true\n");
    let e = parse_err(&twice);
    assert!(e.contains("program \"ok\" has two entries"), "{e}");
    let two = edited("space = \"managed\"", "space = \"vram\"")
        .replace("class = \"temporal\"", "class = \"time\"");
    let e = parse_err(&two);
    assert_eq!(e.lines().count(), 2, "{e}");
}

#[test]
fn every_program_needs_an_entry_and_every_entry_a_program() {
    let m = Manifest::parse(GOOD, "m.toml").unwrap();
    let mut ex = expectations();
    ex.push(
        from_source(
            "new",
            "p/new.cu",
            "y[1] = 2; // cusafe-expect: pointer-overflow\n",
        )
        .unwrap(),
    );
    let e = m.check(&ex).expect_err("new has no entry");
    assert!(
        e.contains("p/new.cu: no manifest entry")
            && e.contains("name = \"new\"")
            && e.contains("kind = \"pointer-overflow\""),
        "{e}"
    );
    let e = m.check(&ex[..3]).expect_err("uaf.cu is gone");
    assert!(
        e.contains("manifest entry \"uaf\" has no program uaf.cu"),
        "{e}"
    );
}

#[test]
fn marker_kinds_must_match_the_manifest() {
    let m = Manifest::parse(GOOD, "m.toml").unwrap();
    let mut ex = expectations();
    ex[3] = from_source(
        "uaf",
        "p/uaf.cu",
        "\n\nf(p); // cusafe-expect: double-free\n",
    )
    .unwrap();
    let e = m.check(&ex).expect_err("kinds differ");
    assert!(
        e.contains(
            "p/uaf.cu:3: marker says double-free but the manifest says kind = \"use-after-free\""
        ),
        "{e}"
    );
    ex[3] = from_source("uaf", "p/uaf.cu", "f(p);\n").unwrap();
    let e = m.check(&ex).expect_err("marker missing");
    assert!(e.contains("p/uaf.cu: the manifest expects use-after-free but the program has no cusafe-expect marker"), "{e}");
    let mut ex = expectations();
    ex[1] = from_source("ok", "p/ok.cu", "x; // cusafe-expect: use-after-free\n").unwrap();
    let e = m.check(&ex).expect_err("correct program with a marker");
    assert!(e.contains("lists \"ok\" as correct"), "{e}");
}

/// The real suite: every program of security-suite/programs has an entry whose kind
/// matches its marker, and the suite covers what it claims.
#[test]
fn the_security_suite_manifest_matches_its_programs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let m = Manifest::load(&root.join("manifest.toml")).unwrap_or_else(|e| panic!("{e}"));
    let ex = from_dir(&root.join("programs"), "security-suite/programs").unwrap();
    m.check(&ex).unwrap_or_else(|e| panic!("{e}"));
    let bugs = ex.iter().filter(|e| e.bug.is_some()).count();
    assert!(
        bugs >= 33,
        "{bugs} bug programs; the suite promises at least 33"
    );
    assert!(
        ex.len() - bugs >= 10,
        "the suite promises at least 10 correct programs"
    );
    for space in [
        "global",
        "shared",
        "dynamic-shared",
        "local",
        "host-api",
        "managed",
        "device-heap",
    ] {
        assert!(
            m.entries().any(|e| e.space == space && e.is_bug()),
            "no bug in {space}"
        );
    }
    for kind in [
        "null-dereference",
        "wild-access",
        "allocation-size-too-big",
        "api-error",
    ] {
        assert!(
            m.entries().any(|e| e.kind == kind && e.in_scope),
            "no in-scope bug of kind {kind}"
        );
    }
    // Programs on several GPUs are named multigpu and say so; they are skipped where
    // the machine has one GPU.
    for e in m.entries() {
        assert_eq!(
            e.name.contains("multigpu"),
            e.devices > 1,
            "{}: a multigpu program needs devices = 2, and only those",
            e.name
        );
    }
    assert!(
        m.entries().filter(|e| e.devices > 1 && e.is_bug()).count() >= 5
            && m.entries().filter(|e| e.devices > 1 && !e.is_bug()).count() >= 3,
        "the suite promises at least 5 multi-GPU bugs and 3 correct multi-GPU programs"
    );
}

#[test]
fn device_heap_space_and_the_newer_kinds_are_accepted() {
    for (space, kind) in [
        ("device-heap", "heap-buffer-overflow"),
        ("device-heap", "double-free"),
        ("global", "null-dereference"),
        ("global", "wild-access"),
        ("host-api", "allocation-size-too-big"),
        ("host-api", "api-error"),
    ] {
        let text = edited(
            "space = \"global\"\nkind = \"heap-buffer-overflow\"",
            &format!("space = \"{space}\"\nkind = \"{kind}\""),
        );
        let m = Manifest::parse(&text, "m.toml").unwrap_or_else(|e| panic!("{space} {kind}: {e}"));
        assert_eq!(m.get("ovf").unwrap().kind, kind);
    }
}

struct RunDir(PathBuf);

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A run where cusafe found `ovf`, missed `uaf` and `managed`, and `ok` ran clean;
/// memcheck found `managed`.
fn run_dir(test: &str) -> RunDir {
    let dir = std::env::temp_dir().join(format!("cusafe-suite-{test}-{}", std::process::id()));
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let report = |kind: &str, file: &str, line: u32| {
        format!("==7==ERROR: cusafe: {kind} in kernel k() at {file}:{line}:3\nSUMMARY: cusafe: {kind}\n")
    };
    let mut tsv = String::from("program\tmode\trc\tseconds\n");
    for (name, mode, rc, log) in [
        ("ovf", "plain", 0, "ran\n".to_string()),
        ("ovf", "cusafe", 1, report("heap-buffer-overflow", "p/ovf.cu", 1)),
        ("uaf", "plain", 0, "ran\n".into()),
        ("uaf", "cusafe", 0, "ran\n".into()),
        ("managed", "plain", 0, "ran\n".into()),
        ("managed", "cusafe", 0, "ran\n".into()),
        ("managed", "memcheck", 1, "========= Invalid __global__ write of size 4 bytes\n=========     at k()+0x10 in /x/p/managed.cu:2\n=========\n".into()),
        ("ok", "plain", 0, "sum 3\n".into()),
        ("ok", "cusafe", 0, "sum 3\n".into()),
    ] {
        std::fs::write(logs.join(format!("{name}.{mode}.txt")), log).unwrap();
        tsv += &format!("{name}\t{mode}\t{rc}\t0.1\n");
    }
    std::fs::write(dir.join("runs.tsv"), tsv).unwrap();
    RunDir(dir)
}

#[test]
fn out_of_scope_bugs_are_expected_misses_outside_the_totals() {
    let m = Manifest::parse(GOOD, "m.toml").unwrap();
    let run = run_dir("scoped");
    let rows = score_with(&expectations(), Some(&m), &run.0);
    let by = |p: &str, t: &str| {
        rows.iter()
            .find(|r| r.expect.program == p)
            .unwrap()
            .verdicts[t]
            .clone()
    };
    assert_eq!(by("ovf", "cusafe"), Verdict::Found);
    assert_eq!(by("uaf", "cusafe"), Verdict::Missed);
    assert_eq!(
        by("managed", "cusafe"),
        Verdict::ExpectedMiss("managed memory is foreign".into())
    );
    assert_eq!(by("managed", "memcheck"), Verdict::Found);
    assert_eq!(by("ok", "cusafe"), Verdict::Clean);

    let t = totals(&rows);
    let c = &t.tools["cusafe"];
    assert_eq!(
        (
            c.bugs,
            c.found,
            c.missed,
            c.out_of_scope,
            c.out_of_scope_found
        ),
        (2, 1, 1, 1, 0)
    );
    assert_eq!((c.correct, c.clean, c.false_positives), (1, 1, 0));
    let mc = &t.tools["memcheck"];
    assert_eq!(
        (mc.bugs, mc.found, mc.out_of_scope_found, mc.not_run),
        (2, 0, 1, 3)
    );
    assert_eq!(t.by_class["spatial"]["cusafe"].found, 1);
    assert_eq!(t.by_class["temporal"]["cusafe"].missed, 1);
    assert_eq!(t.by_space["managed"]["cusafe"].out_of_scope, 1);
    assert_eq!(t.by_space["shared"]["cusafe"].clean, 1);

    let md = markdown(&rows, "# run");
    assert!(md.contains("| managed | spatial / managed | managed | heap-buffer-overflow @ p/managed.cu:2 (out of scope) | expected miss (managed memory is foreign) | not run | found (out of scope) |"), "{md}");
    assert!(
        md.contains("| cusafe (cusafe-clang++ build) | 1/2 | 1 | 1 | 0 | 1 (0) |"),
        "{md}"
    );
    assert!(
        md.contains("| class | cusafe | preload | memcheck |"),
        "{md}"
    );
    assert!(
        md.contains("| temporal | 0/1 found | 0/1 found, 1 not run |"),
        "{md}"
    );
    assert!(
        md.contains("| memory space | cusafe | preload | memcheck |"),
        "{md}"
    );
    assert!(
        md.contains("| managed | 1 out of scope (0 found) |"),
        "{md}"
    );

    let j: serde_json::Value = serde_json::from_str(&json(&rows)).unwrap();
    assert_eq!(j["totals"]["by_class"]["spatial"]["cusafe"]["found"], 1);
    assert_eq!(j["totals"]["by_space"]["global"]["cusafe"]["bugs"], 2);
    assert_eq!(j["rows"].as_array().unwrap().len(), 4);
    assert_eq!(j["rows"][0]["entry"]["in_scope"], false);
}

#[test]
fn without_a_manifest_every_bug_counts_and_no_groups_are_shown() {
    let run = run_dir("unscoped");
    let rows = score_with(&expectations(), None, &run.0);
    let t = totals(&rows);
    assert_eq!((t.tools["cusafe"].bugs, t.tools["cusafe"].missed), (3, 2));
    assert!(t.by_class.is_empty() && t.by_space.is_empty());
    let md = markdown(&rows, "# run");
    assert!(
        !md.contains("| class |")
            && md.contains("| managed | heap-buffer-overflow @ p/managed.cu:2 | miss |"),
        "{md}"
    );
}
