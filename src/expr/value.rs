//! Values as expr-lang's runtime sees them: Go's number kinds and type names, equality and
//! order, truthiness, Go's `%v`, float and YAML/JSON text, and what a copy of a value costs.

use super::error::{error, ExprError, Span};
use crate::doc::{Map, Value};
use crate::limits::{Budget, Exhausted};
use std::borrow::Cow;

type Result<T> = std::result::Result<T, ExprError>;

#[derive(Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
}

pub fn num(value: &Value) -> Option<Num> {
    let Value::Number(n) = value else { return None };
    n.as_i64().map(Num::Int).or_else(|| n.as_f64().map(Num::Float))
}

impl Num {
    pub fn as_f64(self) -> f64 {
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

/// A budget that ran out, located at the node that needed more.
pub fn exhausted(span: Span) -> impl Fn(Exhausted) -> ExprError {
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
pub const VALUE_BYTES: usize = 32;
/// What the allocator takes for a small allocation (a string's text, a list's items).
pub const ALLOCATION_BYTES: usize = 16;
/// An empty map's table and entry list, as a map of a few keys allocates them.
pub const MAP_BYTES: usize = 256;
/// One map entry besides its key's text and its value: the key's allocation, the entry (hash,
/// key, value) and its index, with the room the map keeps for growth.
pub const ENTRY_BYTES: usize = 128;

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

/// Go's `%T` of a value, as expr's runtime prints it (`<nil>` for nil).
pub fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        other => type_name(other),
    }
}

/// Booleans as they are; nil as false (ours: a missing flag reads as off); anything else is an error.
pub fn truthy(value: &Value, op: &str, span: Span) -> Result<bool> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        other => Err(error(format!("invalid operation: {op} (mismatched types {} and bool)", type_name(other)), span)),
    }
}

/// expr's equality: numbers by value across int and float, everything else structurally.
pub fn equal(a: &Value, b: &Value) -> bool {
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

/// Numbers and texts in expr's order; anything else does not compare.
pub fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (num(a), num(b), a, b) {
        (Some(Num::Int(x)), Some(Num::Int(y)), _, _) => Some(x.cmp(&y)),
        (Some(x), Some(y), _, _) => x.as_f64().partial_cmp(&y.as_f64()),
        (_, _, Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// What one more value in a list takes besides its text (a number's or a short string's size).
pub const PART_BYTES: usize = VALUE_BYTES + ALLOCATION_BYTES;

pub fn sorted_entries(map: &Map) -> Vec<(&String, &Value)> {
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

/// Go's `yaml.Marshal` text of a value, as Windsor's `yamlString(value)` gives it: maps in key
/// order, ending in a newline.
pub fn go_yaml(value: &Value) -> String {
    match value {
        Value::Null => "null\n".to_string(),
        Value::Array(_) | Value::Object(_) => format!("{}\n", embedded_text(value)),
        other => format!("{}\n", crate::doc::to_yaml(other).trim_end()),
    }
}

/// Go's `json.Marshal` text, as Windsor's `jsonString()` gives it: keys sorted, and `<`, `>`,
/// `&` escaped as Go escapes them.
pub fn go_json(value: &Value) -> String {
    let text = serde_json::to_string(&sorted(value)).unwrap_or_default();
    text.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

/// The text of a value inside a longer string, as Windsor's `InterpolateString` writes it: maps
/// and lists as YAML with sorted keys (Go marshals maps in key order), trimmed; anything else as
/// [`to_text`].
pub fn embedded_text(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => crate::doc::to_yaml(&sorted(value)).trim().to_string(),
        other => to_text(other),
    }
}

/// A copy with every map's keys in order (Go's marshallers sort them).
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(sorted_entries(map).into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// A float as a value (NaN and infinities, which JSON numbers cannot hold, as nil).
pub fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}
