//! What Sprig's functions share about values: how big a result one call may build, and the
//! conversions and comparisons Sprig takes from `cast` and `reflect` (`empty`, `strval`,
//! `toInt64`, `toFloat64`, `reflect.DeepEqual`).

use crate::template::go::{self, Args, GoValue, TemplateError};
use std::collections::HashSet;

/// The largest string or list one function call may build (`repeat`, `indent`, `until`…):
/// twice the largest input file, so no honest template meets it, and a hostile one cannot
/// allocate gigabytes before the output budget sees a byte.
pub const MAX_RESULT_BYTES: usize = 16 << 20;

/// Refuses a result larger than [`MAX_RESULT_BYTES`], naming the function.
pub fn check_size(args: &Args<'_>, bytes: usize) -> Result<(), TemplateError> {
    if bytes > MAX_RESULT_BYTES {
        return Err(go::fail(
            args.name(),
            format!("the result would be {bytes} bytes, more than the {MAX_RESULT_BYTES} one call may build"),
        ));
    }
    Ok(())
}

/// Sprig's `empty`: nil, false, zero, and empty strings, lists and maps.
pub fn empty(value: &GoValue) -> bool {
    match value {
        GoValue::Nil => true,
        GoValue::Bool(b) => !b,
        GoValue::Int(n) | GoValue::Int64(n) => *n == 0,
        GoValue::Uint(n) => *n == 0,
        GoValue::Float(f) => *f == 0.0,
        GoValue::String(s) => s.is_empty(),
        GoValue::List(items) => items.is_empty(),
        GoValue::Map(map) => map.is_empty(),
        // A non-nil pointer.
        GoValue::Semver(_) => false,
    }
}

/// Sprig's `strval`: a string as itself, anything else as `%v` prints it.
pub fn strval(value: &GoValue) -> String {
    match value {
        GoValue::String(s) => s.to_string(),
        other => go::fmt::sprint_value(other),
    }
}

/// [`strval`] where the function does not print its arguments otherwise (a `dict` key, `toDecimal`),
/// so they were not measured: refused past [`MAX_RESULT_BYTES`].
pub fn strval_within(args: &Args<'_>, value: &GoValue) -> Result<String, TemplateError> {
    match value {
        GoValue::String(s) => Ok(s.to_string()),
        other => go::fmt::within(MAX_RESULT_BYTES, |cap| go::fmt::sprint_value_capped(other, cap)).map_err(
            |go::fmt::TooLong| {
                go::fail(
                    args.name(),
                    format!("a value prints as more than the {MAX_RESULT_BYTES} bytes one call may build"),
                )
            },
        ),
    }
}

/// `cast.ToInt64`: integers and floats (truncated) convert, strings parse as Go integers with
/// base prefixes (after dropping a `.000` tail), booleans are 1 and 0, anything else is 0.
pub fn to_i64(value: &GoValue) -> i64 {
    match value {
        GoValue::Int(n) | GoValue::Int64(n) => *n,
        GoValue::Uint(n) => *n as i64,
        GoValue::Float(f) => *f as i64,
        GoValue::Bool(b) => i64::from(*b),
        GoValue::String(s) => {
            let trimmed = match s.split_once('.') {
                Some((whole, zeros)) if !whole.is_empty() && zeros.bytes().all(|c| c == b'0') => whole,
                _ => s,
            };
            go::strconv::parse_int(trimmed, 0).unwrap_or(0)
        }
        _ => 0,
    }
}

