//! Evaluation with expr-lang's runtime rules: `+ - *` keep ints when both sides are ints, `/` and
//! `**` always give floats, `%` takes ints only, ints and floats compare by value, `==` across types
//! is false. Ours, as current Windsor releases behave: a missing key or member access on nil yields nil;
//! nil counts as false in `&& || !` and in a ternary's condition.

use super::parse::{float, Node, NodeKind};
use super::scope::Scope;
use super::{ExprError, Host, Span};
use crate::doc::{Map, Value};
use crate::limits::{Budget, Exhausted};
use std::borrow::Cow;

type Result<T> = std::result::Result<T, ExprError>;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

pub(super) fn num(value: &Value) -> Option<Num> {
    let Value::Number(n) = value else { return None };
    n.as_i64().map(Num::Int).or_else(|| n.as_f64().map(Num::Float))
}

impl Num {
    pub(super) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// Go's `%T`-like names expr prints in its errors.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nil",
        Value::Bool(_) => "bool",
        Value::Number(_) if matches!(num(value), Some(Num::Int(_))) => "int",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

pub(super) fn error(message: impl Into<String>, span: Span) -> ExprError {
    ExprError::new(message, span)
}

/// A budget that ran out, located at the node that needed more.
pub(super) fn exhausted(span: Span) -> impl Fn(Exhausted) -> ExprError {
    move |err| error(err.to_string(), span)
}

/// About how many bytes of memory a copy of `value` takes, counted without recursion (values
/// are as deep as their input allows): each value's slot, text, and what lists and maps allocate.
/// A one-key map is some hundred bytes, not its text: budgets that counted text alone let
/// `map(1..4000000, {a: #})` reach 2.4 GB.
pub fn size_of(value: &Value) -> usize {
    let mut size = 0usize;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        size = size.saturating_add(match value {
            Value::String(s) => VALUE_BYTES + ALLOCATION_BYTES + s.len(),
            Value::Array(items) => {
                pending.extend(items);
                VALUE_BYTES + ALLOCATION_BYTES
            }
            Value::Object(map) => {
                pending.extend(map.values());
                map.keys().map(|key| key.len() + ENTRY_BYTES).fold(VALUE_BYTES + MAP_BYTES, usize::saturating_add)
            }
            // A number keeps its text (arbitrary precision).
            Value::Number(_) => VALUE_BYTES + ALLOCATION_BYTES,
            Value::Bool(_) | Value::Null => VALUE_BYTES,
        });
    }
    size
}

/// A value's slot in its list or map.
const VALUE_BYTES: usize = 32;
/// What the allocator takes for a small allocation (a string's text, a list's items).
const ALLOCATION_BYTES: usize = 16;
/// An empty map's table and entry list, as a map of a few keys allocates them.
const MAP_BYTES: usize = 256;
/// One map entry besides its key's text and its value: the key's allocation, the entry (hash,
/// key, value) and its index, with the room the map keeps for growth.
const ENTRY_BYTES: usize = 128;

/// An owned copy of an evaluated value, charging the copy when it is one (a borrowed value
/// from the environment referenced many times is the amplification the budget stops).
pub fn owned(value: Cow<'_, Value>, budget: &Budget, span: Span) -> Result<Value> {
    match value {
        Cow::Owned(value) => Ok(value),
        Cow::Borrowed(value) => {
            budget.charge_output(size_of(value)).map_err(exhausted(span))?;
            Ok(value.clone())
        }
    }
}

