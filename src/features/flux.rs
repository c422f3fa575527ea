//! Flux output, as Windsor generates it: one `kustomize.toolkit.fluxcd.io/v1` `Kustomization` per blueprint
//! kustomization and the `values-<name>` / `values-common` ConfigMaps its post-build
//! substitution reads. Defaults follow windsorcli/cli (pkg/constants): interval 1m, retry 2m,
//! timeout 5m, wait, no force, prune, deletion policy `WaitForTermination`, namespace
//! `system-gitops`, path prefix `kustomize`.

use super::model::{Blueprint, Kustomization};
use crate::config::FluxSettings;
use crate::doc::{Map, Value};
use serde_json::json;

pub const DEFAULT_NAMESPACE: &str = "system-gitops";
const DEFAULT_PATH_PREFIX: &str = "kustomize";

/// The Kustomizations in blueprint order, then their ConfigMaps, then `values-common`.
pub fn objects(blueprint: &Blueprint, settings: &FluxSettings, common: &Map) -> Vec<Value> {
    let namespace = settings.namespace.as_deref().unwrap_or(DEFAULT_NAMESPACE);
    let prefix = settings.path_prefix.as_deref().unwrap_or(DEFAULT_PATH_PREFIX);
    let mut objects: Vec<Value> = blueprint
        .kustomize
        .iter()
        .map(|k| kustomization(blueprint, k, namespace, prefix, !common.is_empty()))
        .collect();
    for k in blueprint.kustomize.iter().filter(|k| !k.substitutions.is_empty()) {
        objects.push(config_map(&format!("values-{}", k.name), namespace, &k.substitutions));
    }
    if !common.is_empty() {
        objects.push(config_map("values-common", namespace, common));
    }
    objects
}

fn config_map(name: &str, namespace: &str, data: &Map) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data})
}

/// Windsor's path rule: empty is the prefix itself; a path already under the prefix is kept.
fn flux_path(prefix: &str, path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path.trim_matches('/');
    if path.is_empty() || prefix.is_empty() {
        return if path.is_empty() { prefix.to_string() } else { path.to_string() };
    }
    if path == prefix || path.starts_with(&format!("{prefix}/")) {
        return path.to_string();
    }
    format!("{prefix}/{path}")
}

/// `OCIRepository` when the named source's URL is `oci://…`, else `GitRepository`; the name is
/// the kustomization's source, or the blueprint's name for its own repository.
fn source_ref(blueprint: &Blueprint, k: &Kustomization) -> Value {
    let (name, url) = match &k.source {
        Some(source) => (source.clone(), blueprint.sources.iter().find(|s| &s.name == source).map(|s| s.url.as_str())),
        None => (blueprint.metadata.name.clone(), blueprint.repository.as_ref().map(|r| r.url.as_str())),
    };
    let kind = if url.is_some_and(|u| u.starts_with("oci://")) { "OCIRepository" } else { "GitRepository" };
    json!({"kind": kind, "name": name})
}

fn kustomization(blueprint: &Blueprint, k: &Kustomization, namespace: &str, prefix: &str, has_common: bool) -> Value {
    let mut spec = Map::new();
    spec.insert("path".into(), json!(flux_path(prefix, &k.path)));
    spec.insert("sourceRef".into(), source_ref(blueprint, k));
    if !k.depends_on.is_empty() {
        let depends_on: Vec<Value> = k.depends_on.iter().map(|d| json!({"name": d, "namespace": namespace})).collect();
        spec.insert("dependsOn".into(), Value::Array(depends_on));
    }
    spec.insert("interval".into(), json!(k.interval.as_deref().unwrap_or("1m")));
    spec.insert("retryInterval".into(), json!(k.retry_interval.as_deref().unwrap_or("2m")));
    spec.insert("timeout".into(), json!(k.timeout.as_deref().unwrap_or("5m")));
    spec.insert("wait".into(), json!(k.wait.unwrap_or(true)));
    spec.insert("force".into(), json!(k.force.unwrap_or(false)));
    spec.insert("prune".into(), json!(k.prune.unwrap_or(true)));
    // `destroy: false` keeps the workloads when the Kustomization is deleted (Windsor's `down`).
    let deletion_policy = if k.destroy == Some(false) { "MirrorPrune" } else { "WaitForTermination" };
    spec.insert("deletionPolicy".into(), json!(deletion_policy));
    if !k.components.is_empty() {
        spec.insert("components".into(), json!(k.components));
    }
    if !k.patches.is_empty() {
        let patches: Vec<Value> = k
            .patches
            .iter()
            .map(|p| {
                let mut patch = Map::new();
                patch.insert("patch".into(), json!(p.patch.clone().unwrap_or_default()));
                // Windsor's conversion keeps only kind, name and namespace of a target; we keep every
                // selector field: dropping `labelSelector` or `group` would widen the patch to
                // resources its author did not select.
                if let Some(target) = &p.target {
                    patch.insert("target".into(), Value::Object(target.clone()));
                }
                Value::Object(patch)
            })
            .collect();
        spec.insert("patches".into(), Value::Array(patches));
    }
    let mut substitute_from = Vec::new();
    if !k.substitutions.is_empty() {
        substitute_from.push(json!({"kind": "ConfigMap", "name": format!("values-{}", k.name)}));
    }
    if has_common {
        substitute_from.push(json!({"kind": "ConfigMap", "name": "values-common"}));
    }
    if !substitute_from.is_empty() {
        spec.insert("postBuild".into(), json!({"substituteFrom": substitute_from}));
    }
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": k.name, "namespace": namespace},
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_windsor() {
        assert_eq!(flux_path("kustomize", "ingress/base"), "kustomize/ingress/base");
        assert_eq!(flux_path("kustomize", ""), "kustomize");
        assert_eq!(flux_path("kustomize", "kustomize/x"), "kustomize/x");
        assert_eq!(flux_path("kustomize", "a\\b"), "kustomize/a/b");
    }
}
