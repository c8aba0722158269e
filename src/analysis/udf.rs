//! The statistics of [`super::stats`] as DataFusion SQL functions, registered in every session
//! lucid opens (`lucid query`, report stages, `lucid report`), so each report stays one `.sql`
//! file a user can read and rerun:
//!
//! | function | what |
//! |---|---|
//! | `wilson_lo(k, n)`, `wilson_hi(k, n)` | 95 % Wilson score interval of k successes in n |
//! | `boot_lo(x)`, `boot_hi(x)`, `boot_p_gt_0(x)` | 95 % bootstrap interval of the mean of x, and the share of resamples whose mean is > 0 |
//! | `boot_slope_lo(y, x)`, `boot_slope_hi(y, x)` | 95 % bootstrap interval of the OLS slope of y on x (pairs resampled) |
//! | `boot_icept_lo(y, x)`, `boot_icept_hi(y, x)` | the same for the intercept |
//! | `ols2_e0(y, x1, x2)`, `ols2_b1(…)`, `ols2_b2(…)` | least squares of y on two regressors: intercept and slopes |
//! | `attractor_p_star(kappa, l, s, e0)`, `attractor_p0(…)`, `attractor_slope(…)` | Theorem 2: the corrupted fixed point p*, the one-shot value p0, and q'(p*) (NULL for inputs outside the theorem) |
//! | `a_ret(b, t, W, R)` | Theorem 1's retrieval amplification (NULL unless t > 0 and W + R > 0) |
//! | `choice_margin(text)` | the forced-choice margin a call's text records (NULL when it records none) |
//! | `arm_order(arm)` | the reports' row order of arms: no-memory 0, memento 1, lucid 2, any other arm 3, oracle 4, NULL or `all` (a pooled row) 5 |
//! | `cluster_wilson_lo(x, key)`, `cluster_wilson_hi(x, key)` | 95 % Wilson interval of the share of 0/1 outcomes x whose rows are clustered by an integer key (a question asked under several seeds): Wilson at the effective sample size n / deff, deff the clusters' design effect (at least 1; exactly Wilson when no key repeats) |
//! | `cluster_slope_lo(y, x, key)`, `cluster_slope_hi(…)`, `cluster_icept_lo(…)`, `cluster_icept_hi(…)` | 95 % bootstrap interval of the OLS slope / intercept of y on x, resampling whole clusters (every row of a key together) |
//!
//! Every bootstrap draws [`stats::RESAMPLES`] (2,000) resamples with seed [`stats::BOOT_SEED`], so
//! a report is a function of its tables and not of the order its rows arrive in; arguments are
//! cast to DOUBLE (a cluster key to BIGINT), rows with a NULL argument are skipped. A report
//! pooled over seeds clusters on the question: its rows are not independent trials.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, ListArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type, UInt64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, ColumnarValue, ScalarUDF, Signature, SimpleAggregateUDF, SimpleScalarUDF, Volatility,
};
use datafusion::prelude::SessionContext;
use datafusion::scalar::ScalarValue;

use super::clusters::{cluster_bootstrap, cluster_wilson};
use super::stats::{self, BOOT_SEED, Histogram, RESAMPLES, Statistic, Z95};

