//! The kustomization file Flux builds from (fluxcd/pkg `kustomize/kustomize_generator.go`,
//! `GenerateManifest`): the directory's own, or, when it has none, one that lists every manifest
//! under it; then the Kustomization's `targetNamespace`, `namePrefix`, `nameSuffix`, `patches`,
//! `components`, `images` and `buildMetadata` applied to it, as the generator applies them.

use super::Kustomization;
use crate::doc::{Map, Value};
use crate::krm::shape_of;
use serde_json::json;

/// What the directory holds when it has no kustomization file: the files under it that read as
/// Kubernetes manifests and the sub-directories that have a kustomization file of their own, as
/// `./relative/path`, in walk order (the CLI walks; this module decides).
pub struct GeneratedResources(pub Vec<String>);

/// The kustomization file to build: `existing` (the directory's own, read as YAML) or one made of
/// `generated`, with the Kustomization's fields applied. `component_exists` answers, for a
/// component path relative to the directory, whether it is there (`ignoreMissingComponents`).
pub fn kustomization_file(
    existing: Option<Value>,
    generated: &GeneratedResources,
    kustomization: &Kustomization,
    component_exists: &dyn Fn(&str) -> bool,
) -> Result<Value, String> {
    let spec = kustomization.object.get("spec").unwrap_or(&Value::Null);
    let created = existing.is_none();
    let mut file = match existing {
        Some(Value::Object(map)) => map,
        Some(Value::Null) => Map::new(),
        Some(_) => return Err("the directory's kustomization file is not a mapping".to_string()),
        None => {
            let mut map = Map::new();
            if generated.0.is_empty() {
                // Flux's placeholder against kustomize's "kustomization.yaml is empty".
                map.insert("namespace".into(), json!("_placeholder"));
            } else {
                map.insert("resources".into(), json!(generated.0));
            }
            map
        }
    };
    // The generator reads the file into kustomize's type, which writes these back.
    for (key, default) in [("apiVersion", "kustomize.config.k8s.io/v1beta1"), ("kind", "Kustomization")] {
        if file.get(key).and_then(Value::as_str).is_none_or(str::is_empty) {
            file.insert(key.into(), json!(default));
        }
    }
    let has_resources = file.get("resources").and_then(Value::as_array).is_some_and(|list| !list.is_empty());
    if !created && !has_resources {
        file.insert("buildMetadata".into(), json!(["originAnnotations"]));
    }
    for (field, key) in [("targetNamespace", "namespace"), ("namePrefix", "namePrefix"), ("nameSuffix", "nameSuffix")] {
        if let Some(value) = string_field(spec, field)? {
            file.insert(key.into(), json!(value));
        }
    }
    for (i, patch) in list_field(spec, "patches")?.iter().enumerate() {
        let text = patch.get("patch").and_then(Value::as_str).unwrap_or_default();
        let mut entry = Map::new();
        entry.insert("patch".into(), json!(text));
        if let Some(target) = patch.get("target").filter(|t| !t.is_null()) {
            entry.insert("target".into(), selector(target).map_err(|err| format!("spec.patches[{i}].target: {err}"))?);
        }
        push(&mut file, "patches", Value::Object(entry));
    }
    let ignore_missing = spec.get("ignoreMissingComponents").and_then(Value::as_bool).unwrap_or(false);
    for component in string_list_field(spec, "components")? {
        if !is_local_relative_path(&component) {
            return Err(format!("component path '{component}' must be local and relative"));
        }
        if ignore_missing && !component_exists(&component) {
            continue;
        }
        push(&mut file, "components", json!(component));
    }
    for patch in list_field(spec, "patchesStrategicMerge")? {
        push(&mut file, "patchesStrategicMerge", json!(serde_json::to_string(&patch).unwrap_or_default()));
    }
    for (i, patch) in list_field(spec, "patchesJson6902")?.iter().enumerate() {
        let operations = patch.get("patch").cloned().unwrap_or(Value::Null);
        let mut entry = Map::new();
        entry.insert("patch".into(), json!(serde_json::to_string(&operations).unwrap_or_default()));
        let target = patch.get("target").cloned().unwrap_or(Value::Null);
        entry.insert(
            "target".into(),
            selector(&target).map_err(|err| format!("spec.patchesJson6902[{i}].target: {err}"))?,
        );
        push(&mut file, "patchesJson6902", Value::Object(entry));
    }
    for image in list_field(spec, "images")? {
        merge_image(&mut file, &image);
    }
    // Flux builds with kustomize's `Reorder` option unset (""), which sorts nothing: objects come
    // out in the order the kustomization files list them. The `kustomize` and `kubectl kustomize`
    // commands sort by kind unless the root kustomization says otherwise, so it says so here.
    if !file.contains_key("sortOptions") {
        file.insert("sortOptions".into(), json!({"order": "fifo"}));
    }
    let build_metadata = string_list_field(spec, "buildMetadata")?;
    if !build_metadata.is_empty() {
        file.insert("buildMetadata".into(), json!(build_metadata));
    }
    Ok(Value::Object(file))
}

