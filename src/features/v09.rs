//! Windsor v0.9.0 composition (`spec.windsor.version` "0.9", the default): the facets composed
//! onto the base ([`facets`](super::facets)), the context's own blueprint merged over them, then
//! what v0.9's `processAndCompose` and its composer do after: the dev repository, the shared
//! ConfigMaps, empty fragments dropped, the terraform inputs evaluated against the config, the
//! CRD layers and the barriers, and v0.9's checks of names, sources and dependencies.

use super::facets::{self, Excluded, Facet};
use super::merge::{apply_terraform, apply_value_substitutions, merge_kustomization};
use super::model::{self, Blueprint, Feature, Kustomization, Strategy};
use super::read::parse_feature;
use super::report::{Composed, FeatureDecision};
use super::step::{graph_diagnostic, Declared, Step};
use super::{barriers, flux, tiers};
use crate::config::{Spec, WindsorVersion};
use crate::diag::Severity;
use crate::doc::{dotted, Map, Value};

/// Composes `features` (and the Facet items) onto `blueprint` as Windsor v0.9 does; `user` is the
/// context's own blueprint's components, merged after the facets; `overlay` what the operator set
/// (it stays above facet config). `None` when unmet requirements end the composition, as they
/// end Windsor's: nothing is emitted, nothing more checked.
#[allow(clippy::too_many_arguments)]
pub(super) fn compose(
    step: &mut Step,
    mut blueprint: Blueprint,
    user: Option<Blueprint>,
    mut features: Vec<(Feature, Declared)>,
    facet_items: &[&Value],
    overlay: &Value,
    spec: &Spec,
    config: &Declared,
) -> (Option<Composed>, Vec<FeatureDecision>) {
    let dev_repository = dev_repository(step.values, spec);
    normalize_oci_refs(&mut blueprint);
    // Features read as facets (v0.9's loader reads `features/` into the same type, `kind:
    // Feature` renamed to `Facet`).
    for item in facet_items {
        let origin = Declared::of_item(item);
        if let Some(facet) = parse_feature(step, item, &origin) {
            features.push((facet, origin));
        }
    }
    let facets = features.into_iter().map(|(feature, origin)| Facet::new(feature, origin)).collect();
    let (decisions, excluded, stopped) = facets::compose(step, &mut blueprint, facets, config, overlay);
    if stopped {
        return (None, decisions);
    }
    // The user's layer, as `strategicMergeTerraformComponent` and `strategicMergeKustomization`
    // merge it: a terraform component keeps the path and source the facets gave it.
    if let Some(user) = user {
        for component in user.terraform {
            apply_terraform(&mut blueprint.terraform, component, Strategy::Merge);
        }
        for kustomization in user.kustomize {
            merge_kustomization(&mut blueprint.kustomize, kustomization);
        }
    }
    // `Generate`'s `setRepositoryDefaults`: a dev context without a repository gets the dev one.
    if blueprint.repository.as_ref().is_none_or(|r| r.url.is_empty()) {
        if let Some(repository) = dev_repository {
            blueprint.repository = Some(repository);
        }
    }
    let with_values = apply_value_substitutions(&mut blueprint, step.values);
    let context = spec.windsor.context.as_deref();
    let mut shared = flux::shared_config_maps(&blueprint, step.values, context, WindsorVersion::V09, with_values);
    drop_empty_fragments(&mut blueprint, &mut shared);
    // After composing, as `processAndCompose` does: a base `${x ?? ""}` stays "".
    evaluate_terraform_inputs(step, &mut blueprint, config);
    tiers::resolve_tier_dependencies(&mut blueprint);
    // The composer, in its order: the `crds` layer ahead of every root, then each
    // globalDependency system ahead of everything outside its own closure.
    barriers::finalize_crd_layers(&mut blueprint);
    let crd_layers = barriers::crd_layers(&blueprint);
    reserved_names(step, &blueprint, config);
    validate_sources(step, &blueprint, config);
    barriers::crd_layer_barrier(&mut blueprint, &crd_layers);
    barriers::global_dependency_barrier(&mut blueprint);
    // A Flux Kustomization without a path gets its name (v0.8.1: the prefix alone).
    let unnamed_paths = blueprint.kustomize.iter().any(|k| k.path.is_empty());
    let compiled = (!blueprint.flux.is_empty() || unnamed_paths || !crd_layers.is_empty()).then(|| {
        let mut compiled = blueprint.clone();
        // The provisioner's `withCrdLayer`: the CRD layer first, then every kustomization.
        compiled.kustomize = crd_layers.iter().cloned().chain(tiers::all_kustomizations(&blueprint)).collect();
        for k in compiled.kustomize.iter_mut().filter(|k| k.path.is_empty()) {
            k.path = k.name.clone();
        }
        compiled
    });
    let kustomizations = &compiled.as_ref().unwrap_or(&blueprint).kustomize;
    missing_dependencies(step, &blueprint, kustomizations, &excluded, config);
    // Its objects go in the values' `gitops.namespace` (`fluxNamespace`).
    let namespace = dotted(step.values, "gitops.namespace").and_then(Value::as_str).map(str::to_string);
    // `ownershipLabels`, stamped by `ApplyBlueprint`, when the render knows the context.
    let labels = context.map(|name| {
        let id = step.values.get("id").map(crate::expr::go_format).unwrap_or_default();
        let mut labels = Map::new();
        labels.insert("windsorcli.dev/context".into(), Value::from(name));
        labels.insert("windsorcli.dev/context-id".into(), Value::from(id));
        labels
    });
    // `Install` applies the repository, the sources and the shared ConfigMaps whether or not
    // there is a kustomization.
    let sources_alone = !shared.is_empty() || has_sources(&blueprint);
    let composed = Composed { blueprint, compiled, shared, crd_layers, namespace, labels, sources_alone };
    (Some(composed), decisions)
}