/// Register every function of this module in `ctx`.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(scalar_udf("wilson_lo", 2, |a| stats::wilson(a[0], a[1], Z95).map(|w| w.0)));
    ctx.register_udf(scalar_udf("wilson_hi", 2, |a| stats::wilson(a[0], a[1], Z95).map(|w| w.1)));
    ctx.register_udf(scalar_udf("a_ret", 4, |a| {
        (a[1] > 0.0 && a[2] + a[3] > 0.0).then(|| super::theory::a_ret(a[0], a[1], a[2], a[3]))
    }));
    ctx.register_udf(text_udf("choice_margin", crate::llm::forced_choice::margin));
    ctx.register_udf(arm_order_udf());
    ctx.register_udf(scalar_udf("attractor_p_star", 4, |a| attractor(a).map(|t| t.p_star)));
    ctx.register_udf(scalar_udf("attractor_p0", 4, |a| attractor(a).map(|t| t.p0)));
    ctx.register_udf(scalar_udf("attractor_slope", 4, |a| attractor(a).map(|t| t.slope)));
    let boots: [(&str, Statistic, usize, Output); 7] = [
        ("boot_lo", Statistic::Mean, 1, Output::Quantile(0.025)),
        ("boot_hi", Statistic::Mean, 1, Output::Quantile(0.975)),
        ("boot_p_gt_0", Statistic::Mean, 1, Output::ShareAboveZero),
        ("boot_slope_lo", Statistic::Slope, 2, Output::Quantile(0.025)),
        ("boot_slope_hi", Statistic::Slope, 2, Output::Quantile(0.975)),
        ("boot_icept_lo", Statistic::Intercept, 2, Output::Quantile(0.025)),
        ("boot_icept_hi", Statistic::Intercept, 2, Output::Quantile(0.975)),
    ];
    for (name, stat, args, out) in boots {
        ctx.register_udaf(boot_udaf(name, stat, args, out));
    }
    for (name, coef) in [("ols2_e0", 0), ("ols2_b1", 1), ("ols2_b2", 2)] {
        ctx.register_udaf(ols2_udaf(name, coef));
    }
    ctx.register_udaf(cluster_wilson_udaf("cluster_wilson_lo", false));
    ctx.register_udaf(cluster_wilson_udaf("cluster_wilson_hi", true));
    let cluster_boots: [(&str, Statistic, f64); 4] = [
        ("cluster_slope_lo", Statistic::Slope, 0.025),
        ("cluster_slope_hi", Statistic::Slope, 0.975),
        ("cluster_icept_lo", Statistic::Intercept, 0.025),
        ("cluster_icept_hi", Statistic::Intercept, 0.975),
    ];
    for (name, stat, q) in cluster_boots {
        ctx.register_udaf(cluster_boot_udaf(name, stat, q));
    }
}

fn doubles(n: usize) -> Signature {
    Signature::uniform(n, vec![DataType::Float64], Volatility::Immutable)
}

fn f64s(a: &ArrayRef) -> Result<&Float64Array> {
    a.as_any()
        .downcast_ref::<Float64Array>()
        .ok_or_else(|| DataFusionError::Execution(format!("expected DOUBLE, got {}", a.data_type())))
}

/// Theorem 2 at (kappa, l, s, e0); None outside its domain.
fn attractor(a: &[f64]) -> Option<super::theory::Attractor> {
    let inputs = super::theory::AttractorInputs { kappa: a[0], leniency: a[1], sensitivity: a[2], e0: a[3] };
    super::theory::attractor(inputs).ok()
}

/// A scalar SQL function of `args` DOUBLE arguments; a NULL argument gives NULL.
fn scalar_udf(name: &'static str, args: usize, f: fn(&[f64]) -> Option<f64>) -> ScalarUDF {
    let fun = Arc::new(move |values: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(values)?;
        let cols = arrays.iter().map(f64s).collect::<Result<Vec<_>>>()?;
        let rows = cols.first().map_or(0, |c| c.len());
        let out: Float64Array = (0..rows)
            .map(|i| {
                let row: Option<Vec<f64>> = cols.iter().map(|c| c.is_valid(i).then(|| c.value(i))).collect();
                row.and_then(|r| f(&r))
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    });
    ScalarUDF::from(SimpleScalarUDF::new_with_signature(name, doubles(args), DataType::Float64, fun))
}

/// A scalar SQL function of one text argument; NULL text, or text `f` finds nothing in, gives NULL.
fn text_udf(name: &'static str, f: fn(&str) -> Option<f64>) -> ScalarUDF {
    let fun = Arc::new(move |values: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(values)?;
        let text = arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let out: Float64Array = text.as_string::<i32>().iter().map(|t| t.and_then(f)).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    });
    let sig = Signature::uniform(1, vec![DataType::Utf8], Volatility::Immutable);
    ScalarUDF::from(SimpleScalarUDF::new_with_signature(name, sig, DataType::Float64, fun))
}

/// The reports' order of arms ([`crate::columns::ARM_ORDER`]); NULL (a grouping set's pooled
/// row) sorts as `all`. One definition for every report's `ORDER BY arm_order(arm), arm`.
pub fn arm_order(arm: Option<&str>) -> i64 {
    let order = crate::columns::ARM_ORDER;
    let of = |name: &str| order.iter().find(|(n, _)| *n == name).map(|(_, o)| *o);
    match arm {
        Some(a) => of(a).unwrap_or(crate::columns::OTHER_ARM_ORDER),
        None => of("all").unwrap_or(crate::columns::OTHER_ARM_ORDER),
    }
}