fn push(file: &mut Map, key: &str, value: Value) {
    match file.get_mut(key) {
        Some(Value::Array(list)) => list.push(value),
        _ => {
            file.insert(key.into(), Value::Array(vec![value]));
        }
    }
}

/// What `unstructured.NestedString` gives: absent, a string, or the error Flux reports.
fn string_field(spec: &Value, field: &str) -> Result<Option<String>, String> {
    match spec.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(format!("spec.{field} is {}, expected a string", shape_of(other))),
    }
}

fn list_field(spec: &Value, field: &str) -> Result<Vec<Value>, String> {
    match spec.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, entry)| match entry {
                Value::Object(_) => Ok(entry.clone()),
                other => Err(format!("spec.{field}[{i}] is {}, expected a mapping", shape_of(other))),
            })
            .collect(),
        Some(other) => Err(format!("spec.{field} is {}, expected a list", shape_of(other))),
    }
}

fn string_list_field(spec: &Value, field: &str) -> Result<Vec<String>, String> {
    match spec.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                entry
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("spec.{field}[{i}] is {}, expected a string", shape_of(entry)))
            })
            .collect(),
        Some(other) => Err(format!("spec.{field} is {}, expected a list of strings", shape_of(other))),
    }
}

/// A Flux selector as kustomize's `target` (the same field names; empty ones left out).
fn selector(target: &Value) -> Result<Value, String> {
    const FIELDS: [&str; 7] = ["group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector"];
    let mut out = Map::new();
    for field in FIELDS {
        if let Some(text) = string_field(target, field)?.filter(|text| !text.is_empty()) {
            out.insert(field.into(), json!(text));
        }
    }
    Ok(Value::Object(out))
}

/// One of the Kustomization's `images`, merged into the file's as the generator merges them: an
/// entry for the same name takes the fields set here, and a tag or digest replaces both.
fn merge_image(file: &mut Map, image: &Value) {
    let text = |key: &str| image.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let (name, new_name, new_tag, digest) = (text("name"), text("newName"), text("newTag"), text("digest"));
    let images = match file.get_mut("images") {
        Some(Value::Array(list)) => list,
        _ => {
            file.insert("images".into(), Value::Array(Vec::new()));
            match file.get_mut("images") {
                Some(Value::Array(list)) => list,
                _ => return,
            }
        }
    };
    let existing = images.iter_mut().find(|entry| entry.get("name").and_then(Value::as_str) == Some(name.as_str()));
    match existing.and_then(Value::as_object_mut) {
        Some(entry) => {
            if !new_name.is_empty() {
                entry.insert("newName".into(), json!(new_name));
            }
            if !new_tag.is_empty() || !digest.is_empty() {
                for (key, value) in [("newTag", new_tag), ("digest", digest)] {
                    if value.is_empty() {
                        entry.shift_remove(key);
                    } else {
                        entry.insert(key.into(), json!(value));
                    }
                }
            }
        }
        None => {
            let mut entry = Map::new();
            for (key, value) in [("name", name), ("newName", new_name), ("newTag", new_tag), ("digest", digest)] {
                if !value.is_empty() {
                    entry.insert(key.into(), json!(value));
                }
            }
            images.push(Value::Object(entry));
        }
    }
}

/// Whether a component path is local and relative, as Flux's `IsLocalRelativePath` decides.
fn is_local_relative_path(path: &str) -> bool {
    const REMOTE: [&str; 8] = ["git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:", "github.com/"];
    let lower = path.to_lowercase();
    if REMOTE.iter().any(|prefix| prefix.len() < path.len() && lower.starts_with(prefix)) {
        return false;
    }
    !(path.starts_with('/') || lower.strip_prefix("file://").unwrap_or(&lower).starts_with('/'))
}
