//! The conversion over realistic reports of every origin (`cli/tests/fixtures/reports.jsonl`,
//! lines as the runtime's `report/json.rs` writes them: device, host API with and without
//! a usable call site, leaks with and without an allocation site, a device fault without
//! a finding), checked field by field and against the SARIF schema.

use std::path::Path;

use serde_json::{json, Value};

use super::input::{self, Report};
use super::place::{Anchor, Uris};
use super::sarif::{convert, key, FINGERPRINT};
use super::schema_check::assert_valid;
use super::text::message;

const FIXTURE: &str = include_str!("../../tests/fixtures/reports.jsonl");

fn reports() -> Vec<Report> {
    input::read("reports.jsonl", FIXTURE.as_bytes()).unwrap()
}

/// The log as JSON, checked against the schema.
fn log(reports: &[Report], srcroot: Option<&str>) -> Value {
    let uris = Uris::new(srcroot.map(Path::new)).unwrap();
    let log = serde_json::to_value(convert(reports, &uris).log).unwrap();
    assert_valid(&log);
    log
}

/// The result whose ruleId is `kind` and whose message contains `text`.
fn result<'a>(log: &'a Value, kind: &str, text: &str) -> &'a Value {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == kind && r["message"]["text"].as_str().unwrap().contains(text))
        .unwrap_or_else(|| panic!("no {kind} result with {text:?}"))
}

fn notifications(log: &Value) -> &Vec<Value> {
    log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap()
}

#[test]
fn an_empty_input_is_a_valid_log_without_results() {
    let log = log(&[], None);
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "cusafe");
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(run["tool"]["driver"]["rules"], json!([]));
    assert_eq!(run["results"], json!([]));
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    assert!(run["invocations"][0]
        .get("toolExecutionNotifications")
        .is_none());
}

