//! What Sprig's functions share about values: how big a result one call may build, and the
//! conversions and comparisons Sprig takes from `cast` and `reflect` (`empty`, `strval`,
//! `toInt64`, `toFloat64`, `reflect.DeepEqual`).

use crate::template::go::{self, Args, GoValue, TemplateError};

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

/// Go's `reflect.DeepEqual` of two template values: a nil slice is not an empty one, and values
/// of two types differ (`int64` 1 and `int` 1, `[]string` and `[]interface {}`).
pub fn deep_equal(a: &GoValue, b: &GoValue) -> bool {
    deep_equal_at(a, b, 0)
}

/// [`deep_equal`] at `depth`: values nested deeper than values may be built (a map deepened in
/// place) compare unequal rather than exhaust the stack.
fn deep_equal_at(a: &GoValue, b: &GoValue, depth: usize) -> bool {
    if go::go_type(a) != go::go_type(b) || depth > go::value::MAX_VALUE_DEPTH {
        return false;
    }
    let deep_equal = |a: &GoValue, b: &GoValue| deep_equal_at(a, b, depth + 1);
    match (a, b) {
        // The same allocation is equal to itself (a value of shared parts is compared once).
        (GoValue::List(a), GoValue::List(b)) => {
            a.ptr_eq(b)
                || (a.nil == b.nil && a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| deep_equal(a, b)))
        }
        (GoValue::Map(a), GoValue::Map(b)) => {
            a.ptr_eq(b) || {
                let (a, b) = (a.read(), b.read());
                a.len() == b.len() && a.iter().zip(b.iter()).all(|((ka, va), (kb, vb))| ka == kb && deep_equal(va, vb))
            }
        }
        (GoValue::Semver(a), GoValue::Semver(b)) => a.version == b.version && a.original == b.original,
        (GoValue::Nil, GoValue::Nil) => true,
        (GoValue::Bool(a), GoValue::Bool(b)) => a == b,
        (GoValue::Int(a), GoValue::Int(b)) | (GoValue::Int64(a), GoValue::Int64(b)) => a == b,
        (GoValue::Uint(a), GoValue::Uint(b)) => a == b,
        (GoValue::Float(a), GoValue::Float(b)) => a == b,
        (GoValue::String(a), GoValue::String(b)) => a == b,
        _ => false,
    }
}
