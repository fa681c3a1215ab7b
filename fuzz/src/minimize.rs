//! Input minimisation that keeps the same finding: delta debugging over byte chunks
//! (remove a chunk; keep the removal when the run still ends in a finding with the
//! same key), then the same with single bytes set to `0`/`'0'` to simplify what is
//! left. Every candidate is one run of the target ([`runner`](crate::runner)).

use std::path::Path;
use std::time::Duration;

use crate::finding::Finding;
use crate::runner;
use crate::symbolize::Symbolizer;
use crate::target::Target;
use crate::{Error, Result};

/// The result of a minimisation.
#[derive(Clone, Debug)]
pub struct Minimized {
    /// The smallest input found.
    pub input: Vec<u8>,
    /// Target runs made.
    pub runs: u64,
    /// The finding it keeps.
    pub finding: Finding,
}

/// Something that says whether an input still shows the finding.
pub trait Check {
    /// Whether `input` reproduces the finding.
    fn keeps(&mut self, input: &[u8]) -> Result<bool>;
}

/// Runs the target and compares the finding's key.
pub struct TargetCheck<'a> {
    target: &'a Target,
    work: &'a Path,
    timeout: Duration,
    key: String,
    sym: Symbolizer,
    /// Runs made.
    pub runs: u64,
}

impl Check for TargetCheck<'_> {
    fn keeps(&mut self, input: &[u8]) -> Result<bool> {
        self.runs += 1;
        let out = runner::run(
            self.target,
            input,
            self.work,
            self.timeout,
            &[],
            &mut self.sym,
        )?;
        Ok(out.finding().is_some_and(|f| f.key() == self.key))
    }
}

/// Delta debugging: the smallest input (by chunk removal, then byte simplification)
/// for which `check` holds. `input` must satisfy it.
pub fn ddmin(input: &[u8], check: &mut impl Check) -> Result<Vec<u8>> {
    let mut cur = input.to_vec();
    let mut chunk = cur.len().div_ceil(2).max(1);
    loop {
        let mut i = 0;
        let mut progressed = false;
        while i < cur.len() {
            let end = (i + chunk).min(cur.len());
            let mut cand = cur[..i].to_vec();
            cand.extend_from_slice(&cur[end..]);
            if !cand.is_empty() && check.keeps(&cand)? {
                cur = cand;
                progressed = true;
            } else {
                i = end;
            }
        }
        if chunk == 1 && !progressed {
            break;
        }
        if !progressed {
            chunk = chunk.div_ceil(2);
        }
    }
    for i in 0..cur.len() {
        for simpler in [b'0', 0u8] {
            if cur[i] == simpler {
                break;
            }
            let mut cand = cur.clone();
            cand[i] = simpler;
            if check.keeps(&cand)? {
                cur = cand;
                break;
            }
        }
    }
    Ok(cur)
}

/// Minimises `input` of `target` keeping the finding it shows now.
pub fn minimize(
    target: &Target,
    input: &[u8],
    work: &Path,
    timeout: Duration,
) -> Result<Minimized> {
    let mut sym = Symbolizer::default();
    let first = runner::run(target, input, work, timeout, &[], &mut sym)?;
    let finding = first.finding().ok_or_else(|| {
        Error::Target(
            "the input shows no finding when run now, so there is nothing to keep while minimising: check it with `cusafe fuzz replay` first".into(),
        )
    })?;
    let mut check = TargetCheck {
        target,
        work,
        timeout,
        key: finding.key(),
        sym,
        runs: 1,
    };
    let input = ddmin(input, &mut check)?;
    Ok(Minimized {
        input,
        runs: check.runs,
        finding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Contains(&'static [u8], u64);
    impl Check for Contains {
        fn keeps(&mut self, input: &[u8]) -> Result<bool> {
            self.1 += 1;
            Ok(input.windows(self.0.len()).any(|w| w == self.0))
        }
    }

    #[test]
    fn keeps_only_the_needed_bytes() {
        let input = b"xxxxxxxxxxBUGyyyyyyyyyyyyyyyyyyyy";
        let mut c = Contains(b"BUG", 0);
        assert_eq!(ddmin(input, &mut c).unwrap(), b"BUG");
        assert!(c.1 < 200, "{} runs", c.1);
    }

    #[test]
    fn simplifies_bytes_that_do_not_matter() {
        struct FirstIsB;
        impl Check for FirstIsB {
            fn keeps(&mut self, input: &[u8]) -> Result<bool> {
                Ok(input.len() == 3 && input[0] == b'B')
            }
        }
        assert_eq!(ddmin(b"Bxy", &mut FirstIsB).unwrap(), b"B00");
    }
}
