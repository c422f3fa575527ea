//! Reading a Blueprint or Feature declaration: its fields checked (unknown ones named with the
//! closest known), a Blueprint's entries prepared and merged as Windsor merges a base.

use super::merge::{merge_kustomization, merge_terraform};
use super::model::{self, Blueprint, Feature, Strategy};
use super::step::{Declared, Step};
use crate::config::WindsorVersion::V09;
use crate::diag::Severity;
use crate::doc::{Map, Value};

pub(super) fn parse_blueprint(step: &mut Step, value: &Value, origin: &Declared) -> Option<Blueprint> {
    let blueprint: Blueprint = match crate::config::parse_section(value) {
        Ok(b) => b,
        Err((field, message)) => {
            step.results.push(origin.diagnostic(Severity::Error, message, &field.to_string()));
            return None;
        }
    };
    let mut found =
        model::unknown_fields(&blueprint.extra, model::BLUEPRINT_FIELDS, &blueprint.terraform, &blueprint.kustomize);
    flux_system_fields(&blueprint.flux, &mut found);
    step.warn_unknown_fields(origin, found);
    // Windsor merges a base blueprint into an empty one entry by entry, so a base's lists get
    // the same dependency sort (and same-key merging) as a feature's entries.
    let mut blueprint = blueprint;
    // A Blueprint's entries have no `when` or `strategy` in Windsor (it ignores them there); say
    // so, since a user who wrote one expects it to act.
    let mut feature_only = |field: String, when: &str, strategy: Strategy| {
        for (name, set) in [("when", !when.is_empty()), ("strategy", strategy != Strategy::Merge)] {
            if set {
                let message = format!(
                    "{name:?} has no effect on a Blueprint's entry (Windsor ignores it there): the entry is always \
                     included and merged; move it into a Feature to make it conditional or to replace"
                );
                step.results.push(origin.diagnostic(Severity::Warning, message, &format!("{field}.{name}")));
            }
        }
    };
    for (i, component) in blueprint.terraform.iter().enumerate() {
        feature_only(format!("terraform[{i}]"), &component.when, component.strategy);
    }
    for (i, kustomization) in blueprint.kustomize.iter().enumerate() {
        feature_only(format!("kustomize[{i}]"), &kustomization.when, kustomization.strategy);
    }
    for (i, mut component) in std::mem::take(&mut blueprint.terraform).into_iter().enumerate() {
        // v0.9 evaluates the base's inputs once composed, against the config too
        // (`processAndCompose`); see `evaluate_terraform_inputs`.
        let raw = if step.version == V09 { std::mem::take(&mut component.inputs) } else { Map::new() };
        let mut component = step.prepare_terraform(component, origin, &format!("terraform[{i}]"));
        if step.version == V09 {
            component.inputs = raw;
        }
        (component.when, component.strategy) = (String::new(), Strategy::Merge);
        merge_terraform(&mut blueprint.terraform, component);
    }
    for (i, kustomization) in std::mem::take(&mut blueprint.kustomize).into_iter().enumerate() {
        let mut kustomization = step.prepare_kustomization(kustomization, origin, &format!("kustomize[{i}]"));
        (kustomization.when, kustomization.strategy) = (String::new(), Strategy::Merge);
        merge_kustomization(&mut blueprint.kustomize, kustomization);
    }
    Some(blueprint)
}

pub(super) fn parse_feature(step: &mut Step, value: &Value, origin: &Declared) -> Option<Feature> {
    let feature: Feature = match crate::config::parse_section(value) {
        Ok(f) => f,
        Err((field, message)) => {
            step.results.push(origin.diagnostic(Severity::Error, message, &field.to_string()));
            return None;
        }
    };
    if feature.metadata.name.is_empty() {
        step.results.push(origin.diagnostic(Severity::Error, "metadata.name is required".into(), "metadata.name"));
        return None;
    }
    let mut found =
        model::unknown_fields(&feature.extra, model::FEATURE_FIELDS, &feature.terraform, &feature.kustomize);
    flux_system_fields(&feature.flux, &mut found);
    for (i, block) in feature.config.iter().enumerate() {
        for key in block.extra.keys() {
            found.push((format!("config[{i}]"), key.clone(), model::closest(key, model::CONFIG_BLOCK_FIELDS)));
        }
    }
    step.warn_unknown_fields(origin, found);
    Some(feature)
}

/// Unknown fields of Flux systems, their Secrets and their tiers, for the warning.
pub(super) fn flux_system_fields(
    systems: &[model::FluxSystem],
    found: &mut Vec<(String, String, Option<&'static str>)>,
) {
    for (i, system) in systems.iter().enumerate() {
        let field = format!("flux[{i}]");
        for key in system.extra.keys() {
            found.push((field.clone(), key.clone(), model::closest(key, model::FLUX_SYSTEM_FIELDS)));
        }
        for (name, secret) in &system.secrets {
            for key in secret.extra.keys() {
                found.push((format!("{field}.secrets.{name}"), key.clone(), model::closest(key, model::SECRET_FIELDS)));
            }
        }
        let tiers = system.install.iter().map(|k| (format!("{field}.install"), k));
        let variants = system.resources.iter().enumerate().map(|(j, k)| (format!("{field}.resources[{j}]"), k));
        for (path, tier) in tiers.chain(variants) {
            for key in tier.extra.keys() {
                found.push((path.clone(), key.clone(), model::closest(key, model::KUSTOMIZATION_FIELDS)));
            }
        }
    }
}
