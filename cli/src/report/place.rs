//! Source positions in reports (a device report's `file:line:col`, the frames of a host
//! call site and of a buffer's allocation and free) and the SARIF artifact locations they
//! become.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_sarif::sarif::ArtifactLocation;

use super::input::{Fields, Place};
use super::rules::FAULT_WITHOUT_FINDING;

/// The `uriBaseId` of paths under `--srcroot`.
pub const SRCROOT: &str = "SRCROOT";

/// What stays unescaped in a URI path: unreserved characters and `/`.
const PATH_SET: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// A position in a source file as a report names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The path as the compiler or the debug info recorded it.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, when known.
    pub col: Option<u32>,
}

impl Position {
    /// A device report's position; `None` when the file or line is unknown ("" or 0).
    pub fn new(file: &str, line: u32, col: u32) -> Option<Position> {
        (!file.is_empty() && line > 0).then(|| Position {
            file: file.to_string(),
            line,
            col: (col > 0).then_some(col),
        })
    }

    /// Parses `file:line:col` or `file:line`.
    fn parse(text: &str) -> Option<Position> {
        let (rest, last) = text.rsplit_once(':')?;
        let last: u32 = last.parse().ok()?;
        match rest
            .rsplit_once(':')
            .and_then(|(file, line)| Some((file, line.parse::<u32>().ok()?)))
        {
            Some((file, line)) => Position::new(file, line, last),
            None => Position::new(rest, last, 0),
        }
    }
}

/// One frame of a host call site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The function.
    pub function: String,
    /// Where in it, when the program was built with debug info.
    pub position: Option<Position>,
}

impl Frame {
    /// Parses a `call_site` entry: `"function at file:line:col"` or `"function"`.
    pub fn parse(text: &str) -> Frame {
        match text.rsplit_once(" at ") {
            Some((function, loc)) => match Position::parse(loc) {
                Some(position) => Frame {
                    function: function.to_string(),
                    position: Some(position),
                },
                None => Frame {
                    function: text.to_string(),
                    position: None,
                },
            },
            None => Frame {
                function: text.to_string(),
                position: None,
            },
        }
    }
}

/// Where a report points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The result's position: a device report's `file:line:col`; a host report's innermost
    /// frame with one (of the call site; of the allocation site for a leak, which the
    /// runtime reports at exit, with no call).
    pub position: Option<Position>,
    /// A host report's frames, innermost first (the call site, or a leak's allocation site).
    pub frames: Vec<Frame>,
    /// Whether [`Anchor::frames`] is the allocation site (a leak).
    pub frames_are_alloc: bool,
    /// The buffer's allocation site, innermost first.
    pub alloc: Vec<Frame>,
    /// The buffer's free site, innermost first.
    pub free: Vec<Frame>,
}

impl Anchor {
    /// Where `f` points.
    pub fn of(f: &Fields) -> Anchor {
        let parse = |s: &Option<Vec<String>>| -> Vec<Frame> {
            s.iter().flatten().map(|s| Frame::parse(s)).collect()
        };
        let alloc = parse(&f.buffer.as_ref().and_then(|b| b.alloc_site.clone()));
        let free = parse(&f.buffer.as_ref().and_then(|b| b.free_site.clone()));
        let call = parse(&f.call_site);
        let frames_are_alloc = f.place == Place::Host && call.is_empty() && f.kind == "leak";
        let frames = if frames_are_alloc {
            alloc.clone()
        } else {
            call
        };
        let position = match f.place {
            Place::Device if f.kind == FAULT_WITHOUT_FINDING => None,
            Place::Device => Position::new(
                f.file.as_deref().unwrap_or(""),
                f.line.unwrap_or(0),
                f.col.unwrap_or(0),
            ),
            Place::Host => first_position(&frames).map(|(_, p)| p.clone()),
        };
        Anchor {
            position,
            frames,
            frames_are_alloc,
            alloc,
            free,
        }
    }

    /// The allocation site as a related location (none when it is the result's own).
    pub fn alloc_related(&self) -> Option<(&Frame, &Position)> {
        if self.frames_are_alloc {
            None
        } else {
            first_position(&self.alloc)
        }
    }

    /// The free site as a related location.
    pub fn free_related(&self) -> Option<(&Frame, &Position)> {
        first_position(&self.free)
    }
}

/// The innermost frame with a position.
fn first_position(frames: &[Frame]) -> Option<(&Frame, &Position)> {
    frames
        .iter()
        .find_map(|f| f.position.as_ref().map(|p| (f, p)))
}

