//! `cusafe fuzz`: coverage-guided fuzzing with the sanitizer as the oracle (design §8).
//! Not implemented yet; the subcommand exists so scripts and docs can name it, and says
//! so honestly instead of pretending to work.

/// What `cusafe fuzz` answers, on stderr, with exit status [`EXIT_CODE`].
pub const NOT_IMPLEMENTED: &str = "not implemented yet: tracked by the fuzz-mode issue";

/// The exit status of `cusafe fuzz`.
pub const EXIT_CODE: u8 = 2;
