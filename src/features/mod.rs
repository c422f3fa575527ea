//! The features step (compat: Windsor features and facets): the base blueprint (`spec.blueprint`
//! and/or a Windsor `Blueprint` item) plus every `Feature` (items and `spec.features`) and
//! `Facet`, composed as the Windsor release `spec.windsor.version` names does it (v0.9.0 by
//! default, in `v09` and `facets`; v0.8.1 in `v08`: features applied in order of `metadata.name`
//! when their `when` holds, merged by strategy), ordered by dependencies, and emitted as the
//! merged `Blueprint` item and Flux objects (with that release's defaults and checks).
//!
//! The release is one value, a [`WindsorVersion`] read once here. Both compositions share their
//! parts, which take it as data: reading declarations (`read`), evaluating them (`step`), the
//! merges (`merge`), the Flux tiers (`tiers`) and the Flux output (`flux`); each hands a
//! `report::Composed` to the checks and the output below `run`.
//!
//! It reads the values tree and files (through [`Files`]); it does not touch other items.

mod barriers;
mod config;
mod facets;
mod flux;
mod known;
mod merge;
pub mod model;
mod order;
mod read;
mod report;
mod step;
mod tiers;
mod v08;
mod v09;

pub use report::{ComponentDecision, FeatureDecision, Report};

use crate::config::WindsorVersion;
use crate::diag::{Diagnostic, Kind, Severity};
use crate::doc::{FieldPath, Map, Value};
use crate::krm::{self, annotations as ann, set_annotation};
use crate::package::Files;
use crate::render::{Generated, Render};
use merge::overlay_blueprint;
use model::{Blueprint, Feature};
use read::{parse_blueprint, parse_feature};
use report::Composed;
use std::cell::RefCell;
use std::collections::HashMap;
use step::{graph_diagnostic, Declared, Step};

pub fn run(render: &mut Render, files: &dyn Files) -> Report {
    // Composing only the features of Implementations policy chose: the values step could not
    // know, so Windsor's layers are applied now, before the features read the values.
    if !render.scoped_features.is_empty() {
        crate::values::apply_windsor_layers(render, files);
    }
    let config_origin = Declared::of_item(&render.config.item).at(FieldPath::root().key("spec"));
    let of_kind = |kind: &str| -> Vec<&Value> {
        render.items.iter().filter(|item| item.type_of() == (model::API_VERSION, kind)).map(|i| &**i).collect()
    };
    let (blueprint_items, feature_items, facet_items) = (of_kind("Blueprint"), of_kind("Feature"), of_kind("Facet"));
    let spec = &render.config.spec;
    if blueprint_items.is_empty()
        && spec.blueprint.is_empty()
        && feature_items.is_empty()
        && facet_items.is_empty()
        && spec.features.is_empty()
        && render.scoped_features.is_empty()
    {
        return Report::default();
    }
    let version = spec.windsor.version.unwrap_or_default();
    let mut known = known::Known::default();
    let mut schema_results = Vec::new();
    // The values step read the schema and applied its defaults; here it names the known paths.
    match render.windsor_schema.take() {
        Some(Ok(schema)) => known.add_schema(&schema),
        Some(Err(message)) => schema_results.push(Diagnostic::error(Kind::Values, message).about(&render.config.item)),
        None => {}
    }
    for item in feature_items.iter().chain(&facet_items).chain(&blueprint_items) {
        known.add_defaulted(item);
    }
    for feature in &spec.features {
        known.add_defaulted(feature);
    }
    for value in spec.blueprint.values() {
        known.add_defaulted(value);
    }
    let mut step = Step {
        files,
        values: &render.values,
        budget: render.budget.clone(),
        jsonnet_cache: RefCell::new(HashMap::new()),
        jsonnet: crate::jsonnet::Session::new(render.budget.clone(), render.jsonnet.clone()),
        results: Vec::new(),
        version,
        scope: None,
        templates: RefCell::new(HashMap::new()),
        terraform_outputs: spec.windsor.terraform_outputs.as_ref(),
        environment: render.environment.clone(),
        // v0.8.1 loads no source's package (`check_package_source` says so).
        source: spec.windsor.source.clone().filter(|_| version == WindsorVersion::V09),
        known,
        allow_unknown: spec.allow_unknown,
    };
    step.results.append(&mut schema_results);

    let (mut blueprint, user_layer) = base_blueprint(&mut step, &blueprint_items, spec, &config_origin);
    // A blueprint without a name takes the functionConfig's (Windsor names it after the context).
    if blueprint.metadata.name.is_empty() {
        blueprint.metadata.name = render.config.name.clone();
    }
    check_package_source(&mut step, &blueprint, spec.windsor.source.as_deref(), &config_origin);
    let features = read_features(&mut step, &feature_items, spec, &render.scoped_features, &config_origin);
    let mut report = Report { version: Some(version), ..Report::default() };
    let context = spec.windsor.context.as_deref();
    let composed = match version {
        WindsorVersion::V08 => {
            let (composed, decisions) =
                v08::compose(&mut step, blueprint, features, &facet_items, context, &config_origin);
            report.features = decisions;
            Some(composed)
        }
        WindsorVersion::V09 => {
            let overlay = render.set_values.as_ref().unwrap_or(&render.values);
            let (composed, decisions) =
                v09::compose(&mut step, blueprint, user_layer, features, &facet_items, overlay, spec, &config_origin);
            report.features = decisions;
            composed
        }
    };
    let Some(Composed { blueprint, compiled, shared, crd_layers, namespace, labels, sources_alone }) = composed else {
        render.results.append(&mut step.results);
        return report;
    };
    let compiled = compiled.as_ref().unwrap_or(&blueprint);
    if let Err(cycle) = order::check(&compiled.kustomize) {
        let message = format!("dependency cycle detected in kustomizations: {}", cycle.join(" -> "));
        step.results.push(graph_diagnostic(&config_origin, Severity::Error, message));
    }
    // Windsor checks terraform dependsOn for cycles only; an unknown path is left to Terraform.
    if let Err(cycle) = order::check(&blueprint.terraform) {
        let message = format!("dependency cycle detected in terraform components: {}", cycle.join(" -> "));
        step.results.push(graph_diagnostic(&config_origin, Severity::Error, message));
    }

    let has_item_base = !blueprint_items.is_empty();
    let merged = merged_blueprint_item(&blueprint, has_item_base);
    render.generated.push(Generated { item: merged, substitute: false });
    let mut settings = render.config.spec.flux.clone();
    settings.namespace = settings.namespace.or(namespace);
    if settings.enabled.unwrap_or(true) && (!compiled.kustomize.is_empty() || sources_alone) {
        // A source object the package already holds is its author's: not generated again.
        let exists = |kind: &str, name: &str, namespace: &str| {
            render.items.iter().any(|item| {
                let (api_version, item_kind) = item.type_of();
                api_version.starts_with("source.toolkit.fluxcd.io/")
                    && item_kind == kind
                    && krm::name_of(item.header()) == name
                    && krm::namespace_of(item.header()) == namespace
            })
        };
        let objects = flux::objects(compiled, &settings, &shared, labels.as_ref(), version, &exists);
        if settings.sources.unwrap_or(true) {
            for message in dangling_source_refs(&objects, &compiled.metadata.name, &exists) {
                step.results.push(graph_diagnostic(&config_origin, Severity::Warning, message));
            }
        }
        render.generated.extend(objects.into_iter().map(|item| Generated { item, substitute: false }));
    }
    render.results.append(&mut step.results);
    report.flux_tiers = blueprint.flux.iter().flat_map(tiers::compile_tiers).collect();
    report.crd_layers = crd_layers;
    report.blueprint = Some(blueprint);
    report
}