/// Windsor v0.9's dev repository (`resolveRepositoryDefaults`): in dev mode, without a repository,
/// `http://git.<dns.domain, else test>/git/<project folder>` on branch `main` with the secret
/// `flux-system`. Only when `spec.windsor.project` names the folder.
fn dev_repository(values: &Value, spec: &crate::config::Spec) -> Option<model::Source> {
    let project = spec.windsor.project.as_deref().filter(|p| !p.is_empty() && *p != ".")?;
    if dotted(values, "dev") != Some(&Value::Bool(true)) {
        return None;
    }
    let domain = match dotted(values, "dns.domain") {
        None | Some(Value::Null) => "test".to_string(),
        Some(value) => crate::expr::go_format(value),
    };
    if domain.is_empty() {
        return None;
    }
    let mut extra = Map::new();
    extra.insert("ref".into(), serde_json::json!({"branch": "main"}));
    extra.insert("secretName".into(), Value::from("flux-system"));
    Some(model::Source { url: format!("http://git.{domain}/git/{project}"), extra, ..model::Source::default() })
}

/// Whether the blueprint names a source object to apply: its repository or a source with a URL.
fn has_sources(blueprint: &Blueprint) -> bool {
    blueprint.repository.as_ref().is_some_and(|r| !r.url.is_empty())
        || blueprint.sources.iter().any(|s| !s.url.is_empty())
}

/// Windsor v0.9's evaluation of every composed terraform input (`processAndCompose`), after
/// composition, against the values with the config over them: the base blueprint's `${…}` see
/// the facets' config. A facet's inputs were evaluated when collected; what is left with a `${`
/// is evaluated again, as v0.9 does. An input evaluating to nil keeps its key (`null`), as
/// `processAndCompose` stores every result. A whole float (`floor(x)`, `max(4, 10 / 2)`) below a
/// million is written as the integer it is, as Go's YAML writes Windsor's float64 (`5`, not `5.0`).
fn evaluate_terraform_inputs(step: &mut Step, blueprint: &mut Blueprint, config: &Declared) {
    fn whole_floats(value: &mut Value) {
        match value {
            Value::Object(map) => map.values_mut().for_each(whole_floats),
            Value::Array(items) => items.iter_mut().for_each(whole_floats),
            Value::Number(n) if n.is_f64() => {
                if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e6) {
                    *value = Value::from(f as i64);
                }
            }
            _ => {}
        }
    }
    for component in &mut blueprint.terraform {
        let mut inputs = Map::new();
        for (key, value) in std::mem::take(&mut component.inputs) {
            match step.interpolate_value(&value, config) {
                Ok(mut value) => {
                    whole_floats(&mut value);
                    inputs.insert(key, value);
                }
                Err(err) => {
                    let message = format!("evaluate terraform inputs for component {:?}: {err}", component.id());
                    step.results.push(graph_diagnostic(config, Severity::Error, message));
                }
            }
        }
        component.inputs = inputs;
    }
}

/// Windsor v0.9's `dropEmptyCompositionFragments`: empty `components`; substitutions, terraform
/// inputs (at any depth, and empty texts in their lists) and the shared ConfigMaps' data whose
/// key or value is empty text. The ConfigMaps themselves stay, even empty.
fn drop_empty_fragments(blueprint: &mut Blueprint, shared: &mut [(String, Map)]) {
    fn prune(value: &mut Value) {
        match value {
            Value::Object(map) => prune_map(map),
            Value::Array(items) => {
                items.retain(|item| item.as_str() != Some(""));
                items.iter_mut().for_each(prune);
            }
            _ => {}
        }
    }
    fn prune_map(map: &mut Map) {
        map.retain(|key, value| !key.is_empty() && value.as_str() != Some(""));
        map.values_mut().for_each(prune);
    }
    for kustomization in &mut blueprint.kustomize {
        kustomization.components.retain(|c| !c.is_empty());
        prune_map(&mut kustomization.substitutions);
    }
    for component in &mut blueprint.terraform {
        prune_map(&mut component.inputs);
    }
    prune_map(&mut blueprint.substitutions);
    shared.iter_mut().for_each(|(_, data)| prune_map(data));
}

