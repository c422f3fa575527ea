//! expr-lang's predicates (`map`, `filter`, `reduce`, … with `#`, `#index`, `#acc`) and the
//! builtins of expr v1.17's builtin/builtin.go that Windsor expressions call (`max`, `get`,
//! `fromPairs`, `take`, `concat`, …), with expr's results: `floor`/`ceil`/`round` give floats,
//! `max`/`min` the chosen element as it is, `get` nil for what is not there.
//!
//! A closure's pointers are the innermost predicate's: each element is bound in a scope of its own
//! around the closure ([`Scope::with_element`]).

use super::eval::{error, eval, num, owned, to_text, truthy, type_name, Num};
use super::parse::{float, Node, NodeKind};
use super::scope::{Element, Scope};
use super::{ExprError, Span};
use crate::doc::{Map, Value};
use std::borrow::Cow;

type Result<T> = std::result::Result<T, ExprError>;

/// `#`, `#index`, `#acc` of the innermost predicate.
pub(super) fn pointer(name: &str, scope: &Scope<'_>, span: Span) -> Result<Value> {
    let Some(element) = scope.element() else {
        return Err(error("cannot use pointer accessor outside predicate", span));
    };
    match name {
        "" => Ok(element.item.clone()),
        "index" => Ok(Value::from(element.index)),
        "acc" => Ok(element.acc.clone()),
        other => Err(error(format!("unknown pointer #{other}"), span)),
    }
}

/// The closure's value for one element.
fn apply(body: &Node, element: Element<'_>, scope: &Scope<'_>) -> Result<Value> {
    let value = eval(body, &scope.with_element(&element))?;
    owned(value, scope.budget, body.span)
}

/// The closure's answer for one element of a predicate that tests (`filter`, `all`, …).
fn test(name: &str, body: &Node, element: Element<'_>, scope: &Scope<'_>) -> Result<bool> {
    match apply(body, element, scope)? {
        Value::Bool(b) => Ok(b),
        Value::Null => Ok(false),
        other => Err(error(format!("predicate of {name} must return bool, got {}", type_name(&other)), body.span)),
    }
}

