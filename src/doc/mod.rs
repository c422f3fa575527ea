//! The document model every stage works on: `serde_json::Value` with insertion order kept
//! (`preserve_order`), YAML/JSON reading and writing, and field paths for diagnostics.
//!
//! Nothing here knows about Kubernetes kinds or about files; it turns text into values and back.

mod path;
mod styles;
mod yaml;

pub use path::FieldPath;
pub use styles::quoted_dollar_scalars;
pub use yaml::{parse_scalar, read_yaml_documents, read_yaml_documents_as, to_yaml, to_yaml_stream, YamlError};

/// A document node. Mappings keep their key order.
pub type Value = serde_json::Value;
/// A mapping node.
pub type Map = serde_json::Map<String, Value>;

/// Deep-merges `overlay` into `base`: mappings merge key by key, anything else (lists included)
/// is replaced. This is the values-tree rule of SPEC §4 and Helm's `valuesFrom` rule.
pub fn deep_merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) => deep_merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

/// The YAML-ish name of a value's type, as users read it in error messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nil",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_merge_merges_maps_and_replaces_lists() {
        let mut base = json!({"a": {"b": 1, "c": [1, 2]}, "d": "x"});
        deep_merge(&mut base, json!({"a": {"c": [3], "e": true}, "d": {"f": 1}}));
        assert_eq!(base, json!({"a": {"b": 1, "c": [3], "e": true}, "d": {"f": 1}}));
    }
}
