//! Go's builtin functions (`and` and `or` evaluate their arguments lazily, so the executor runs
//! them): `not`, `len`, `index`, `slice`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`, `call`, and
//! `print`, `printf`, `println`, `html`, `js`, `urlquery` with Go's formatting ([`fmt`]).
//! Comparisons follow Go 1.19: integers of any kind compare by value (an `int` with an `int64`
//! or a `uint64`), other basic kinds only with their own, and lists and maps not at all.

use super::args::{define, fail, Args, Arity::AtLeast, Arity::Exact, Cost, FuncMap, ESCAPES, TEXT};
use super::fmt::{self, go_type};
use super::value::{string, GoValue};
use crate::limits::{Exhausted, Resource};
use gotmpl::TemplateError;
use std::cmp::Ordering;
use std::sync::LazyLock;

/// The builtins, by name.
pub fn builtins() -> &'static FuncMap {
    static BUILTINS: LazyLock<FuncMap> = LazyLock::new(|| {
        let mut funcs = FuncMap::new();
        define(&mut funcs, "not", Exact(1).costs(Cost::Free), |args| Ok(GoValue::Bool(!args.any(0).is_truthy())));
        define(&mut funcs, "len", Exact(1).costs(Cost::Free), |args| {
            let n = match args.any(0) {
                GoValue::String(s) => s.len(),
                GoValue::List(items) => items.len(),
                GoValue::Map(map) => map.len(),
                other => return Err(fail("len", format!("len of type {}", go_type(other)))),
            };
            Ok(GoValue::Int(i64::try_from(n).unwrap_or(i64::MAX)))
        });
        define(&mut funcs, "index", AtLeast(1).costs(Cost::Free), |args| {
            let mut value = args.any(0).clone();
            for key in args.rest(1) {
                value = index(&value, key)?;
            }
            Ok(value)
        });
        define(&mut funcs, "slice", AtLeast(1), slice);
        define(&mut funcs, "eq", AtLeast(1), |args| {
            let Some((first, others)) = args.rest(0).split_first().filter(|(_, others)| !others.is_empty()) else {
                return Err(TemplateError::Exec("missing argument for comparison".into()));
            };
            for other in others {
                if go_eq(first, other)? {
                    return Ok(GoValue::Bool(true));
                }
            }
            Ok(GoValue::Bool(false))
        });
        define(&mut funcs, "ne", Exact(2), |args| Ok(GoValue::Bool(!go_eq(args.any(0), args.any(1))?)));
        define(&mut funcs, "lt", Exact(2).costs(Cost::Free), |args| Ok(GoValue::Bool(order(args)? == Ordering::Less)));
        define(&mut funcs, "le", Exact(2).costs(Cost::Free), |args| {
            Ok(GoValue::Bool(order(args)? != Ordering::Greater))
        });
        define(&mut funcs, "gt", Exact(2).costs(Cost::Free), |args| {
            Ok(GoValue::Bool(order(args)? == Ordering::Greater))
        });
        define(&mut funcs, "ge", Exact(2).costs(Cost::Free), |args| Ok(GoValue::Bool(order(args)? != Ordering::Less)));
        define(&mut funcs, "call", AtLeast(1).costs(Cost::Free), |args| {
            Err(match args.any(0) {
                GoValue::Nil => TemplateError::Exec("call of nil".into()),
                other => TemplateError::Exec(format!("non-function of type {}", go_type(other))),
            })
        });
        define(&mut funcs, "print", AtLeast(0).writes(TEXT), |args| {
            printed(args, |cap| fmt::sprint_capped(args.rest(0), cap))
        });
        define(&mut funcs, "println", AtLeast(0).writes(TEXT), |args| {
            printed(args, |cap| fmt::sprintln_capped(args.rest(0), cap))
        });
        define(&mut funcs, "printf", AtLeast(1).costs(Cost::Printf), |args| {
            let format = args.string(0)?;
            printed(args, |cap| fmt::sprintf_capped(format, args.rest(1), cap))
        });
        define(&mut funcs, "html", AtLeast(0).writes(ESCAPES), |args| {
            printed(args, |cap| fmt::escaper_text(args.rest(0), cap)).map(|text| escaped(&text, gotmpl::html_escape))
        });
        define(&mut funcs, "js", AtLeast(0).writes(ESCAPES), |args| {
            printed(args, |cap| fmt::escaper_text(args.rest(0), cap)).map(|text| escaped(&text, fmt::js_escape))
        });
        define(&mut funcs, "urlquery", AtLeast(0).writes(ESCAPES), |args| {
            printed(args, |cap| fmt::escaper_text(args.rest(0), cap)).map(|text| escaped(&text, gotmpl::url_encode))
        });
        funcs
    });
    &BUILTINS
}

