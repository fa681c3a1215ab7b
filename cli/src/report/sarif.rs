//! Reports → one SARIF 2.1.0 log with one run.
//!
//! Identical reports (same [`key`]) become one result with `occurrenceCount`. A report
//! with no source position (a fault without a finding, a host report of code built
//! without `-g`, a leak without its allocation site) becomes a notification of the run's
//! invocation instead of a result: GitHub code scanning rejects a whole log if one result
//! lacks a file location.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{json, Value};
use serde_sarif::sarif::{
    Invocation, Location, LogicalLocation, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor,
    ReportingDescriptorReference, Result as SarifResult, Run, Sarif, Stack, StackFrame, Tool,
    ToolComponent,
};

use super::input::{Fields, Place, Report};
use super::place::{Anchor, Frame, Position, Uris};
use super::rules::{self, FAULT_HELP, FAULT_WITHOUT_FINDING};
use super::text::{full_stop, message, ALLOC_ID, FREE_ID};

/// `$schema` of the log: the OASIS SARIF 2.1.0 (errata 01) schema.
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The name of cusafe's entry in `partialFingerprints`.
pub const FINGERPRINT: &str = "cusafeSite/v1";

/// A converted log and what went where.
#[derive(Debug)]
pub struct Conversion {
    /// The log.
    pub log: Sarif,
    /// Reports read.
    pub reports: usize,
    /// Results (unique reports with a source position).
    pub results: usize,
    /// Notifications (unique reports without one).
    pub notifications: usize,
}

/// Identical reports: the first one read, how many, from which processes.
struct Group<'a> {
    first: &'a Report,
    key: String,
    count: usize,
    pids: BTreeSet<u32>,
}

/// Converts `reports` (in reading order), placing files with `uris`.
pub fn convert(reports: &[Report], uris: &Uris) -> Conversion {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    for r in reports {
        let key = key(&r.fields, uris);
        let i = *by_key.entry(key.clone()).or_insert_with(|| {
            groups.push(Group {
                first: r,
                key,
                count: 0,
                pids: BTreeSet::new(),
            });
            groups.len() - 1
        });
        groups[i].count += 1;
        groups[i].pids.extend(r.fields.pid);
    }

    // One rule per kind seen, sorted by id; help from the first report's hint.
    let mut kinds: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for g in &groups {
        let f = &g.first.fields;
        kinds.entry(&f.kind).or_insert(f.hint.as_deref());
    }
    let index: HashMap<&str, i64> = kinds.keys().zip(0..).map(|(k, i)| (*k, i)).collect();
    let rules: Vec<ReportingDescriptor> = kinds.iter().map(|(k, hint)| rule(k, *hint)).collect();

    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for g in &groups {
        let f = &g.first.fields;
        let a = Anchor::of(f);
        let text = message(f, &a, g.count, g.pids.len());
        let level = rules::describe(&f.kind).level;
        let fingerprint = BTreeMap::from([(FINGERPRINT.to_string(), fingerprint(&g.key))]);
        let mut props = BTreeMap::from([
            ("processes".to_string(), json!(g.pids.len())),
            ("report".to_string(), g.first.raw.clone()),
        ]);
        let Some(pos) = &a.position else {
            props.insert("occurrences".to_string(), json!(g.count));
            props.insert("fingerprint".to_string(), json!(fingerprint));
            notifications.push(
                Notification::builder()
                    .message(Message::builder().text(text).build())
                    .level(json!(level))
                    .associated_rule(
                        ReportingDescriptorReference::builder()
                            .id(f.kind.clone())
                            .index(index[f.kind.as_str()])
                            .build(),
                    )
                    .properties(bag(props))
                    .build(),
            );
            continue;
        };
        let logical = match f.place {
            Place::Device => f.kernel.clone(),
            Place::Host => a.frames.first().map(|fr| fr.function.clone()),
        };
        let mut result = SarifResult::builder()
            .rule_id(f.kind.clone())
            .rule_index(index[f.kind.as_str()])
            .level(level)
            .message(Message::builder().text(text).build())
            .locations(vec![location(pos, logical, uris)])
            .occurrence_count(g.count as i64)
            .partial_fingerprints(fingerprint)
            .properties(bag(props))
            .build();
        let related: Vec<Location> = [(ALLOC_ID, a.alloc_related()), (FREE_ID, a.free_related())]
            .into_iter()
            .filter_map(|(id, site)| {
                let (fr, p) = site?;
                let mut loc = location(p, Some(fr.function.clone()), uris);
                loc.id = Some(id);
                Some(loc)
            })
            .collect();
        if !related.is_empty() {
            result.related_locations = Some(related);
        }
        let stacks = stacks(f, &a, uris);
        if !stacks.is_empty() {
            result.stacks = Some(stacks);
        }
        results.push(result);
    }

    let (n_results, n_notifications) = (results.len(), notifications.len());
    let mut invocation = Invocation::builder().execution_successful(true).build();
    if !notifications.is_empty() {
        invocation.tool_execution_notifications = Some(notifications);
    }
    let driver = ToolComponent::builder()
        .name("cusafe")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let mut run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .invocations(vec![invocation])
        .build();
    run.original_uri_base_ids = uris.base_ids();
    let log = Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build();
    Conversion {
        log,
        reports: reports.len(),
        results: n_results,
        notifications: n_notifications,
    }
}

