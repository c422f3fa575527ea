//! The builtins that run on their arguments' values: expr-lang's (builtin/builtin.go, as expr
//! v1.17 evaluates them, with its messages: `floor`/`ceil`/`round` give floats, `max`/`min` the
//! chosen element as it is, `get` nil for what is not there) and Windsor's (its evaluator's
//! helpers, with its messages). Each is one function; `builtins.rs` gives each its row.

use super::cidr;
use super::error::ExprError;
use super::scope::Call;
use super::semantics::Semantics;
use super::value::{
    compare, embedded_text, exhausted, float, go_format, go_json, go_type, num, size_of, sorted_entries, to_text,
    type_name, Num, PART_BYTES,
};
use crate::doc::{Map, Value};
use std::borrow::Cow;

type Result<T> = std::result::Result<T, ExprError>;
type Args<'v> = [Cow<'v, Value>];

/// The `i`th argument, nil when there is none.
fn arg<'v>(args: &'v Args<'_>, i: usize) -> &'v Value {
    args.get(i).map_or(&Value::Null, |a| a.as_ref())
}

/// The `i`th argument as text.
fn text<'v>(call: &Call<'_, '_>, args: &'v Args<'_>, i: usize) -> Result<&'v str> {
    match arg(args, i) {
        Value::String(s) => Ok(s.as_str()),
        other => Err(call.error(format!("{}() expects a string, got {}", call.name(), type_name(other)))),
    }
}

/// The `i`th argument as a list.
fn list<'v>(call: &Call<'_, '_>, args: &'v Args<'_>, i: usize) -> Result<&'v Vec<Value>> {
    match arg(args, i) {
        Value::Array(items) => Ok(items),
        other => Err(call.error(format!("invalid argument for {} (type {})", call.name(), type_name(other)))),
    }
}

pub fn len(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::from(match arg(args, 0) {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        Value::Object(m) => m.len(),
        other => return Err(call.error(format!("invalid argument for len (type {})", type_name(other)))),
    }))
}

pub fn lower(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::String(text(call, args, 0)?.to_lowercase()))
}

pub fn upper(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::String(text(call, args, 0)?.to_uppercase()))
}

pub fn trim(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::String(match args.len() {
        1 => text(call, args, 0)?.trim().to_string(),
        _ => {
            let cutset: Vec<char> = text(call, args, 1)?.chars().collect();
            text(call, args, 0)?.trim_matches(|c| cutset.contains(&c)).to_string()
        }
    }))
}

pub fn split(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let (s, sep) = (text(call, args, 0)?, text(call, args, 1)?);
    // Each part is a value of its own: a splitting into characters takes many times the text.
    let parts = if sep.is_empty() { s.chars().count() } else { s.matches(sep).count() + 1 };
    call.scope.budget.charge_output(parts.saturating_mul(PART_BYTES)).map_err(exhausted(call.span))?;
    let parts: Vec<Value> = match num(arg(args, 2)) {
        Some(Num::Int(n)) if n > 0 => s.splitn(n as usize, sep).map(|p| Value::String(p.into())).collect(),
        Some(Num::Int(0)) => Vec::new(),
        _ if sep.is_empty() => s.chars().map(|c| Value::String(c.to_string())).collect(),
        _ => s.split(sep).map(|p| Value::String(p.into())).collect(),
    };
    Ok(Value::Array(parts))
}

pub fn join(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let Value::Array(items) = arg(args, 0) else {
        return Err(call.error(format!("join() expects a list, got {}", type_name(arg(args, 0)))));
    };
    let sep = if args.len() > 1 { text(call, args, 1)? } else { "" };
    let parts = items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(s.as_str()),
            other => Err(call.error(format!("join() expects a list of strings, got {}", type_name(other)))),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::String(parts.join(sep)))
}

/// `keys` and `values`, in key order (Go's map order is random; sorted keys give one order).
pub fn keys(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let Value::Object(map) = arg(args, 0) else {
        return Err(call.error(format!("cannot get {} from {}", call.name(), type_name(arg(args, 0)))));
    };
    let entries = sorted_entries(map);
    Ok(Value::Array(match call.name() {
        "keys" => entries.into_iter().map(|(k, _)| Value::String(k.clone())).collect(),
        _ => entries.into_iter().map(|(_, v)| v.clone()).collect(),
    }))
}

