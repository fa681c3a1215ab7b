//! The environment variables that configure the pass (`CUSAFE_PASS_*`): their names,
//! shared by the pass, which reads them once into its options, and by the tools that
//! set them for clang (`cusafe-clang++`'s flags, `cusafe gen build`).

/// `1`: a checks line per function on stderr.
pub const STATS: &str = "CUSAFE_PASS_STATS";
/// `1`: the LLVM verifier after instrumenting.
pub const VERIFY: &str = "CUSAFE_PASS_VERIFY";
/// `0`: no memory checks (coverage only).
pub const CHECKS: &str = "CUSAFE_PASS_CHECKS";
/// `0`: no check elimination.
pub const OPT: &str = "CUSAFE_PASS_OPT";
/// `0`: no launch-time bounds for kernels.
pub const LAUNCH_BOUNDS: &str = "CUSAFE_PASS_LAUNCH_BOUNDS";
/// `0`: no deferred branches (every check branches before its access).
pub const DEFER: &str = "CUSAFE_PASS_DEFER";
/// `0`: a failed deferred access goes to a sink instead of being skipped.
pub const PREDICATE: &str = "CUSAFE_PASS_PREDICATE";
/// `0`: the check of a load under an `if` stays in the load's block (by default it is
/// built at the `if`'s branch, which then skips the load where it fails).
pub const LIFT: &str = "CUSAFE_PASS_LIFT";
/// `0`: no kernel copies for blocks of a bounded shape.
pub const BOX_COPY: &str = "CUSAFE_PASS_BOX_COPY";
/// `0`: no index groups (one check of an index shared by several kernel parameters).
pub const INDEX_GROUPS: &str = "CUSAFE_PASS_INDEX_GROUPS";
/// `0`: no check compares a dominating check's offset (each builds its own).
pub const OFFSETS: &str = "CUSAFE_PASS_OFFSETS";
/// `0`: every loop range gets its own branch (by default those of one preheader share
/// one).
pub const LOOP_SETS: &str = "CUSAFE_PASS_LOOP_SETS";
/// `0`: cold paths stay calls (the IR tests read them so).
pub const INLINE_COLD: &str = "CUSAFE_PASS_INLINE_COLD";
/// `1`: cold paths that go on after a report; `skip`: and skip every failing access.
pub const RECOVER: &str = "CUSAFE_PASS_RECOVER";
/// `1` or `warp`: device edge coverage for `cusafe fuzz`.
pub const COVERAGE: &str = "CUSAFE_PASS_COVERAGE";
/// A file path: the pass appends the kernels whose loops run no check (one mangled
/// name a line; `cusafe-clang++` sets it to cap registers, docs/pass.md).
pub const LOOP_CLEAN: &str = "CUSAFE_PASS_LOOP_CLEAN";
/// Not read by the pass: where `cusafe-clang++` finds the pass plugin.
pub const PLUGIN: &str = "CUSAFE_PASS_PLUGIN";
