//! One input item, kept small until a step needs all of it.
//!
//! A parsed `serde_json::Value` costs about eleven times its YAML text (BENCHMARKS.md, issue 8),
//! and most steps read only an item's identity and metadata. An [`Item`] therefore holds its
//! header (`apiVersion`, `kind`, `metadata`) as a value and the whole item as compact JSON text;
//! the full value is built on first full access ([`std::ops::Deref`]), so every step stays
//! correct, while filters, annotations, patch targets, text scans and output use [`Item::header`]
//! and [`Item::contains_text`] and never build it.

use crate::doc::{Map, Value};
use std::cell::OnceCell;
use std::ops::{Deref, DerefMut};

const HEADER: [&str; 3] = ["apiVersion", "kind", "metadata"];

pub struct Item {
    /// `apiVersion`, `kind` and `metadata` while the full value is not built; null after.
    header: Value,
    /// The item as compact JSON with null in the header's fields; the header is laid over it on load.
    text: Box<str>,
    full: OnceCell<Value>,
}

impl Clone for Item {
    fn clone(&self) -> Self {
        match self.full.get() {
            Some(full) => Item::from(full.clone()),
            None => Item { header: self.header.clone(), text: self.text.clone(), full: OnceCell::new() },
        }
    }
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl From<Value> for Item {
    fn from(mut value: Value) -> Self {
        let mut header = Map::new();
        if let Value::Object(map) = &mut value {
            for key in HEADER {
                // The text keeps a null in the field's place, so loading restores key order
                // without holding the header twice.
                if let Some(field) = map.get_mut(key) {
                    header.insert(key.to_string(), std::mem::take(field));
                }
            }
        }
        // Serializing a Value cannot fail: keys are strings, numbers finite.
        let text = serde_json::to_string(&value).unwrap_or_default().into_boxed_str();
        Item { header: Value::Object(header), text, full: OnceCell::new() }
    }
}

impl Item {
    /// `apiVersion`, `kind` and `metadata`, without building the full value. The helpers of
    /// [`crate::krm`] (`type_of`, `name_of`, `annotation`…) accept it like a full item.
    pub fn header(&self) -> &Value {
        self.full.get().unwrap_or(&self.header)
    }

    /// The header, to change annotations or labels without building the full value.
    pub fn header_mut(&mut self) -> &mut Value {
        match self.full.get_mut() {
            Some(full) => full,
            None => &mut self.header,
        }
    }

    /// Whether the item's text holds `needle` (a cheap first test before building the value).
    /// Strings are JSON-escaped in the text; needles without quotes or backslashes match as is.
    pub fn contains_text(&self, needle: &str) -> bool {
        match self.full.get() {
            Some(full) => serde_json::to_string(full).unwrap_or_default().contains(needle),
            None => self.text.contains(needle) || self.header.to_string().contains(needle),
        }
    }

    fn load(&self) -> Value {
        let mut value: Value = serde_json::from_str(&self.text).unwrap_or(Value::Null);
        if let (Value::Object(map), Value::Object(header)) = (&mut value, &self.header) {
            for key in HEADER {
                match header.get(key) {
                    // Inserting an existing key keeps its position, so key order is kept.
                    Some(field) => {
                        map.insert(key.to_string(), field.clone());
                    }
                    None => {
                        map.shift_remove(key);
                    }
                }
            }
        }
        value
    }

    /// Back to the compact form once a step is done with the full value.
    pub fn compact(&mut self) {
        if let Some(full) = self.full.take() {
            *self = Item::from(full);
        }
    }

    /// The full value, built now if it was not.
    pub fn into_value(self) -> Value {
        let Item { header, text, full } = self;
        match full.into_inner() {
            Some(full) => full,
            None => Item { header, text, full: OnceCell::new() }.load(),
        }
    }

    /// Writes the full value with `write` without keeping it built afterwards.
    pub fn with_value<T>(&self, write: impl FnOnce(&Value) -> T) -> T {
        match self.full.get() {
            Some(full) => write(full),
            None => write(&self.load()),
        }
    }
}

impl Deref for Item {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.full.get_or_init(|| self.load())
    }
}

impl DerefMut for Item {
    fn deref_mut(&mut self) -> &mut Value {
        if self.full.get().is_none() {
            let loaded = self.load();
            self.header = Value::Null;
            let _ = self.full.set(loaded);
        }
        self.header = Value::Null;
        match self.full.get_mut() {
            Some(full) => full,
            // Unreachable: set above. A fresh null keeps this total without a panic.
            None => &mut self.header,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_changes_survive_loading_and_key_order_is_kept() {
        let value = json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {"a": "1"}, "metadata": {"name": "x"}});
        let mut item = Item::from(value);
        crate::krm::set_annotation(item.header_mut(), "k", "v");
        assert_eq!(crate::krm::annotation(item.header(), "k"), Some("v"));
        let keys: Vec<String> = item.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
        assert_eq!(keys, vec!["kind", "apiVersion", "data", "metadata"]);
        assert_eq!(item["metadata"], json!({"name": "x", "annotations": {"k": "v"}}));
        item["data"]["a"] = json!("2");
        crate::krm::set_annotation(item.header_mut(), "k", "w");
        assert_eq!(item.clone().into_value()["metadata"]["annotations"]["k"], json!("w"));
        assert_eq!(item.into_value()["data"]["a"], json!("2"));
    }

    #[test]
    fn text_scans_do_not_build_the_value() {
        let item = Item::from(json!({"kind": "A", "spec": {"x": "${v}"}}));
        assert!(item.contains_text("${"));
        assert!(!item.contains_text("repl{{"));
        assert!(item.full.get().is_none());
    }
}
