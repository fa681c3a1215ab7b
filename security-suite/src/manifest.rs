//! The suite's manifest (`security-suite/manifest.toml`): one `[[program]]` entry per
//! program, classifying its bug (class, subclass, memory space), naming the report kind
//! it must produce and saying whether the bug is in cusafe's scope. The file and line
//! come from the program's `cusafe-expect:` marker; [`Manifest::check`] makes sure the
//! two agree.
//!
//! ```toml
//! [[program]]
//! name = "heap_stencil2d_read_overflow"
//! class = "spatial"
//! subclass = "linear"
//! space = "global"
//! kind = "heap-buffer-overflow"
//! in_scope = true
//!
//! [[program]]
//! name = "oos_managed_overflow"
//! class = "spatial"
//! subclass = "managed"
//! space = "managed"
//! kind = "heap-buffer-overflow"
//! in_scope = false
//! reason = "cudaMallocManaged memory is foreign to cusafe"
//!
//! [[program]]
//! name = "heap_multigpu_dev1_overflow"
//! class = "spatial"
//! subclass = "multi-device"
//! space = "global"
//! kind = "heap-buffer-overflow"
//! in_scope = true
//! devices = 2
//! ```
//!
//! `devices` (default 1) is how many GPUs the program needs; the scorer skips it on a
//! run with fewer ([`crate::score`]).

use crate::expect::Expectation;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Bug classes; `correct` programs must produce no report.
pub const CLASSES: [&str; 3] = ["spatial", "temporal", "correct"];

/// Memory spaces a program's bug (or a correct program's idioms) is in; `device-heap`
/// is memory from `malloc`/`new` inside kernels.
pub const SPACES: [&str; 7] = [
    "global",
    "shared",
    "dynamic-shared",
    "local",
    "host-api",
    "managed",
    "device-heap",
];

/// Report kinds a bug program may expect (the runtime's names); `none` is the kind of
/// a correct program.
pub const KINDS: [&str; 14] = [
    "heap-buffer-overflow",
    "use-after-free",
    "pointer-overflow",
    "double-free",
    "invalid-free",
    "api-out-of-bounds",
    "stack-buffer-overflow",
    "shared-buffer-overflow",
    "stack-use-after-return",
    "stack-use-after-scope",
    "null-dereference",
    "wild-access",
    "allocation-size-too-big",
    "api-error",
];

/// The kind of a correct program.
pub const NO_REPORT: &str = "none";

/// One program's entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Program name: the file stem of `NAME.cu`.
    pub name: String,
    /// `spatial`, `temporal` or `correct` ([`CLASSES`]).
    pub class: String,
    /// Finer class, e.g. `linear`, `non-linear`, `uaf-delayed` (free text, not empty).
    pub subclass: String,
    /// Memory space ([`SPACES`]).
    pub space: String,
    /// Expected report kind ([`KINDS`]), or `none` for a correct program.
    pub kind: String,
    /// Whether cusafe's design covers the bug; out-of-scope bugs are expected misses
    /// and are left out of the found/missed totals.
    pub in_scope: bool,
    /// Why the bug is out of scope (required exactly when `in_scope = false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// GPUs the program needs (at least 1; default 1). With fewer the program prints
    /// `skipped: ...` and exits 77, and the scorer counts it as skipped.
    #[serde(default = "one_device", skip_serializing_if = "is_one_device")]
    pub devices: u32,
}

fn one_device() -> u32 {
    1
}

fn is_one_device(d: &u32) -> bool {
    *d == 1
}

impl Entry {
    /// Whether the entry describes a bug program.
    pub fn is_bug(&self) -> bool {
        self.class != "correct"
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    program: Vec<Entry>,
}

/// A parsed and validated manifest.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    entries: BTreeMap<String, Entry>,
}

