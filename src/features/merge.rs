//! How entries of one identity combine, as Windsor's merges do: terraform components and
//! kustomizations (merged, replaced, or what a removal lists taken away), maps deep-merged, and
//! `spec.blueprint` over a Blueprint item. Each list is sorted by its dependencies after a change.

use super::model::{Blueprint, Kustomization, Strategy, TerraformComponent};
use super::order;
use crate::config::WindsorVersion::{self, V09};
use crate::doc::{deep_merge, Map, Value};
use crate::expr::to_text;

pub(super) fn push_unique(list: &mut Vec<String>, items: Vec<String>) {
    for item in items {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// Windsor's terraform merge, then its dependency sort (a cycle is reported once, at the end).
pub(super) fn merge_terraform(list: &mut Vec<TerraformComponent>, component: TerraformComponent) -> &'static str {
    let action = combine_terraform(list, component);
    let _ = order::sort_terraform(list);
    action
}

/// Match on path and source; `merge` deep-merges inputs (feature wins), unique-appends
/// dependsOn, overwrites destroy and parallelism when set; `replace` swaps the component in
/// place; `remove` (Windsor v0.9's, which v0.8.1 lacks) deletes the inputs and dependsOn it
/// lists; no match appends (or, for `remove`, does nothing).
pub(super) fn combine_terraform(list: &mut Vec<TerraformComponent>, mut component: TerraformComponent) -> &'static str {
    let strategy = component.strategy;
    component.when.clear();
    component.strategy = Strategy::Merge;
    (component.ordinal, component.requires) = (None, Vec::new());
    let Some(existing) = list.iter_mut().find(|c| c.path == component.path && c.source == component.source) else {
        if strategy == Strategy::Remove {
            return "skipped";
        }
        list.push(component);
        return "appended";
    };
    match strategy {
        Strategy::Replace => {
            *existing = component;
            return "replaced";
        }
        Strategy::Remove => {
            subtract_terraform(existing, &component);
            return "removed";
        }
        Strategy::Merge => {}
    }
    let mut inputs = Value::Object(std::mem::take(&mut existing.inputs));
    deep_merge(&mut inputs, Value::Object(component.inputs));
    if let Value::Object(inputs) = inputs {
        existing.inputs = inputs;
    }
    push_unique(&mut existing.depends_on, component.depends_on);
    existing.destroy = component.destroy.or(existing.destroy);
    existing.parallelism = component.parallelism.or(existing.parallelism);
    existing.extra.extend(component.extra);
    "merged"
}

/// Windsor's kustomization merge, then its dependency sort (a cycle is reported once, at the end).
pub(super) fn merge_kustomization(list: &mut Vec<Kustomization>, kustomization: Kustomization) -> &'static str {
    let action = combine_kustomization(list, kustomization);
    let _ = order::sort_kustomizations(list);
    action
}

/// Match on name; `merge` unions components (then sorts them, as Windsor does) and dependsOn
/// (order kept), overwrites path, source, destroy and the Flux timings when set, appends
/// patches and merges substitutions (later wins per key); `replace` swaps it whole; `remove`
/// deletes what it lists (v0.9's); no match appends (or, for `remove`, does nothing).
pub(super) fn combine_kustomization(list: &mut Vec<Kustomization>, mut kustomization: Kustomization) -> &'static str {
    let strategy = kustomization.strategy;
    kustomization.when.clear();
    kustomization.strategy = Strategy::Merge;
    (kustomization.ordinal, kustomization.requires) = (None, Vec::new());
    let Some(existing) = list.iter_mut().find(|k| k.name == kustomization.name) else {
        if strategy == Strategy::Remove {
            return "skipped";
        }
        list.push(kustomization);
        return "appended";
    };
    match strategy {
        Strategy::Replace => {
            *existing = kustomization;
            "replaced"
        }
        Strategy::Remove => {
            subtract_kustomization(existing, &kustomization);
            "removed"
        }
        Strategy::Merge => {
            merge_kustomization_fields(existing, kustomization);
            "merged"
        }
    }
}

/// Windsor's `MergeKustomizationFields`: components and dependsOn unioned, the rest overwritten
/// when the overlay sets it, patches appended, substitutions merged.
pub(super) fn merge_kustomization_fields(existing: &mut Kustomization, kustomization: Kustomization) {
    push_unique(&mut existing.components, kustomization.components);
    existing.components.sort();
    push_unique(&mut existing.depends_on, kustomization.depends_on);
    if !kustomization.path.is_empty() {
        existing.path = kustomization.path;
    }
    existing.source = kustomization.source.or(existing.source.take());
    existing.destroy = kustomization.destroy.or(existing.destroy);
    existing.interval = kustomization.interval.or(existing.interval.take());
    existing.retry_interval = kustomization.retry_interval.or(existing.retry_interval.take());
    existing.timeout = kustomization.timeout.or(existing.timeout.take());
    existing.wait = kustomization.wait.or(existing.wait);
    existing.force = kustomization.force.or(existing.force);
    existing.prune = kustomization.prune.or(existing.prune);
    existing.patches.extend(kustomization.patches);
    existing.substitutions.extend(kustomization.substitutions);
    existing.extra.extend(kustomization.extra);
}

/// Windsor v0.9's `subtractKustomizationFields`: only what the removal lists goes (dependsOn and
/// components items, patches with the same text, substitution keys); the rest stays.
pub(super) fn subtract_kustomization(existing: &mut Kustomization, removal: &Kustomization) {
    existing.depends_on.retain(|d| !removal.depends_on.contains(d));
    existing.components.retain(|c| !removal.components.contains(c));
    existing.patches.retain(|p| !removal.patches.iter().any(|r| r.patch.is_some() && r.patch == p.patch));
    existing.substitutions.retain(|key, _| !removal.substitutions.contains_key(key));
}