/// Every node is a step; copies and produced text are output, charged to `budget` before the
/// allocation where the size is known in advance.
pub fn eval<'a>(node: &Node, scope: &Scope<'a>) -> Result<Cow<'a, Value>> {
    let (span, budget) = (node.span, scope.budget);
    budget.charge_steps(1).map_err(exhausted(span))?;
    match &node.kind {
        NodeKind::Literal(value) => {
            budget.charge_output(size_of(value)).map_err(exhausted(span))?;
            Ok(Cow::Owned(value.clone()))
        }
        NodeKind::Ident(name) => Ok(scope.env.get(name).map_or(Cow::Owned(Value::Null), Cow::Borrowed)),
        NodeKind::Member { object, key, at } => {
            let object = eval(object, scope)?;
            let key = eval(key, scope)?;
            member(object, &key, *at)
        }
        NodeKind::Slice { object, from, to, at } => {
            let object = eval(object, scope)?;
            // expr's order: the object, `to` (or the length), then `from` (or 0).
            let to = match to {
                Some(to) => eval(to, scope)?,
                None => Cow::Owned(Value::from(match object.as_ref() {
                    Value::Array(items) => items.len(),
                    Value::String(s) => s.len(),
                    Value::Object(map) => map.len(),
                    other => return Err(error(format!("invalid argument for len (type {})", go_type(other)), *at)),
                })),
            };
            let from = match from {
                Some(from) => eval(from, scope)?,
                None => Cow::Owned(Value::from(0)),
            };
            slice(object, &from, &to, *at, budget)
        }
        NodeKind::Unary { op, operand } => {
            let value = eval(operand, scope)?;
            match (*op, num(&value)) {
                ("not" | "!", _) => Ok(Cow::Owned(Value::Bool(!truthy(&value, "!", span)?))),
                ("-", Some(Num::Int(i))) => Ok(Cow::Owned(Value::from(i.wrapping_neg()))),
                ("-", Some(Num::Float(f))) => Ok(Cow::Owned(float(-f))),
                ("+", Some(_)) => Ok(value),
                (op, _) => Err(error(format!("invalid operation: {op}{}", type_name(&value)), span)),
            }
        }
        NodeKind::Binary { op, op_span, left, right } => binary(op, left, right, scope, *op_span),
        NodeKind::Ternary { cond, then, otherwise, .. } => {
            let value = eval(cond, scope)?;
            if truthy(&value, "?:", cond.span)? {
                match then {
                    Some(then) => eval(then, scope),
                    None => Ok(value),
                }
            } else {
                eval(otherwise, scope)
            }
        }
        NodeKind::Matches { subject, pattern, .. } => {
            let subject = eval(subject, scope)?;
            match subject.as_ref() {
                Value::Null => Ok(Cow::Owned(Value::Bool(false))),
                Value::String(s) => Ok(Cow::Owned(Value::Bool(pattern.is_match(s)))),
                other => Err(error(
                    format!("invalid operation: matches (mismatched types {} and string)", type_name(other)),
                    span,
                )),
            }
        }
        NodeKind::Call { name, args } if super::parse::PREDICATES.contains(&name.as_str()) => {
            super::predicates::predicate(name, args, scope, span).map(Cow::Owned)
        }
        NodeKind::Call { name, args } => {
            let args = args.iter().map(|a| eval(a, scope)).collect::<Result<Vec<_>>>()?;
            call(name, &args, scope, span).map(Cow::Owned)
        }
        NodeKind::Pointer(name) => {
            // `#` is a copy of the element.
            let value = super::predicates::pointer(name, scope, span)?;
            budget.charge_output(size_of(&value)).map_err(exhausted(span))?;
            Ok(Cow::Owned(value))
        }
        NodeKind::Let { name, value, body, .. } => {
            let value = owned(eval(value, scope)?, budget, value.span)?;
            let var = scope.bind(name, value);
            eval(body, &scope.with_var(&var)).and_then(|v| owned(v, budget, span)).map(Cow::Owned)
        }
        NodeKind::Var(name) => {
            let value = scope.var(name).cloned().unwrap_or(Value::Null);
            budget.charge_output(size_of(&value)).map_err(exhausted(span))?;
            Ok(Cow::Owned(value))
        }
        NodeKind::Sequence(nodes) => {
            let Some((last, before)) = nodes.split_last() else { return Ok(Cow::Owned(Value::Null)) };
            for node in before {
                eval(node, scope)?;
            }
            eval(last, scope)
        }
        NodeKind::Closure(body) => eval(body, scope),
        NodeKind::Array(items) => {
            let slots = items.len().saturating_mul(VALUE_BYTES);
            budget.charge_output(slots.saturating_add(VALUE_BYTES + ALLOCATION_BYTES)).map_err(exhausted(span))?;
            Ok(Cow::Owned(Value::Array(
                items.iter().map(|i| eval(i, scope).and_then(|v| owned(v, budget, i.span))).collect::<Result<_>>()?,
            )))
        }
        NodeKind::Map(entries) => {
            // The map itself: a map of one small value is mostly this, not its text.
            let keys = entries.iter().map(|(key, _)| key.len() + ENTRY_BYTES).fold(0usize, usize::saturating_add);
            budget.charge_output(keys.saturating_add(VALUE_BYTES + MAP_BYTES)).map_err(exhausted(span))?;
            let mut map = Map::new();
            for (key, value) in entries {
                map.insert(key.clone(), owned(eval(value, scope)?, budget, value.span)?);
            }
            Ok(Cow::Owned(Value::Object(map)))
        }
    }
}

