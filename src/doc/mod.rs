//! The document model every stage works on: `serde_json::Value` with insertion order kept
//! (`preserve_order`), YAML/JSON reading and writing, and field paths for diagnostics.
//!
//! Nothing here knows about Kubernetes kinds or about files; it turns text into values and back.

mod go_yaml;
mod integers;
mod locate;
mod nodes;
mod number;
mod path;
mod scalars;
mod strict;
mod yaml;

pub use go_yaml::{analyze_scalar, double_quoted, is_base60, is_yaml_float, literal_block, to_go_yaml, ScalarAnalysis};
pub use integers::{oversized_integer_message, oversized_json_integer};
pub use locate::{locate, Position};
pub use nodes::quoted_template_scalars;
pub use number::{wide_integers_as_floats, Num};
pub use path::{dotted, pointer_mut, pointer_segment, FieldPath};
pub use scalars::{defined_non_finite, non_finite_message, plainly_integer, plainly_text};
pub use strict::{duplicate_key_message, from_own_json, json_too_deep, Strict};
/// The default longest string an input may hold, and the default file-size limit: the two are
/// one limit (`--max-file-size`), so whatever a file read puts into output the next run accepts.
/// Kubernetes stores whole objects up to 1.5 MiB, so a longer string cannot reach a cluster;
/// refusing it early keeps hostile input from costing hundreds of megabytes.
pub const MAX_STRING_BYTES: usize = 8 << 20;

/// Whether `value` nests deeper than `limit` levels, found without recursion: values evaluated
/// from programs (Jsonnet) have no reader in front of them to bound their depth.
pub fn deeper_than(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            _ if depth > limit => return true,
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Whether `value` holds an integer beyond 64 bits (kept with its digits, `doc::integers`).
pub fn holds_wide_integer(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(n) if n.as_u64().is_none() && n.as_i64().is_none() && n.as_i128().is_some() => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    false
}

/// The bytes a value takes as output (its strings and keys, and a few for every other node),
/// counted with a stack: what one more copy of it costs the output budget.
pub fn output_size(value: &Value) -> u64 {
    let mut size = 0u64;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size = size.saturating_add(match value {
            Value::String(s) => s.len() as u64 + 2,
            Value::Array(items) => {
                stack.extend(items);
                2
            }
            Value::Object(map) => {
                stack.extend(map.values());
                map.keys().map(|k| k.len() as u64 + 2).sum::<u64>() + 2
            }
            _ => 8,
        });
    }
    size
}

/// About the bytes of memory `value` takes as a tree (every node, its strings and its mapping
/// entries' keys and index), counted with a stack: what building one more copy of it costs. A
/// copy of small nodes (`[{}, {}, …]`) takes some thirty times its JSON text in memory, so an
/// operation that copies a value is charged this, not the value's length as output.
pub fn memory_size(value: &Value) -> u64 {
    // A map entry: its key's String and the index's hash and slot, besides the value.
    const ENTRY: u64 = (std::mem::size_of::<String>() + 2 * std::mem::size_of::<usize>()) as u64;
    let node = std::mem::size_of::<Value>() as u64;
    let mut size = 0u64;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size = size.saturating_add(node);
        match value {
            Value::String(s) => size = size.saturating_add(s.len() as u64),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                size = size.saturating_add(map.keys().map(|k| k.len() as u64 + ENTRY).sum::<u64>());
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    size
}

/// The first string (or key) in `value` longer than `limit` bytes: where and how long.
pub fn oversized_string(value: &Value, limit: u64) -> Option<(FieldPath, usize)> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut stack = vec![(value, FieldPath::root())];
    // A stack instead of recursion: the value may be as deep as the reader allows.
    while let Some((value, at)) = stack.pop() {
        match value {
            Value::String(s) if s.len() > limit => return Some((at, s.len())),
            Value::Array(items) => {
                stack.extend(items.iter().enumerate().rev().map(|(i, v)| (v, at.clone().index(i))));
            }
            Value::Object(map) => {
                if let Some(key) = map.keys().find(|k| k.len() > limit) {
                    return Some((at, key.len()));
                }
                stack.extend(map.iter().rev().map(|(k, v)| (v, at.clone().key(k.as_str()))));
            }
            _ => {}
        }
    }
    None
}

