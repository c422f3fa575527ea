//! A Flux system's tiers (its install and resources Kustomizations), as Windsor v0.9 compiles them
//! (`compileFluxSystemTiers`, `resolveTierDependencies`, `AllKustomizations`).

use super::model::{Blueprint, FluxSystem, Kustomization, Strategy};

/// Windsor's `DefaultFluxKustomizationInstallTimeout`.
const INSTALL_TIMEOUT: &str = "10m";

/// `compileFluxSystemTiers`: `<name>-install` at `<path>/install` (when it has components; its
/// timeout defaults to 10m) depending on the system's dependsOn, then each variant
/// `<name>-resources[-<variant>]` at `<path>/resources`, depending on the install tier when there is
/// one, else on the system's dependsOn, then on its own. Path defaults to the name.
pub(super) fn compile_tiers(system: &FluxSystem) -> Vec<Kustomization> {
    let base = if system.path.is_empty() { &system.name } else { &system.path };
    let install_name = format!("{}-install", system.name);
    let join = |tail: &str| format!("{}/{tail}", base.trim_end_matches('/'));
    let defaults = |k: &mut Kustomization| {
        if k.source.is_none() {
            k.source = system.source.clone();
        }
        if k.destroy.is_none() {
            k.destroy = system.destroy;
        }
        // `applySystemTierDefaults`: a tier without `enabled` takes its system's.
        if let (false, Some(enabled)) = (k.extra.contains_key("enabled"), &system.enabled) {
            k.extra.insert("enabled".into(), enabled.clone());
        }
        (k.when, k.strategy, k.ordinal, k.requires) = (String::new(), Strategy::Merge, None, Vec::new());
    };
    let mut out = Vec::new();
    let mut installed = false;
    if let Some(install) = system.install.as_ref().filter(|i| !i.components.is_empty()) {
        let mut k = install.clone();
        (k.name, k.path, k.depends_on) = (install_name.clone(), join("install"), system.depends_on.clone());
        defaults(&mut k);
        k.timeout = k.timeout.or_else(|| Some(INSTALL_TIMEOUT.to_string()));
        out.push(k);
        installed = true;
    }
    for variant in &system.resources {
        let mut k = variant.clone();
        k.name = match variant.name.as_str() {
            "" => format!("{}-resources", system.name),
            name => format!("{}-resources-{name}", system.name),
        };
        k.path = join("resources");
        let own = std::mem::take(&mut k.depends_on);
        k.depends_on = if installed { vec![install_name.clone()] } else { system.depends_on.clone() };
        k.depends_on.extend(own);
        defaults(&mut k);
        out.push(k);
    }
    out
}

/// Windsor's `resolveTierDependencies`: a kustomization's or system's dependsOn naming a system
/// with an install tier (and no kustomization of that name) means that install tier.
pub(super) fn resolve_tier_dependencies(blueprint: &mut Blueprint) {
    let mut names: std::collections::HashSet<String> = blueprint.kustomize.iter().map(|k| k.name.clone()).collect();
    names.extend(blueprint.flux.iter().filter(|s| s.install.is_some()).map(|s| format!("{}-install", s.name)));
    let resolve = |deps: &mut Vec<String>| {
        for dep in deps.iter_mut() {
            let install = format!("{dep}-install");
            if !names.contains(dep.as_str()) && names.contains(&install) {
                *dep = install;
            }
        }
    };
    blueprint.kustomize.iter_mut().for_each(|k| resolve(&mut k.depends_on));
    blueprint.flux.iter_mut().for_each(|s| resolve(&mut s.depends_on));
}

/// Windsor's `AllKustomizations`: the plain kustomizations, then each system's tiers.
pub(super) fn all_kustomizations(blueprint: &Blueprint) -> Vec<Kustomization> {
    let mut all = blueprint.kustomize.clone();
    all.extend(blueprint.flux.iter().flat_map(compile_tiers));
    all
}