fn arm_order_udf() -> ScalarUDF {
    let fun = Arc::new(move |values: &[ColumnarValue]| -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(values)?;
        let text = arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let out: Int64Array = text.as_string::<i32>().iter().map(|t| Some(arm_order(t))).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    });
    let sig = Signature::uniform(1, vec![DataType::Utf8], Volatility::Immutable);
    ScalarUDF::from(SimpleScalarUDF::new_with_signature("arm_order", sig, DataType::Int64, fun))
}

/// What a bootstrap function returns.
#[derive(Clone, Copy, Debug)]
enum Output {
    Quantile(f64),
    ShareAboveZero,
}

fn list_field(name: &str, t: DataType) -> Arc<Field> {
    Arc::new(Field::new(name, DataType::List(Arc::new(Field::new("item", t, true))), true))
}

fn boot_udaf(name: &'static str, stat: Statistic, args: usize, out: Output) -> AggregateUDF {
    let state = vec![
        list_field(&format!("{name}_y"), DataType::Float64),
        list_field(&format!("{name}_x"), DataType::Float64),
        list_field(&format!("{name}_n"), DataType::UInt64),
    ];
    let acc = Arc::new(move |_: datafusion::logical_expr::function::AccumulatorArgs<'_>| {
        Ok(Box::new(Boot { hist: Histogram::default(), stat, out }) as Box<dyn Accumulator>)
    });
    AggregateUDF::from(SimpleAggregateUDF::new_with_signature(name, doubles(args), DataType::Float64, acc, state))
}

/// A bootstrap over the histogram of the group's (y, x) values.
#[derive(Debug)]
struct Boot {
    hist: Histogram,
    stat: Statistic,
    out: Output,
}

impl Accumulator for Boot {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let y = f64s(&values[0])?;
        let x = values.get(1).map(f64s).transpose()?;
        for i in 0..y.len() {
            let xi = match x {
                Some(x) if x.is_null(i) => continue,
                Some(x) => x.value(i),
                None => 0.0,
            };
            if y.is_valid(i) {
                self.hist.add(y.value(i), xi, 1);
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let reps = self.hist.bootstrap(self.stat, RESAMPLES, BOOT_SEED);
        let v = match self.out {
            Output::Quantile(q) => stats::quantile(&reps, q),
            Output::ShareAboveZero if reps.is_empty() => None,
            Output::ShareAboveZero => Some(reps.iter().filter(|&&r| r > 0.0).count() as f64 / reps.len() as f64),
        };
        Ok(ScalarValue::Float64(v))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.hist.cells().len() * 48
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let cells = self.hist.cells();
        let y = Float64Array::from_iter_values(cells.iter().map(|c| c.0));
        let x = Float64Array::from_iter_values(cells.iter().map(|c| c.1));
        let n = UInt64Array::from_iter_values(cells.iter().map(|c| c.2));
        Ok(vec![
            ScalarValue::List(Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>([Some(
                y.iter().collect::<Vec<_>>(),
            )]))),
            ScalarValue::List(Arc::new(ListArray::from_iter_primitive::<Float64Type, _, _>([Some(
                x.iter().collect::<Vec<_>>(),
            )]))),
            ScalarValue::List(Arc::new(ListArray::from_iter_primitive::<UInt64Type, _, _>([Some(
                n.iter().collect::<Vec<_>>(),
            )]))),
        ])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (ys, xs, ns) = (states[0].as_list::<i32>(), states[1].as_list::<i32>(), states[2].as_list::<i32>());
        for row in 0..ys.len() {
            if ys.is_null(row) {
                continue;
            }
            let (y, x, n) = (ys.value(row), xs.value(row), ns.value(row));
            let (y, x, n) =
                (y.as_primitive::<Float64Type>(), x.as_primitive::<Float64Type>(), n.as_primitive::<UInt64Type>());
            for i in 0..y.len() {
                self.hist.add(y.value(i), x.value(i), n.value(i));
            }
        }
        Ok(())
    }
}