/// What a printing function prints, stopped once it passes the output budget left (a width
/// applies to each element of a list, an argument may be printed many times: a short call can
/// print far more than its arguments hold).
fn printed(args: &Args<'_>, print: impl FnOnce(Option<usize>) -> String) -> Result<GoValue, TemplateError> {
    let budget = args.context().budget;
    let limit = budget.limits().max_output_bytes;
    let room = usize::try_from(limit.saturating_sub(budget.used().0)).unwrap_or(usize::MAX);
    fmt::within(room, print).map(string).map_err(|fmt::TooLong| {
        TemplateError::Exec(format!("{}: {}", args.name(), Exhausted { resource: Resource::Output, limit }))
    })
}

/// A printed value escaped.
fn escaped(value: &GoValue, escape: impl Fn(&str) -> String) -> GoValue {
    string(escape(value.as_str().unwrap_or_default()))
}

/// An integer of any of Go's integer kinds, widened.
fn integer(value: &GoValue) -> Option<i128> {
    match value {
        GoValue::Int(n) | GoValue::Int64(n) => Some(i128::from(*n)),
        GoValue::Uint(n) => Some(i128::from(*n)),
        _ => None,
    }
}

/// Go's `index` of one key: a list's element, a map's entry (the element type's zero value when
/// missing: nil, or `""` in a `map[string]string`), a string's byte.
fn index(value: &GoValue, key: &GoValue) -> Result<GoValue, TemplateError> {
    let at = |len: usize| -> Result<usize, TemplateError> {
        let Some(i) = integer(key) else {
            return Err(fail("index", format!("cannot index slice/array with type {}", go_type(key))));
        };
        usize::try_from(i).ok().filter(|i| *i < len).ok_or_else(|| fail("index", format!("index out of range: {i}")))
    };
    match value {
        GoValue::List(items) => Ok(items[at(items.len())?].clone()),
        GoValue::String(s) => Ok(GoValue::Int(i64::from(s.as_bytes()[at(s.len())?]))),
        GoValue::Map(map) => match key {
            GoValue::String(k) => {
                Ok(map.get(k).unwrap_or_else(|| if map.is_strings() { string("") } else { GoValue::Nil }))
            }
            other => Err(fail("index", format!("value has type {}; should be string", go_type(other)))),
        },
        GoValue::Nil => Err(fail("index", "index of untyped nil")),
        other => Err(fail("index", format!("can't index item of type {}", go_type(other)))),
    }
}

