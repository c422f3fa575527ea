//! Windsor v0.9's composer steps after the facets are merged (pkg/composer/blueprint/composer.go):
//! the CRD layer Kustomization, its barrier, and the `globalDependency` barrier.

use super::model::{Blueprint, Kustomization};
use std::collections::{HashMap, HashSet, VecDeque};

/// Windsor's reserved names: the CRD layer `crds` and the per-source layers `crds-<source>`.
pub(super) fn is_crd_layer_name(name: &str) -> bool {
    name == CRD_LAYER || name.starts_with("crds-")
}

/// Windsor's `CrdLayerName`: the Kustomization that installs the blueprint's `crds`.
pub(super) const CRD_LAYER: &str = "crds";

/// The Kustomization Windsor's provisioner synthesizes from the blueprint's `crds`
/// (`withCrdLayer`): `crds` at `crds`, the CRD references as its components, from the blueprint's
/// own source, never pruned (pruning a CRD deletes every resource of its kind) and waited for.
pub(super) fn crd_layer(blueprint: &Blueprint) -> Option<Kustomization> {
    (!blueprint.crds.is_empty()).then(|| Kustomization {
        name: CRD_LAYER.into(),
        path: CRD_LAYER.into(),
        components: blueprint.crds.clone(),
        prune: Some(false),
        wait: Some(true),
        ..Default::default()
    })
}

/// Windsor's `applyCrdLayerBarrier`: with a CRD layer, every kustomization and system without a
/// `dependsOn` of its own waits for it, so the stack reconciles after the CRDs are established.
pub(super) fn crd_layer_barrier(blueprint: &mut Blueprint) {
    if blueprint.crds.is_empty() {
        return;
    }
    let roots = blueprint.kustomize.iter_mut().map(|k| &mut k.depends_on);
    for depends_on in roots.chain(blueprint.flux.iter_mut().map(|s| &mut s.depends_on)) {
        if depends_on.is_empty() {
            depends_on.push(CRD_LAYER.into());
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
    let compiled = super::facets::all_kustomizations(blueprint);
    let depends_on: HashMap<&str, &[String]> =
        compiled.iter().map(|k| (k.name.as_str(), k.depends_on.as_slice())).collect();
    let mut barriers: Vec<(Vec<String>, HashSet<String>)> = Vec::new();
    for system in blueprint.flux.iter().filter(|s| s.global_dependency) {
        let tiers: Vec<String> = super::facets::compile_tiers(system).into_iter().map(|k| k.name).collect();
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
        blueprint.flux.iter().map(|s| super::facets::compile_tiers(s).into_iter().map(|k| k.name).collect()).collect();
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