/// `cast.ToFloat64`: numbers convert, strings parse as Go floats, booleans are 1 and 0,
/// anything else is 0.
pub fn to_f64(value: &GoValue) -> f64 {
    match value {
        GoValue::Int(n) | GoValue::Int64(n) => *n as f64,
        GoValue::Uint(n) => *n as f64,
        GoValue::Float(f) => *f,
        GoValue::Bool(b) => f64::from(u8::from(*b)),
        GoValue::String(s) => go::strconv::parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Work a function does beyond its one step, by the values it visits: charged to the execution's
/// step budget as it goes (a step per 16 values), so a call over a large or nested value, made
/// in a loop, still ends at `--max-steps`.
pub struct Meter<'a> {
    args: &'a Args<'a>,
    unpaid: u64,
}

impl<'a> Meter<'a> {
    pub fn new(args: &'a Args<'a>) -> Self {
        Meter { args, unpaid: 0 }
    }

    /// Counts `n` values visited.
    pub fn visit(&mut self, n: usize) -> Result<(), TemplateError> {
        self.unpaid = self.unpaid.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
        if self.unpaid >= 1024 {
            let steps = self.unpaid / 16;
            self.unpaid %= 16;
            self.args.context().budget.charge_steps(steps).map_err(|e| TemplateError::Exec(e.to_string()))?;
        }
        Ok(())
    }

    /// Charges `bytes` of memory a function builds to the output budget.
    pub fn build(&self, bytes: usize) -> Result<(), TemplateError> {
        self.args.context().budget.charge_output(bytes).map_err(|e| TemplateError::Exec(e.to_string()))
    }
}

/// Go's `reflect.DeepEqual` of two template values: a nil slice is not an empty one, and values
/// of two types differ (`int64` 1 and `int` 1, `[]string` and `[]interface {}`).
pub fn deep_equal(a: &GoValue, b: &GoValue, meter: &mut Meter<'_>) -> Result<bool, TemplateError> {
    deep_equal_at(a, b, &mut HashSet::new(), 0, meter)
}

/// [`deep_equal`] at `depth`. A pair of lists or maps is compared once: met again, it is taken
/// as equal, as Go's `DeepEqual` takes it (so values built of shared parts compare in time
/// proportional to their parts). Values nested deeper than values may be built (a map deepened
/// in place) compare unequal rather than exhaust the stack.
fn deep_equal_at(
    a: &GoValue,
    b: &GoValue,
    seen: &mut HashSet<(usize, usize)>,
    depth: usize,
    meter: &mut Meter<'_>,
) -> Result<bool, TemplateError> {
    meter.visit(1)?;
    if go::go_type(a) != go::go_type(b) || depth > go::value::MAX_VALUE_DEPTH {
        return Ok(false);
    }
    Ok(match (a, b) {
        (GoValue::List(x), GoValue::List(y)) => {
            if x.ptr_eq(y) || !seen.insert((x.address(), y.address())) {
                return Ok(true);
            }
            if x.nil != y.nil || x.len() != y.len() {
                return Ok(false);
            }
            for (a, b) in x.iter().zip(y.iter()) {
                if !deep_equal_at(a, b, seen, depth + 1, meter)? {
                    return Ok(false);
                }
            }
            true
        }
        (GoValue::Map(x), GoValue::Map(y)) => {
            if x.ptr_eq(y) || !seen.insert((x.address(), y.address())) {
                return Ok(true);
            }
            let (x, y) = (x.read(), y.read());
            if x.len() != y.len() {
                return Ok(false);
            }
            for ((ka, va), (kb, vb)) in x.iter().zip(y.iter()) {
                if ka != kb || !deep_equal_at(va, vb, seen, depth + 1, meter)? {
                    return Ok(false);
                }
            }
            true
        }
        (GoValue::Semver(x), GoValue::Semver(y)) => x.version == y.version && x.original == y.original,
        (GoValue::Nil, GoValue::Nil) => true,
        (GoValue::Bool(x), GoValue::Bool(y)) => x == y,
        (GoValue::Int(x), GoValue::Int(y)) | (GoValue::Int64(x), GoValue::Int64(y)) => x == y,
        (GoValue::Uint(x), GoValue::Uint(y)) => x == y,
        (GoValue::Float(x), GoValue::Float(y)) => x == y,
        (GoValue::String(x), GoValue::String(y)) => x == y,
        _ => false,
    })
}
