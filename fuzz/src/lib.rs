//! The engine of `cusafe fuzz`: coverage-guided whole-program fuzzing of CUDA programs
//! on LibAFL, with the sanitizers in the target's own process as the oracle.
//!
//! | module | what it does |
//! |---|---|
//! | [`target`] | the program under test: its command line, whether it is a fuzz build, persistent or not |
//! | [`env`] | the environment a target runs in (report files, ASan and cusafe options) |
//! | [`finding`] | a finding (cusafe JSON, ASan JSON, signal, timeout, CUDA error) and its dedup key |
//! | [`symbolize`] | host frames to function and file:line from the binary's DWARF |
//! | [`oracle`] | the LibAFL objective: reads this input's findings, keeps unique ones |
//! | [`crashes`] | the saved crash directories (input, report.txt, report.json, replay.sh) |
//! | [`runner`] | one run of a target outside LibAFL (replay, minimise, the memcheck oracle) |
//! | [`memcheck`] | the cuFuzz-style baseline oracle: compute-sanitizer on new-coverage inputs |
//! | [`stats`] | the status line, `stats.json` and the history behind the plot |
//! | [`plot`] | the SVG of edges and unique crashes over time |
//! | [`campaign`] | one client's fuzzing loop (executor, observers, feedbacks, stages) |
//! | [`logging`] | LibAFL's log on stderr (`CUSAFE_FUZZ_LOG=info`) |
//! | [`launch`] | several clients sharing a corpus through LibAFL's launcher and broker |
//! | [`minimize`] | input minimisation that keeps the same finding |
//! | [`numbers`] | the mutation for text formats: one decimal number to a nearby or boundary value |
//! | [`outdir`] | the output directory's layout |

pub mod campaign;
pub mod crashes;
pub mod env;
pub mod finding;
pub mod launch;
pub mod logging;
pub mod memcheck;
pub mod minimize;
pub mod numbers;
pub mod oracle;
pub mod outdir;
pub mod plot;
pub mod runner;
pub mod stats;
pub mod symbolize;
pub mod target;

/// What can go wrong; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The target is not usable as given.
    #[error("{0}")]
    Target(String),
    /// A file or directory problem.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// LibAFL failed.
    #[error("fuzzer: {0}")]
    Engine(String),
    /// Bad options.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

impl From<libafl::Error> for Error {
    fn from(e: libafl::Error) -> Self {
        Error::Engine(e.to_string())
    }
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
