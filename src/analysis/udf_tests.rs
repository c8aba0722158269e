//! Tests of [`super`]: the SQL functions against the statistics they wrap.

use super::*;

fn run(sql: &str) -> arrow::array::RecordBatch {
    crate::session::block_on(crate::session::collect(&crate::session::new(), sql)).unwrap()
}

#[test]
fn sql_functions_compute_what_the_statistics_module_does() {
    let b =
        run("SELECT wilson_lo(8, 10) AS lo, wilson_hi(8, 10) AS hi, attractor_p_star(0.38, 0.76, 0.90, 0.32) AS p, \
                 attractor_p0(0.38, 0.76, 0.90, 0.32) AS p0, attractor_p_star(0.38, 1.5, 0.9, 0.3) AS bad");
    let (lo, hi) = stats::wilson(8.0, 10.0, Z95).unwrap();
    assert_eq!(f64s(b.column(0)).unwrap().value(0), lo);
    assert_eq!(f64s(b.column(1)).unwrap().value(0), hi);
    assert!((f64s(b.column(2)).unwrap().value(0) - 0.448).abs() < 5e-4);
    assert!((f64s(b.column(3)).unwrap().value(0) - 0.284).abs() < 5e-4);
    assert!(b.column(4).is_null(0), "leniency 1.5 is outside the theorem");
    let b = run("SELECT ols2_e0(y, a, b) AS e0, ols2_b1(y, a, b) AS b1, ols2_b2(y, a, b) AS b2, \
         boot_lo(y) AS lo, boot_hi(y) AS hi, boot_p_gt_0(y) AS p, boot_slope_lo(y, a) AS slo \
         FROM (VALUES (0.3, 0.0, 0.0), (0.7, 1.0, 0.0), (0.15, 0.0, 1.0), (0.55, 1.0, 1.0), (0.5, 0.5, 0.0)) t(y, a, b)");
    let v = |c: usize| f64s(b.column(c)).unwrap().value(0);
    assert!((v(0) - 0.3).abs() < 1e-12 && (v(1) - 0.4).abs() < 1e-12 && (v(2) + 0.15).abs() < 1e-12);
    assert!(v(3) < v(4) && v(5) == 1.0 && v(6) > 0.0, "{b:?}");
}
