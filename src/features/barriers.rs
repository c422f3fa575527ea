//! Windsor v0.9's composer steps after the facets are merged (pkg/composer/blueprint/composer.go):
//! the CRD layer Kustomizations, their barrier, and the `globalDependency` barrier.

use super::model::{Blueprint, Kustomization, Source};
use std::collections::{HashMap, HashSet, VecDeque};

/// Windsor's reserved names: the CRD layer `crds` and the per-source layers `crds-<source>`.
pub(super) fn is_crd_layer_name(name: &str) -> bool {
    name == CRD_LAYER || name.starts_with("crds-")
}

/// Windsor's `CrdLayerName`: the Kustomization that installs the blueprint's `crds`.
pub(super) const CRD_LAYER: &str = "crds";

/// Windsor's `CrdKustomizationName`: `crds` for the blueprint's own layer, `crds-<source>` for a
/// source's.
fn crd_layer_name(source: &str) -> String {
    if source.is_empty() {
        CRD_LAYER.to_string()
    } else {
        format!("{CRD_LAYER}-{source}")
    }
}

/// Windsor's `finalizeCrdLayers`: a local `template` source's references (no `template` source
/// with a URL) join the blueprint's own; then each reference is claimed once, by the blueprint's
/// own layer first, then by installing sources in order of name, each list sorted.
pub(super) fn finalize_crd_layers(blueprint: &mut Blueprint) {
    let remote_template = blueprint.sources.iter().any(|s| s.name == "template" && !s.url.is_empty());
    if !remote_template {
        for source in blueprint.sources.iter_mut().filter(|s| s.name == "template") {
            for reference in std::mem::take(&mut source.crds) {
                if !blueprint.crds.contains(&reference) {
                    blueprint.crds.push(reference);
                }
            }
        }
    }
    let mut claimed: HashSet<String> = HashSet::new();
    let mut claim = |refs: &mut Vec<String>| {
        refs.retain(|r| claimed.insert(r.clone()));
        refs.sort();
    };
    claim(&mut blueprint.crds);
    let mut installing: Vec<usize> =
        (0..blueprint.sources.len()).filter(|&i| crd_source(&blueprint.sources[i])).collect();
    installing.sort_by(|&a, &b| blueprint.sources[a].name.cmp(&blueprint.sources[b].name));
    for i in installing {
        claim(&mut blueprint.sources[i].crds);
    }
}

/// A source that gets a `crds-<name>` layer: it lists references and installs.
fn crd_source(source: &Source) -> bool {
    !source.crds.is_empty() && source.installs()
}

/// The Kustomizations Windsor's provisioner synthesizes from the CRD references (`CrdLayers`,
/// `withCrdLayer`): `crds` from the blueprint's own `crds`, then `crds-<source>` for each
/// installing source that lists some, by name; each at `crds`, the references as its components,
/// from its source, never pruned (pruning a CRD deletes every resource of its kind) and waited for.
pub(super) fn crd_layers(blueprint: &Blueprint) -> Vec<Kustomization> {
    let layer = |source: &str, refs: &[String]| Kustomization {
        name: crd_layer_name(source),
        path: CRD_LAYER.into(),
        source: (!source.is_empty()).then(|| source.to_string()),
        components: refs.to_vec(),
        prune: Some(false),
        wait: Some(true),
        ..Default::default()
    };
    let mut layers = Vec::new();
    if !blueprint.crds.is_empty() {
        layers.push(layer("", &blueprint.crds));
    }
    let mut sources: Vec<&Source> = blueprint.sources.iter().filter(|s| crd_source(s)).collect();
    sources.sort_by(|a, b| a.name.cmp(&b.name));
    layers.extend(sources.into_iter().map(|s| layer(&s.name, &s.crds)));
    layers
}

/// Windsor's `applyCrdLayerBarrier`: with CRD layers, every kustomization and system without a
/// `dependsOn` of its own waits for all of them, so the stack reconciles after the CRDs are
/// established.
pub(super) fn crd_layer_barrier(blueprint: &mut Blueprint, layers: &[Kustomization]) {
    if layers.is_empty() {
        return;
    }
    let names: Vec<String> = layers.iter().map(|k| k.name.clone()).collect();
    let roots = blueprint.kustomize.iter_mut().map(|k| &mut k.depends_on);
    for depends_on in roots.chain(blueprint.flux.iter_mut().map(|s| &mut s.depends_on)) {
        if depends_on.is_empty() {
            depends_on.clone_from(&names);
        }
    }
}

/// Windsor's `applyGlobalDependencyBarrier`: for each system with `globalDependency`, every
/// kustomization and system outside its dependency closure (the system itself, and what it
/// depends on, transitively) is made to depend on its last tiers: its resources tiers when it has
/// any, else its install tier. The closures are computed once, before any edge is added.
pub(super) fn global_dependency_barrier(blueprint: &mut Blueprint) {
    if !blueprint.flux.iter().any(|s| s.global_dependency) {
        return;
    }
    let compiled = super::tiers::all_kustomizations(blueprint);
    let depends_on: HashMap<&str, &[String]> =
        compiled.iter().map(|k| (k.name.as_str(), k.depends_on.as_slice())).collect();
    let mut barriers: Vec<(Vec<String>, HashSet<String>)> = Vec::new();
    for system in blueprint.flux.iter().filter(|s| s.global_dependency) {
        let tiers: Vec<String> = super::tiers::compile_tiers(system).into_iter().map(|k| k.name).collect();
        let install = format!("{}-install", system.name);
        let terminals: Vec<String> = if system.resources.is_empty() {
            tiers.clone()
        } else {
            tiers.iter().filter(|t| **t != install).cloned().collect()
        };
        if terminals.is_empty() {
            continue;
        }
        let mut closure = HashSet::new();
        let mut queue: VecDeque<String> = tiers.into();
        while let Some(name) = queue.pop_front() {
            if closure.insert(name.clone()) {
                queue.extend(depends_on.get(name.as_str()).into_iter().flat_map(|d| d.iter().cloned()));
            }
        }
        barriers.push((terminals, closure));
    }
    let system_tiers: Vec<Vec<String>> =
        blueprint.flux.iter().map(|s| super::tiers::compile_tiers(s).into_iter().map(|k| k.name).collect()).collect();
    for (terminals, closure) in &barriers {
        let append = |list: &mut Vec<String>| {
            for terminal in terminals {
                if !list.contains(terminal) {
                    list.push(terminal.clone());
                }
            }
        };
        for k in blueprint.kustomize.iter_mut().filter(|k| !closure.contains(&k.name)) {
            append(&mut k.depends_on);
        }
        for (system, tiers) in blueprint.flux.iter_mut().zip(&system_tiers) {
            if !tiers.iter().any(|t| closure.contains(t)) {
                append(&mut system.depends_on);
            }
        }
    }
}
