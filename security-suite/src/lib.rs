//! Scoring of suite runs: what each program should report (from `cusafe-expect:`
//! markers in its source) against what each tool printed on the GPU.

pub mod expect;
pub mod parse;
pub mod score;
