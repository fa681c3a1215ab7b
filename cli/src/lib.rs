//! cusafe's command-line tools, as a library the four binaries share.
//!
//! * [`clangxx`]: `cusafe-clang++`, the drop-in for `clang++` on CUDA code: reads the
//!   command line and rewrites it into the clang++-19 command that builds an instrumented
//!   (or, with `--cusafe-no-instrument`, plain) binary.
//! * [`nvcc`]: `cusafe-nvcc`, nvcc's command line mapped onto `cusafe-clang++`.
//! * [`fatbinary`] and [`nvfatbin`]: `cusafe-fatbinary`, the replacement for NVIDIA's
//!   `fatbinary` tool that clang calls, over libnvfatbin; [`resources`]: its warnings
//!   about instrumented kernels whose registers leave no room for 1024-thread blocks,
//!   which [`plain_registers`] completes with the plain build's counts.
//! * [`run`], [`doctor`], [`fuzz`], [`gen`], [`report`]: the subcommands of `cusafe`.
//! * [`locate`]: where the tools find clang-19, the CUDA tree, the pass plugin and the
//!   runtime (environment overrides first, then paths relative to the executable).
//!
//! `docs/cli.md` describes the flags, environment variables and lookup rules.

#![warn(missing_docs)]

pub mod clangxx;
pub mod doctor;
pub mod fatbinary;
pub mod fuzz;
pub mod gen;
pub mod inspect;
pub mod locate;
pub mod nvcc;
pub mod nvfatbin;
pub mod plain_registers;
pub mod register_cap;
pub mod report;
pub mod resources;
pub mod run;
pub mod shell;