pub fn abs(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    match num(arg(args, 0)) {
        Some(Num::Int(i)) => Ok(Value::from(i.wrapping_abs())),
        Some(Num::Float(f)) => Ok(float(f.abs())),
        None => Err(call.error(format!("invalid argument for abs (type {})", type_name(arg(args, 0))))),
    }
}

pub fn int(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    match (arg(args, 0), num(arg(args, 0))) {
        (_, Some(Num::Int(i))) => Ok(Value::from(i)),
        (_, Some(Num::Float(f))) => Ok(Value::from(f.trunc() as i64)),
        (Value::String(s), _) => {
            Ok(Value::from(s.trim().parse::<i64>().map_err(|_| call.error(format!("invalid operation: int({s})")))?))
        }
        (other, _) => Err(call.error(format!("invalid operation: int({})", type_name(other)))),
    }
}

pub fn to_float(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    match (arg(args, 0), num(arg(args, 0))) {
        (_, Some(n)) => Ok(float(n.as_f64())),
        (Value::String(s), _) => {
            Ok(float(s.trim().parse::<f64>().map_err(|_| call.error(format!("invalid operation: float({s})")))?))
        }
        (other, _) => Err(call.error(format!("invalid operation: float({})", type_name(other)))),
    }
}

/// expr's `%v`; Windsor v0.9's gives maps and lists as YAML and nil as "".
pub fn string(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    if call.scope.semantics != Semantics::WindsorV09 {
        return Ok(Value::String(go_format(arg(args, 0))));
    }
    Ok(Value::String(match arg(args, 0) {
        Value::Null => String::new(),
        value @ (Value::Object(_) | Value::Array(_)) => embedded_text(value),
        value => go_format(value),
    }))
}

/// A file's text, charged once read.
pub fn file(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let value = Value::String(call.scope.host.file(text(call, args, 0)?).map_err(|err| call.error(err))?);
    call.scope.budget.charge_output(size_of(&value)).map_err(exhausted(call.span))?;
    Ok(value)
}

/// A Jsonnet file's value, charged once read.
pub fn jsonnet(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let value = call.scope.host.jsonnet(text(call, args, 0)?).map_err(|err| call.error(err))?;
    call.scope.budget.charge_output(size_of(&value)).map_err(exhausted(call.span))?;
    Ok(value)
}

pub fn to_json(_: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::String(serde_json::to_string(arg(args, 0)).unwrap_or_default()))
}

/// `cidrhost`, `cidrsubnet`, `cidrsubnets`, `cidrnetmask`; `cidrhost` checks its prefix's
/// type first, with the message every text argument gets.
pub fn cidr(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    if call.name() == "cidrhost" {
        text(call, args, 0)?;
    }
    cidr::call(call.name(), call.row.arity, args.iter().map(|a| a.as_ref())).map_err(|err| call.error(err))
}

/// Windsor's `terraform_output(component, key)` (pkg/runtime/terraform/provider.go,
/// registerTerraformOutputHelper): deferred while terraform has not run.
pub fn terraform_output(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    let [Value::String(component), Value::String(key)] = [arg(args, 0), arg(args, 1)] else {
        let (which, value) = if arg(args, 0).is_string() { ("key", arg(args, 1)) } else { ("component", arg(args, 0)) };
        return Err(call.error(format!("terraform_output() {which} must be a string, got {}", go_type(value))));
    };
    match call.scope.host.terraform_output(component, key) {
        Some(value) => Ok(value),
        None => {
            let message = format!("terraform output '{key}' for component {component} is deferred");
            Err(ExprError { deferred: true, ..call.error(message) })
        }
    }
}

/// Windsor's secret helper (pkg/runtime/secrets/secrets.go EvaluateHelper, parseHelperParams):
/// deferred while a blueprint is composed, resolved only when Windsor applies it.
pub fn secret(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    for (i, which) in ["vault", "item", "field"].into_iter().enumerate() {
        if !arg(args, i).is_string() {
            return Err(call.error(format!("secret() {which} must be a string, got {}", go_type(arg(args, i)))));
        }
    }
    Err(ExprError { deferred: true, ..call.error("secret expression is deferred".to_string()) })
}