/// The base: the Blueprint item, then `spec.blueprint` merged over it. With v0.9, `spec.blueprint`
/// over a Blueprint item is the context's own blueprint (`contexts/<context>/blueprint.yaml`):
/// its components are returned apart, to be merged after the facets, as `applyUserBlueprint`
/// merges the user's layer over the composed sources.
fn base_blueprint(
    step: &mut Step,
    blueprint_items: &[&Value],
    spec: &crate::config::Spec,
    config_origin: &Declared,
) -> (Blueprint, Option<Blueprint>) {
    let mut base: Option<Blueprint> = None;
    if let [first, second, ..] = blueprint_items {
        let place = |item: &Value| format!("{:?} ({})", krm::name_of(item), Declared::of_item(item).describe());
        let message = format!(
            "more than one Windsor Blueprint item: {} and {}; keep one base blueprint and express the rest as features",
            place(first),
            place(second)
        );
        step.results.push(Diagnostic::error(Kind::Render, message).about(second));
    }
    if let Some(item) = blueprint_items.first() {
        base = parse_blueprint(step, item, &Declared::of_item(item));
        // The item is the source's own blueprint, stamped before the operator's overlay.
        if let (Some(source), Some(blueprint)) = (step.source.as_deref(), base.as_mut()) {
            v09::stamp_source(blueprint, source);
        }
    }
    let mut user_layer: Option<Blueprint> = None;
    if !spec.blueprint.is_empty() {
        let origin = config_origin.at(config_origin.origin.field.clone().key("blueprint"));
        if let Some(mut inline) = parse_blueprint(step, &Value::Object(spec.blueprint.clone()), &origin) {
            base = Some(match base {
                None => inline,
                Some(mut blueprint) => {
                    if step.version == WindsorVersion::V09 {
                        let components = Blueprint {
                            terraform: std::mem::take(&mut inline.terraform),
                            kustomize: std::mem::take(&mut inline.kustomize),
                            ..Blueprint::default()
                        };
                        user_layer = Some(components);
                        // A user blueprint without a repository URL leaves the composed one empty.
                        if inline.repository.as_ref().is_none_or(|r| r.url.is_empty()) {
                            blueprint.repository = None;
                        }
                    }
                    overlay_blueprint(&mut blueprint, inline, step.version);
                    blueprint
                }
            });
        }
    }
    (base.unwrap_or_default(), user_layer)
}

