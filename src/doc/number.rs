//! The one way numbers enter and leave the document model.
//!
//! The model keeps an integer's digits (serde_json's `arbitrary_precision`, `doc::integers`), and
//! serde_json hands such a number to any reader or writer that is not its own as a private
//! one-entry map (`{"$serde_json::private::Number": "2.5"}`). A visitor that does not expect it
//! stores that map as data: a JSON ResourceList's floats reached templates and JSON Schema as
//! mappings (issue 49). So numbers are read here ([`from_literal`], for the JSON reader's
//! visitor) and every engine takes them through [`Num`], never through `serde::Serialize`.
//!
//! Both envelopes give one document value: an integer keeps its digits (within 128 bits, as the
//! YAML reader keeps them), anything else is the nearest 64-bit float, as YAML reads it.

use super::Value;
use serde_json::Number;
use std::borrow::Cow;

/// The private key serde_json's `arbitrary_precision` gives a number under when it hands it to
/// a visitor that is not its own (`serde_json::number::TOKEN`, not public).
pub const PRIVATE_NUMBER_KEY: &str = "$serde_json::private::Number";

/// A number as an engine sees it: Go's int64 and uint64, a wider integer (kept with its digits;
/// the readers hold none beyond 128 bits), or a float64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i64),
    Uint(u64),
    Wide(i128),
    WideUnsigned(u128),
    Float(f64),
}

impl Num {
    /// The one reading of a document number.
    pub fn of(number: &Number) -> Num {
        if let Some(n) = number.as_i64() {
            return Num::Int(n);
        }
        if let Some(n) = number.as_u64() {
            return Num::Uint(n);
        }
        if let Some(n) = number.as_i128() {
            return Num::Wide(n);
        }
        if let Some(n) = number.as_u128() {
            return Num::WideUnsigned(n);
        }
        Num::Float(number.as_f64().unwrap_or_default())
    }

    /// The nearest float64 (what Go's `encoding/json` decodes any number into).
    #[allow(clippy::cast_precision_loss)]
    pub fn to_f64(self) -> f64 {
        match self {
            Num::Int(n) => n as f64,
            Num::Uint(n) => n as f64,
            Num::Wide(n) => n as f64,
            Num::WideUnsigned(n) => n as f64,
            Num::Float(f) => f,
        }
    }

    /// Whether it is an integer of the document (not a float, even a whole one).
    pub fn is_integer(self) -> bool {
        !matches!(self, Num::Float(_))
    }
}

/// `value` for an engine whose numbers are all float64 and whose reader takes no integer beyond
/// 64 bits (Jsonnet: jrsonnet refuses one, go-jsonnet reads it as the nearest double): such
/// integers become that double. Borrowed, without a copy, when there is none.
pub fn wide_integers_as_floats(value: &Value) -> Cow<'_, Value> {
    fn convert(value: &Value) -> Value {
        match value {
            Value::Number(n) if matches!(Num::of(n), Num::Wide(_) | Num::WideUnsigned(_)) => {
                Number::from_f64(Num::of(n).to_f64()).map_or(Value::Null, Value::Number)
            }
            Value::Array(items) => Value::Array(items.iter().map(convert).collect()),
            Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), convert(v))).collect()),
            other => other.clone(),
        }
    }
    if super::holds_wide_integer(value) {
        Cow::Owned(convert(value))
    } else {
        Cow::Borrowed(value)
    }
}

/// A number of JSON text, as the JSON reader's visitor gets it from serde_json (`literal` is
/// the text after [`PRIVATE_NUMBER_KEY`]: serde_json gives integers within 64 bits as integers,
/// everything else this way): an integer keeps its digits, a float becomes the nearest float64,
/// so that JSON and YAML input read as the same value.
pub fn from_literal(literal: &str) -> Result<Number, String> {
    if !literal.contains(['.', 'e', 'E']) {
        if let Some(number) = literal.parse::<i128>().ok().and_then(Number::from_i128) {
            return Ok(number);
        }
        if let Some(number) = literal.parse::<u128>().ok().and_then(Number::from_u128) {
            return Ok(number);
        }
        return Err(super::oversized_integer_message(literal));
    }
    let float = literal.parse::<f64>().map_err(|err| format!("the number {literal}: {err}"))?;
    Number::from_f64(float).ok_or_else(|| {
        format!(
            "the number {} is too large for a 64-bit float: quote it (\"{}\") to keep it as written",
            super::excerpt(literal),
            super::excerpt(literal)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(literal: &str) -> Result<String, String> {
        from_literal(literal).map(|n| n.to_string())
    }

    #[test]
    fn literals_read_as_yaml_reads_them() {
        assert_eq!(read("2.5"), Ok("2.5".into()));
        assert_eq!(read("1e3"), Ok("1000.0".into()));
        assert_eq!(read("1E+3"), Ok("1000.0".into()));
        assert_eq!(read("2.50"), Ok("2.5".into()));
        assert_eq!(read("-0.0"), Ok("-0.0".into()));
        assert_eq!(read("1e-7"), Ok("1e-7".into()));
        assert_eq!(read("12345678901234567890123"), Ok("12345678901234567890123".into()));
        assert_eq!(read("-9223372036854775809"), Ok("-9223372036854775809".into()));
        assert!(read("1234567890123456789012345678901234567890").is_err_and(|e| e.contains("128 bits")));
        assert!(read("1e400").is_err_and(|e| e.contains("64-bit float")));
    }

    #[test]
    fn numbers_classify_once() {
        let num = |text: &str| serde_json::from_str::<Number>(text).map(|n| Num::of(&n)).ok();
        assert_eq!(num("7"), Some(Num::Int(7)));
        assert_eq!(num("-7"), Some(Num::Int(-7)));
        assert_eq!(num("18446744073709551615"), Some(Num::Uint(u64::MAX)));
        assert_eq!(num("-9223372036854775809"), Some(Num::Wide(-9_223_372_036_854_775_809)));
        assert_eq!(num("12345678901234567890123"), Some(Num::Wide(12_345_678_901_234_567_890_123)));
        assert_eq!(num("340282366920938463463374607431768211455"), Some(Num::WideUnsigned(u128::MAX)));
        assert_eq!(num("2.5"), Some(Num::Float(2.5)));
        assert_eq!(num("1e3"), Some(Num::Float(1000.0)));
        assert_eq!(num("-0.0").map(|n| n.to_f64().is_sign_negative()), Some(true));
        assert_eq!(num("12345678901234567890123").map(Num::to_f64), Some(1.234_567_890_123_456_8e22));
        assert!(num("3.0").is_some_and(|n| !n.is_integer()));
        assert!(num("3").is_some_and(Num::is_integer));
    }
}
