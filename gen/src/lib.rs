//! `cusafe-gen`: random CUDA programs free of undefined behaviour, written after the
//! ideas of CUDAsmith (random kernels with barriers, atomics and vectors; EMI
//! variants under guards on an array the compiler cannot see), for differential
//! testing of the cusafe pass and runtime: a program built plain and built with
//! cusafe, at every optimisation level, must print the same checksums and produce no
//! report; a program with one planted bug must produce exactly that report.
//!
//! - [`ast`]: the representation; [`generate`]: a program from a seed;
//! - [`emi`]: dead-code and live-guard variants; [`plant`]: bug mode;
//! - [`emit`]: CUDA text (one file holds many programs); [`reduce`]: delta reduction
//!   over the representation; [`validate`]: the rules every program keeps.

pub mod ast;
pub mod emi;
pub mod emit;
pub mod generate;
pub mod plant;
pub mod reduce;
mod rng;
pub mod validate;

pub use ast::Program;
pub use emi::Emi;
pub use generate::Limits;

/// What to generate for one seed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Recipe {
    /// Size limits.
    pub limits: Limits,
    /// An EMI variant of the base program instead of the base.
    pub emi: Option<Emi>,
    /// Plant one bug; `Some(i)` picks [`plant::CHOICES`]`[i % len]`, `Some(None)`
    /// lets the seed choose.
    pub plant: Option<Option<usize>>,
}

/// The program of `seed` under `recipe`.
pub fn program(seed: u64, recipe: &Recipe) -> Program {
    let mut p = generate::program(seed, &recipe.limits);
    if let Some(emi) = recipe.emi {
        p = emi::variant(&p, emi, seed, &recipe.limits);
    }
    if let Some(choice) = recipe.plant {
        plant::plant(&mut p, seed, choice);
    }
    p
}
