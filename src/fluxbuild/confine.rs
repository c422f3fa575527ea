//! What keeps a build inside its source. kustomize-controller builds on a filesystem rooted at
//! the source (fluxcd/pkg `kustomize/filesys/fs_secure.go`): every file kustomize opens must be
//! in or below the source root, whatever the load restrictor says. Real kustomize run here reads
//! the whole disk, so before it runs, every path a kustomization file (or a transformer,
//! generator, validator or configurations file it names) gives is resolved against the source
//! root, and one that leads out is refused. The copy kustomize builds holds no symbolic links
//! (the artifact leaves them out), so resolving names is enough.

use crate::doc::Value;

/// The fields of a kustomization, and of kustomize's built-in plugin configurations, whose
/// strings are paths kustomize reads: `resources`, `components`, patch and replacement `path`s,
/// generator `files`/`envs`/`env`, Helm's values files and chart home, and the rest.
const PATH_FIELDS: [&str; 16] = [
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "transformers",
    "generators",
    "validators",
    "patchesStrategicMerge",
    "path",
    "files",
    "envs",
    "env",
    "valuesFile",
    "additionalValuesFiles",
    "chartHome",
];

/// The fields whose entries may be files of plugin configuration, which name paths in turn.
const CONFIG_FIELDS: [&str; 4] = ["transformers", "generators", "validators", "configurations"];

/// Every path `document` names in a path field, with the field: the strings under those keys at
/// any depth. Text with a line break is inline YAML (a patch or a plugin configuration), not a
/// path; a generator's `KEY=path` gives its path.
pub fn named_paths(document: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    collect(document, None, &mut found);
    found
}

fn collect(value: &Value, field: Option<&str>, found: &mut Vec<(String, String)>) {
    match value {
        Value::String(text) => {
            if let Some(field) = field.filter(|_| !text.contains('\n')) {
                let path = match field {
                    "files" => text.split_once('=').map_or(text.as_str(), |(_, path)| path),
                    _ => text.as_str(),
                };
                found.push((field.to_string(), path.to_string()));
            }
        }
        Value::Array(list) => list.iter().for_each(|entry| collect(entry, field, found)),
        Value::Object(map) => {
            // Helm values are the chart's data, not paths kustomize reads.
            for (key, entry) in map.iter().filter(|(key, _)| *key != "valuesInline") {
                collect(entry, PATH_FIELDS.contains(&key.as_str()).then_some(key.as_str()), found);
            }
        }
        _ => {}
    }
}

/// The entries of a kustomization that may be plugin configuration files, to be read in turn.
pub fn config_files(kustomization: &Value) -> Vec<String> {
    CONFIG_FIELDS
        .iter()
        .filter_map(|field| kustomization.get(field).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .filter(|text| !text.contains('\n'))
        .map(String::from)
        .collect()
}

/// `path`, named from the directory `base` (its parts below the source root), resolved by name
/// against the root: `None` where it leads out (absolute, or `..` past the root).
pub fn resolve(base: &[String], path: &str) -> Option<Vec<String>> {
    if path.starts_with('/') || path.starts_with('\\') {
        return None;
    }
    let mut parts = base.to_vec();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part.to_string()),
        }
    }
    Some(parts)
}
