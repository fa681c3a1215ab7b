//! Test helper, shared by the unit tests and the CLI tests (`cli/tests/cli/sarif.rs`
//! includes this file): validates SARIF logs against the SARIF 2.1.0 JSON schema (the
//! SARIF TC's draft-07 edition) that the `serde-sarif` crate ships beside its sources
//! and builds its types from; the file is found through `cargo metadata`, so it comes
//! with the crate from crates.io and nothing is downloaded or committed here. Formats
//! (`uri`, `uri-reference`, `date-time`) are checked, as GitHub's upload does. The
//! validator is offline (`jsonschema` is built without retrievers, and `.offline()`
//! refuses any `$ref` outside the schema, which has none). Two rules the schema cannot
//! express are checked too: every result has a file location (GitHub code scanning
//! rejects the whole log otherwise), and every embedded link `[text](N)` in a result's
//! message names exactly one of its `relatedLocations`.

use std::path::PathBuf;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

/// `src/schema.json` of the `serde-sarif` package this workspace builds with: the
/// version in `Cargo.lock`, unpacked by cargo under `$CARGO_HOME/registry/src/`.
pub fn schema_path() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).expect("Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"serde-sarif\""))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_owned())
        .expect("serde-sarif in Cargo.lock (a dependency of cusafe-cli)");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
        });
    let package = format!("serde-sarif-{version}");
    std::fs::read_dir(cargo_home.join("registry/src"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|index| index.path().join(&package).join("src/schema.json"))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!(
                "{package}/src/schema.json not found under {}/registry/src (cargo fetch)",
                cargo_home.display()
            )
        })
}

/// The `language` pattern as serde-sarif's schema has it, and as OASIS's errata 01 has it.
const BROKEN_LANGUAGE_PATTERN: &str = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
const FIXED_LANGUAGE_PATTERN: &str = r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#;

/// The validator of the schema.
fn validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = schema_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}: serde-sarif's schema", path.display()))
            // This edition's pattern of `language` is no regex (an unmatched `]`); the
            // OASIS errata 01 corrected it to this one.
            .replace(BROKEN_LANGUAGE_PATTERN, FIXED_LANGUAGE_PATTERN);
        let schema: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        jsonschema::options()
            .offline()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{}: not a usable schema: {e}", path.display()))
    })
}

/// Every schema error of `log` (`/instance/path: error`).
pub fn errors(log: &Value) -> Vec<String> {
    validator()
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Fails the test if `log` breaks the schema or one of the two rules above.
pub fn assert_valid(log: &Value) {
    let errors = errors(log);
    assert!(
        errors.is_empty(),
        "the SARIF log breaks the schema:\n{}\n{log:#}",
        errors.join("\n")
    );
    for (i, r) in log["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        assert!(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string(),
            "result {i} has no file location: {r:#}"
        );
        let text = r["message"]["text"].as_str().unwrap_or_default();
        for link in text.split("](").skip(1) {
            let id: i64 = link
                .split(')')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("result {i}: not a link to a location id: {text}"));
            let targets = r["relatedLocations"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|l| l["id"] == id)
                .count();
            assert_eq!(targets, 1, "result {i}: link ({id}) in {text:?}: {r:#}");
        }
    }
}
