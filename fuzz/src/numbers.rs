//! A mutation for text formats: one decimal number of the input is replaced by a nearby
//! or boundary value (after Honggfuzz's ASCII-number mangling; LibAFL's havoc works on
//! bytes and rarely turns `4` into `5` without breaking the line around it).
//!
//! Text loaders trust numbers: a count in a header, an index in a record, a dimension.
//! The planted bugs of the edge-list, Matrix Market and token targets each sit one
//! number away from a seed (a column past the column count, a row index of 0, a token
//! id past the table, a shortcut edge moved), and 7.5-minute havoc campaigns missed
//! them in a third to all of their runs. This mutation runs as its own stage, one number
//! per execution, and does nothing on inputs without digits (binary formats).

use std::borrow::Cow;
use std::num::NonZeroUsize;
use std::ops::Range;

use libafl::inputs::{HasMutatorBytes, ResizableMutator};
use libafl::mutators::{MutationResult, Mutator};
use libafl::state::HasRand;
use libafl_bolts::rands::Rand;
use libafl_bolts::Named;

/// The byte ranges of the decimal numbers in `bytes`: maximal digit runs, with a
/// leading `-` when one precedes them.
pub fn numbers(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = if i > 0 && bytes[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            let mut end = i;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            out.push(start..end);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The value of the number in `text` (digits with an optional leading `-`), saturated
/// to the i64 range.
pub fn value(text: &[u8]) -> i64 {
    let (neg, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut v: i64 = 0;
    for d in digits {
        v = v.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    if neg {
        -v
    } else {
        v
    }
}

/// Boundaries of the integer types a loader parses into.
const EDGES: [i64; 10] = [
    0,
    1,
    -1,
    0x7f,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
    0x1_0000_0000,
];

/// A new value for a number that was `v`; `others` are the values of the input's
/// other numbers (a count copied from where it is right to where it is checked).
pub fn replacement<R: Rand>(rand: &mut R, v: i64, others: &[i64]) -> i64 {
    let nz = |n: usize| NonZeroUsize::new(n).expect("non-zero");
    match rand.below(nz(8)) {
        // Nearby: +-1 .. +-16, most of the time +-1 .. +-4.
        0..=2 => {
            let d = if rand.coinflip(0.75) {
                1 + rand.below(nz(4))
            } else {
                1 + rand.below(nz(16))
            } as i64;
            if rand.coinflip(0.5) {
                v.saturating_add(d)
            } else {
                v.saturating_sub(d)
            }
        }
        3 => EDGES[rand.below(nz(EDGES.len()))] + rand.between(0, 2) as i64 - 1,
        4 => match rand.below(nz(3)) {
            0 => v.saturating_mul(2),
            1 => v / 2,
            _ => v
                .saturating_mul(10)
                .saturating_add(rand.below(nz(10)) as i64),
        },
        5 if !others.is_empty() => others[rand.below(nz(others.len()))],
        // Anywhere up to a little past twice the old value.
        _ => rand.below(nz(
            v.unsigned_abs().saturating_mul(2).saturating_add(16) as usize
        )) as i64,
    }
}

/// The mutator: one number of the input gets a [`replacement`].
#[derive(Debug, Default)]
pub struct AsciiNumberMutator;

impl<I, S> Mutator<I, S> for AsciiNumberMutator
where
    S: HasRand,
    I: HasMutatorBytes + ResizableMutator<u8>,
{
    fn mutate(&mut self, state: &mut S, input: &mut I) -> Result<MutationResult, libafl::Error> {
        let found = numbers(input.mutator_bytes());
        let Some(n) = NonZeroUsize::new(found.len()) else {
            return Ok(MutationResult::Skipped);
        };
        let pick = found[state.rand_mut().below(n)].clone();
        let bytes = input.mutator_bytes();
        let old = value(&bytes[pick.clone()]);
        // Up to 64 other values are enough to copy one from.
        let others: Vec<i64> = found
            .iter()
            .filter(|r| **r != pick)
            .take(64)
            .map(|r| value(&bytes[r.clone()]))
            .collect();
        let new = replacement(state.rand_mut(), old, &others);
        if new == old {
            return Ok(MutationResult::Skipped);
        }
        input.splice(pick, new.to_string().into_bytes());
        Ok(MutationResult::Mutated)
    }

    fn post_exec(
        &mut self,
        _state: &mut S,
        _new_corpus_id: Option<libafl::corpus::CorpusId>,
    ) -> Result<(), libafl::Error> {
        Ok(())
    }
}

impl Named for AsciiNumberMutator {
    fn name(&self) -> &Cow<'static, str> {
        static NAME: Cow<'static, str> = Cow::Borrowed("AsciiNumberMutator");
        &NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libafl::inputs::BytesInput;
    use libafl::state::NopState;
    use libafl_bolts::rands::StdRand;
    use proptest::prelude::*;

    #[test]
    fn finds_numbers_and_signs() {
        let t = b"M 8 4\n5 -4 3.0\nx12";
        let r: Vec<&[u8]> = numbers(t).into_iter().map(|r| &t[r]).collect();
        assert_eq!(
            r,
            [&b"8"[..], b"4", b"5", b"-4", b"3", b"0", b"12"].to_vec()
        );
        assert_eq!(value(b"-4"), -4);
        assert_eq!(value(b"99999999999999999999999"), i64::MAX);
    }

    #[test]
    fn binary_input_is_skipped() {
        let mut state: NopState<BytesInput> = NopState::new();
        let mut input = BytesInput::new(vec![0xff, 0, b'A', b'T']);
        let r = AsciiNumberMutator.mutate(&mut state, &mut input).unwrap();
        assert_eq!(r, MutationResult::Skipped);
    }

    #[test]
    fn reaches_the_neighbours_of_a_seed_value() {
        // The Matrix Market seed's column 4 of an 8 x 4 matrix: 5..8 overflow, and a
        // row index becomes 0 — both within a few hundred draws.
        let mut rand = StdRand::with_seed(1);
        let (mut up, mut zero) = (false, false);
        for _ in 0..400 {
            let v = replacement(&mut rand, 4, &[8, 4, 5, 3]);
            up |= (5..=8).contains(&v);
            zero |= v == 0;
        }
        assert!(up && zero);
    }

    proptest! {
        /// A mutation changes exactly one number's digits and keeps the rest.
        #[test]
        fn only_one_number_changes(
            words in proptest::collection::vec((0u32..100_000, "[a-z ,\n]{1,3}"), 1..12),
            seed in any::<u64>(),
        ) {
            let text: String = words.iter().map(|(n, s)| format!("{n}{s}")).collect();
            let mut input = BytesInput::new(text.clone().into_bytes());
            let mut state: NopState<BytesInput> = NopState::new();
            state.rand_mut().set_seed(seed);
            let r = AsciiNumberMutator.mutate(&mut state, &mut input).unwrap();
            let after = String::from_utf8(input.mutator_bytes().to_vec()).unwrap();
            let strip = |s: &str| s.chars().filter(|c| !c.is_ascii_digit() && *c != '-').collect::<String>();
            prop_assert_eq!(strip(&after), strip(&text));
            let before_n = numbers(text.as_bytes()).len();
            let after_n = numbers(after.as_bytes()).len();
            prop_assert_eq!(before_n, after_n);
            if r == MutationResult::Skipped {
                prop_assert_eq!(after, text);
            }
        }
    }
}