/// `object[key]` (expr's runtime `Fetch`): lists and strings by an integer index, from the end
/// when negative; a string by byte, giving the byte's value (Go's `uint8`), as expr does.
fn member<'a>(object: Cow<'a, Value>, key: &Value, at: Span) -> Result<Cow<'a, Value>> {
    match (object, key) {
        (Cow::Borrowed(Value::Null) | Cow::Owned(Value::Null), _) => Ok(Cow::Owned(Value::Null)),
        (Cow::Borrowed(Value::Object(map)), Value::String(k)) => {
            Ok(map.get(k).map_or(Cow::Owned(Value::Null), Cow::Borrowed))
        }
        (Cow::Owned(Value::Object(mut map)), Value::String(k)) => {
            Ok(Cow::Owned(map.swap_remove(k).unwrap_or(Value::Null)))
        }
        (object, key) => {
            let length = match object.as_ref() {
                Value::Array(items) => Some(items.len()),
                Value::String(s) => Some(s.len()),
                _ => None,
            };
            // A key that is not a number says so (expr: `invalid operation: int(string)`).
            let (Some(length), Some(i)) = (length, num(key)) else {
                return Err(error(format!("cannot fetch {} from {}", go_format(key), type_name(&object)), at));
            };
            let i = match i {
                Num::Int(i) => i,
                Num::Float(f) => f as i64,
            };
            let index = if i < 0 { i.saturating_add(length as i64) } else { i };
            let Some(index) = usize::try_from(index).ok().filter(|i| *i < length) else {
                return Err(error(format!("index out of range: {index} (array length is {length})"), at));
            };
            Ok(match object {
                Cow::Borrowed(Value::Array(items)) => items.get(index).map_or(Cow::Owned(Value::Null), Cow::Borrowed),
                Cow::Owned(Value::Array(mut items)) => Cow::Owned(items.swap_remove(index)),
                other => match other.as_ref() {
                    Value::String(s) => Cow::Owned(Value::from(s.as_bytes().get(index).copied().unwrap_or(0))),
                    _ => Cow::Owned(Value::Null),
                },
            })
        }
    }
}

/// Go's `%T` of a value, as expr's runtime prints it (`<nil>` for nil).
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        other => type_name(other),
    }
}

/// expr's `ToInt` for indexes: integers, floats truncated; anything else is an error.
fn to_int(value: &Value, at: Span) -> Result<i64> {
    match num(value) {
        Some(Num::Int(i)) => Ok(i),
        Some(Num::Float(f)) => Ok(f as i64),
        None => Err(error(format!("invalid operation: int({})", go_type(value)), at)),
    }
}

/// `object[from:to]` (expr's runtime `Slice`): negative bounds count from the end, bounds past
/// either end are clamped, and `from` after `to` gives an empty slice. Strings are sliced by
/// byte as in expr; ours refuses a cut inside a multi-byte character, which Go would keep as
/// invalid UTF-8.
fn slice<'a>(object: Cow<'a, Value>, from: &Value, to: &Value, at: Span, budget: &Budget) -> Result<Cow<'a, Value>> {
    let length = match object.as_ref() {
        Value::Array(items) => items.len(),
        Value::String(s) => s.len(),
        _ => return Err(error(format!("cannot slice {}", go_format(from)), at)),
    };
    let (a, b) = (to_int(from, at)?, to_int(to, at)?);
    let length = length as i64;
    let b = if b < 0 { b.saturating_add(length) } else { b }.clamp(0, length);
    let a = if a < 0 { a.saturating_add(length) } else { a }.clamp(0, b);
    let (a, b) = (a as usize, b as usize);
    match object {
        Cow::Owned(Value::Array(mut items)) => {
            items.truncate(b);
            items.drain(..a);
            Ok(Cow::Owned(Value::Array(items)))
        }
        object => match object.as_ref() {
            Value::Array(items) => {
                let part = items.get(a..b).unwrap_or_default();
                let size = part.iter().map(size_of).fold(0usize, usize::saturating_add);
                budget.charge_output(size).map_err(exhausted(at))?;
                Ok(Cow::Owned(Value::Array(part.to_vec())))
            }
            Value::String(s) => match s.get(a..b) {
                Some(part) => {
                    budget.charge_output(part.len()).map_err(exhausted(at))?;
                    Ok(Cow::Owned(Value::String(part.to_string())))
                }
                None => Err(error(
                    format!(
                        "slice [{a}:{b}] cuts a multi-byte character of the string (strings are sliced by byte, \
                         as in expr)"
                    ),
                    at,
                )),
            },
            _ => Ok(Cow::Owned(Value::Null)),
        },
    }
}

/// Booleans as they are; nil as false (ours: a missing flag reads as off); anything else is an error.
pub(super) fn truthy(value: &Value, op: &str, span: Span) -> Result<bool> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        other => Err(error(format!("invalid operation: {op} (mismatched types {} and bool)", type_name(other)), span)),
    }
}

