//! A value reader that refuses duplicate keys. serde_json keeps the last of two equal keys and
//! says nothing; the YAML reader refuses them. Input must mean one thing whichever way it is
//! written, so JSON input is read through this visitor too.

use super::{Map, Value};
use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A value whose mappings had no duplicate keys.
pub struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if super::scalars::fixing() {
            // serde-saphyr's hook for a node's location (the form `serde_saphyr::Spanned` asks
            // for): the node's offset says which scalar to put back (`doc::scalars`).
            return deserializer.deserialize_newtype_struct("__yaml_spanned", LocatedVisitor).map(Strict);
        }
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

/// Reads one node through serde-saphyr's location hook: a struct of the node's value and where
/// it is used and defined (an alias's node is defined at its anchor).
struct LocatedVisitor;

impl<'de> Visitor<'de> for LocatedVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_struct("Spanned", &[], self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let (mut value, mut offset) = (None, None);
        while let Some(key) = access.next_key::<String>()? {
            match key.as_str() {
                "value" => value = Some(access.next_value::<Plain>()?),
                "defined" => {
                    let at: serde_saphyr::Location = access.next_value()?;
                    offset = at.span().byte_offset().and_then(|offset| usize::try_from(offset).ok());
                }
                "referenced" => {
                    access.next_value::<serde_saphyr::Location>()?;
                }
                _ => {
                    access.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let value = value.ok_or_else(|| A::Error::custom("a node without a value"))?;
        super::scalars::fix(offset, value.0).map_err(A::Error::custom)
    }
}

/// One node's value read as [`Strict`] reads it, its children through the location hook again.
struct Plain(Value);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Plain)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_i128<E: Error>(self, v: i128) -> Result<Value, E> {
        Value::deserialize(serde::de::value::I128Deserializer::<E>::new(v))
    }
    fn visit_u128<E: Error>(self, v: u128) -> Result<Value, E> {
        Value::deserialize(serde::de::value::U128Deserializer::<E>::new(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        if !v.is_finite() {
            // Refused, or put back as the text it was (`doc::scalars`), by its node.
            super::scalars::saw_non_finite();
        }
        // As serde_json's own reader: a non-finite float has no JSON form.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Strict::deserialize(deserializer).map(|s| s.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        let mut next = access.next_key::<String>()?;
        if next.as_deref() == Some(super::number::PRIVATE_NUMBER_KEY) {
            // serde_json's number beyond 64 bits or with a fraction (`doc::number`); a mapping
            // that only looks like one (more keys, or no number text) stays a mapping.
            let Strict(value) = access.next_value()?;
            let following = access.next_key::<String>()?;
            if let (Value::String(literal), None) = (&value, &following) {
                if literal.parse::<f64>().is_ok() {
                    return super::number::from_literal(literal).map(Value::Number).map_err(A::Error::custom);
                }
            }
            map.insert(super::number::PRIVATE_NUMBER_KEY.to_string(), value);
            next = following;
        }
        while let Some(key) = next {
            if map.contains_key(&key) {
                return Err(A::Error::custom(duplicate_key_message(&key)));
            }
            let Strict(value) = access.next_value()?;
            map.insert(key, value);
            next = access.next_key::<String>()?;
        }
        Ok(Value::Object(map))
    }
}

/// The message for a key that appears twice in one mapping, as the YAML reader words it.
pub fn duplicate_key_message(key: &str) -> String {
    format!("duplicate key {key:?} in one mapping: remove one of them (Kubernetes refuses duplicates too)")
}

/// Where JSON text nests deeper than `limit` (the byte offset of the bracket that does), found
/// by scanning brackets outside strings, so the recursive reader never meets deeper input.
pub fn json_too_deep(text: &str, limit: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (offset, byte) in text.bytes().enumerate() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return Some(offset);
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Reads JSON text this program wrote itself (an [`crate::krm::Item`]'s compact form). Its depth
/// was bounded when the value was read, so serde_json's own limit of 128, which would turn a
/// deeper item into an error (and that into a silent null), is off; the scan keeps it bounded.
pub fn from_own_json(text: &str) -> Result<Value, String> {
    if json_too_deep(text, 4 * crate::limits::MAX_DEPTH).is_some() {
        return Err(format!("a value nests deeper than {} levels", 4 * crate::limits::MAX_DEPTH));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = Value::deserialize(&mut deserializer).map_err(|err| err.to_string())?;
    deserializer.end().map_err(|err| err.to_string())?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::super::number::PRIVATE_NUMBER_KEY;
    use super::*;

    fn strict(text: &str) -> Result<Value, String> {
        serde_json::from_str::<Strict>(text).map(|s| s.0).map_err(|e| e.to_string())
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert!(strict(r#"{"a": {"b": 1, "b": 2}}"#).is_err_and(|e| e.contains("duplicate key \"b\"")));
        assert_eq!(strict(r#"{"a": [1, {"b": null}]}"#), Ok(serde_json::json!({"a": [1, {"b": null}]})));
    }

    #[test]
    fn json_numbers_are_numbers() {
        let value = strict(r#"{"f": 2.5, "e": 1e3, "z": -0.0, "big": 12345678901234567890123, "i": [7, -7]}"#);
        assert_eq!(
            value.as_ref().map(ToString::to_string).ok().as_deref(),
            Some(r#"{"f":2.5,"e":1000.0,"z":-0.0,"big":12345678901234567890123,"i":[7,-7]}"#)
        );
        assert!(value.is_ok_and(|v| v["f"].is_f64()
            && v["big"].as_number().and_then(serde_json::Number::as_i128) == Some(12_345_678_901_234_567_890_123)));
        assert!(strict(r#"{"a": 1e400}"#).is_err_and(|e| e.contains("64-bit float")));
        // Only serde_json's own form is a number; a mapping that looks like it is data.
        let key = PRIVATE_NUMBER_KEY;
        for text in [format!(r#"{{"{key}": "x"}}"#), format!(r#"{{"{key}": "1", "b": 2}}"#)] {
            assert_eq!(strict(&text).map(|v| v.is_object()), Ok(true), "{text}");
        }
        assert_eq!(strict(&format!(r#"{{"{key}": "2.5"}}"#)), Ok(serde_json::json!(2.5)));
    }

    #[test]
    fn depth_is_counted_outside_strings() {
        assert_eq!(json_too_deep(r#"{"a": "[[[[\"[["}"#, 1), None);
        assert_eq!(json_too_deep("[[[]]]", 2), Some(2));
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        assert_eq!(from_own_json(&deep).map(|v| v.is_array()), Ok(true));
    }
}
