//! Scoring of suite runs: what each program should report (from `cusafe-expect:`
//! markers in its source, classified by the suite's manifest) against what each tool
//! printed on the GPU.

pub mod expect;
pub mod manifest;
pub mod parse;
pub mod score;