/// Windsor v0.9's `env(name)` (pkg/runtime/evaluator/evaluator.go, buildExprEnvironment).
pub fn env(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    match arg(args, 0) {
        Value::String(variable) => Ok(call.scope.host.env(variable).map_or(Value::Null, Value::String)),
        other => Err(call.error(format!("env() variable name must be a string, got {}", go_type(other)))),
    }
}

pub fn json_string(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    Ok(Value::String(go_json(arg(args, 0))))
}

/// The numbers `max`/`min`/`mean` see: their arguments, lists opened (one level at a time, as
/// expr's minMax recurses).
fn numbers<'v>(call: &Call<'_, '_>, args: &'v Args<'_>, out: &mut Vec<&'v Value>) -> Result<()> {
    fn walk<'v>(
        name: &str,
        value: &'v Value,
        out: &mut Vec<&'v Value>,
        depth: usize,
    ) -> std::result::Result<(), String> {
        match value {
            Value::Array(items) if depth < super::ast::MAX_DEPTH => {
                items.iter().try_for_each(|item| walk(name, item, out, depth + 1))
            }
            Value::Number(_) => {
                out.push(value);
                Ok(())
            }
            other => Err(format!("invalid argument for {name} (type {})", type_name(other))),
        }
    }
    args.iter().try_for_each(|arg| walk(call.name(), arg.as_ref(), out, 0)).map_err(|message| call.error(message))
}

