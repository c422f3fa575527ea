//! expr-lang's predicates (`map`, `filter`, `reduce`, … with `#`, `#index`, `#acc`), with expr's
//! results. A closure's pointers are the innermost predicate's: each element is bound in a scope
//! of its own around the closure ([`Scope::with_element`]).

use super::ast::{Node, NodeKind};
use super::error::{error, ExprError, Span};
use super::eval::eval;
use super::scope::{Call, Element, Scope};
use super::value::{compare, float, num, owned, to_text, truthy, type_name, Num};
use crate::doc::{Map, Value};
use std::borrow::Cow;

type Result<T> = std::result::Result<T, ExprError>;

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

fn element(item: &Value, index: usize) -> Element<'_> {
    Element { item, index, acc: Value::Null }
}

/// The collection's elements (a map's values, as expr iterates them) and the closure, which
/// only `count` and `sum` may leave out.
fn elements<'n>(call: &Call<'_, '_>, args: &'n [Node]) -> Result<(Vec<Value>, Option<&'n Node>)> {
    let Some(collection) = args.first() else {
        return Err(call.error(format!("not enough arguments to call {}", call.name())));
    };
    let items = match eval(collection, call.scope)? {
        Cow::Owned(Value::Array(items)) => items,
        Cow::Borrowed(Value::Array(items)) => items.clone(),
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
    Ok((items, body))
}

/// The elements and the closure of a predicate that needs one (the parser sees that it has it).
fn with_closure<'n>(call: &Call<'_, '_>, args: &'n [Node]) -> Result<(Vec<Value>, &'n Node)> {
    match elements(call, args)? {
        (items, Some(body)) => Ok((items, body)),
        (_, None) => Err(call.error(format!("not enough arguments to call {}", call.name()))),
    }
}

/// `all`, `none`, `any` and `one`.
pub fn quantifier(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let name = call.name();
    let mut hits = 0usize;
    for (i, item) in items.iter().enumerate() {
        if test(name, body, element(item, i), call.scope)? {
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

pub fn filter(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if test(call.name(), body, element(item, i), call.scope)? {
            out.push(item.clone());
        }
    }
    Ok(Value::Array(out))
}

pub fn map(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(apply(body, element(item, i), call.scope)?);
    }
    Ok(Value::Array(out))
}

/// `count(list, closure)`, or without a closure the elements that are true.
pub fn count(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = elements(call, args)?;
    let mut n = 0usize;
    for (i, item) in items.iter().enumerate() {
        let hit = match body {
            Some(body) => test(call.name(), body, element(item, i), call.scope)?,
            None => truthy(item, "count", call.span)?,
        };
        if hit {
            n += 1;
        }
    }
    Ok(Value::from(n))
}

/// `sum(list, closure)`, or without a closure the elements' sum.
pub fn sum(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = elements(call, args)?;
    let Some(body) = body else { return total(items.iter(), call.span) };
    let mut values = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        values.push(apply(body, element(item, i), call.scope)?);
    }
    total(values.iter(), call.span)
}

/// `find`, `findIndex`, `findLast` and `findLastIndex`.
pub fn find(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let name = call.name();
    let last = name.starts_with("findLast");
    let order: Box<dyn Iterator<Item = (usize, &Value)>> =
        if last { Box::new(items.iter().enumerate().rev()) } else { Box::new(items.iter().enumerate()) };
    for (i, item) in order {
        if test(name, body, element(item, i), call.scope)? {
            return Ok(if name.ends_with("Index") { Value::from(i) } else { item.clone() });
        }
    }
    Ok(if name.ends_with("Index") { Value::from(-1) } else { Value::Null })
}

pub fn group_by(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let mut groups = Map::new();
    for (i, item) in items.iter().enumerate() {
        let key = to_text(&apply(body, element(item, i), call.scope)?);
        if let Value::Array(group) = groups.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
            group.push(item.clone());
        }
    }
    Ok(Value::Object(groups))
}

pub fn sort_by(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let descending = match args.get(2) {
        Some(order) => match eval(order, call.scope)?.as_ref() {
            Value::String(s) if s == "asc" => false,
            Value::String(s) if s == "desc" => true,
            other => return Err(call.error(format!("unknown order {}, use asc or desc", to_text(other)))),
        },
        None => false,
    };
    let mut keyed = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        keyed.push((apply(body, element(item, i), call.scope)?, item.clone()));
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
        return Err(call.error(message));
    }
    Ok(Value::Array(keyed.into_iter().map(|(_, item)| item).collect()))
}

pub fn reduce(call: &Call<'_, '_>, args: &[Node]) -> Result<Value> {
    let (items, body) = with_closure(call, args)?;
    let mut rest = items.iter().enumerate();
    let mut acc = match args.get(2) {
        Some(initial) => owned(eval(initial, call.scope)?, call.scope.budget, initial.span)?,
        None => match rest.next() {
            Some((_, first)) => first.clone(),
            None => return Ok(Value::Null),
        },
    };
    for (i, item) in rest {
        acc = apply(body, Element { item, index: i, acc }, call.scope)?;
    }
    Ok(acc)
}

/// expr's `sum`: ints stay ints until a float joins.
fn total<'v>(values: impl Iterator<Item = &'v Value>, span: Span) -> Result<Value> {
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
