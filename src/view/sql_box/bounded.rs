//! The SQL box's functions that make a value far larger than their arguments — `repeat`,
//! `lpad`, `rpad`, `array_repeat`, `array_resize`, `range`, `generate_series` — bounded before
//! they run: one value at most [`MAX_VALUE`] bytes, one call (a batch of rows) at most
//! [`MAX_CALL`]. `repeat('x', 2000000000)` would otherwise allocate gigabytes in one call, before
//! any pool ([`super::memory`]) or meter ([`super::metered`]) sees a byte. Under the bounds each
//! is the function `lucid query` runs; past them the query fails with DataFusion's "Resources
//! exhausted" and the bound named.

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use datafusion::prelude::SessionContext;
use datafusion::scalar::ScalarValue;

/// The largest value one of these functions may make.
pub const MAX_VALUE: usize = 64 << 10;

/// The most bytes one call (one batch of rows) of these functions may make.
pub const MAX_CALL: usize = 64 << 20;

/// What makes a function's value large.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Growth {
    /// Its first argument's length times its second (`repeat`).
    Times,
    /// Its second argument, in characters of up to 4 bytes (`lpad`, `rpad`).
    Width,
    /// Its second argument, in elements (`array_repeat`, `array_resize`).
    Elements,
    /// Its stop less its start over its step, in elements (`range`, `generate_series`).
    Series,
}

/// The functions bounded, and how each grows.
const BOUNDED: [(&str, Growth); 7] = [
    ("repeat", Growth::Times),
    ("lpad", Growth::Width),
    ("rpad", Growth::Width),
    ("array_repeat", Growth::Elements),
    ("array_resize", Growth::Elements),
    ("range", Growth::Series),
    ("generate_series", Growth::Series),
];

/// A function of `ctx` with its values bounded.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Bounded {
    inner: ScalarUDF,
    growth: Growth,
}

/// Replace each of [`BOUNDED`] in `ctx` by its bounded self.
pub fn register(ctx: &SessionContext) {
    for (name, growth) in BOUNDED {
        if let Ok(udf) = ctx.udf(name) {
            ctx.register_udf(ScalarUDF::new_from_impl(Bounded { inner: udf.as_ref().clone(), growth }));
        }
    }
}

/// The largest integer among `v`'s values (None for other types, or no value).
fn max_int(v: &ColumnarValue) -> Option<i64> {
    extreme_int(v, true)
}

fn min_int(v: &ColumnarValue) -> Option<i64> {
    extreme_int(v, false)
}

fn extreme_int(v: &ColumnarValue, max: bool) -> Option<i64> {
    match v {
        ColumnarValue::Scalar(s) if s.data_type().is_integer() => match s.cast_to(&DataType::Int64).ok()? {
            ScalarValue::Int64(x) => x,
            _ => None,
        },
        ColumnarValue::Array(a) if a.data_type().is_integer() => {
            let a = arrow::compute::cast(a, &DataType::Int64).ok()?;
            let a = a.as_primitive::<Int64Type>();
            if max { arrow::compute::max(a) } else { arrow::compute::min(a) }
        }
        _ => None,
    }
}

/// The longest of `v`'s strings in bytes (8 for a value of another type).
fn max_len(v: &ColumnarValue) -> usize {
    match v {
        ColumnarValue::Scalar(s) => match s {
            ScalarValue::Utf8(x) | ScalarValue::LargeUtf8(x) | ScalarValue::Utf8View(x) => {
                x.as_ref().map_or(0, String::len)
            }
            _ => 8,
        },
        ColumnarValue::Array(a) => match arrow::compute::cast(a, &DataType::LargeUtf8) {
            Ok(s) if matches!(a.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
                let s = s.as_string::<i64>();
                s.offsets().windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0)
            }
            _ => 8,
        },
    }
}

impl Bounded {
    /// The largest value this call would make, in bytes, where its arguments tell.
    fn largest(&self, args: &[ColumnarValue]) -> Option<u128> {
        let count = |i: usize| args.get(i).and_then(max_int).map(|n| n.max(0) as u128);
        match self.growth {
            Growth::Times => Some(max_len(args.first()?) as u128 * count(1)?),
            Growth::Width => Some(4 * count(1)?),
            Growth::Elements => Some(max_len(args.first()?).max(8) as u128 * count(1)?),
            Growth::Series => {
                let (start, stop) = match args.len() {
                    1 => (0, max_int(&args[0])?),
                    _ => (min_int(&args[0])?, max_int(&args[1])?),
                };
                let step = args.get(2).map_or(Some(1), min_int)?.unsigned_abs().max(1) as u128;
                Some(8 * ((stop as i128 - start as i128).unsigned_abs() / step + 1))
            }
        }
    }
}

impl ScalarUDFImpl for Bounded {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.simplify(args, info)
    }

    fn short_circuits(&self) -> bool {
        self.inner.short_circuits()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if let Some(largest) = self.largest(&args.args) {
            let rows = args.number_rows.max(1) as u128;
            if largest > MAX_VALUE as u128 || largest * rows > MAX_CALL as u128 {
                return Err(DataFusionError::ResourcesExhausted(format!(
                    "{}() would make a value of {largest} bytes ({rows} rows in this call): the SQL box bounds \
                     one value at {} KiB and one call at {} MiB",
                    self.name(),
                    MAX_VALUE >> 10,
                    MAX_CALL >> 20
                )));
            }
        }
        self.inner.invoke_with_args(args)
    }
}