/// Turns file paths into SARIF artifact locations: relative to the source root (with
/// `uriBaseId` [`SRCROOT`]) when one is given and the path is in it, else absolute
/// `file://` URIs; a relative path stays relative (to the source root when given).
#[derive(Clone, Debug, Default)]
pub struct Uris {
    /// The source root as given (made absolute) and, when it differs, its canonical form.
    roots: Vec<PathBuf>,
}

impl Uris {
    /// For paths relative to `srcroot` (none: absolute URIs only).
    pub fn new(srcroot: Option<&Path>) -> std::io::Result<Uris> {
        let mut roots = Vec::new();
        if let Some(dir) = srcroot {
            roots.push(normalize(&std::path::absolute(dir)?));
            if let Ok(real) = dir.canonicalize() {
                if !roots.contains(&real) {
                    roots.push(real);
                }
            }
        }
        Ok(Uris { roots })
    }

    /// The artifact location of `file`.
    pub fn artifact(&self, file: &str) -> ArtifactLocation {
        let path = normalize(Path::new(file));
        let under_root = |root: &PathBuf| path.strip_prefix(root).ok().map(Path::to_path_buf);
        let relative = if path.is_absolute() {
            self.roots.iter().find_map(under_root)
        } else {
            Some(path.clone())
        };
        match relative {
            Some(rel) if !self.roots.is_empty() => ArtifactLocation::builder()
                .uri(encode(&rel))
                .uri_base_id(SRCROOT)
                .build(),
            Some(rel) => ArtifactLocation::builder().uri(encode(&rel)).build(),
            None => ArtifactLocation::builder()
                .uri(format!("file://{}", encode(&path)))
                .build(),
        }
    }

    /// `run.originalUriBaseIds`: where [`SRCROOT`] is (`None` without a source root).
    pub fn base_ids(&self) -> Option<BTreeMap<String, ArtifactLocation>> {
        let root = self.roots.first()?;
        let mut uri = format!("file://{}", encode(root));
        if !uri.ends_with('/') {
            uri.push('/');
        }
        let base = ArtifactLocation::builder().uri(uri).build();
        Some(BTreeMap::from([(SRCROOT.to_string(), base)]))
    }
}

/// `path` without `.` components (`..` is kept: no file system lookups).
fn normalize(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// A path as a URI path: every byte but unreserved characters and `/` percent-encoded.
fn encode(path: &Path) -> String {
    utf8_percent_encode(&path.to_string_lossy(), PATH_SET).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(a: &ArtifactLocation) -> (String, Option<String>) {
        (a.uri.clone().unwrap(), a.uri_base_id.clone())
    }

    #[test]
    fn frames_and_positions_parse() {
        assert_eq!(
            Frame::parse("main at /src/app.cu:11:5"),
            Frame {
                function: "main".into(),
                position: Position::new("/src/app.cu", 11, 5),
            }
        );
        let f = Frame::parse("run(int) at ./a b.cu:7");
        assert_eq!(f.function, "run(int)");
        assert_eq!(f.position, Position::new("./a b.cu", 7, 0));
        assert_eq!(f.position.unwrap().col, None);
        for text in ["main", "f at somewhere", "f at x.cu:0:1", "f at :3:4"] {
            let f = Frame::parse(text);
            assert_eq!((f.function.as_str(), f.position), (text, None), "{text}");
        }
        assert_eq!(Position::new("", 3, 1), None);
        assert_eq!(Position::new("a.cu", 0, 1), None);
    }

    #[test]
    fn paths_become_uris() {
        let none = Uris::new(None).unwrap();
        assert_eq!(
            uri(&none.artifact("/w/src/a b#1.cu")),
            ("file:///w/src/a%20b%231.cu".into(), None)
        );
        assert_eq!(uri(&none.artifact("./k/x.cu")), ("k/x.cu".into(), None));
        assert_eq!(none.base_ids(), None);

        let root = Uris::new(Some(Path::new("/w/src/"))).unwrap();
        let rel = |p: &str| (p.to_string(), Some(SRCROOT.to_string()));
        assert_eq!(uri(&root.artifact("/w/src/k/./x.cu")), rel("k/x.cu"));
        assert_eq!(uri(&root.artifact("k/x.cu")), rel("k/x.cu"));
        assert_eq!(
            uri(&root.artifact("/usr/include/y.h")),
            ("file:///usr/include/y.h".into(), None)
        );
        assert_eq!(
            root.base_ids().unwrap()[SRCROOT].uri.as_deref(),
            Some("file:///w/src/")
        );
    }
}