fn binary<'a>(op: &str, left: &Node, right: &Node, scope: &Scope<'a>, span: Span) -> Result<Cow<'a, Value>> {
    let budget = scope.budget;
    let l = eval(left, scope)?;
    match op {
        "&&" | "and" => {
            let result = truthy(&l, op, left.span)? && truthy(eval(right, scope)?.as_ref(), op, right.span)?;
            return Ok(Cow::Owned(Value::Bool(result)));
        }
        "||" | "or" => {
            let result = truthy(&l, op, left.span)? || truthy(eval(right, scope)?.as_ref(), op, right.span)?;
            return Ok(Cow::Owned(Value::Bool(result)));
        }
        "??" => return if l.is_null() { eval(right, scope) } else { Ok(l) },
        _ => {}
    }
    let r = eval(right, scope)?;
    let (l, r) = (l.as_ref(), r.as_ref());
    let mismatched = || {
        // Joining text and a number is the usual slip; say how to write it.
        let hint = match (op, l, r) {
            ("+", Value::String(_), Value::Number(_) | Value::Bool(_))
            | ("+", Value::Number(_) | Value::Bool(_), Value::String(_)) => "; convert with string(…) to join text",
            _ => "",
        };
        error(format!("invalid operation: {op} (mismatched types {} and {}){hint}", type_name(l), type_name(r)), span)
    };
    let value = match op {
        "==" => Value::Bool(equal(l, r)),
        "!=" => Value::Bool(!equal(l, r)),
        "<" | ">" | "<=" | ">=" => {
            let ordering = match (num(l), num(r), l, r) {
                (Some(Num::Int(a)), Some(Num::Int(b)), _, _) => a.partial_cmp(&b),
                (Some(a), Some(b), _, _) => a.as_f64().partial_cmp(&b.as_f64()),
                (_, _, Value::String(a), Value::String(b)) => a.as_bytes().partial_cmp(b.as_bytes()),
                _ => return Err(mismatched()),
            };
            let Some(ordering) = ordering else { return Ok(Cow::Owned(Value::Bool(false))) };
            Value::Bool(match op {
                "<" => ordering.is_lt(),
                ">" => ordering.is_gt(),
                "<=" => ordering.is_le(),
                _ => ordering.is_ge(),
            })
        }
        "in" => match r {
            Value::Array(items) => Value::Bool(items.iter().any(|item| equal(item, l))),
            Value::Object(map) => match l {
                Value::String(key) => Value::Bool(map.contains_key(key)),
                _ => Value::Bool(false),
            },
            Value::Null => Value::Bool(false),
            _ => return Err(error(format!("operator \"in\" not defined on {}", type_name(r)), span)),
        },
        "contains" | "startsWith" | "endsWith" | "matches" => match (l, r) {
            (Value::Null, _) | (_, Value::Null) => Value::Bool(false),
            (Value::String(a), Value::String(b)) => Value::Bool(match op {
                "contains" => a.contains(b.as_str()),
                "startsWith" => a.starts_with(b.as_str()),
                "endsWith" => a.ends_with(b.as_str()),
                _ => regex::Regex::new(b).map_err(|err| error(super::regex_error(b, &err), right.span))?.is_match(a),
            }),
            _ => return Err(mismatched()),
        },
        "+" if l.is_string() || r.is_string() => match (l, r) {
            (Value::String(a), Value::String(b)) => {
                budget.charge_output(a.len().saturating_add(b.len())).map_err(exhausted(span))?;
                Value::String(format!("{a}{b}"))
            }
            _ => return Err(mismatched()),
        },
        "+" | "-" | "*" | "/" | "%" | "**" | "^" => {
            let (Some(a), Some(b)) = (num(l), num(r)) else { return Err(mismatched()) };
            arithmetic(op, a, b, span)?
        }
        // expr's `from..to`: the ints from `from` to `to`, both included; empty when `to < from`.
        ".." => {
            let (Some(Num::Int(from)), Some(Num::Int(to))) = (num(l), num(r)) else { return Err(mismatched()) };
            let count = usize::try_from(to.saturating_sub(from).saturating_add(1)).unwrap_or(0);
            budget.charge_output(count.saturating_mul(PART_BYTES)).map_err(exhausted(span))?;
            Value::Array((from..=to).map(Value::from).collect())
        }
        _ => return Err(error(format!("unknown operator {op}"), span)),
    };
    Ok(Cow::Owned(value))
}

fn arithmetic(op: &str, a: Num, b: Num, span: Span) -> Result<Value> {
    let finite = |f: f64| {
        if f.is_finite() {
            Ok(float(f))
        } else {
            Err(error(format!("invalid operation: {op} gives a result that is not a finite number"), span))
        }
    };
    match (op, a, b) {
        ("+", Num::Int(x), Num::Int(y)) => Ok(Value::from(x.wrapping_add(y))),
        ("-", Num::Int(x), Num::Int(y)) => Ok(Value::from(x.wrapping_sub(y))),
        ("*", Num::Int(x), Num::Int(y)) => Ok(Value::from(x.wrapping_mul(y))),
        ("%", Num::Int(_), Num::Int(0)) => Err(error("integer divide by zero", span)),
        ("%", Num::Int(x), Num::Int(y)) => Ok(Value::from(x.wrapping_rem(y))),
        ("%", _, _) => Err(error("invalid operation: % (mismatched types float64 and int)", span)),
        ("+", a, b) => finite(a.as_f64() + b.as_f64()),
        ("-", a, b) => finite(a.as_f64() - b.as_f64()),
        ("*", a, b) => finite(a.as_f64() * b.as_f64()),
        ("/", a, b) => finite(a.as_f64() / b.as_f64()),
        (_, a, b) => finite(a.as_f64().powf(b.as_f64())),
    }
}