fn ols2_udaf(name: &'static str, coef: usize) -> AggregateUDF {
    let state = (0..9).map(|i| Arc::new(Field::new(format!("{name}_s{i}"), DataType::Float64, true))).collect();
    let acc = Arc::new(move |_: datafusion::logical_expr::function::AccumulatorArgs<'_>| {
        Ok(Box::new(Ols2 { sums: [0.0; 9], coef }) as Box<dyn Accumulator>)
    });
    AggregateUDF::from(SimpleAggregateUDF::new_with_signature(name, doubles(3), DataType::Float64, acc, state))
}

/// Sums (n, y, x1, x2, x1², x2², x1x2, x1y, x2y) of a two-regressor least-squares fit: bounded
/// memory whatever the group's size.
#[derive(Debug)]
struct Ols2 {
    sums: [f64; 9],
    coef: usize,
}

impl Accumulator for Ols2 {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (y, x1, x2) = (f64s(&values[0])?, f64s(&values[1])?, f64s(&values[2])?);
        for i in 0..y.len() {
            if y.is_null(i) || x1.is_null(i) || x2.is_null(i) {
                continue;
            }
            let (y, a, b) = (y.value(i), x1.value(i), x2.value(i));
            for (s, v) in self.sums.iter_mut().zip([1.0, y, a, b, a * a, b * b, a * b, a * y, b * y]) {
                *s += v;
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(stats::ols2_from_sums(&self.sums).map(|c| [c.0, c.1, c.2][self.coef])))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(self.sums.iter().map(|&s| ScalarValue::Float64(Some(s))).collect())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        for (s, a) in self.sums.iter_mut().zip(states) {
            *s += f64s(a)?.iter().flatten().sum::<f64>();
        }
        Ok(())
    }
}

fn i64s(a: &ArrayRef) -> Result<&Int64Array> {
    a.as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| DataFusionError::Execution(format!("expected BIGINT, got {}", a.data_type())))
}

/// A list scalar of one row holding `values` (an aggregate's state).
fn list_of<T: arrow::datatypes::ArrowPrimitiveType>(values: impl IntoIterator<Item = T::Native>) -> ScalarValue {
    let row: Vec<Option<T::Native>> = values.into_iter().map(Some).collect();
    ScalarValue::List(Arc::new(ListArray::from_iter_primitive::<T, _, _>([Some(row)])))
}

fn cluster_wilson_udaf(name: &'static str, hi: bool) -> AggregateUDF {
    let state = vec![
        list_field(&format!("{name}_key"), DataType::Int64),
        list_field(&format!("{name}_n"), DataType::Float64),
        list_field(&format!("{name}_s"), DataType::Float64),
        Arc::new(Field::new(format!("{name}_sq"), DataType::Float64, true)),
    ];
    let acc = Arc::new(move |_: datafusion::logical_expr::function::AccumulatorArgs<'_>| {
        Ok(Box::new(ClusterWilson { clusters: HashMap::default(), sum_sq: 0.0, hi }) as Box<dyn Accumulator>)
    });
    let sig = Signature::exact(vec![DataType::Float64, DataType::Int64], Volatility::Immutable);
    AggregateUDF::from(SimpleAggregateUDF::new_with_signature(name, sig, DataType::Float64, acc, state))
}

/// Per cluster key, (observations, their sum), and the sum of squares: what the clustered Wilson
/// interval needs ([`cluster_wilson`]), one entry per cluster whatever its size.
#[derive(Debug)]
struct ClusterWilson {
    clusters: HashMap<i64, (f64, f64), BuildHasherDefault<KeyHasher>>,
    sum_sq: f64,
    hi: bool,
}