fn one_of(what: &str, value: &str, allowed: &[&str]) -> Option<String> {
    (!allowed.contains(&value)).then(|| {
        format!(
            "{what} = \"{value}\" is not one of: {}",
            allowed
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

fn entry_problems(e: &Entry) -> Vec<String> {
    let mut p = Vec::new();
    if e.name.trim().is_empty() || e.name.contains('/') || e.name.ends_with(".cu") {
        p.push(format!(
            "name = \"{}\" must be a program's file stem (\"x\" for programs/x.cu)",
            e.name
        ));
    }
    p.extend(one_of("class", &e.class, &CLASSES));
    p.extend(one_of("space", &e.space, &SPACES));
    if e.subclass.trim().is_empty() {
        p.push(
            "subclass is empty; say which kind of bug or idiom (e.g. \"linear\", \"uaf-delayed\")"
                .into(),
        );
    }
    let mut kinds: Vec<&str> = KINDS.to_vec();
    kinds.push(NO_REPORT);
    p.extend(one_of("kind", &e.kind, &kinds));
    if e.is_bug() == (e.kind == NO_REPORT) {
        p.push(if e.is_bug() {
            format!(
                "class = \"{}\" with kind = \"none\": a bug program needs the report kind it must produce",
                e.class
            )
        } else {
            format!(
                "class = \"correct\" with kind = \"{}\": a correct program expects kind = \"none\"",
                e.kind
            )
        });
    }
    let reason = e.reason.as_deref().map(str::trim).unwrap_or("");
    match (e.in_scope, reason.is_empty()) {
        (false, true) => p.push(
            "in_scope = false needs a reason = \"...\" (why cusafe's design does not cover it)"
                .into(),
        ),
        (true, false) => {
            p.push("reason is only for in_scope = false; remove it or set in_scope = false".into())
        }
        _ => {}
    }
    if e.devices == 0 {
        p.push("devices = 0: a program needs at least one GPU (leave the field out for 1)".into());
    }
    if !e.in_scope && !e.is_bug() {
        p.push("a correct program cannot be out of scope; set in_scope = true".into());
    }
    p
}

impl Manifest {
    /// Parses and validates manifest text; `origin` names it in errors. All problems
    /// are reported at once, one a line.
    pub fn parse(text: &str, origin: &str) -> Result<Manifest, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            format!(
                "{origin}: not a valid manifest: {}",
                e.to_string().trim_end()
            )
        })?;
        let mut problems = Vec::new();
        let mut entries = BTreeMap::new();
        for e in file.program {
            for p in entry_problems(&e) {
                problems.push(format!("{origin}: program \"{}\": {p}", e.name));
            }
            if entries.contains_key(&e.name) {
                problems.push(format!(
                    "{origin}: program \"{}\" has two entries; keep one",
                    e.name
                ));
            }
            entries.insert(e.name.clone(), e);
        }
        if entries.is_empty() && problems.is_empty() {
            problems.push(format!(
                "{origin}: no [[program]] entries; add one per program"
            ));
        }
        if problems.is_empty() {
            Ok(Manifest { entries })
        } else {
            Err(problems.join("\n"))
        }
    }

    /// Reads and validates a manifest file.
    pub fn load(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the manifest {}: {e}; pass --manifest security-suite/manifest.toml",
                path.display()
            )
        })?;
        Manifest::parse(&text, &path.display().to_string())
    }

    /// The entry of `program`.
    pub fn get(&self, program: &str) -> Option<&Entry> {
        self.entries.get(program)
    }

    /// All entries, by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Cross-checks the manifest against the programs' markers: every program has an
    /// entry, every entry a program, and each marker's kind is the entry's kind (a
    /// program without a marker is a correct program, kind `none`). Returns every
    /// problem, one a line, each with its fix.
    pub fn check(&self, expects: &[Expectation]) -> Result<(), String> {
        let mut problems = Vec::new();
        let names: BTreeSet<&str> = expects.iter().map(|e| e.program.as_str()).collect();
        for x in expects {
            let Some(e) = self.get(&x.program) else {
                let hint = match &x.bug {
                    Some((kind, _)) => {
                        format!("kind = \"{kind}\", class = \"spatial\" or \"temporal\"")
                    }
                    None => "kind = \"none\", class = \"correct\"".into(),
                };
                problems.push(format!(
                    "{}: no manifest entry; add [[program]] name = \"{}\" with {hint}, subclass, space and in_scope",
                    x.file, x.program
                ));
                continue;
            };
            match &x.bug {
                Some((kind, line)) if *kind != e.kind => problems.push(if e.kind == NO_REPORT {
                    format!(
                        "{}:{line}: marker says {kind} but the manifest lists \"{}\" as correct (kind = \"none\"); remove the marker or fix the entry",
                        x.file, x.program
                    )
                } else {
                    format!(
                        "{}:{line}: marker says {kind} but the manifest says kind = \"{}\" for \"{}\"; make them agree",
                        x.file, e.kind, x.program
                    )
                }),
                None if e.kind != NO_REPORT => problems.push(format!(
                    "{}: the manifest expects {} but the program has no cusafe-expect marker; mark the faulting line with `// cusafe-expect: {}` or make the entry class = \"correct\", kind = \"none\"",
                    x.file, e.kind, e.kind
                )),
                _ => {}
            }
        }
        for name in self.entries.keys() {
            if !names.contains(name.as_str()) {
                problems.push(format!(
                    "manifest entry \"{name}\" has no program {name}.cu; remove the entry or add the program"
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}