/// Every Feature: the items, `spec.features`, then those of the implementations policy chose
/// (each seeing its implementation's values).
fn read_features(
    step: &mut Step,
    feature_items: &[&Value],
    spec: &crate::config::Spec,
    scoped: &[(Value, Value, crate::diag::Origin)],
    config_origin: &Declared,
) -> Vec<(Feature, Declared)> {
    let mut features: Vec<(Feature, Declared)> = Vec::new();
    for item in feature_items {
        let origin = Declared::of_item(item);
        if let Some(feature) = parse_feature(step, item, &origin) {
            features.push((feature, origin));
        }
    }
    for (i, inline) in spec.features.iter().enumerate() {
        let origin = config_origin.at(config_origin.origin.field.clone().key("features").index(i));
        if let Some(feature) = parse_feature(step, inline, &origin) {
            features.push((feature, origin));
        }
    }
    for (inline, env, implementation) in scoped {
        let field = FieldPath::root().key("spec").key("features").index(features.len());
        let origin = Declared { origin: implementation.at(field), env: Some(env.clone()) };
        if let Some(feature) = parse_feature(step, inline, &origin) {
            features.push((feature, origin));
        }
    }
    features
}

/// Each Flux Kustomization whose `sourceRef` names a source (its `source`) with no object
/// generated nor in the package: Flux would wait for it forever, and Windsor applies it without a
/// word. The blueprint's own repository (`own`) is left out: without a `repository` it is the
/// project's git remote to Windsor, and to a render the source Flux already reads it from.
fn dangling_source_refs(objects: &[Value], own: &str, exists: &dyn Fn(&str, &str, &str) -> bool) -> Vec<String> {
    let generated = |kind: &str, name: &str, namespace: &str| {
        objects
            .iter()
            .any(|o| krm::type_of(o).1 == kind && krm::name_of(o) == name && krm::namespace_of(o) == namespace)
    };
    let mut messages = Vec::new();
    for object in objects.iter().filter(|o| krm::type_of(o).1 == "Kustomization") {
        let Some(reference) = object.get("spec").and_then(|s| s.get("sourceRef")) else { continue };
        let field = |key: &str| reference.get(key).and_then(Value::as_str).unwrap_or_default();
        let (kind, name) = (field("kind"), field("name"));
        let namespace = match field("namespace") {
            "" => krm::namespace_of(object),
            own => own,
        };
        if name.is_empty() || name == own || generated(kind, name, namespace) || exists(kind, name, namespace) {
            continue;
        }
        messages.push(format!(
            "Kustomization {:?} reads its source from {kind} {name:?}, which is not in the output: add a \
             source named {name:?} with a url to the blueprint's sources, or set spec.flux.sources: false \
             when the cluster has that source already",
            krm::name_of(object)
        ));
    }
    messages
}

/// `spec.windsor.source` names a `sources` entry Windsor would load the package from: one with
/// an `oci://` URL (Windsor's `loadSources` loads no other kind) that installs (`orderSources`
/// composes in only installing sources; here leaving the package out would render nothing of it).
fn check_package_source(step: &mut Step, blueprint: &Blueprint, source: Option<&str>, config: &Declared) {
    let Some(name) = source else { return };
    let field = "windsor.source";
    let message = if step.version == WindsorVersion::V08 {
        Some(
            "follows Windsor v0.9's loader, and spec.windsor.version is \"0.8\": set the version to \"0.9\", or \
             remove source"
                .to_string(),
        )
    } else {
        match blueprint.sources.iter().find(|s| s.name == name) {
            None => Some(format!(
                "{name:?} is not listed in the blueprint's sources: add {{name: {name}, url: oci://<registry>/<repository>:<tag>}} \
                 to spec.blueprint.sources, as the operator's blueprint lists it for Windsor"
            )),
            Some(entry) if !entry.url.starts_with("oci://") => Some(format!(
                "source {name:?} has url {:?}, not an OCI artifact: Windsor loads a source's blueprint and facets only \
                 from an oci:// URL",
                entry.url
            )),
            Some(entry) if !entry.installs() => Some(format!(
                "source {name:?} does not install (install is not true): Windsor would leave the package's blueprint \
                 out of the composition; remove install or set it to true"
            )),
            Some(_) => None,
        }
    };
    if let Some(message) = message {
        step.results.push(config.diagnostic(Severity::Error, message, field));
    }
}

/// The merged blueprint as a Windsor `Blueprint` item, local-config. It keeps the base's name,
/// unless the base is an item in the package: then `<name>-merged`, since a generated item may
/// not take the identity of an input item (kustomize would see two resources with one id).
fn merged_blueprint_item(blueprint: &Blueprint, has_item_base: bool) -> Value {
    let mut merged = blueprint.clone();
    merged.api_version = model::API_VERSION.into();
    merged.kind = "Blueprint".into();
    if has_item_base {
        merged.metadata.name = format!("{}-merged", merged.metadata.name);
    }
    merged.metadata.extra = Map::new();
    let mut item = serde_json::to_value(&merged).unwrap_or(Value::Null);
    set_annotation(&mut item, ann::LOCAL_CONFIG, "true");
    item
}

#[cfg(test)]
mod tests;