/// The message for an [`oversized_string`].
pub fn oversized_message(place: &str, field: &FieldPath, len: usize, limit: u64) -> String {
    format!(
        "{place}: {field} is a string of {len} bytes; the limit is {} (--max-file-size; Kubernetes stores whole \
         objects up to 1.5 MiB): keep large data out of the package, or raise the limit",
        crate::limits::human_bytes(limit)
    )
}

pub use yaml::{
    declares_tag_handles, parse_scalar, read_yaml_documents, read_yaml_documents_as, read_yaml_documents_with_starts,
    start_of, to_yaml, to_yaml_keeping_quotes, to_yaml_quoting_templates, to_yaml_single_quoting, to_yaml_stream,
    writes_plain, Start, YamlError,
};

/// A document node. Mappings keep their key order.
pub type Value = serde_json::Value;
/// A mapping node.
pub type Map = serde_json::Map<String, Value>;

/// Deep-merges `overlay` into `base`: mappings merge key by key, anything else (lists included)
/// is replaced. This is the values tree's merge rule, and Helm's `valuesFrom` rule.
pub fn deep_merge(base: &mut Value, overlay: Value) {
    let overlay_map = match overlay {
        Value::Object(map) if base.is_object() => map,
        overlay => {
            *base = overlay;
            return;
        }
    };
    let root = match std::mem::take(base) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    // Without recursion, so no input depth can exhaust the stack: one frame per open map, its
    // base taken out of its parent and put back when its overlay entries are done.
    struct Frame {
        key: String,
        base: Map,
        overlay: serde_json::map::IntoIter,
    }
    let mut stack = vec![Frame { key: String::new(), base: root, overlay: overlay_map.into_iter() }];
    loop {
        let Some(top) = stack.last_mut() else { return };
        match top.overlay.next() {
            Some((key, Value::Object(overlay))) if top.base.get(&key).is_some_and(Value::is_object) => {
                let base = match top.base.get_mut(&key).map(std::mem::take) {
                    Some(Value::Object(base)) => base,
                    _ => Map::new(),
                };
                stack.push(Frame { key, base, overlay: overlay.into_iter() });
            }
            Some((key, value)) => {
                top.base.insert(key, value);
            }
            None => {
                let Some(done) = stack.pop() else { return };
                match stack.last_mut() {
                    Some(parent) => {
                        if let Some(slot) = parent.base.get_mut(&done.key) {
                            *slot = Value::Object(done.base);
                        }
                    }
                    None => {
                        *base = Value::Object(done.base);
                        return;
                    }
                }
            }
        }
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

/// A text for a message (an expression, a literal): whole when short, else its first 60
/// characters and its length.
pub fn excerpt(source: &str) -> String {
    match source.char_indices().nth(60) {
        None => source.to_string(),
        Some((at, _)) => format!("{}… ({} characters)", &source[..at], source.chars().count()),
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
        let mut base = json!({"x": 1, "a": {"b": {"c": 1, "d": 2}, "z": 0}, "y": 2});
        deep_merge(&mut base, json!({"a": {"b": {"d": 3, "e": 4}}, "w": {}}));
        assert_eq!(base, json!({"x": 1, "a": {"b": {"c": 1, "d": 3, "e": 4}, "z": 0}, "y": 2, "w": {}}));
        assert_eq!(
            serde_json::to_string(&base).ok(),
            Some(r#"{"x":1,"a":{"b":{"c":1,"d":3,"e":4},"z":0},"y":2,"w":{}}"#.into())
        );
        let mut scalar = json!(1);
        deep_merge(&mut scalar, json!({"a": 1}));
        assert_eq!(scalar, json!({"a": 1}));
    }
}
