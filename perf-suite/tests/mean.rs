//! Medians and geometric means.

use cusafe_perf::mean::{geomean, median};

#[test]
fn median_of_odd_even_and_empty() {
    assert_eq!(median(&[2.2, 1.9, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[7.5]), Some(7.5));
    assert_eq!(median(&[]), None);
}

#[test]
fn geomean_of_ratios() {
    let g = geomean(&[1.2, 1.25, 1.1]).expect("positive");
    assert!((g - 1.65f64.cbrt()).abs() < 1e-12, "{g}");
    assert_eq!(geomean(&[2.0, 8.0]), Some(4.0));
    assert_eq!(geomean(&[]), None);
    assert_eq!(geomean(&[1.0, 0.0]), None);
    assert_eq!(geomean(&[1.0, f64::NAN]), None);
}
