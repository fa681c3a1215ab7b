//! Tests that run the real `cusafe-clang++` (built as `cusafe-clangxx`), `cusafe-nvcc`,
//! `cusafe` and `cusafe-fatbinary` binaries and look at what they print and do.

mod asan;
mod badinput;
mod build;
mod clangxx;
mod common;
mod cusafe;
mod fatbinary;
mod fuzz;
mod gen;
mod nvcc;
mod sarif;
