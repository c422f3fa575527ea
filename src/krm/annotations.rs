//! Annotations kpt and kustomize use to track where an item lives, and the ones this function owns.

use crate::doc::{Map, Value};

pub const PATH: &str = "internal.config.kubernetes.io/path";
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
pub const INDEX: &str = "internal.config.kubernetes.io/index";
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";
/// kustomize's record of where a resource was loaded from (`buildMetadata: [originAnnotations]`),
/// a YAML mapping whose `path` is relative to the kustomization being built.
pub const ORIGIN: &str = "config.kubernetes.io/origin";
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

/// The item's file and index, preferring the internal annotations kpt writes today, then
/// kustomize's origin annotation (kustomize runs plugins in the kustomization's directory, which
/// is the directory its origin paths are relative to).
pub fn item_location(item: &Value) -> (Option<String>, Option<u64>) {
    let path = annotation(item, PATH).or_else(|| annotation(item, LEGACY_PATH)).map(str::to_string);
    let path = path.or_else(|| annotation(item, ORIGIN).and_then(origin_path));
    let index = annotation(item, INDEX).or_else(|| annotation(item, LEGACY_INDEX)).and_then(|i| i.parse().ok());
    (path, index)
}

/// The local file of a kustomize origin annotation. A remote origin (`repo:` set) names a file in
/// another repository, and a generated resource (`configuredIn:`) has no file of its own: neither
/// is a place to resolve file references from.
fn origin_path(origin: &str) -> Option<String> {
    let documents = crate::doc::read_yaml_documents(origin).ok()?;
    let origin = documents.first()?;
    if origin.get("repo").is_some() || origin.get("configuredIn").is_some() {
        return None;
    }
    origin.get("path")?.as_str().filter(|p| !p.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kustomize_origin_is_a_location_when_kpt_gave_none() {
        let local = json!({"metadata": {"annotations": {ORIGIN: "path: ../base/deploy.yaml\n"}}});
        assert_eq!(item_location(&local).0.as_deref(), Some("../base/deploy.yaml"));
        let remote =
            json!({"metadata": {"annotations": {ORIGIN: "path: a.yaml\nrepo: https://github.com/x/y\nref: v1\n"}}});
        assert_eq!(item_location(&remote).0, None);
        let generated =
            json!({"metadata": {"annotations": {ORIGIN: "configuredIn: k.yaml\nconfiguredBy:\n  kind: X\n"}}});
        assert_eq!(item_location(&generated).0, None);
        let both = json!({"metadata": {"annotations": {ORIGIN: "path: o.yaml\n", PATH: "p.yaml"}}});
        assert_eq!(item_location(&both).0.as_deref(), Some("p.yaml"));
        let garbage = json!({"metadata": {"annotations": {ORIGIN: "[unclosed"}}});
        assert_eq!(item_location(&garbage).0, None);
    }

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

/// Annotation prefixes that belong to a package's bookkeeping (kpt's, kustomize's, ours), not to
/// the resources: copied into generated content they would change what is deployed
/// (`local-config` makes kustomize drop the patched resource).
const BOOKKEEPING: [&str; 4] =
    ["config.kubernetes.io/", "internal.config.kubernetes.io/", "kustomize.config.k8s.io/", "fn.blueprint.dev/"];

pub fn is_bookkeeping(key: &str) -> bool {
    BOOKKEEPING.iter().any(|prefix| key.starts_with(prefix))
}

/// The text of a file whose content is copied into generated content (a patch file inlined into
/// a Flux Kustomization, or applied to resources), without bookkeeping annotations.
///
/// kpt writes back the `local-config` annotation the first run put on a patch file; the second
/// run must copy the same patch as the first. The lines are removed from the text (kpt keeps the
/// rest of the file as written, so both runs copy the same text), with an `annotations:` key left
/// empty. Only block-style annotations are edited this way; if a flow-style one remains, the
/// documents are written out again without it.
pub fn without_bookkeeping(text: &str) -> std::borrow::Cow<'_, str> {
    if !BOOKKEEPING.iter().any(|prefix| text.contains(prefix)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let mut out = String::with_capacity(text.len());
    // An `annotations:` block being read: the key's line (held back until an entry is kept),
    // its indentation, its entries' indentation, whether one was kept, and whether the entry
    // being read is dropped (with its continuation lines).
    struct Block {
        header: String,
        indent: usize,
        entries: Option<usize>,
        kept: bool,
        dropping: bool,
    }
    let mut block: Option<Block> = None;
    for line in text.split_inclusive('\n') {
        let content = line.trim();
        if let Some(open) = block.as_mut() {
            let inside = content.is_empty() || content.starts_with('#') || indent(line) > open.indent;
            if inside && content != "---" {
                let entry_indent = *open.entries.get_or_insert(indent(line));
                if !content.is_empty() && !content.starts_with('#') && indent(line) == entry_indent {
                    let key = content.split(':').next().unwrap_or_default().trim_matches(['"', '\'']);
                    open.dropping = is_bookkeeping(key);
                }
                if !open.dropping {
                    if !open.kept {
                        out.push_str(&open.header);
                        open.kept = true;
                    }
                    out.push_str(line);
                }
                continue;
            }
            block = None;
        }
        if content == "annotations:" {
            block = Some(Block {
                header: line.to_string(),
                indent: indent(line),
                entries: None,
                kept: false,
                dropping: false,
            });
            continue;
        }
        out.push_str(line);
    }
    // Broken YAML is reported by whoever parses it next, as written.
    let Ok(mut documents) = crate::doc::read_yaml_documents(text) else { return std::borrow::Cow::Borrowed(text) };
    documents.iter_mut().for_each(strip_bookkeeping);
    // The edited text must mean exactly the documents without the annotations (a parent left
    // empty would read as null, which a strategic merge patch takes as "delete").
    if crate::doc::read_yaml_documents(&out).is_ok_and(|edited| edited == documents) {
        return std::borrow::Cow::Owned(out);
    }
    // Flow style, or text the line edit cannot follow: the documents written out again.
    let texts: Vec<String> = documents.iter().map(crate::doc::to_yaml).collect();
    std::borrow::Cow::Owned(texts.join("---\n"))
}

fn strip_bookkeeping(document: &mut Value) {
    let Some(metadata) = document.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
        annotations.retain(|k, _| !is_bookkeeping(k));
        if annotations.is_empty() {
            metadata.shift_remove("annotations");
        }
    }
}

#[cfg(test)]
mod bookkeeping_tests {
    use super::without_bookkeeping;

    #[test]
    fn bookkeeping_lines_are_removed_and_the_rest_kept_as_written() {
        let kept =
            "kind: IngressClass\nmetadata:\n  name: nginx\n  annotations:\n    a: \"true\"  # why\n    cluster: ${c}\n";
        let written =
            kept.replace("    cluster: ${c}\n", "    cluster: ${c}\n    config.kubernetes.io/local-config: \"true\"\n");
        assert_eq!(without_bookkeeping(&written), kept);
        assert_eq!(without_bookkeeping(kept), kept);
        let only = "metadata:\n  name: x\n  annotations:\n    'config.kubernetes.io/local-config': \"true\"\nspec:\n  a: |\n    b\n";
        assert_eq!(without_bookkeeping(only), "metadata:\n  name: x\nspec:\n  a: |\n    b\n");
        let flow = "metadata: {name: x, annotations: {config.kubernetes.io/local-config: \"true\", a: b}}\n";
        assert_eq!(without_bookkeeping(flow), "metadata:\n  name: x\n  annotations:\n    a: b\n");
        let two = "metadata:\n  annotations:\n    internal.config.kubernetes.io/path: p\n---\nmetadata:\n  annotations:\n    a: b\n";
        assert_eq!(without_bookkeeping(two), "metadata: {}\n---\nmetadata:\n  annotations:\n    a: b\n");
    }
}