/// What makes two reports the same finding, fields joined by U+001F:
/// * device: kind, kernel and source position (the runtime's own identity of a check
///   site, which reports once per process): threads, blocks, buffers and addresses differ
///   between runs of the same bug;
/// * fault without a finding: kind, CUDA error and the kernel launched last;
/// * host: kind, API, operand and every frame of the call site (function and position;
///   the same call reached from two places is two findings); for a leak, which has no
///   call site, of the allocation site (leaks from one site are one finding, as in
///   LeakSanitizer); without frames, the buffer's id and size (ids count allocations, so
///   they match between runs of a deterministic program).
///
/// Positions are written as their URIs, so keys (and fingerprints) do not depend on the
/// machine when `--srcroot` is given.
pub fn key(f: &Fields, uris: &Uris) -> String {
    let pos = |p: &Position| {
        let a = uris.artifact(&p.file);
        let base = a.uri_base_id.unwrap_or_default();
        let uri = a.uri.unwrap_or_default();
        format!("{base}:{uri}:{}:{}", p.line, p.col.unwrap_or(0))
    };
    let opt = |s: &Option<String>| s.clone().unwrap_or_default();
    let a = Anchor::of(f);
    let mut parts: Vec<String> = vec![f.kind.clone()];
    match f.place {
        Place::Device if f.kind == FAULT_WITHOUT_FINDING => {
            let code = f.code.map(|c| c.to_string()).unwrap_or_default();
            parts.extend([code, opt(&f.name), opt(&f.kernel)]);
        }
        Place::Device => {
            parts.push(opt(&f.kernel));
            parts.push(a.position.as_ref().map(pos).unwrap_or_default());
        }
        Place::Host => {
            parts.extend([opt(&f.api), opt(&f.operand)]);
            if a.frames.is_empty() {
                let b = f.buffer.as_ref().map(|b| format!("#{}:{}", b.id, b.size));
                parts.push(b.unwrap_or_default());
            }
            for fr in &a.frames {
                let at = fr.position.as_ref().map(pos).unwrap_or_default();
                parts.push(format!("{}@{at}", fr.function));
            }
        }
    }
    parts.join("\u{1f}")
}

/// FNV-1a (64 bits) of `key`, as 16 hex digits: stable across versions and machines.
fn fingerprint(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The rule of `kind`.
fn rule(kind: &str, hint: Option<&str>) -> ReportingDescriptor {
    let r = rules::describe(kind);
    let help = match (hint, kind) {
        (Some(h), _) => h,
        (None, FAULT_WITHOUT_FINDING) => FAULT_HELP,
        (None, _) => "see the report's message and cusafe's docs/runtime.md",
    };
    let text = |s: &str| MultiformatMessageString::builder().text(s).build();
    ReportingDescriptor::builder()
        .id(kind)
        .short_description(text(&r.short))
        .full_description(text(&r.full))
        .help(text(&full_stop(help)))
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(r.level))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(vec!["cuda".to_string()])
                .build(),
        )
        .build()
}

/// A location at `pos`, in the function `logical` when known.
fn location(pos: &Position, logical: Option<String>, uris: &Uris) -> Location {
    let mut region = Region::builder().start_line(i64::from(pos.line)).build();
    region.start_column = pos.col.map(i64::from);
    let physical = PhysicalLocation::builder()
        .artifact_location(uris.artifact(&pos.file))
        .region(region)
        .build();
    let mut loc = Location::builder().physical_location(physical).build();
    loc.logical_locations = logical.map(|name| {
        vec![LogicalLocation::builder()
            .name(name)
            .kind("function")
            .build()]
    });
    loc
}

/// The report's backtraces as SARIF stacks, innermost frame first: the host call site
/// (or a leak's allocation site), then the buffer's allocation and free sites.
fn stacks(f: &Fields, a: &Anchor, uris: &Uris) -> Vec<Stack> {
    let id = f.buffer.as_ref().map_or(0, |b| b.id);
    let first = if a.frames_are_alloc {
        format!("allocation of buffer #{id}")
    } else {
        format!("call of {}", f.api.as_deref().unwrap_or("the CUDA API"))
    };
    let alloc = (!a.frames_are_alloc).then_some(&a.alloc);
    [
        (first, Some(&a.frames)),
        (format!("allocation of buffer #{id}"), alloc),
        (format!("free of buffer #{id}"), Some(&a.free)),
    ]
    .into_iter()
    .filter_map(|(what, frames)| {
        let frames = frames.filter(|fs| !fs.is_empty())?;
        Some(stack(&what, frames, uris))
    })
    .collect()
}

/// `frames` as a SARIF stack with the message `what`.
fn stack(what: &str, frames: &[Frame], uris: &Uris) -> Stack {
    let frames: Vec<StackFrame> = frames
        .iter()
        .map(|fr| {
            let loc = match &fr.position {
                Some(pos) => location(pos, Some(fr.function.clone()), uris),
                None => Location::builder()
                    .logical_locations(vec![LogicalLocation::builder()
                        .name(fr.function.clone())
                        .kind("function")
                        .build()])
                    .build(),
            };
            StackFrame::builder().location(loc).build()
        })
        .collect();
    Stack::builder()
        .message(Message::builder().text(what).build())
        .frames(frames)
        .build()
}

/// A property bag of `props`.
fn bag(props: BTreeMap<String, Value>) -> PropertyBag {
    PropertyBag::builder().additional_properties(props).build()
}
