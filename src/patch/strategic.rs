//! Strategic merge patch, written here because no maintained Rust crate implements it. It follows
//! apimachinery's `strategicpatch` for applying a patch: maps merge key by key (`null` deletes),
//! lists whose schema says `x-kubernetes-patch-strategy: merge` merge by their merge key (or as a
//! set, for lists of scalars), other lists are replaced. Directives: `$patch: replace | delete |
//! merge` on maps and list elements, `$retainKeys`, `$setElementOrder/<list>` and
//! `$deleteFromPrimitiveList/<list>`. Without a schema (kinds we do not know) this is exactly an
//! RFC 7386 merge patch plus the directives, as kustomize does for custom resources.

use super::merge_keys::{DEFINITIONS, KINDS};
use crate::doc::{Map, Value};
use crate::limits::MAX_DEPTH;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// One field of a definition in the generated table.
pub struct Field {
    pub name: &'static str,
    /// The definition of the value (or of the list's items), when it matters for merging.
    pub schema: Option<usize>,
    pub list: bool,
    pub merge_key: Option<&'static str>,
    pub merge: bool,
    pub retain_keys: bool,
}

/// A top-level kind and its root definition.
pub struct Kind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub schema: usize,
}

/// The root definition for a built-in kind, `None` for kinds we do not know.
pub fn schema_of(api_version: &str, kind: &str) -> Option<usize> {
    static INDEX: OnceLock<HashMap<(&'static str, &'static str), usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| KINDS.iter().map(|k| ((k.api_version, k.kind), k.schema)).collect());
    index.get(&(api_version, kind)).copied()
}

fn field(schema: Option<usize>, name: &str) -> Option<&'static Field> {
    let (_, fields) = DEFINITIONS.get(schema?)?;
    fields.iter().find(|f| f.name == name)
}

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Applies `patch` to `original` (both mappings). Errors leave `original` untouched only if the
/// caller works on a copy; [`super`] does.
pub fn apply(original: &mut Map, patch: &Map, schema: Option<usize>) -> Result<(), String> {
    merge_map(original, patch, schema, "", 0)
}

/// A value as a hashable key (merge keys, set elements), so list merges stay linear.
fn key_of(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn directive(patch: &Map) -> Option<&str> {
    patch.get(PATCH).and_then(Value::as_str)
}

/// A patch value with its directives removed, for places where it is set rather than merged.
fn without_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter().filter(|(k, _)| !k.starts_with('$')).map(|(k, v)| (k.clone(), without_directives(v))).collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| i.as_object().is_none_or(|m| directive(m).is_none()))
                .map(without_directives)
                .collect(),
        ),
        other => other.clone(),
    }
}

fn merge_map(original: &mut Map, patch: &Map, schema: Option<usize>, path: &str, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("{path}: the patch nests deeper than {MAX_DEPTH} levels: flatten it"));
    }
    match directive(patch) {
        Some("replace") => {
            *original = match without_directives(&Value::Object(patch.clone())) {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            return Ok(());
        }
        Some("merge") | None => {}
        Some("delete") => {
            return Err(format!("{path}: $patch: delete is only valid inside a list or as a field's value"))
        }
        Some(other) => {
            return Err(format!("{path}: unknown $patch directive {other:?} (expected replace, delete or merge)"))
        }
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        let child_path = format!("{path}/{key}");
        let field = field(schema, key);
        // The schema knows this field's shape: a list where the kind has a mapping (or the other
        // way round) would break the resource, as apimachinery's typed conversion would refuse it.
        match (field, value) {
            (Some(f), Value::Array(_)) if !f.list && f.schema.is_some() => {
                return Err(format!("{child_path}: expected a mapping, got a list (remove the \"- \")"));
            }
            (Some(f), Value::Object(child)) if f.list && directive(child) != Some("delete") => {
                return Err(format!("{child_path}: expected a list, got a mapping; start each entry with \"- \""));
            }
            _ => {}
        }
        match value {
            Value::Null => {
                original.shift_remove(key);
            }
            Value::Object(child_patch) if directive(child_patch) == Some("delete") => {
                original.shift_remove(key);
            }
            Value::Object(child_patch) => match original.get_mut(key) {
                Some(Value::Object(child)) => {
                    merge_map(child, child_patch, field.and_then(|f| f.schema), &child_path, depth + 1)?
                }
                _ => {
                    let mut child = Map::new();
                    merge_map(&mut child, child_patch, field.and_then(|f| f.schema), &child_path, depth + 1)?;
                    original.insert(key.clone(), Value::Object(child));
                }
            },
            Value::Array(items) => {
                let merged = match (original.get_mut(key), field) {
                    (Some(Value::Array(existing)), Some(f)) if f.merge => {
                        merge_list(existing, items, f, &child_path, depth + 1)?;
                        None
                    }
                    _ => Some(replace_list(items, &child_path)?),
                };
                if let Some(list) = merged {
                    original.insert(key.clone(), Value::Array(list));
                }
            }
            scalar => {
                original.insert(key.clone(), scalar.clone());
            }
        }
    }
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Value::Array(remove) = value else {
                return Err(format!("{path}/{key}: expected a list of values to delete"));
            };
            if let Some(Value::Array(existing)) = original.get_mut(list) {
                let remove: HashSet<String> = remove.iter().map(key_of).collect();
                existing.retain(|item| !remove.contains(&key_of(item)));
            }
        }
    }
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix(SET_ELEMENT_ORDER) {
            let Value::Array(order) = value else {
                return Err(format!(
                    "{path}/{key}: expected a list giving the element order, \
                     e.g. [{{name: web}}, {{name: sidecar}}], got {}",
                    crate::krm::shape_of(value)
                ));
            };
            let merge_key = field(schema, list).and_then(|f| f.merge_key);
            if let Some(Value::Array(existing)) = original.get_mut(list) {
                reorder(existing, order, merge_key);
            }
        }
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let Value::Array(keys) = retain else {
            return Err(format!("{path}/$retainKeys: expected a list of field names"));
        };
        let keys: HashSet<&str> = keys.iter().filter_map(Value::as_str).collect();
        original.retain(|key, _| keys.contains(key.as_str()));
    }
    Ok(())
}