/// expr's equality: numbers by value across int and float, everything else structurally.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => match (num(a), num(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => x == y,
            (Some(x), Some(y)) => x.as_f64() == y.as_f64(),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

fn call(name: &str, args: &[Cow<'_, Value>], scope: &Scope<'_>, span: Span) -> Result<Value> {
    let (host, budget) = (scope.host, scope.budget);
    let arg = |i: usize| args.get(i).map_or(&Value::Null, |a| a.as_ref());
    let string_arg = |i: usize| match arg(i) {
        Value::String(s) => Ok(s.as_str()),
        other => Err(error(format!("{name}() expects a string, got {}", type_name(other)), span)),
    };
    // What a function makes is at most about its arguments' size (`split` adds a little per
    // part), charged before it is made; `file` and `jsonnet` are charged once read.
    if !matches!(name, "len" | "abs" | "int" | "float" | "file" | "jsonnet" | "yaml" | "yamlString") {
        let size = args.iter().map(|a| size_of(a)).fold(0usize, usize::saturating_add);
        budget.charge_output(size).map_err(exhausted(span))?;
    }
    let value = match name {
        "len" => Value::from(match arg(0) {
            Value::String(s) => s.chars().count(),
            Value::Array(a) => a.len(),
            Value::Object(m) => m.len(),
            other => return Err(error(format!("invalid argument for len (type {})", type_name(other)), span)),
        }),
        "lower" => Value::String(string_arg(0)?.to_lowercase()),
        "upper" => Value::String(string_arg(0)?.to_uppercase()),
        "trim" => Value::String(match args.len() {
            1 => string_arg(0)?.trim().to_string(),
            _ => {
                let cutset: Vec<char> = string_arg(1)?.chars().collect();
                string_arg(0)?.trim_matches(|c| cutset.contains(&c)).to_string()
            }
        }),
        "split" => {
            let (s, sep) = (string_arg(0)?, string_arg(1)?);
            // Each part is a value of its own: a splitting into characters takes many times the text.
            let parts = if sep.is_empty() { s.chars().count() } else { s.matches(sep).count() + 1 };
            budget.charge_output(parts.saturating_mul(PART_BYTES)).map_err(exhausted(span))?;
            let parts: Vec<Value> = match num(arg(2)) {
                Some(Num::Int(n)) if n > 0 => s.splitn(n as usize, sep).map(|p| Value::String(p.into())).collect(),
                Some(Num::Int(0)) => Vec::new(),
                _ if sep.is_empty() => s.chars().map(|c| Value::String(c.to_string())).collect(),
                _ => s.split(sep).map(|p| Value::String(p.into())).collect(),
            };
            Value::Array(parts)
        }
        "join" => {
            let Value::Array(items) = arg(0) else {
                return Err(error(format!("join() expects a list, got {}", type_name(arg(0))), span));
            };
            let sep = if args.len() > 1 { string_arg(1)? } else { "" };
            let parts = items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.as_str()),
                    other => Err(error(format!("join() expects a list of strings, got {}", type_name(other)), span)),
                })
                .collect::<Result<Vec<_>>>()?;
            Value::String(parts.join(sep))
        }
        "keys" | "values" => {
            let Value::Object(map) = arg(0) else {
                return Err(error(format!("cannot get {name} from {}", type_name(arg(0))), span));
            };
            let entries = sorted_entries(map);
            Value::Array(match name {
                "keys" => entries.into_iter().map(|(k, _)| Value::String(k.clone())).collect(),
                _ => entries.into_iter().map(|(_, v)| v.clone()).collect(),
            })
        }
        "abs" => match num(arg(0)) {
            Some(Num::Int(i)) => Value::from(i.wrapping_abs()),
            Some(Num::Float(f)) => float(f.abs()),
            None => return Err(error(format!("invalid argument for abs (type {})", type_name(arg(0))), span)),
        },
        "int" => match (arg(0), num(arg(0))) {
            (_, Some(Num::Int(i))) => Value::from(i),
            (_, Some(Num::Float(f))) => Value::from(f.trunc() as i64),
            (Value::String(s), _) => {
                Value::from(s.trim().parse::<i64>().map_err(|_| error(format!("invalid operation: int({s})"), span))?)
            }
            (other, _) => return Err(error(format!("invalid operation: int({})", type_name(other)), span)),
        },
        "float" => match (arg(0), num(arg(0))) {
            (_, Some(n)) => float(n.as_f64()),
            (Value::String(s), _) => {
                float(s.trim().parse::<f64>().map_err(|_| error(format!("invalid operation: float({s})"), span))?)
            }
            (other, _) => return Err(error(format!("invalid operation: float({})", type_name(other)), span)),
        },
        "string" if host.windsor_v09() => Value::String(match arg(0) {
            Value::Null => String::new(),
            value @ (Value::Object(_) | Value::Array(_)) => super::interpolate::embedded_text(value),
            value => go_format(value),
        }),
        "string" => Value::String(go_format(arg(0))),
        // The prefix's type is checked here first, with the message every text argument gets.
        "cidrhost" => {
            string_arg(0)?;
            super::cidr::call(name, args.iter().map(|a| a.as_ref())).map_err(|err| error(err, span))?
        }
        "cidrsubnet" | "cidrsubnets" | "cidrnetmask" => {
            super::cidr::call(name, args.iter().map(|a| a.as_ref())).map_err(|err| error(err, span))?
        }
        // Windsor's messages (pkg/runtime/terraform/provider.go, registerTerraformOutputHelper).
        "terraform_output" => {
            if args.len() != 2 {
                let message =
                    format!("terraform_output() requires exactly 2 arguments (component, key), got {}", args.len());
                return Err(error(message, span));
            }
            let [Value::String(component), Value::String(key)] = [arg(0), arg(1)] else {
                let (which, value) = if arg(0).is_string() { ("key", arg(1)) } else { ("component", arg(0)) };
                let message = format!("terraform_output() {which} must be a string, got {}", go_type(value));
                return Err(error(message, span));
            };
            match host.terraform_output(component, key) {
                Some(value) => value,
                None => {
                    let message = format!("terraform output '{key}' for component {component} is deferred");
                    return Err(ExprError { deferred: true, ..error(message, span) });
                }
            }
        }
        // Windsor's secret helper (pkg/runtime/secrets/secrets.go EvaluateHelper, parseHelperParams):
        // deferred while a blueprint is composed, resolved only when Windsor applies it.
        "secret" => {
            if args.len() != 3 {
                let message = format!("secret() requires exactly 3 arguments (vault, item, field), got {}", args.len());
                return Err(error(message, span));
            }
            for (i, which) in ["vault", "item", "field"].into_iter().enumerate() {
                if !arg(i).is_string() {
                    return Err(error(format!("secret() {which} must be a string, got {}", go_type(arg(i))), span));
                }
            }
            return Err(ExprError { deferred: true, ..error("secret expression is deferred".to_string(), span) });
        }
        "toJSON" => Value::String(serde_json::to_string(arg(0)).unwrap_or_default()),
        // Windsor v0.9's helpers (pkg/runtime/evaluator/evaluator.go, buildExprEnvironment), with
        // its messages.
        "env" | "jsonString" if args.len() != 1 => {
            return Err(error(format!("{name}() requires exactly 1 argument, got {}", args.len()), span));
        }
        "env" => match arg(0) {
            Value::String(variable) => host.env(variable).map_or(Value::Null, Value::String),
            other => {
                return Err(error(format!("env() variable name must be a string, got {}", go_type(other)), span));
            }
        },
        "jsonString" => Value::String(go_json(arg(0))),
        "yaml" | "yamlString" if args.is_empty() || args.len() > 2 => {
            return Err(error(format!("{name}() requires 1 or 2 arguments, got {}", args.len()), span));
        }
        "yamlString" if args.len() == 1 => Value::String(go_yaml(arg(0))),
        "yaml" | "yamlString" => {
            let Value::String(text) = arg(0) else {
                let message = match name {
                    "yaml" => "yaml() first argument must be a string (file path or YAML content)",
                    _ => "yamlString(path, input) first argument must be a string",
                };
                return Err(error(format!("{message}, got {}", go_type(arg(0))), span));
            };
            let input = args.get(1).map(|a| a.as_ref()).filter(|input| !input.is_null());
            let value = match name {
                "yaml" => yaml(text, input, scope),
                _ => yaml_source(text, host)
                    .and_then(|source| yaml_template(name, source, input, scope))
                    .map(Value::String),
            };
            let value = value.map_err(|message| error(message, span))?;
            budget.charge_output(size_of(&value)).map_err(exhausted(span))?;
            value
        }
        name if super::parse::BUILTINS.contains(&name) => {
            super::predicates::builtin(name, args).map_err(|message| error(message, span))?
        }
        "file" => Value::String(host.file(string_arg(0)?).map_err(|err| error(err, span))?),
        "jsonnet" => host.jsonnet(string_arg(0)?).map_err(|err| error(err, span))?,
        _ => return Err(error(format!("unknown func {name}"), span)),
    };
    if matches!(name, "file" | "jsonnet") {
        budget.charge_output(size_of(&value)).map_err(exhausted(span))?;
    }
    Ok(value)
}