#[test]
fn device_reports_are_results_at_their_line_deduplicated_across_processes() {
    let log = log(&reports(), None);
    let r = result(&log, "heap-buffer-overflow", "add_one");
    assert_eq!(r["level"], "error");
    assert_eq!(r["occurrenceCount"], 2);
    assert_eq!(r["properties"]["processes"], 2);
    // The first report read stands for the group.
    assert_eq!(r["properties"]["report"]["pid"], 4242);
    let loc = &r["locations"][0];
    assert_eq!(
        loc["physicalLocation"],
        json!({"artifactLocation": {"uri": "vec.cu"}, "region": {"startLine": 12, "startColumn": 5}})
    );
    assert_eq!(
        loc["logicalLocations"],
        json!([{"name": "add_one(int*, int)", "kind": "function"}])
    );
    assert_eq!(
        r["message"]["text"],
        "heap-buffer-overflow in kernel add_one(int*, int) at vec.cu:12:5: WRITE of size 4 at \
         0x00000e0000400290 by thread (100,0,0) in block (0,2,0); 0x00000e0000400290 is 0 bytes \
         after the end of the 400-byte buffer #3 (live). Buffer #3: 400 bytes, live; the \
         address is at offset 400 from its start. Buffer #3 was [allocated](1) in main at \
         /work/app/vec.cu:21:3. Reported 2 times by 2 processes."
    );
    let fp = r["partialFingerprints"][FINGERPRINT].as_str().unwrap();
    assert_eq!(fp.len(), 16);

    let uaf = result(&log, "use-after-free", "consume");
    let text = uaf["message"]["text"].as_str().unwrap();
    assert!(text.contains("READ of size 4"), "{text}");
    assert!(text.contains("Buffer #5: 1024 bytes, freed; the address is at offset 16"));
    assert!(text.ends_with(
        "Buffer #5 was [allocated](1) in main at /work/app/main.cu:30:5 and [freed](2) in \
         release_all(float**, int) at /work/app/util.cu:40:9."
    ));
    assert_eq!(uaf["occurrenceCount"], 1);
    let related = uaf["relatedLocations"].as_array().unwrap();
    assert_eq!(related.len(), 2);
    assert_eq!(related[0]["id"], 1);
    assert_eq!(
        related[0]["physicalLocation"],
        json!({"artifactLocation": {"uri": "file:///work/app/main.cu"},
               "region": {"startLine": 30, "startColumn": 5}})
    );
    assert_eq!(related[1]["id"], 2);
    assert_eq!(
        related[1]["logicalLocations"][0]["name"],
        "release_all(float**, int)"
    );
    let stacks: Vec<&str> = uaf["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(stacks, ["allocation of buffer #5", "free of buffer #5"]);
    assert_eq!(
        uaf["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "file:///work/app/kernels/consume.cu"
    );

    // A free in device code: no access, the FREE and the thread.
    let free = result(&log, "double-free", "release(int**)");
    let text = free["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("double-free in kernel release(int**) at src/heap dev.cu:8:3: FREE at 0x0000100000000040 by thread (0,0,0) in block (1,0,0); free of"), "{text}");
    assert_eq!(
        free["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/heap%20dev.cu"
    );
}

#[test]
fn host_reports_are_results_at_the_innermost_frame_with_the_call_stack() {
    let log = log(&reports(), None);
    let r = result(&log, "api-out-of-bounds", "cudaMemcpy (src)");
    assert_eq!(
        r["locations"][0]["physicalLocation"],
        json!({"artifactLocation": {"uri": "file:///work/app/examples/memcpy_overflow.cu"},
               "region": {"startLine": 12, "startColumn": 19}})
    );
    let text = r["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("api-out-of-bounds in cudaMemcpy (src) called from main at /work/app/examples/memcpy_overflow.cu:12:19: READ of range of 4000 bytes at 0x000012421a200100; src range"), "{text}");

    assert_eq!(r["stacks"][0]["message"]["text"], "call of cudaMemcpy");
    assert_eq!(
        r["relatedLocations"][0]["physicalLocation"]["region"]["startLine"],
        9
    );

    let df = result(&log, "double-free", "cudaFree");
    let stack = &df["stacks"][0];
    assert_eq!(stack["message"]["text"], "call of cudaFree");
    let frames = stack["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1]["location"]["logicalLocations"][0]["name"], "main");
    assert_eq!(
        frames[1]["location"]["physicalLocation"]["region"]["startLine"],
        77
    );
    assert_eq!(
        df["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "file:///work/app/util.cu"
    );
    assert!(df["message"]["text"].as_str().unwrap().contains(
        "Buffer #4: 256 bytes, freed. Buffer #4 was [allocated](1) in make(int) at \
             /work/app/util.cu:12:7 and [freed](2) in main at /work/app/main.cu:75:5."
    ));
    assert_eq!(df["stacks"].as_array().unwrap().len(), 3);
}

#[test]
fn leaks_are_results_at_their_allocation_site_one_per_site() {
    let log = log(&reports(), None);
    let leak = result(&log, "leak", "cudaMalloc");
    assert_eq!(leak["level"], "warning");
    // Buffers #2 and #7 of one process and #2 of another, all from main.cu:50.
    assert_eq!(leak["occurrenceCount"], 3);
    assert_eq!(leak["properties"]["processes"], 2);
    assert_eq!(
        leak["locations"][0]["physicalLocation"],
        json!({"artifactLocation": {"uri": "file:///work/app/main.cu"},
               "region": {"startLine": 50, "startColumn": 3}})
    );
    assert_eq!(
        leak["message"]["text"],
        "leak in cudaMalloc called from main at /work/app/main.cu:50:3; the 4096-byte buffer \
         #2 (live) was never freed. Buffer #2: 4096 bytes, live. Reported 3 times by 2 \
         processes."
    );
    assert!(leak.get("relatedLocations").is_none());
    assert_eq!(
        leak["stacks"][0]["message"]["text"],
        "allocation of buffer #2"
    );
}

#[test]
fn reports_without_a_position_are_notifications() {
    let log = log(&reports(), None);
    let notes = notifications(&log);
    let kinds: Vec<&str> = notes
        .iter()
        .map(|n| n["associatedRule"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["cuda-error-without-finding", "invalid-free", "leak"]
    );
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 6, "10 unique reports, 3 without a position");
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for n in notes {
        let i = n["associatedRule"]["index"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], n["associatedRule"]["id"]);
        assert!(n.get("locations").is_none());
    }

    let fault = &notes[0];
    assert_eq!(fault["level"], "warning");
    let text = fault["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("cuda-error-without-finding: CUDA error 700 (cudaErrorIllegalAddress) came without a cusafe finding; kernels launched since the last successful wait: scale(float*), add_one(int*, int) (last: add_one(int*, int); run with CUDA_LAUNCH_BLOCKING=1 to name the one). Possible causes: the fault is in uninstrumented code"), "{text}");

    // A host call site without file:line (built without -g) gives no position.
    let invalid = &notes[1];
    assert_eq!(invalid["level"], "error");
    assert!(invalid["message"]["text"]
        .as_str()
        .unwrap()
        .starts_with("invalid-free in cudaFree called from main; never allocated: "));

    // A leak without its allocation site (alloc_backtrace=0).
    let leak = &notes[2];
    assert_eq!(leak["level"], "warning");
    assert_eq!(leak["properties"]["occurrences"], 1);
    assert_eq!(
        leak["message"]["text"],
        "leak in cudaMalloc; the 4096-byte buffer #9 (live) was never freed. Buffer #9: 4096 \
         bytes, live."
    );
    assert_eq!(
        leak["properties"]["fingerprint"][FINGERPRINT]
            .as_str()
            .unwrap()
            .len(),
        16
    );
}

#[test]
fn one_rule_per_kind_with_descriptions_help_and_level() {
    let log = log(&reports(), None);
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "api-out-of-bounds",
            "cuda-error-without-finding",
            "double-free",
            "heap-buffer-overflow",
            "invalid-free",
            "leak",
            "use-after-free"
        ]
    );
    let heap = &rules[3];
    assert_eq!(heap["shortDescription"]["text"], "Heap buffer overflow");
    assert!(heap["fullDescription"]["text"]
        .as_str()
        .unwrap()
        .contains("outside its exact bounds"));
    assert_eq!(
        heap["help"]["text"],
        "the access is outside the buffer: check the index and the launch geometry against the buffer's element count."
    );
    assert_eq!(heap["defaultConfiguration"]["level"], "error");
    assert_eq!(rules[5]["defaultConfiguration"]["level"], "warning");
    assert!(rules[1]["help"]["text"]
        .as_str()
        .unwrap()
        .contains("CUDA_LAUNCH_BLOCKING=1"));
    for r in log["runs"][0]["results"].as_array().unwrap() {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
    }
}

#[test]
fn srcroot_makes_uris_relative_and_fingerprints_machine_independent() {
    let log_a = log(&reports(), Some("/work/app"));
    let run = &log_a["runs"][0];
    assert_eq!(
        run["originalUriBaseIds"],
        json!({"SRCROOT": {"uri": "file:///work/app/"}})
    );
    let uaf = result(&log_a, "use-after-free", "consume");
    assert_eq!(
        uaf["locations"][0]["physicalLocation"]["artifactLocation"],
        json!({"uri": "kernels/consume.cu", "uriBaseId": "SRCROOT"})
    );
    let heap = result(&log_a, "heap-buffer-overflow", "add_one");
    assert_eq!(
        heap["locations"][0]["physicalLocation"]["artifactLocation"],
        json!({"uri": "vec.cu", "uriBaseId": "SRCROOT"})
    );

    // The same reports from a checkout elsewhere: same fingerprints.
    let moved: Vec<Report> = FIXTURE
        .replace("/work/app/", "/home/ci/checkout/")
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| input::read("moved", l.as_bytes()).unwrap().remove(0))
        .collect();
    let log_b = log(&moved, Some("/home/ci/checkout"));
    let prints = |log: &Value| -> Vec<Value> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["partialFingerprints"].clone())
            .collect()
    };
    assert_eq!(prints(&log_a), prints(&log_b));
    let all = prints(&log_a);
    for (i, a) in all.iter().enumerate() {
        assert!(!all[i + 1..].contains(a), "fingerprint {a} twice");
    }
}

#[test]
fn the_dedup_key_ignores_what_varies_between_runs_of_a_bug() {
    let rs = reports();
    let uris = Uris::default();
    // Lines 1 and 5: same site, other process, thread, block, address and offset.
    assert_eq!(key(&rs[0].fields, &uris), key(&rs[3].fields, &uris));
    // Same site in another kernel: another finding.
    let mut other = rs[0].fields.clone();
    other.kernel = Some("add_two(int*, int)".into());
    assert_ne!(key(&rs[0].fields, &uris), key(&other, &uris));
    // A host call from another frame: another finding.
    let mut moved = rs[6].fields.clone();
    moved.call_site = Some(vec![
        "release_all(float**, int) at /work/app/util.cu:41:9".into()
    ]);
    assert_ne!(key(&rs[6].fields, &uris), key(&moved, &uris));
    // Leaks: by allocation site (other buffers, other processes: one finding) ...
    assert_eq!(key(&rs[8].fields, &uris), key(&rs[9].fields, &uris));
    assert_eq!(key(&rs[8].fields, &uris), key(&rs[10].fields, &uris));
    // ... and without one, by buffer id and size.
    let mut other = rs[11].fields.clone();
    other.buffer.as_mut().unwrap().id = 10;
    assert_ne!(key(&rs[11].fields, &uris), key(&other, &uris));
}

#[test]
fn messages_name_atomics_ranges_and_single_processes() {
    let mut f = reports()[0].fields.clone();
    f.access = Some(input::Access {
        write: true,
        atomic: true,
        range: false,
        size: 8,
    });
    f.detail = None;
    f.buffer = None;
    assert_eq!(
        message(&f, &Anchor::of(&f), 3, 1),
        "heap-buffer-overflow in kernel add_one(int*, int) at vec.cu:12:5: ATOMIC of size 8 at \
         0x00000e0000400290 by thread (100,0,0) in block (0,2,0). Reported 3 times by 1 process."
    );
    f.file = Some(String::new());
    f.line = Some(0);
    assert!(message(&f, &Anchor::of(&f), 1, 1)
        .contains("kernel add_one(int*, int) at <unknown location>:"));
}