/// A hasher for integer cluster keys (question ids): one multiply, its high bits mixed down;
/// every row of a report goes through it, SipHash would cost several times as much.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(u64::from(b)));
    }

    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    fn write_u64(&mut self, i: u64) {
        let h = (self.0 ^ i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

impl ClusterWilson {
    fn add(&mut self, key: i64, n: f64, s: f64) {
        let c = self.clusters.entry(key).or_default();
        c.0 += n;
        c.1 += s;
    }
}

impl Accumulator for ClusterWilson {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (x, key) = (f64s(&values[0])?, i64s(&values[1])?);
        for i in 0..x.len() {
            if x.is_valid(i) && key.is_valid(i) {
                let v = x.value(i);
                self.add(key.value(i), 1.0, v);
                self.sum_sq += v * v;
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let clusters: Vec<(f64, f64)> = self.clusters.values().copied().collect();
        let w = cluster_wilson(&clusters, self.sum_sq, Z95);
        Ok(ScalarValue::Float64(w.map(|w| if self.hi { w.1 } else { w.0 })))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.clusters.capacity() * 32
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            list_of::<Int64Type>(self.clusters.keys().copied()),
            list_of::<Float64Type>(self.clusters.values().map(|c| c.0)),
            list_of::<Float64Type>(self.clusters.values().map(|c| c.1)),
            ScalarValue::Float64(Some(self.sum_sq)),
        ])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (keys, ns, ss) = (states[0].as_list::<i32>(), states[1].as_list::<i32>(), states[2].as_list::<i32>());
        for row in 0..keys.len() {
            if keys.is_null(row) {
                continue;
            }
            let (k, n, s) = (keys.value(row), ns.value(row), ss.value(row));
            let (k, n, s) =
                (k.as_primitive::<Int64Type>(), n.as_primitive::<Float64Type>(), s.as_primitive::<Float64Type>());
            for i in 0..k.len() {
                self.add(k.value(i), n.value(i), s.value(i));
            }
        }
        self.sum_sq += f64s(&states[3])?.iter().flatten().sum::<f64>();
        Ok(())
    }
}

fn cluster_boot_udaf(name: &'static str, stat: Statistic, q: f64) -> AggregateUDF {
    let state = vec![
        list_field(&format!("{name}_key"), DataType::Int64),
        list_field(&format!("{name}_y"), DataType::Float64),
        list_field(&format!("{name}_x"), DataType::Float64),
    ];
    let acc = Arc::new(move |_: datafusion::logical_expr::function::AccumulatorArgs<'_>| {
        Ok(Box::new(ClusterBoot { rows: Vec::new(), stat, q }) as Box<dyn Accumulator>)
    });
    let sig = Signature::exact(vec![DataType::Float64, DataType::Float64, DataType::Int64], Volatility::Immutable);
    AggregateUDF::from(SimpleAggregateUDF::new_with_signature(name, sig, DataType::Float64, acc, state))
}

/// A bootstrap that resamples clusters ([`cluster_bootstrap`]): every row (key, y, x) is
/// kept until the end, where the rows are sorted and grouped (24 bytes a row).
#[derive(Debug)]
struct ClusterBoot {
    rows: Vec<(i64, f64, f64)>,
    stat: Statistic,
    q: f64,
}

impl Accumulator for ClusterBoot {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (y, x, key) = (f64s(&values[0])?, f64s(&values[1])?, i64s(&values[2])?);
        for i in 0..y.len() {
            if y.is_valid(i) && x.is_valid(i) && key.is_valid(i) && !y.value(i).is_nan() && !x.value(i).is_nan() {
                self.rows.push((key.value(i), y.value(i), x.value(i)));
            }
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let reps = cluster_bootstrap(&mut self.rows, self.stat, RESAMPLES, BOOT_SEED);
        Ok(ScalarValue::Float64(stats::quantile(&reps, self.q)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.rows.capacity() * 24
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            list_of::<Int64Type>(self.rows.iter().map(|r| r.0)),
            list_of::<Float64Type>(self.rows.iter().map(|r| r.1)),
            list_of::<Float64Type>(self.rows.iter().map(|r| r.2)),
        ])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (keys, ys, xs) = (states[0].as_list::<i32>(), states[1].as_list::<i32>(), states[2].as_list::<i32>());
        for row in 0..keys.len() {
            if keys.is_null(row) {
                continue;
            }
            let (k, y, x) = (keys.value(row), ys.value(row), xs.value(row));
            let (k, y, x) =
                (k.as_primitive::<Int64Type>(), y.as_primitive::<Float64Type>(), x.as_primitive::<Float64Type>());
            self.rows.extend((0..k.len()).map(|i| (k.value(i), y.value(i), x.value(i))));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "udf_tests.rs"]
mod tests;