/// What one more value in a list takes besides its text (a number's or a short string's size).
pub(super) const PART_BYTES: usize = VALUE_BYTES + ALLOCATION_BYTES;

pub(super) fn sorted_entries(map: &Map) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Go's `%v`, which expr's `string()` uses: `<nil>`, `[1 a]`, `map[a:1]`, floats as `%g`.
pub fn go_format(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(_) => match num(value) {
            Some(Num::Int(i)) => i.to_string(),
            Some(Num::Float(f)) => go_float(f),
            None => String::new(),
        },
        Value::Array(items) => format!("[{}]", items.iter().map(go_format).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => {
            let parts: Vec<String> =
                sorted_entries(map).into_iter().map(|(k, v)| format!("{k}:{}", go_format(v))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`, which `%v` uses: the shortest digits, in exponent form
/// when the decimal exponent is below -4 or at least 6 (`1e+06`, `1e-05`). Go templates print
/// floats with it too.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // `{:e}` gives the shortest round-trip digits and the exact decimal exponent.
    let text = format!("{f:e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// The text of a value made a string (Windsor's `%v` for scalars): nil is empty, strings as they
/// are, numbers as Go prints them; maps and lists as compact JSON, where Go would print its own
/// `map[k:v]` notation that nothing can read back.
pub fn to_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => match num(value) {
            Some(Num::Int(i)) => i.to_string(),
            Some(Num::Float(f)) => go_float(f),
            None => String::new(),
        },
        Value::Array(_) | Value::Object(_) => serde_json::to_string(value).unwrap_or_default(),
    }
}

/// Dotted paths read from the environment (`cluster.enabled`), for `explain`.
pub fn collect_paths(node: &Node, out: &mut Vec<String>) {
    fn path_of(node: &Node) -> Option<String> {
        match &node.kind {
            NodeKind::Ident(name) => Some(name.clone()),
            NodeKind::Member { object, key, .. } => match &key.kind {
                NodeKind::Literal(Value::String(k)) => path_of(object).map(|p| format!("{p}.{k}")),
                _ => path_of(object),
            },
            _ => None,
        }
    }
    if let Some(path) = path_of(node) {
        if !out.contains(&path) {
            out.push(path);
        }
        return;
    }
    match &node.kind {
        NodeKind::Literal(_) | NodeKind::Ident(_) | NodeKind::Pointer(_) | NodeKind::Var(_) => {}
        NodeKind::Closure(body) => collect_paths(body, out),
        NodeKind::Let { value, body, .. } => {
            collect_paths(value, out);
            collect_paths(body, out);
        }
        NodeKind::Sequence(nodes) => nodes.iter().for_each(|n| collect_paths(n, out)),
        NodeKind::Member { object, key, .. } => {
            collect_paths(object, out);
            collect_paths(key, out);
        }
        NodeKind::Slice { object, from, to, .. } => {
            collect_paths(object, out);
            [from, to].into_iter().flatten().for_each(|bound| collect_paths(bound, out));
        }
        NodeKind::Unary { operand, .. } => collect_paths(operand, out),
        NodeKind::Binary { left, right, .. } => {
            collect_paths(left, out);
            collect_paths(right, out);
        }
        NodeKind::Ternary { cond, then, otherwise, .. } => {
            collect_paths(cond, out);
            if let Some(then) = then {
                collect_paths(then, out);
            }
            collect_paths(otherwise, out);
        }
        NodeKind::Matches { subject, .. } => collect_paths(subject, out),
        NodeKind::Call { args, .. } | NodeKind::Array(args) => args.iter().for_each(|a| collect_paths(a, out)),
        NodeKind::Map(entries) => entries.iter().for_each(|(_, v)| collect_paths(v, out)),
    }
}

/// The value paths read inside a function call's arguments (`a.b` in `string(a.b)`), for
/// Windsor v0.9's derived config keys.
pub fn collect_call_paths(node: &Node, out: &mut Vec<String>) {
    let mut each = |child: &Node| collect_call_paths(child, out);
    match &node.kind {
        NodeKind::Call { args, .. } => args.iter().for_each(|a| collect_paths(a, out)),
        NodeKind::Literal(_) | NodeKind::Ident(_) | NodeKind::Pointer(_) | NodeKind::Var(_) => {}
        NodeKind::Closure(body) => each(body),
        NodeKind::Let { value, body, .. } => {
            each(value);
            each(body);
        }
        NodeKind::Sequence(nodes) => nodes.iter().for_each(each),
        NodeKind::Member { object, key, .. } => {
            each(object);
            each(key);
        }
        NodeKind::Slice { object, from, to, .. } => {
            each(object);
            [from, to].into_iter().flatten().for_each(|bound| each(bound));
        }
        NodeKind::Unary { operand, .. } => each(operand),
        NodeKind::Binary { left, right, .. } => {
            each(left);
            each(right);
        }
        NodeKind::Ternary { cond, then, otherwise, .. } => {
            each(cond);
            then.iter().for_each(|t| each(t));
            each(otherwise);
        }
        NodeKind::Matches { subject, .. } => each(subject),
        NodeKind::Array(items) => items.iter().for_each(each),
        NodeKind::Map(entries) => entries.iter().for_each(|(_, v)| each(v)),
    }
}

/// Go's `yaml.Marshal` text of a value, as Windsor's `yamlString(value)` gives it: maps in key
/// order, ending in a newline.
fn go_yaml(value: &Value) -> String {
    match value {
        Value::Null => "null\n".to_string(),
        Value::Array(_) | Value::Object(_) => format!("{}\n", super::interpolate::embedded_text(value)),
        other => format!("{}\n", crate::doc::to_yaml(other).trim_end()),
    }
}

/// Go's `json.Marshal` text, as Windsor's `jsonString()` gives it: keys sorted, and `<`, `>`,
/// `&` escaped as Go escapes them.
fn go_json(value: &Value) -> String {
    let text = serde_json::to_string(&super::interpolate::sorted(value)).unwrap_or_default();
    text.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

/// The file `yaml()` and `yamlString()` read for `arg`, resolved next to the declaring file
/// (text holding a newline is YAML itself, never a path); `None` when there is none. A file that
/// exists but may not be read is an error, so refused content never passes as literal text.
fn yaml_file(arg: &str, host: &dyn Host) -> std::result::Result<Option<String>, String> {
    if arg.contains('\n') {
        return Ok(None);
    }
    host.yaml_file(arg)
}

/// `yamlString(path, input)`'s text: the file, else the argument itself.
fn yaml_source<'a>(arg: &'a str, host: &dyn Host) -> std::result::Result<Cow<'a, str>, String> {
    Ok(yaml_file(arg, host)?.map_or(Cow::Borrowed(arg), Cow::Owned))
}

/// The deepest `yaml()`/`yamlString()` nesting: each level is a whole template evaluation
/// (parser, interpolation, evaluator frames, up to 200 expression levels each): 8 such levels fit
/// the stack of a debug build, while a value nests 256.
const MAX_YAML_NESTING: usize = 8;

/// The message for nesting past [`MAX_YAML_NESTING`], passed up unwrapped by every level (so
/// its size does not grow with the depth).
fn too_deep() -> String {
    format!(
        "yaml() and yamlString() are nested more than {MAX_YAML_NESTING} levels deep (a file or text whose \
         ${{…}} calls yaml() or yamlString() on itself?): break the cycle"
    )
}

/// `text` with its `${…}` evaluated against the values and `input` (Windsor templates the file
/// with `input` among the names), when there is an input.
fn yaml_template(
    name: &str,
    text: Cow<'_, str>,
    input: Option<&Value>,
    scope: &Scope<'_>,
) -> std::result::Result<String, String> {
    let Some(input) = input else { return Ok(text.into_owned()) };
    let (env, budget) = (scope.env, scope.budget);
    let mut values = match env {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    budget.charge_output(size_of(env).saturating_add(size_of(input))).map_err(|e| e.to_string())?;
    values.insert("input".into(), input.clone());
    if scope.yaml_depth() >= MAX_YAML_NESTING {
        return Err(too_deep());
    }
    let values = Value::Object(values);
    match super::interpolate::interpolate_in(&text, &scope.template(&values)) {
        Ok(Value::String(text)) => Ok(text),
        Ok(other) if name == "yaml" => {
            Err(format!("yaml() with input expects template to evaluate to a string, got {}", type_name(&other)))
        }
        Ok(other) => {
            Err(format!("yamlString(path, input) expects template to evaluate to a string, got {}", type_name(&other)))
        }
        Err(err) => {
            let deep = too_deep();
            match err.to_string().contains(&deep) {
                true => Err(deep),
                false => Err(format!("{name}() failed to template: {err}")),
            }
        }
    }
}

/// Windsor v0.9's `yaml(pathOrText, input?)` (evaluateYamlFunction): a file's YAML, else the
/// text itself as YAML (without `input`; a bare word, which parses as text, is "not found"); a
/// list of one mapping gives the mapping.
fn yaml(arg: &str, input: Option<&Value>, scope: &Scope<'_>) -> std::result::Result<Value, String> {
    let inline = arg.contains('\n');
    let file = yaml_file(arg, scope.host)?;
    let not_found = || format!("yaml() file not found: {arg}");
    let value = match file {
        None if !inline && input.is_some() => return Err(not_found()),
        None if !inline => {
            let value = first_document(arg).map_err(|_| not_found())?;
            if value.is_string() {
                return Err(not_found());
            }
            value
        }
        file => {
            let text = yaml_template("yaml", file.map_or(Cow::Borrowed(arg), Cow::Owned), input, scope)?;
            first_document(&text).map_err(|err| format!("yaml() failed to parse: {err}"))?
        }
    };
    Ok(match value {
        Value::Array(mut items) if items.len() == 1 && items[0].is_object() => items.swap_remove(0),
        other => other,
    })
}

/// The first YAML document of `text` (nil when there is none), as Go's `yaml.Unmarshal` reads.
fn first_document(text: &str) -> std::result::Result<Value, String> {
    let documents = crate::doc::read_yaml_documents(text).map_err(|err| err.message)?;
    Ok(documents.into_iter().next().unwrap_or(Value::Null))
}
