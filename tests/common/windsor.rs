//! What the Windsor tests (tests/windsor_core.rs, tests/windsor_matrix.rs) share: reading
//! windsorcli/core's template as the items of a package.

use render_blueprint::doc::{read_yaml_documents, Value};
use serde_json::json;
use std::path::Path;

/// The package's items: the base Blueprint and every facet, each with its path in the template
/// (a facet's ordinal comes from its file name).
pub fn package_items(dir: &Path) -> Result<Vec<Value>, String> {
    let mut files: Vec<String> = vec!["blueprint.yaml".into()];
    let mut facets: Vec<String> = std::fs::read_dir(dir.join("facets"))
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".yaml"))
        .collect();
    facets.sort();
    files.extend(facets.into_iter().map(|f| format!("facets/{f}")));
    let mut items = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(dir.join(&file)).map_err(|e| format!("{file}: {e}"))?;
        let documents = read_yaml_documents(&text).map_err(|e| format!("{file}: {e:?}"))?;
        for (index, mut document) in documents.into_iter().enumerate() {
            if document.is_null() {
                continue;
            }
            let annotations = document
                .as_object_mut()
                .and_then(|o| o.entry("metadata").or_insert_with(|| json!({})).as_object_mut())
                .map(|m| m.entry("annotations").or_insert_with(|| json!({})));
            if let Some(Value::Object(annotations)) = annotations {
                for key in ["config.kubernetes.io/path", "internal.config.kubernetes.io/path"] {
                    annotations.insert(key.into(), json!(file));
                }
                for key in ["config.kubernetes.io/index", "internal.config.kubernetes.io/index"] {
                    annotations.insert(key.into(), json!(index.to_string()));
                }
            }
            items.push(document);
        }
    }
    Ok(items)
}
