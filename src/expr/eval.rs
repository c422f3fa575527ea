//! Evaluation with expr-lang's runtime rules: `+ - *` keep ints when both sides are ints, `/` and
//! `**` always give floats, `%` takes ints only, ints and floats compare by value, `==` across types
//! is false. Ours, as current Windsor releases behave: a missing key or member access on nil yields nil;
//! nil counts as false in `&& || !` and in a ternary's condition.

use super::ast::{Node, NodeKind};
use super::error::{error, regex_error, ExprError, Span};
use super::scope::{Call, Run, Scope};
use super::value::{
    equal, exhausted, float, go_format, go_type, num, owned, size_of, truthy, type_name, Num, ALLOCATION_BYTES,
    ENTRY_BYTES, MAP_BYTES, PART_BYTES, VALUE_BYTES,
};
use crate::doc::{Map, Value};
use crate::limits::Budget;
use std::borrow::Cow;

type Result<T> = std::result::Result<T, ExprError>;

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
        NodeKind::Call { name, fun, args } => {
            let Some(row) = scope.functions.get(*fun) else {
                return Err(error(format!("unknown func {name}"), span));
            };
            let call = Call { row, scope, span };
            match row.run {
                Run::Closure(run) => run(&call, args).map(Cow::Owned),
                Run::Values(run) | Run::Sized(run) => {
                    let args = args.iter().map(|a| eval(a, scope)).collect::<Result<Vec<_>>>()?;
                    // What a function makes is at most about its arguments' size (`split` adds
                    // a little per part), charged before it is made.
                    if let Run::Values(_) = row.run {
                        let size = args.iter().map(|a| size_of(a)).fold(0usize, usize::saturating_add);
                        budget.charge_output(size).map_err(exhausted(span))?;
                    }
                    run(&call, &args).map(Cow::Owned)
                }
            }
        }
        NodeKind::Pointer(name) => {
            // `#` is a copy of the element.
            let value = scope.pointer(name, span)?;
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
                _ => regex::Regex::new(b).map_err(|err| error(regex_error(b, &err), right.span))?.is_match(a),
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