pub(super) fn predicate(name: &str, args: &[Node], scope: &Scope<'_>, span: Span) -> Result<Value> {
    let Some(collection) = args.first() else {
        return Err(error(format!("not enough arguments to call {name}"), span));
    };
    let items = match eval(collection, scope)? {
        Cow::Owned(Value::Array(items)) => items,
        Cow::Borrowed(Value::Array(items)) => items.clone(),
        // expr iterates a map's values.
        Cow::Owned(Value::Object(map)) => map.into_iter().map(|(_, v)| v).collect(),
        Cow::Borrowed(Value::Object(map)) => map.values().cloned().collect(),
        other => {
            return Err(error(format!("cannot iterate over {}", type_name(&other)), collection.span));
        }
    };
    let body = match args.get(1).map(|a| &a.kind) {
        Some(NodeKind::Closure(body)) => Some(&**body),
        _ => None,
    };
    let frame = |item, index| Element { item, index, acc: Value::Null };
    let Some(body) = body else {
        // `count(list)` and `sum(list)` without a closure.
        return match name {
            "count" => {
                let mut n = 0usize;
                for item in &items {
                    if truthy(item, "count", span)? {
                        n += 1;
                    }
                }
                Ok(Value::from(n))
            }
            _ => sum(items.iter(), span),
        };
    };
    match name {
        "all" | "none" | "any" | "one" => {
            let mut hits = 0usize;
            for (i, item) in items.iter().enumerate() {
                if test(name, body, frame(item, i), scope)? {
                    hits += 1;
                    if matches!(name, "none" | "any") {
                        break;
                    }
                } else if name == "all" {
                    return Ok(Value::Bool(false));
                }
            }
            Ok(Value::Bool(match name {
                "all" => true,
                "none" => hits == 0,
                "any" => hits > 0,
                _ => hits == 1,
            }))
        }
        "filter" => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if test(name, body, frame(item, i), scope)? {
                    out.push(item.clone());
                }
            }
            Ok(Value::Array(out))
        }
        "map" => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(apply(body, frame(item, i), scope)?);
            }
            Ok(Value::Array(out))
        }
        "count" => {
            let mut n = 0usize;
            for (i, item) in items.iter().enumerate() {
                if test(name, body, frame(item, i), scope)? {
                    n += 1;
                }
            }
            Ok(Value::from(n))
        }
        "sum" => {
            let mut values = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                values.push(apply(body, frame(item, i), scope)?);
            }
            sum(values.iter(), span)
        }
        "find" | "findIndex" | "findLast" | "findLastIndex" => {
            let last = name.starts_with("findLast");
            let order: Box<dyn Iterator<Item = (usize, &Value)>> =
                if last { Box::new(items.iter().enumerate().rev()) } else { Box::new(items.iter().enumerate()) };
            for (i, item) in order {
                if test(name, body, frame(item, i), scope)? {
                    return Ok(if name.ends_with("Index") { Value::from(i) } else { item.clone() });
                }
            }
            Ok(if name.ends_with("Index") { Value::from(-1) } else { Value::Null })
        }
        "groupBy" => {
            let mut groups = Map::new();
            for (i, item) in items.iter().enumerate() {
                let key = to_text(&apply(body, frame(item, i), scope)?);
                if let Value::Array(group) = groups.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
                    group.push(item.clone());
                }
            }
            Ok(Value::Object(groups))
        }
        "sortBy" => {
            let descending = match args.get(2) {
                Some(order) => match eval(order, scope)?.as_ref() {
                    Value::String(s) if s == "asc" => false,
                    Value::String(s) if s == "desc" => true,
                    other => return Err(error(format!("unknown order {}, use asc or desc", to_text(other)), span)),
                },
                None => false,
            };
            let mut keyed = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                keyed.push((apply(body, frame(item, i), scope)?, item.clone()));
            }
            let mut failed = None;
            keyed.sort_by(|(a, _), (b, _)| {
                let ordering = compare(a, b).unwrap_or_else(|| {
                    failed = Some(format!("cannot sort by {} and {}", type_name(a), type_name(b)));
                    std::cmp::Ordering::Equal
                });
                if descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            });
            if let Some(message) = failed {
                return Err(error(message, span));
            }
            Ok(Value::Array(keyed.into_iter().map(|(_, item)| item).collect()))
        }
        "reduce" => {
            let mut rest = items.iter().enumerate();
            let mut acc = match args.get(2) {
                Some(initial) => owned(eval(initial, scope)?, scope.budget, initial.span)?,
                None => match rest.next() {
                    Some((_, first)) => first.clone(),
                    None => return Ok(Value::Null),
                },
            };
            for (i, item) in rest {
                acc = apply(body, Element { item, index: i, acc }, scope)?;
            }
            Ok(acc)
        }
        _ => Err(error(format!("unknown func {name}"), span)),
    }
}

/// Numbers and texts in expr's order; anything else does not compare.
fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (num(a), num(b), a, b) {
        (Some(Num::Int(x)), Some(Num::Int(y)), _, _) => Some(x.cmp(&y)),
        (Some(x), Some(y), _, _) => x.as_f64().partial_cmp(&y.as_f64()),
        (_, _, Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// expr's `sum`: ints stay ints until a float joins.
fn sum<'v>(values: impl Iterator<Item = &'v Value>, span: Span) -> Result<Value> {
    let mut total = Num::Int(0);
    for value in values {
        total = match (total, num(value)) {
            (Num::Int(a), Some(Num::Int(b))) => Num::Int(a.wrapping_add(b)),
            (a, Some(b)) => Num::Float(a.as_f64() + b.as_f64()),
            (_, None) => return Err(error(format!("invalid argument for sum (type {})", type_name(value)), span)),
        };
    }
    Ok(match total {
        Num::Int(i) => Value::from(i),
        Num::Float(f) => float(f),
    })
}

/// The numbers `max`/`min`/`mean` see: their arguments, lists opened (one level at a time, as
/// expr's minMax recurses).
fn numbers<'v>(name: &str, args: &'v [Cow<'_, Value>], out: &mut Vec<&'v Value>) -> std::result::Result<(), String> {
    fn walk<'v>(
        name: &str,
        value: &'v Value,
        out: &mut Vec<&'v Value>,
        depth: usize,
    ) -> std::result::Result<(), String> {
        match value {
            Value::Array(items) if depth < super::parse::MAX_DEPTH => {
                items.iter().try_for_each(|item| walk(name, item, out, depth + 1))
            }
            Value::Number(_) => {
                out.push(value);
                Ok(())
            }
            other => Err(format!("invalid argument for {name} (type {})", type_name(other))),
        }
    }
    args.iter().try_for_each(|arg| walk(name, arg.as_ref(), out, 0))
}

