//! `fuzz-targets/targets.toml` agrees with the programs: every planted bug's `at` and
//! `also_at` lines carry a `cusafe-expect:`/`asan-expect:` marker of its kind (device or
//! host), every marker belongs to a bug, every bug input and seed directory exists.

use std::collections::BTreeSet;
use std::path::Path;

#[derive(serde::Deserialize)]
struct Manifest {
    target: Vec<Target>,
}

#[derive(serde::Deserialize)]
struct Target {
    name: String,
    source: String,
    seeds: String,
    #[serde(default)]
    bug: Vec<Bug>,
}

#[derive(serde::Deserialize)]
struct Bug {
    kind: String,
    side: String,
    at: String,
    #[serde(default)]
    also_at: Vec<String>,
    input: String,
}

fn line_of(at: &str) -> (String, usize) {
    let (file, line) = at.rsplit_once(':').expect("file:line");
    (file.to_string(), line.parse().expect("a line number"))
}

#[test]
fn manifest_matches_the_markers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("fuzz-targets/targets.toml")).unwrap();
    let m: Manifest = toml::from_str(&text).unwrap();
    assert!(
        m.target
            .iter()
            .filter(|t| t.source.ends_with(".cu"))
            .count()
            >= 6
    );
    for t in &m.target {
        assert!(
            root.join(&t.seeds).is_dir(),
            "{}: seeds {}",
            t.name,
            t.seeds
        );
        let src = std::fs::read_to_string(root.join(&t.source)).unwrap();
        let lines: Vec<&str> = src.lines().collect();
        let marked: BTreeSet<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains("cusafe-expect:") || l.contains("asan-expect:"))
            .map(|(i, _)| i + 1)
            .collect();
        let mut claimed = BTreeSet::new();
        for b in &t.bug {
            assert!(root.join(&b.input).is_file(), "{}: {}", t.name, b.input);
            for at in std::iter::once(&b.at).chain(&b.also_at) {
                let (file, n) = line_of(at);
                assert_eq!(file, t.source, "{at}");
                let l = lines[n - 1];
                let marker = if b.side == "device" {
                    "cusafe-expect:"
                } else {
                    "asan-expect:"
                };
                assert!(l.contains(marker), "{at}: no {marker} marker: {l}");
                if b.side == "device" || b.kind != "SEGV" {
                    assert!(l.contains(&b.kind), "{at}: marker is not {}: {l}", b.kind);
                }
                claimed.insert(n);
            }
        }
        assert_eq!(
            marked, claimed,
            "{}: markers without a bug, or bugs without a marker",
            t.name
        );
    }
}