/// Go's `slice x i j k`: a list keeps its element type.
fn slice(args: &Args<'_>) -> Result<GoValue, TemplateError> {
    if args.len() > 4 {
        return Err(TemplateError::Exec(format!("wrong number of args for slice: want 1-4 got {}", args.len())));
    }
    let mut bounds = Vec::with_capacity(3);
    for value in args.rest(1) {
        let i = integer(value)
            .ok_or_else(|| fail("slice", format!("cannot index slice/array with type {}", go_type(value))))?;
        bounds.push(i);
    }
    let value = args.any(0);
    let len = match value {
        GoValue::List(items) => items.len(),
        GoValue::String(s) if bounds.len() < 3 => s.len(),
        GoValue::String(_) => return Err(fail("slice", "cannot 3-index slice a string")),
        GoValue::Nil => return Err(fail("slice", "slice of untyped nil")),
        other => return Err(fail("slice", format!("can't slice item of type {}", go_type(other)))),
    };
    let cap = i128::try_from(len).unwrap_or(i128::MAX);
    let start = bounds.first().copied().unwrap_or(0);
    let end = bounds.get(1).copied().unwrap_or(cap);
    let max = bounds.get(2).copied().unwrap_or(cap);
    for bound in [start, end, max] {
        if bound < 0 || bound > cap {
            return Err(fail("slice", format!("index out of range: {bound}")));
        }
    }
    if start > end {
        return Err(fail("slice", format!("invalid slice index: {start} > {end}")));
    }
    if end > max {
        return Err(fail("slice", format!("invalid slice index: {end} > {max}")));
    }
    let (start, end) = (usize::try_from(start).unwrap_or(0), usize::try_from(end).unwrap_or(0));
    match value {
        GoValue::List(items) if start == 0 && end == items.len() => Ok(value.clone()),
        GoValue::List(items) => Ok(GoValue::List(items.with_items(items[start..end].to_vec()))),
        GoValue::String(s) => {
            s.get(start..end).map(string).ok_or_else(|| fail("slice", "index not on UTF-8 character boundary"))
        }
        _ => Ok(GoValue::Nil),
    }
}

/// Go 1.19's `eq` of two values: basic kinds by value (an int equals a uint of the same
/// value), nil equal to nil and to a nil slice, and a nil slice to any slice only if it is nil
/// too; other lists and maps are not comparable.
pub fn go_eq(a: &GoValue, b: &GoValue) -> Result<bool, TemplateError> {
    let nil_list = |v: &GoValue| matches!(v, GoValue::List(items) if items.nil);
    if let (Some(x), Some(y)) = (integer(a), integer(b)) {
        return Ok(x == y);
    }
    Ok(match (a, b) {
        (GoValue::Nil, GoValue::Nil) => true,
        (GoValue::Nil, other) | (other, GoValue::Nil) => nil_list(other),
        (GoValue::List(_), GoValue::List(_)) if nil_list(a) || nil_list(b) => nil_list(a) && nil_list(b),
        (GoValue::Bool(a), GoValue::Bool(b)) => a == b,
        (GoValue::Float(a), GoValue::Float(b)) => a == b,
        (GoValue::String(a), GoValue::String(b)) => a == b,
        // Pointers: the same version, not an equal one; values: equal fields.
        (GoValue::Semver(x), GoValue::Semver(y)) if x.pointer && y.pointer => std::sync::Arc::ptr_eq(x, y),
        (GoValue::Semver(x), GoValue::Semver(y)) if !x.pointer && !y.pointer => {
            x.version == y.version && x.original == y.original
        }
        (GoValue::List(_), GoValue::List(_)) | (GoValue::Map(_), GoValue::Map(_)) => {
            return Err(TemplateError::Exec(format!("non-comparable type {}", go_type(a))))
        }
        _ => {
            return Err(TemplateError::Exec(format!(
                "incompatible types for comparison: {} and {}",
                go_type(a),
                go_type(b)
            )))
        }
    })
}

/// Go's ordering of two values for `lt`, `le`, `gt` and `ge`.
fn order(args: &Args<'_>) -> Result<Ordering, TemplateError> {
    let (a, b) = (args.any(0), args.any(1));
    if let (Some(x), Some(y)) = (integer(a), integer(b)) {
        return Ok(x.cmp(&y));
    }
    match (a, b) {
        (GoValue::Float(x), GoValue::Float(y)) => {
            x.partial_cmp(y).ok_or_else(|| TemplateError::Exec("invalid type for comparison".into()))
        }
        (GoValue::String(x), GoValue::String(y)) => Ok(x.cmp(y)),
        _ if go_type(a) != go_type(b) => {
            Err(TemplateError::Exec(format!("incompatible types for comparison: {} and {}", go_type(a), go_type(b))))
        }
        _ => Err(TemplateError::Exec("invalid type for comparison".into())),
    }
}