/// The other builtins; errors are expr's messages, located by the caller.
pub(super) fn builtin(name: &str, args: &[Cow<'_, Value>]) -> std::result::Result<Value, String> {
    let arg = |i: usize| args.get(i).map_or(&Value::Null, |a| a.as_ref());
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("invalid number of arguments (expected {n}, got {})", args.len()))
        }
    };
    let text = |i: usize| match arg(i) {
        Value::String(s) => Ok(s.as_str()),
        other => Err(format!("{name}() expects a string, got {}", type_name(other))),
    };
    let list = |i: usize| match arg(i) {
        Value::Array(items) => Ok(items),
        other => Err(format!("invalid argument for {name} (type {})", type_name(other))),
    };
    Ok(match name {
        "max" | "min" => {
            let mut values = Vec::new();
            numbers(name, args, &mut values)?;
            let mut best: Option<&Value> = None;
            for value in values {
                let better = match best {
                    None => true,
                    Some(current) => {
                        let ordering = compare(value, current).unwrap_or(std::cmp::Ordering::Equal);
                        if name == "max" {
                            ordering.is_gt()
                        } else {
                            ordering.is_lt()
                        }
                    }
                };
                if better {
                    best = Some(value);
                }
            }
            best.cloned().unwrap_or(Value::Null)
        }
        "mean" => {
            let mut values = Vec::new();
            numbers(name, args, &mut values)?;
            if values.is_empty() {
                float(0.0)
            } else {
                let total: f64 = values.iter().filter_map(|v| num(v)).map(Num::as_f64).sum();
                float(total / values.len() as f64)
            }
        }
        "floor" | "ceil" | "round" => {
            arity(1)?;
            let Some(n) = num(arg(0)) else {
                return Err(format!("invalid argument for {name} (type {})", type_name(arg(0))));
            };
            let f = n.as_f64();
            float(match name {
                "floor" => f.floor(),
                "ceil" => f.ceil(),
                _ => f.round(),
            })
        }
        "get" => {
            if args.len() < 2 {
                return Err(format!("invalid number of arguments (expected 2, got {})", args.len()));
            }
            match (arg(0), arg(1)) {
                (Value::Object(map), Value::String(key)) => map.get(key).cloned().unwrap_or(Value::Null),
                (Value::Array(items), index) => match num(index) {
                    Some(Num::Int(i)) => {
                        let i = if i < 0 { i + items.len() as i64 } else { i };
                        usize::try_from(i).ok().and_then(|i| items.get(i)).cloned().unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                },
                _ => Value::Null,
            }
        }
        "take" => {
            arity(2)?;
            let items = list(0)?;
            let Some(Num::Int(n)) = num(arg(1)) else {
                return Err(format!("cannot take {} elements", type_name(arg(1))));
            };
            Value::Array(items.iter().take(usize::try_from(n).unwrap_or(0)).cloned().collect())
        }
        "concat" => {
            if args.is_empty() {
                return Err("invalid number of arguments (expected at least 1, got 0)".into());
            }
            let mut out = Vec::new();
            for (i, _) in args.iter().enumerate() {
                match arg(i) {
                    Value::Array(items) => out.extend(items.iter().cloned()),
                    other => return Err(format!("cannot concat {}", type_name(other))),
                }
            }
            Value::Array(out)
        }
        "toPairs" => {
            arity(1)?;
            let Value::Object(map) = arg(0) else {
                return Err(format!("cannot transform {} to pairs", type_name(arg(0))));
            };
            // Go's map order is random; sorted keys give one order every time.
            let pairs = super::eval::sorted_entries(map);
            Value::Array(
                pairs.into_iter().map(|(k, v)| Value::Array(vec![Value::String(k.clone()), v.clone()])).collect(),
            )
        }
        "fromPairs" => {
            arity(1)?;
            let mut out = Map::new();
            for pair in list(0).map_err(|_| format!("cannot transform {} from pairs", type_name(arg(0))))? {
                match pair {
                    Value::Array(kv) if kv.len() == 2 => {
                        out.insert(to_text(&kv[0]), kv[1].clone());
                    }
                    Value::Array(_) => return Err(format!("invalid pair length {}", to_text(pair))),
                    other => return Err(format!("invalid pair {}", to_text(other))),
                }
            }
            Value::Object(out)
        }
        "trimPrefix" | "trimSuffix" => {
            let cut = if args.len() > 1 { text(1)? } else { " " };
            let s = text(0)?;
            Value::String(
                if name == "trimPrefix" { s.strip_prefix(cut) } else { s.strip_suffix(cut) }.unwrap_or(s).to_string(),
            )
        }
        "hasPrefix" => Value::Bool(text(0)?.starts_with(text(1)?)),
        "hasSuffix" => Value::Bool(text(0)?.ends_with(text(1)?)),
        "indexOf" | "lastIndexOf" => {
            let (s, sub) = (text(0)?, text(1)?);
            let at = if name == "indexOf" { s.find(sub) } else { s.rfind(sub) };
            // expr counts characters, not bytes.
            Value::from(at.map_or(-1, |byte| s[..byte].chars().count() as i64))
        }
        "replace" => Value::String(text(0)?.replace(text(1)?, text(2)?)),
        "repeat" => {
            let Some(Num::Int(n)) = num(arg(1)) else {
                return Err(format!("invalid argument for repeat (type {})", type_name(arg(1))));
            };
            let s = text(0)?;
            let n = usize::try_from(n).map_err(|_| "strings: negative Repeat count".to_string())?;
            if s.len().saturating_mul(n) > crate::doc::MAX_STRING_BYTES {
                return Err(format!("repeat() would make more than {} bytes", crate::doc::MAX_STRING_BYTES));
            }
            Value::String(s.repeat(n))
        }
        "first" => list(0)?.first().cloned().unwrap_or(Value::Null),
        "last" => list(0)?.last().cloned().unwrap_or(Value::Null),
        "reverse" => Value::Array(list(0)?.iter().rev().cloned().collect()),
        "flatten" => {
            fn flat(items: &[Value], out: &mut Vec<Value>, depth: usize) {
                for item in items {
                    match item {
                        Value::Array(inner) if depth < super::parse::MAX_DEPTH => flat(inner, out, depth + 1),
                        other => out.push(other.clone()),
                    }
                }
            }
            let mut out = Vec::new();
            flat(list(0)?, &mut out, 0);
            Value::Array(out)
        }
        "uniq" => {
            // Keyed by text, numbers by value (`1` and `1.0` are one, as `==` has them).
            let mut seen = std::collections::HashSet::new();
            let mut out: Vec<Value> = Vec::new();
            for item in list(0)? {
                let key = match num(item) {
                    Some(n) => format!("n{}", n.as_f64()),
                    None => format!("v{}", serde_json::to_string(item).unwrap_or_default()),
                };
                if seen.insert(key) {
                    out.push(item.clone());
                }
            }
            Value::Array(out)
        }
        "type" => Value::String(
            match arg(0) {
                Value::Null => "nil",
                Value::Bool(_) => "bool",
                Value::Number(n) if n.is_i64() || n.is_u64() => "int",
                Value::Number(_) => "float",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "map",
            }
            .into(),
        ),
        _ => return Err(format!("unknown func {name}")),
    })
}
