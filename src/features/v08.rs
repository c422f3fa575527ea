//! Windsor v0.8.1 composition (`spec.windsor.version` "0.8"): features applied in order of
//! `metadata.name` when their `when` holds, each entry merged by its strategy (`replace`, else
//! merge).

use super::merge::{apply_value_substitutions, merge_kustomization, merge_terraform};
use super::model::{Blueprint, Feature, Strategy};
use super::report::{Composed, FeatureDecision};
use super::step::{decide, graph_diagnostic, Declared, Step};
use super::{flux, order, tiers};
use crate::config::WindsorVersion;
use crate::diag::{Diagnostic, Kind, Severity};
use crate::doc::Value;

/// Composes `features` onto `blueprint` as Windsor v0.8.1 does: in order of `metadata.name`,
/// each when its `when` holds. A Facet item is an error (v0.8.1 has none).
pub(super) fn compose(
    step: &mut Step,
    mut blueprint: Blueprint,
    mut features: Vec<(Feature, Declared)>,
    facet_items: &[&Value],
    context: Option<&str>,
    config: &Declared,
) -> (Composed, Vec<FeatureDecision>) {
    // Composing one as a Feature would apply it differently.
    for item in facet_items {
        let message = "a Facet is Windsor v0.9's, and spec.windsor.version is \"0.8\" (Windsor v0.8.1 has no \
                       Facet): set spec.windsor.version to \"0.9\", or write it as a Feature"
            .to_string();
        step.results.push(Diagnostic::error(Kind::Render, message).about(item));
    }
    features.sort_by(|a, b| a.0.metadata.name.cmp(&b.0.metadata.name));
    let mut decisions = Vec::new();
    for (feature, origin) in features {
        warn_facet_only_fields(step, &feature, &origin);
        decisions.push(apply_feature(step, &mut blueprint, feature, &origin));
    }
    apply_value_substitutions(&mut blueprint, step.values);
    let shared = flux::shared_config_maps(&blueprint, step.values, context, WindsorVersion::V08, Vec::new());
    tiers::resolve_tier_dependencies(&mut blueprint);
    let compiled = (!blueprint.flux.is_empty()).then(|| {
        let mut compiled = blueprint.clone();
        compiled.kustomize = tiers::all_kustomizations(&blueprint);
        compiled
    });
    // v0.8.1 applies a dependency on nothing, and Flux waits for what never comes.
    if let Ok(unknown) = order::check(&compiled.as_ref().unwrap_or(&blueprint).kustomize) {
        for (name, dependency) in unknown {
            let message = format!("kustomization {name:?} depends on {dependency:?}, which is not defined");
            step.results.push(graph_diagnostic(config, Severity::Warning, message));
        }
    }
    let composed = Composed {
        blueprint,
        compiled,
        shared,
        crd_layers: Vec::new(),
        namespace: None,
        labels: None,
        sources_alone: false,
    };
    (composed, decisions)
}

/// `ordinal` and `requires` are Windsor v0.9's: with version "0.8" the render follows v0.8.1,
/// where they do nothing; say so rather than ignore them silently.
fn warn_facet_only_fields(step: &mut Step, feature: &Feature, origin: &Declared) {
    let mut fields: Vec<String> = Vec::new();
    if feature.ordinal.is_some() {
        fields.push("ordinal".into());
    }
    if !feature.requires.is_empty() {
        fields.push("requires".into());
    }
    for (set, name) in [
        (!feature.config.is_empty(), "config"),
        (!feature.flux.is_empty(), "flux"),
        (feature.backend.is_some(), "backend"),
        (!feature.crds.is_empty(), "crds"),
        (!feature.substitutions.is_empty(), "substitutions"),
        (!feature.messages.is_empty(), "messages"),
    ] {
        if set {
            fields.push(name.into());
        }
    }
    for (i, c) in feature.terraform.iter().enumerate() {
        fields.extend(c.ordinal.map(|_| format!("terraform[{i}].ordinal")));
        fields.extend((!c.requires.is_empty()).then(|| format!("terraform[{i}].requires")));
    }
    for (i, k) in feature.kustomize.iter().enumerate() {
        fields.extend(k.ordinal.map(|_| format!("kustomize[{i}].ordinal")));
        fields.extend((!k.requires.is_empty()).then(|| format!("kustomize[{i}].requires")));
    }
    for field in fields {
        let message = "has no effect here: it is Windsor v0.9's, and with spec.windsor.version \"0.8\" a package \
                       is composed as Windsor v0.8.1 composes Features"
            .to_string();
        step.results.push(origin.diagnostic(Severity::Warning, message, &field));
    }
}

fn apply_feature(step: &mut Step, blueprint: &mut Blueprint, feature: Feature, origin: &Declared) -> FeatureDecision {
    let mut decision = FeatureDecision {
        name: feature.metadata.name.clone(),
        origin: origin.describe(),
        when: feature.when.clone(),
        enabled: false,
        reads: Vec::new(),
        components: Vec::new(),
    };
    match step.condition(&feature.when, origin, "when") {
        Ok((enabled, reads)) => {
            decision.enabled = enabled;
            decision.reads = reads;
        }
        Err(message) => {
            step.results.push(origin.diagnostic(Severity::Error, message, "when"));
            return decision;
        }
    }
    if !decision.enabled {
        return decision;
    }
    for (i, component) in feature.terraform.into_iter().enumerate() {
        let field = format!("terraform[{i}]");
        let name = if component.path.is_empty() { field.clone() } else { component.path.clone() };
        let Some(mut component_decision) = decide(step, "terraform", name, &component.when, origin, &field) else {
            continue;
        };
        if component_decision.enabled {
            let component = v08_strategy(step, component, |c| &mut c.strategy, origin, &field);
            let component = step.prepare_terraform(component, origin, &field);
            component_decision.action = merge_terraform(&mut blueprint.terraform, component);
        }
        decision.components.push(component_decision);
    }
    for (i, kustomization) in feature.kustomize.into_iter().enumerate() {
        let field = format!("kustomize[{i}]");
        if kustomization.name.is_empty() {
            step.results.push(origin.diagnostic(Severity::Error, "a kustomization needs a name".into(), &field));
            continue;
        }
        let name = kustomization.name.clone();
        let Some(mut component_decision) = decide(step, "kustomization", name, &kustomization.when, origin, &field)
        else {
            continue;
        };
        if component_decision.enabled {
            let kustomization = v08_strategy(step, kustomization, |k| &mut k.strategy, origin, &field);
            let kustomization = step.prepare_kustomization(kustomization, origin, &field);
            component_decision.action = merge_kustomization(&mut blueprint.kustomize, kustomization);
        }
        decision.components.push(component_decision);
    }
    decision
}

/// Windsor v0.8.1 special-cases `strategy: replace` only: anything else merges
/// (`blueprint_handler.go` applies a feature's entry with `StrategicMerge` unless it says
/// `replace`). A `remove`, Windsor v0.9's, is merged so, with a warning.
fn v08_strategy<T>(
    step: &mut Step,
    mut entry: T,
    strategy: impl Fn(&mut T) -> &mut Strategy,
    origin: &Declared,
    field: &str,
) -> T {
    let strategy = strategy(&mut entry);
    if *strategy == Strategy::Remove {
        *strategy = Strategy::Merge;
        let message = "strategy remove is Windsor v0.9's: with spec.windsor.version \"0.8\" the entry is merged, as \
                       Windsor v0.8.1 merges every strategy but replace"
            .to_string();
        step.results.push(origin.diagnostic(Severity::Warning, message, &format!("{field}.strategy")));
    }
    entry
}
