//! Annotations kpt and kustomize use to track where an item lives, and the ones this function owns.

use crate::doc::{Map, Value};

pub const PATH: &str = "internal.config.kubernetes.io/path";
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
pub const INDEX: &str = "internal.config.kubernetes.io/index";
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";
/// Set on every item this function generates, with the functionConfig's name as value.
pub const GENERATED_BY: &str = "fn.blueprint.dev/generated-by";
/// Set on an input item that patches or substitution changed in a way a second run would repeat;
/// the value fingerprints the patches and variables, so the same config skips the item next run.
pub const APPLIED: &str = "fn.blueprint.dev/applied";
/// Set when this function excluded an item (and so added local-config), to undo it next run.
pub const EXCLUDED: &str = "fn.blueprint.dev/excluded";

pub fn annotation<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

/// Sets an annotation, creating `metadata.annotations` when needed. Items are always mappings
/// (the ResourceList reader guarantees it); a non-mapping `metadata` is replaced.
pub fn set_annotation(item: &mut Value, key: &str, value: &str) {
    let Value::Object(object) = item else { return };
    let metadata = object.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    let Value::Object(metadata) = metadata else {
        return;
    };
    let annotations = metadata.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    if let Value::Object(annotations) = annotations {
        annotations.insert(key.to_string(), Value::String(value.to_string()));
    }
}

/// Removes an annotation; drops `metadata.annotations` when it becomes empty.
pub fn remove_annotation(item: &mut Value, key: &str) -> Option<Value> {
    let metadata = item.get_mut("metadata")?.as_object_mut()?;
    let annotations = metadata.get_mut("annotations")?.as_object_mut()?;
    let removed = annotations.shift_remove(key);
    if annotations.is_empty() {
        metadata.shift_remove("annotations");
    }
    removed
}

/// kustomize drops an item unless the annotation is absent or exactly `"false"`; we agree.
pub fn is_local_config(item: &Value) -> bool {
    annotation(item, LOCAL_CONFIG).is_some_and(|v| v != "false")
}

/// The item's file and index, preferring the internal annotations kpt writes today.
pub fn item_location(item: &Value) -> (Option<String>, Option<u64>) {
    let path = annotation(item, PATH).or_else(|| annotation(item, LEGACY_PATH)).map(str::to_string);
    let index = annotation(item, INDEX).or_else(|| annotation(item, LEGACY_INDEX)).and_then(|i| i.parse().ok());
    (path, index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_and_remove_keep_other_annotations() {
        let mut item = json!({"metadata": {"name": "a", "annotations": {"x": "1"}}});
        set_annotation(&mut item, LOCAL_CONFIG, "true");
        assert!(is_local_config(&item));
        remove_annotation(&mut item, LOCAL_CONFIG);
        assert_eq!(item, json!({"metadata": {"name": "a", "annotations": {"x": "1"}}}));
        remove_annotation(&mut item, "x");
        assert_eq!(item, json!({"metadata": {"name": "a"}}));
    }

    #[test]
    fn local_config_false_is_not_local() {
        let item = json!({"metadata": {"annotations": {LOCAL_CONFIG: "false"}}});
        assert!(!is_local_config(&item));
    }
}