/// A list set without merging: a `$patch: replace` element is dropped, a `$patch: delete` one
/// makes no sense here.
fn replace_list(items: &[Value], path: &str) -> Result<Vec<Value>, String> {
    let mut list = Vec::with_capacity(items.len());
    for item in items {
        match item.as_object().and_then(directive) {
            Some("replace") | Some("merge") => {}
            Some(other) => return Err(format!("{path}: $patch: {other} needs a list with a merge strategy")),
            None => list.push(without_directives(item)),
        }
    }
    Ok(list)
}

/// apimachinery's mergeSliceWithSpecialElements, then the merge: `{$patch: delete, key: v}`
/// removes the element with that key; any `$patch: replace` element makes the list exactly the
/// patch's other elements; `$patch: merge` is refused, as there.
fn merge_list(
    existing: &mut Vec<Value>,
    items: &[Value],
    field: &Field,
    path: &str,
    depth: usize,
) -> Result<(), String> {
    let mut replace = false;
    let mut deleted: HashSet<String> = HashSet::new();
    let mut plain = Vec::with_capacity(items.len());
    for item in items {
        let Some(element) = item.as_object() else {
            plain.push(item);
            continue;
        };
        match directive(element) {
            None => plain.push(item),
            Some("replace") => replace = true,
            Some("delete") => {
                let Some(value) = field.merge_key.and_then(|k| element.get(k)) else {
                    return Err(format!("{path}: $patch: delete needs the element's merge key"));
                };
                deleted.insert(key_of(value));
            }
            Some("merge") => return Err(format!("{path}: merging lists cannot yet be specified in the patch")),
            Some(other) => {
                return Err(format!(
                    "{path}: unknown $patch directive {other:?} in a list element (expected delete or replace)"
                ))
            }
        }
    }
    if let (false, Some(key)) = (deleted.is_empty(), field.merge_key) {
        existing.retain(|e| e.get(key).is_none_or(|v| !deleted.contains(&key_of(v))));
    }
    if replace {
        *existing = plain.into_iter().map(without_directives).collect();
        return Ok(());
    }
    let Some(merge_key) = field.merge_key else {
        // A merge list of scalars is a set: append what is missing, in patch order.
        let mut present: HashSet<String> = existing.iter().map(key_of).collect();
        for item in plain {
            if item.is_object() {
                return Err(format!("{path}: a list of scalars cannot merge an object element"));
            }
            if present.insert(key_of(item)) {
                existing.push(item.clone());
            }
        }
        return Ok(());
    };
    // The first element with each merge key, as the linear search found it.
    let mut positions: HashMap<String, usize> = HashMap::new();
    for (i, element) in existing.iter().enumerate() {
        if let Some(key) = element.get(merge_key) {
            positions.entry(key_of(key)).or_insert(i);
        }
    }
    for item in plain {
        let Value::Object(element) = item else {
            return Err(format!("{path}: elements of this list are objects merged by {merge_key:?}"));
        };
        let Some(key) = element.get(merge_key) else {
            return Err(format!(
                "{path}: element has no merge key {merge_key:?}: {}",
                serde_json::to_string(item).unwrap_or_default()
            ));
        };
        let element_path = format!("{path}/{merge_key}={}", serde_json::to_string(key).unwrap_or_default());
        let found = positions.get(&key_of(key)).copied();
        match found.and_then(|i| existing.get_mut(i)) {
            Some(Value::Object(target)) => merge_map(target, element, field.schema, &element_path, depth + 1)?,
            _ => {
                let mut fresh = Map::new();
                merge_map(&mut fresh, element, field.schema, &element_path, depth + 1)?;
                positions.entry(key_of(key)).or_insert(existing.len());
                existing.push(Value::Object(fresh));
            }
        }
    }
    Ok(())
}

