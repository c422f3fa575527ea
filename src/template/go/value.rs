//! The template values: the `gotmpl` crate's, with the constructors our functions build them
//! with and the conversions from and to the document model. A leaf: everything else in the
//! engine reads values through it.

use crate::doc::{Map, Value};
pub use gotmpl::{Value as GoValue, ValueFunc};
use std::sync::{Arc, LazyLock};

/// A template map's entries.
pub type GoMap = std::collections::BTreeMap<Arc<str>, GoValue>;

/// A string value.
pub fn string(text: impl Into<Arc<str>>) -> GoValue {
    GoValue::String(text.into())
}

/// A list value.
pub fn list(items: Vec<GoValue>) -> GoValue {
    GoValue::List(items.into())
}

/// Go's nil slice (`var s []interface{}`), which Sprig's `rest`, `initial` and `concat` of
/// empty lists and `regexFindAll` without a match return: empty everywhere but in JSON, where it
/// is `null`, and in `deepEqual`, where it differs from an empty list. One shared allocation,
/// told apart by its address ([`is_nil_list`]).
pub fn nil_list() -> GoValue {
    static NIL: std::sync::LazyLock<Arc<[GoValue]>> = std::sync::LazyLock::new(|| Arc::from(Vec::new()));
    GoValue::List(NIL.clone())
}

/// Whether `items` is [`nil_list`]'s.
pub fn is_nil_list(items: &Arc<[GoValue]>) -> bool {
    matches!(nil_list(), GoValue::List(nil) if Arc::ptr_eq(&nil, items))
}

/// A map value.
pub fn map(entries: GoMap) -> GoValue {
    GoValue::Map(Arc::new(entries))
}

/// A document value as template data.
pub fn to_go(value: &Value) -> GoValue {
    match value {
        Value::Null => GoValue::Nil,
        Value::Bool(b) => GoValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => GoValue::Int(i),
            (None, Some(u), _) => GoValue::Uint(u),
            (_, _, Some(f)) => GoValue::Float(f),
            _ => GoValue::String(n.to_string().into()),
        },
        Value::String(s) => GoValue::String(s.as_str().into()),
        Value::Array(items) => GoValue::List(items.iter().map(to_go).collect()),
        Value::Object(map) => map_to_go(map),
    }
}

/// A mapping as template data (`.key` lookups).
pub fn map_to_go(map: &Map) -> GoValue {
    GoValue::Map(Arc::new(map.iter().map(|(k, v)| (Arc::<str>::from(k.as_str()), to_go(v))).collect()))
}

/// Template data back as a document value (functions returning structure: `fromYaml`, `dict`).
pub fn from_go(value: &GoValue) -> Value {
    match value {
        GoValue::Nil | GoValue::Function(_) => Value::Null,
        GoValue::Bool(b) => Value::Bool(*b),
        GoValue::Int(n) => Value::from(*n),
        GoValue::Uint(n) => Value::from(*n),
        GoValue::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        GoValue::String(s) => Value::String(s.to_string()),
        GoValue::List(items) => Value::Array(items.iter().map(from_go).collect()),
        GoValue::Map(map) => Value::Object(map.iter().map(|(k, v)| (k.to_string(), from_go(v))).collect()),
    }
}

/// A Go type the crate's values do not tell apart from another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Int64,
    Strings,
    Ints,
    Lists,
    StringMap,
    Semver,
}

const TYPES: [Type; 6] = [Type::Int64, Type::Strings, Type::Ints, Type::Lists, Type::StringMap, Type::Semver];

/// One marker function per type, told apart by address.
static MARKERS: LazyLock<[ValueFunc; 6]> =
    LazyLock::new(|| std::array::from_fn(|_| -> ValueFunc { Arc::new(|_: &[GoValue]| Ok(GoValue::Nil)) }));

/// `value` tagged as `ty`. A semver's value is the map of its fields (Go's methods without
/// arguments: `.Major`, `.Original`, `.String`).
pub fn tag(value: GoValue, ty: Type) -> GoValue {
    let index = TYPES.iter().position(|t| *t == ty).unwrap_or(0);
    GoValue::List(Arc::from(vec![value, GoValue::Function(MARKERS[index].clone())]))
}

/// The type and the value of a tagged value.
pub fn tagged(value: &GoValue) -> Option<(Type, &GoValue)> {
    let GoValue::List(items) = value else { return None };
    let [inner, GoValue::Function(marker)] = &items[..] else { return None };
    MARKERS.iter().position(|m| Arc::ptr_eq(m, marker)).map(|i| (TYPES[i], inner))
}
