//! Paths a package knows about although no value sets them: those its Windsor schema declares,
//! and those an expression of the package reads with a default (`x.y ?? 'z'`). A condition
//! reading such a path is not taken for a typo of a path that is set.

use crate::doc::{Map, Value};
use std::collections::HashSet;

#[derive(Default)]
pub(super) struct Known {
    /// Every property path the schema declares (`database.postgres.enabled`).
    declared: HashSet<String>,
    /// Declared paths whose children the schema leaves open (an object without `properties`,
    /// or with `additionalProperties`): anything under them is known too.
    open: HashSet<String>,
    /// Paths read as the left side of `??` somewhere in the package.
    defaulted: HashSet<String>,
}

impl Known {
    /// Whether `path` is declared, under an open declaration, or read with a default.
    pub(super) fn contains(&self, path: &str) -> bool {
        if self.declared.contains(path) || self.defaulted.contains(path) {
            return true;
        }
        let mut at = path;
        while let Some((parent, _)) = at.rsplit_once('.') {
            if self.open.contains(parent) {
                return true;
            }
            at = parent;
        }
        false
    }

    /// The property paths of a Windsor schema (`properties`, nested under each property).
    pub(super) fn add_schema(&mut self, schema: &Map) {
        fn walk(known: &mut Known, schema: &Map, at: &str, depth: usize) {
            let Some(Value::Object(properties)) = schema.get("properties") else { return };
            for (name, property) in properties {
                let path = if at.is_empty() { name.clone() } else { format!("{at}.{name}") };
                let Value::Object(property) = property else {
                    known.declared.insert(path);
                    continue;
                };
                let nested = property.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
                let additional = !matches!(property.get("additionalProperties"), None | Some(Value::Bool(false)));
                let object = property.get("type").and_then(Value::as_str) == Some("object");
                if additional || (object && !nested) {
                    known.open.insert(path.clone());
                }
                if nested && depth < crate::limits::MAX_DEPTH {
                    walk(known, property, &path, depth + 1);
                }
                known.declared.insert(path);
            }
        }
        walk(self, schema, "", 0);
    }

    /// Every path read with `??` in the strings of `value` (a facet's or feature's item).
    pub(super) fn add_defaulted(&mut self, value: &Value) {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(text) if text.contains("??") => defaulted_paths(text, &mut self.defaulted),
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
    }
}

/// The dotted paths written right before a `??` in `text` (`a.b?.c ?? 1` gives `a.b.c`).
fn defaulted_paths(text: &str, out: &mut HashSet<String>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("??") {
        let at = from + found;
        from = at + 2;
        let mut end = at;
        while end > 0 && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let mut start = end;
        while start > 0 {
            let c = bytes[start - 1];
            // `?` only as part of `?.` (optional member access), never the `??` itself.
            let optional = c == b'?' && bytes.get(start) == Some(&b'.');
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || optional {
                start -= 1;
            } else {
                break;
            }
        }
        let path = text[start..end].replace("?.", ".");
        let valid = path.split('.').all(|part| {
            part.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if valid {
            out.insert(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaulted_paths_are_those_before_coalesce() {
        let mut out = HashSet::new();
        defaulted_paths(
            "${(identity.driver ?? 'keycloak') == 'x' ? a : (database.postgres.enabled ?? false)}",
            &mut out,
        );
        defaulted_paths("a?.b ?? 1", &mut out);
        defaulted_paths("f(x) ?? 1; 'lit' ?? 2; 3 ?? 4", &mut out);
        let mut found: Vec<_> = out.into_iter().collect();
        found.sort();
        assert_eq!(found, ["a.b", "database.postgres.enabled", "identity.driver"]);
    }

    #[test]
    fn schema_paths_and_open_objects() {
        let schema: Value = serde_json::json!({"properties": {
            "database": {"type": "object", "properties": {"postgres": {"type": "object", "properties": {"enabled": {"type": "boolean"}}}}},
            "labels": {"type": "object"},
            "extra": {"type": "object", "properties": {"a": {}}, "additionalProperties": true},
        }});
        let mut known = Known::default();
        known.add_schema(schema.as_object().expect("a mapping"));
        assert!(known.contains("database.postgres.enabled"));
        assert!(known.contains("database.postgres"));
        assert!(!known.contains("database.postgres.enable"));
        assert!(known.contains("labels.team"));
        assert!(known.contains("extra.b.c"));
    }
}
