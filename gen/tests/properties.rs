//! Properties of the generator over many seeds: every program (base, EMI variants,
//! planted) keeps the rules of `validate`; printing is deterministic; a planted
//! program has exactly one marked bad access, on the line the manifest records;
//! the representation survives JSON.

use cusafe_gen::ast::{Program, Stmt};
use cusafe_gen::emit;
use cusafe_gen::validate::validate;
use cusafe_gen::{Emi, Recipe};
use proptest::prelude::*;

fn recipe(emi: u8, plant: Option<usize>) -> Recipe {
    Recipe {
        emi: match emi {
            1 => Some(Emi::Dead),
            2 => Some(Emi::Live),
            _ => None,
        },
        plant: plant.map(Some),
        ..Recipe::default()
    }
}

fn guards(body: &[Stmt], out: &mut Vec<(u32, u32)>) {
    for s in body {
        match s {
            Stmt::Guard { a, b, body } => {
                out.push((*a, *b));
                guards(body, out);
            }
            Stmt::If { then, els, .. } => {
                guards(then, out);
                guards(els, out);
            }
            Stmt::Loop { body, .. } => guards(body, out),
            _ => {}
        }
    }
}

fn all_guards(p: &Program) -> Vec<(u32, u32)> {
    let mut g = Vec::new();
    for k in &p.kernels {
        guards(&k.body, &mut g);
    }
    g
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_program_keeps_the_rules(seed in any::<u64>(), emi in 0u8..3, plant in proptest::option::of(0usize..20)) {
        let p = cusafe_gen::program(seed, &recipe(emi, plant));
        prop_assert_eq!(validate(&p), Ok(()));
        prop_assert_eq!(p.seed, seed);
    }

    #[test]
    fn printing_is_deterministic_and_json_round_trips(seed in any::<u64>(), emi in 0u8..3) {
        let r = recipe(emi, None);
        let a = cusafe_gen::program(seed, &r);
        let b = cusafe_gen::program(seed, &r);
        prop_assert_eq!(emit::file(std::slice::from_ref(&a)).text, emit::file(&[b]).text);
        let back: Program = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        prop_assert_eq!(back, a);
    }

    #[test]
    fn a_planted_program_marks_one_access_on_the_recorded_line(seed in any::<u64>(), choice in 0usize..20, emi in 0u8..3) {
        let p = cusafe_gen::program(seed, &recipe(emi, Some(choice)));
        let src = emit::file(std::slice::from_ref(&p));
        prop_assert_eq!(src.plants.len(), 1);
        prop_assert_eq!(src.text.matches("cusafe-expect:").count(), 1);
        let site = &src.plants[0];
        let line = src.text.lines().nth(site.line as usize - 1).unwrap();
        let marker = format!("cusafe-expect: {}", site.kind);
        prop_assert!(line.contains(&marker), "line {}: {}", site.line, line);
        prop_assert_eq!(site.plant, p.plant().unwrap().1);
        prop_assert_eq!(site.plant.space, cusafe_gen::plant::CHOICES[choice].0);
        prop_assert_eq!(site.plant.fault, cusafe_gen::plant::CHOICES[choice].1);
    }

    #[test]
    fn emi_guards_are_dead_or_live_as_asked(seed in any::<u64>()) {
        let base = cusafe_gen::program(seed, &recipe(0, None));
        prop_assert!(all_guards(&base).is_empty());
        let dead = all_guards(&cusafe_gen::program(seed, &recipe(1, None)));
        prop_assert!(!dead.is_empty());
        prop_assert!(dead.iter().all(|(a, b)| a > b), "{:?}", dead);
        let live = all_guards(&cusafe_gen::program(seed, &recipe(2, None)));
        prop_assert!(live.iter().all(|(a, b)| a < b), "{:?}", live);
    }
}

#[test]
fn a_dead_hazard_is_printed_with_a_literal_index_and_no_marker() {
    let (seed, p) = (0..500u64)
        .map(|s| (s, cusafe_gen::program(s, &recipe(1, None))))
        .find(|(_, p)| {
            p.kernels
                .iter()
                .any(|k| format!("{:?}", k.body).contains("Plant"))
        })
        .expect("some dead variant holds a hazard");
    let src = emit::file(std::slice::from_ref(&p));
    assert!(
        src.plants.is_empty(),
        "seed {seed}: dead hazards are not bugs"
    );
    assert!(src.text.contains("// dead code: never runs"));
    assert!(
        !src.text.contains("poff]"),
        "a hazard must not use the run-time index"
    );
}