/// `$setElementOrder`: elements named in `order` come first in that order; the rest keep their
/// relative order after them.
fn reorder(list: &mut Vec<Value>, order: &[Value], merge_key: Option<&str>) {
    // The first position of each key in `order`, so ranking stays linear (20 000 containers).
    let identity = |value: &Value| match merge_key {
        Some(key) => value.get(key).map(key_of),
        None => Some(key_of(value)),
    };
    let mut positions: HashMap<String, usize> = HashMap::new();
    for (i, o) in order.iter().enumerate() {
        if let Some(key) = identity(o) {
            positions.entry(key).or_insert(i);
        }
    }
    let rank = |item: &Value| identity(item).and_then(|key| positions.get(&key).copied());
    let mut ranked: Vec<(usize, usize, Value)> =
        std::mem::take(list).into_iter().enumerate().map(|(i, v)| (rank(&v).unwrap_or(usize::MAX), i, v)).collect();
    ranked.sort_by_key(|(r, i, _)| (*r, *i));
    *list = ranked.into_iter().map(|(_, _, v)| v).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(original: Value, patch: Value, api_version: &str, kind: &str) -> Result<Value, String> {
        let (Value::Object(mut original), Value::Object(patch)) = (original, patch) else { return Err("maps".into()) };
        apply(&mut original, &patch, schema_of(api_version, kind))?;
        Ok(Value::Object(original))
    }

    fn deployment(containers: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"template": {"spec": {"containers": containers}}}})
    }

    #[test]
    fn containers_merge_by_name() {
        let original = deployment(json!([{"name": "app", "image": "a:1", "env": [{"name": "A", "value": "1"}]},
                                         {"name": "side", "image": "s:1"}]));
        let patch = deployment(json!([{"name": "app", "image": "a:2", "env": [{"name": "B", "value": "2"}]},
                                      {"name": "new", "image": "n:1"}]));
        let result = smp(original, patch, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(
            result["spec"]["template"]["spec"]["containers"],
            json!([{"name": "app", "image": "a:2", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                   {"name": "side", "image": "s:1"}, {"name": "new", "image": "n:1"}])
        );
    }

    #[test]
    fn directives() {
        let original = deployment(json!([{"name": "app", "image": "a:1"}, {"name": "side", "image": "s:1"}]));
        let delete = deployment(json!([{"name": "side", "$patch": "delete"}]));
        let result = smp(original.clone(), delete, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"], json!([{"name": "app", "image": "a:1"}]));
        let replace = deployment(json!([{"$patch": "replace"}, {"name": "only", "image": "o:1"}]));
        let result = smp(original.clone(), replace, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"], json!([{"name": "only", "image": "o:1"}]));
        let order = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "app"}]}}}});
        let result = smp(original, order, "apps/v1", "Deployment").unwrap_or_default();
        assert_eq!(result["spec"]["template"]["spec"]["containers"][0]["name"], json!("side"));
    }

    #[test]
    fn unknown_kinds_are_merge_patches() {
        let original = json!({"spec": {"list": [1, 2], "keep": true, "drop": 1}});
        let patch = json!({"spec": {"list": [3], "drop": null}});
        assert_eq!(smp(original, patch, "example.com/v1", "Widget"), Ok(json!({"spec": {"list": [3], "keep": true}})));
    }

    #[test]
    fn primitive_merge_lists_are_sets() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let patch = json!({"metadata": {"finalizers": ["b", "c"], "$deleteFromPrimitiveList/finalizers": ["a"]}});
        let result = smp(original, patch, "v1", "ConfigMap").unwrap_or_default();
        assert_eq!(result["metadata"]["finalizers"], json!(["b", "c"]));
    }

    /// Attack "strategic-merge-deep-nesting": a patch deeper than MAX_DEPTH is refused, not recursed.
    #[test]
    fn deep_patches_are_refused() {
        let mut patch = json!("x");
        for _ in 0..MAX_DEPTH + 5 {
            patch = json!({"a": patch});
        }
        let result = smp(json!({}), patch, "example.com/v1", "Widget");
        assert!(result.is_err_and(|e| e.contains("nests deeper than 256 levels")));
    }

    /// Attack "strategic-set-element-order-20000": ranking and merging by key are linear.
    #[test]
    fn set_element_order_over_many_containers() {
        let n = 20_000;
        let containers: Vec<Value> = (0..n).map(|i| json!({"name": format!("c{i}"), "image": "x"})).collect();
        let order: Vec<Value> = (0..n).rev().map(|i| json!({"name": format!("c{i}")})).collect();
        let patch = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": order, "containers": [{"name": "c0", "image": "y"}]}}}});
        let result = smp(deployment(json!(containers)), patch, "apps/v1", "Deployment").unwrap_or_default();
        let merged = &result["spec"]["template"]["spec"]["containers"];
        assert_eq!(merged[0], json!({"name": format!("c{}", n - 1), "image": "x"}));
        assert_eq!(merged[n - 1], json!({"name": "c0", "image": "y"}));
    }
}