/// Windsor v0.9's `validateReservedNames`: `crds` and `crds-<source>` name the CRD layers.
fn reserved_names(step: &mut Step, blueprint: &Blueprint, config: &Declared) {
    for k in &blueprint.kustomize {
        if barriers::is_crd_layer_name(&k.name) {
            let message =
                format!("kustomization name {:?} is reserved for the CRD layer; use the crds: section instead", k.name);
            step.results.push(graph_diagnostic(config, Severity::Error, message));
        }
    }
}

/// Windsor v0.9's `injectOCISource`: an OCI source's blueprint gives its terraform components and
/// kustomizations without a `source` that source's name (its Flux systems keep theirs).
pub(super) fn stamp_source(blueprint: &mut Blueprint, source: &str) {
    for component in &mut blueprint.terraform {
        component.source.get_or_insert_with(|| source.to_string());
    }
    for kustomization in &mut blueprint.kustomize {
        kustomization.source.get_or_insert_with(|| source.to_string());
    }
}

/// Windsor v0.9's `normalizeOCISourceRefs` (on every blueprint it loads): an `oci://` source whose
/// URL carries a tag (a `:` after the host's `/`; a port is not a tag) drops its `ref`.
fn normalize_oci_refs(blueprint: &mut Blueprint) {
    for source in &mut blueprint.sources {
        let Some(rest) = source.url.strip_prefix("oci://") else { continue };
        if rest.split_once('/').is_some_and(|(_, path)| path.contains(':')) {
            source.extra.remove("ref");
        }
    }
}

/// Windsor v0.9's `validateSources`: `install: true` is for OCI sources only (their blueprint is
/// what gets composed in); a source without a URL is not checked.
fn validate_sources(step: &mut Step, blueprint: &Blueprint, config: &Declared) {
    for source in &blueprint.sources {
        // v0.9 reads `install` as a `BoolExpression`, which refuses anything but a boolean or text.
        if matches!(source.install, Some(Value::Array(_) | Value::Object(_))) {
            let message = format!(
                "source {:?}: install: bool expression must be a boolean or string (true, false, or a ${{…}} text)",
                source.name
            );
            step.results.push(graph_diagnostic(config, Severity::Error, message));
        }
    }
    for source in blueprint.sources.iter().filter(|s| !s.name.is_empty() && !s.url.is_empty()) {
        if source.install_set_true() && !source.url.starts_with("oci://") {
            let message = format!(
                "source {:?} has install: true but URL {:?} is not an OCI source (oci://); install is only supported \
                 for OCI sources",
                source.name, source.url
            );
            step.results.push(graph_diagnostic(config, Severity::Error, message));
        }
    }
}

/// Windsor v0.9's `validateDependencies`: a terraform `dependsOn` naming no component, or a
/// kustomization's naming no kustomization (Flux system tiers and the CRD layers count), is an
/// error, worded as `describeMissingDependency` words it: naming the facet that would have
/// provided it when one was left out. v0.9 stops at the first; each is reported here.
fn missing_dependencies(
    step: &mut Step,
    blueprint: &Blueprint,
    kustomizations: &[Kustomization],
    excluded: &[Excluded],
    config: &Declared,
) {
    let describe =
        |dependency: &str, kind: &str| match excluded.iter().find(|e| e.provides.iter().any(|p| p == dependency)) {
            Some(facet) if !facet.when.is_empty() => format!(
            "{dependency:?}, which is not in the composition: it is contributed by facet {:?}, excluded because its \
             when condition ({}) evaluated false",
            facet.name, facet.when
        ),
            Some(facet) => format!(
                "{dependency:?}, which is not in the composition: it is contributed by facet {:?}, which was excluded",
                facet.name
            ),
            // A CRD layer's name is reserved: the layer exists when its source lists crds and installs.
            None if kind == "kustomization" && barriers::is_crd_layer_name(dependency) => format!(
                "non-existent {kind} {dependency:?}: remove it from dependsOn; a CRD layer exists only with CRDs to \
                 install: \"crds\" when the blueprint lists crds, \"crds-<source>\" when that source lists crds and \
                 installs"
            ),
            None => format!(
                "non-existent {kind} {dependency:?}: remove it from dependsOn, or add a {kind} named {dependency:?}"
            ),
        };
    let ids: std::collections::HashSet<&str> = blueprint.terraform.iter().map(|c| c.id()).collect();
    for component in &blueprint.terraform {
        for dependency in component.depends_on.iter().filter(|d| !ids.contains(d.as_str())) {
            let message =
                format!("terraform component {:?} depends on {}", component.id(), describe(dependency, "component"));
            step.results.push(graph_diagnostic(config, Severity::Error, message));
        }
    }
    // The CRD layers are among `kustomizations` (the compiled list starts with them).
    let names: std::collections::HashSet<&str> = kustomizations.iter().map(|k| k.name.as_str()).collect();
    for k in kustomizations {
        for dependency in k.depends_on.iter().filter(|d| !names.contains(d.as_str())) {
            let message = format!("kustomization {:?} depends on {}", k.name, describe(dependency, "kustomization"));
            step.results.push(graph_diagnostic(config, Severity::Error, message));
        }
    }
}