/// Windsor v0.9's `RemoveTerraformComponent`: the listed input keys and dependsOn items go.
pub(super) fn subtract_terraform(existing: &mut TerraformComponent, removal: &TerraformComponent) {
    existing.inputs.retain(|key, _| !removal.inputs.contains_key(key));
    existing.depends_on.retain(|d| !removal.depends_on.contains(d));
}

/// `spec.blueprint` over a Blueprint item: metadata and repository replace when set, sources
/// replace (v0.9: merge by name);
/// components merge as a feature's would. With v0.9 a terraform component matches by its `GetID` (name, else path), as v0.9's
/// `strategicMergeTerraformComponent` matches it (v0.8.1: path and source).
pub(super) fn overlay_blueprint(base: &mut Blueprint, overlay: Blueprint, version: WindsorVersion) {
    if !overlay.metadata.name.is_empty() {
        base.metadata.name = overlay.metadata.name;
    }
    if overlay.metadata.description.is_some() {
        base.metadata.description = overlay.metadata.description;
    }
    if overlay.repository.is_some() {
        base.repository = overlay.repository;
    }
    if version == V09 {
        // v0.9's `StrategicMerge`: sources merge by name, the overlay's entry winning with the
        // base's CRD references kept; new names are appended.
        for source in overlay.sources {
            match base.sources.iter_mut().find(|s| s.name == source.name) {
                Some(existing) => {
                    let crds = std::mem::take(&mut existing.crds);
                    *existing = source;
                    push_unique(&mut existing.crds, crds);
                }
                None => base.sources.push(source),
            }
        }
    } else if !overlay.sources.is_empty() {
        base.sources = overlay.sources;
    }
    for component in overlay.terraform {
        if version == V09 {
            apply_terraform(&mut base.terraform, component, Strategy::Merge);
        } else {
            merge_terraform(&mut base.terraform, component);
        }
    }
    for kustomization in overlay.kustomize {
        merge_kustomization(&mut base.kustomize, kustomization);
    }
}

/// Windsor v0.9's `strategicMergeTerraformComponent` field rules: inputs deep-merged (an empty
/// overlay value keeps a non-empty one), dependsOn unioned, destroy, parallelism and name
/// overwritten when set.
pub(super) fn merge_terraform_fields(existing: &mut TerraformComponent, component: TerraformComponent) {
    if !component.inputs.is_empty() {
        let base = std::mem::take(&mut existing.inputs);
        existing.inputs = deep_merge_maps(base, component.inputs);
    }
    push_unique(&mut existing.depends_on, component.depends_on.into_iter().filter(|d| !d.is_empty()).collect());
    existing.destroy = component.destroy.or(existing.destroy);
    existing.parallelism = component.parallelism.or(existing.parallelism);
    if component.name.as_deref().is_some_and(|n| !n.is_empty()) {
        existing.name = component.name;
    }
    existing.extra.extend(component.extra);
}

/// Windsor's `DeepMergeMaps`: maps merge by key; an empty string, list or map never overwrites a
/// non-empty value.
pub(super) fn deep_merge_maps(mut base: Map, overlay: Map) -> Map {
    for (key, value) in overlay {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(into)), Value::Object(from)) => {
                let merged = deep_merge_maps(std::mem::take(into), from);
                *into = merged;
            }
            (Some(existing), value) if is_empty(&value) && !existing.is_null() && !is_empty(existing) => {}
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
    base
}

pub(super) fn is_empty(value: &Value) -> bool {
    match value {
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Windsor v0.9's `ReplaceTerraformComponent`, `strategicMergeTerraformComponent` and
/// `RemoveTerraformComponent`: matched by identity (name, else path), then re-sorted.
pub(super) fn apply_terraform(
    list: &mut Vec<TerraformComponent>,
    component: TerraformComponent,
    strategy: Strategy,
) -> &'static str {
    let action = match (list.iter_mut().find(|c| c.id() == component.id()), strategy) {
        (None, Strategy::Remove) => "skipped",
        (None, _) => {
            list.push(component);
            "appended"
        }
        (Some(existing), Strategy::Replace) => {
            *existing = component;
            "replaced"
        }
        (Some(existing), Strategy::Merge) => {
            merge_terraform_fields(existing, component);
            "merged"
        }
        (Some(existing), Strategy::Remove) => {
            subtract_terraform(existing, &component);
            "removed"
        }
    };
    let _ = order::sort_terraform(list);
    action
}

/// `values.substitutions.<name>` overrides what features set for kustomization `<name>`; returns
/// what it set (as text) for each kustomization it set something for.
pub(super) fn apply_value_substitutions(blueprint: &mut Blueprint, values: &Value) -> Vec<(String, Map)> {
    let mut set = Vec::new();
    let Some(overrides) = values.get("substitutions").and_then(Value::as_object) else { return set };
    for kustomization in &mut blueprint.kustomize {
        if let Some(Value::Object(map)) = overrides.get(&kustomization.name) {
            let data: Map = map.iter().map(|(key, value)| (key.clone(), Value::String(to_text(value)))).collect();
            kustomization.substitutions.extend(data.iter().map(|(k, v)| (k.clone(), v.clone())));
            if !data.is_empty() {
                set.push((kustomization.name.clone(), data));
            }
        }
    }
    set
}