/// `max` and `min`: the chosen element as it is.
pub fn max(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let mut values = Vec::new();
    numbers(call, args, &mut values)?;
    let mut best: Option<&Value> = None;
    for value in values {
        let better = match best {
            None => true,
            Some(current) => {
                let ordering = compare(value, current).unwrap_or(std::cmp::Ordering::Equal);
                if call.name() == "max" {
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
    Ok(best.cloned().unwrap_or(Value::Null))
}

pub fn mean(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let mut values = Vec::new();
    numbers(call, args, &mut values)?;
    if values.is_empty() {
        return Ok(float(0.0));
    }
    let total: f64 = values.iter().filter_map(|v| num(v)).map(Num::as_f64).sum();
    Ok(float(total / values.len() as f64))
}

/// `floor`, `ceil` and `round`: floats, as expr gives them.
pub fn floor(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    let Some(n) = num(arg(args, 0)) else {
        return Err(call.error(format!("invalid argument for {} (type {})", call.name(), type_name(arg(args, 0)))));
    };
    let f = n.as_f64();
    Ok(float(match call.name() {
        "floor" => f.floor(),
        "ceil" => f.ceil(),
        _ => f.round(),
    }))
}

pub fn get(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    Ok(match (arg(args, 0), arg(args, 1)) {
        (Value::Object(map), Value::String(key)) => map.get(key).cloned().unwrap_or(Value::Null),
        (Value::Array(items), index) => match num(index) {
            Some(Num::Int(i)) => {
                let i = if i < 0 { i + items.len() as i64 } else { i };
                usize::try_from(i).ok().and_then(|i| items.get(i)).cloned().unwrap_or(Value::Null)
            }
            _ => Value::Null,
        },
        _ => Value::Null,
    })
}

pub fn take(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    let items = list(call, args, 0)?;
    let Some(Num::Int(n)) = num(arg(args, 1)) else {
        return Err(call.error(format!("cannot take {} elements", type_name(arg(args, 1)))));
    };
    Ok(Value::Array(items.iter().take(usize::try_from(n).unwrap_or(0)).cloned().collect()))
}

pub fn concat(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    let mut out = Vec::new();
    for arg in args {
        match arg.as_ref() {
            Value::Array(items) => out.extend(items.iter().cloned()),
            other => return Err(call.error(format!("cannot concat {}", type_name(other)))),
        }
    }
    Ok(Value::Array(out))
}

pub fn to_pairs(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    let Value::Object(map) = arg(args, 0) else {
        return Err(call.error(format!("cannot transform {} to pairs", type_name(arg(args, 0)))));
    };
    // Go's map order is random; sorted keys give one order every time.
    let pairs = sorted_entries(map);
    Ok(Value::Array(pairs.into_iter().map(|(k, v)| Value::Array(vec![Value::String(k.clone()), v.clone()])).collect()))
}

pub fn from_pairs(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    call.count(args.len())?;
    let mut out = Map::new();
    let pairs = list(call, args, 0)
        .map_err(|_| call.error(format!("cannot transform {} from pairs", type_name(arg(args, 0)))))?;
    for pair in pairs {
        match pair {
            Value::Array(kv) if kv.len() == 2 => {
                out.insert(to_text(&kv[0]), kv[1].clone());
            }
            Value::Array(_) => return Err(call.error(format!("invalid pair length {}", to_text(pair)))),
            other => return Err(call.error(format!("invalid pair {}", to_text(other)))),
        }
    }
    Ok(Value::Object(out))
}

/// `trimPrefix` and `trimSuffix`: a space when no text to cut is given.
pub fn trim_prefix(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let cut = if args.len() > 1 { text(call, args, 1)? } else { " " };
    let s = text(call, args, 0)?;
    let rest = if call.name() == "trimPrefix" { s.strip_prefix(cut) } else { s.strip_suffix(cut) };
    Ok(Value::String(rest.unwrap_or(s).to_string()))
}

pub fn has_prefix(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::Bool(text(call, args, 0)?.starts_with(text(call, args, 1)?)))
}

pub fn has_suffix(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::Bool(text(call, args, 0)?.ends_with(text(call, args, 1)?)))
}

/// `indexOf` and `lastIndexOf`, counting characters, not bytes, as expr does.
pub fn index_of(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let (s, sub) = (text(call, args, 0)?, text(call, args, 1)?);
    let at = if call.name() == "indexOf" { s.find(sub) } else { s.rfind(sub) };
    Ok(Value::from(at.map_or(-1, |byte| s[..byte].chars().count() as i64)))
}

pub fn replace(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::String(text(call, args, 0)?.replace(text(call, args, 1)?, text(call, args, 2)?)))
}

pub fn repeat(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let Some(Num::Int(n)) = num(arg(args, 1)) else {
        return Err(call.error(format!("invalid argument for repeat (type {})", type_name(arg(args, 1)))));
    };
    let s = text(call, args, 0)?;
    let n = usize::try_from(n).map_err(|_| call.error("strings: negative Repeat count"))?;
    if s.len().saturating_mul(n) > crate::doc::MAX_STRING_BYTES {
        return Err(call.error(format!("repeat() would make more than {} bytes", crate::doc::MAX_STRING_BYTES)));
    }
    Ok(Value::String(s.repeat(n)))
}

pub fn first(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(list(call, args, 0)?.first().cloned().unwrap_or(Value::Null))
}

pub fn last(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(list(call, args, 0)?.last().cloned().unwrap_or(Value::Null))
}

pub fn reverse(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::Array(list(call, args, 0)?.iter().rev().cloned().collect()))
}

pub fn flatten(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    fn flat(items: &[Value], out: &mut Vec<Value>, depth: usize) {
        for item in items {
            match item {
                Value::Array(inner) if depth < super::ast::MAX_DEPTH => flat(inner, out, depth + 1),
                other => out.push(other.clone()),
            }
        }
    }
    let mut out = Vec::new();
    flat(list(call, args, 0)?, &mut out, 0);
    Ok(Value::Array(out))
}

/// Keyed by text, numbers by value (`1` and `1.0` are one, as `==` has them).
pub fn uniq(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Value> = Vec::new();
    for item in list(call, args, 0)? {
        let key = match num(item) {
            Some(n) => format!("n{}", n.as_f64()),
            None => format!("v{}", serde_json::to_string(item).unwrap_or_default()),
        };
        if seen.insert(key) {
            out.push(item.clone());
        }
    }
    Ok(Value::Array(out))
}

pub fn type_of(_: &Call<'_, '_>, args: &Args<'_>) -> Result<Value> {
    Ok(Value::String(
        match arg(args, 0) {
            Value::Null => "nil",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_i64() || n.is_u64() => "int",
            Value::Number(_) => "float",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "map",
        }
        .into(),
    ))
}
