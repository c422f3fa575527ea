//! The features step (compat: Windsor features and facets): the base blueprint (`spec.blueprint`
//! and/or a Windsor `Blueprint` item) plus every `Feature` (items and `spec.features`) and
//! `Facet`, composed as the Windsor release `spec.windsor.version` names does it (v0.9.0 by
//! default, in `facets`; v0.8.1: features applied in order of `metadata.name` when their `when`
//! holds, merged by strategy), ordered by dependencies, and emitted as the merged `Blueprint` item
//! and Flux objects (with that release's defaults and checks).
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

pub use report::{ComponentDecision, FeatureDecision, Report};

use crate::diag::{Diagnostic, Kind, Severity};
use crate::doc::{FieldPath, Map, Value};
use crate::expr::to_text;
use crate::krm::{self, annotations as ann, set_annotation};
use crate::package::Files;
use crate::render::{Generated, Render};
use merge::{apply_terraform, merge_kustomization, overlay_blueprint};
use model::{Blueprint, Feature, Kustomization, Strategy};
use read::{parse_blueprint, parse_feature};
use std::cell::RefCell;
use std::collections::HashMap;
use step::{graph_diagnostic, lookup, Declared, Step};

pub fn run(render: &mut Render, files: &dyn Files) -> Report {
    let config_origin = Declared::of_item(&render.config.item).at(FieldPath::root().key("spec"));
    let blueprint_items: Vec<&Value> =
        render.items.iter().filter(|item| item.type_of() == (model::API_VERSION, "Blueprint")).map(|i| &**i).collect();
    let feature_items: Vec<&Value> =
        render.items.iter().filter(|item| item.type_of() == (model::API_VERSION, "Feature")).map(|i| &**i).collect();
    let facet_items: Vec<&Value> =
        render.items.iter().filter(|item| item.type_of() == (model::API_VERSION, "Facet")).map(|i| &**i).collect();
    let spec = &render.config.spec;
    let v09 = spec.windsor.version.unwrap_or_default() == crate::config::WindsorVersion::V09;
    if blueprint_items.is_empty()
        && spec.blueprint.is_empty()
        && feature_items.is_empty()
        && facet_items.is_empty()
        && spec.features.is_empty()
        && render.scoped_features.is_empty()
    {
        return Report::default();
    }
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
        facets: v09,
        scope: None,
        templates: RefCell::new(HashMap::new()),
        terraform_outputs: spec.windsor.terraform_outputs.as_ref(),
        environment: render.environment.clone(),
        source: spec.windsor.source.clone().filter(|_| v09),
        known,
        allow_unknown: spec.allow_unknown,
    };
    step.results.append(&mut schema_results);

    // The base: the Blueprint item, then spec.blueprint merged over it.
    let mut base: Option<(Blueprint, Declared)> = None;
    if let [first, second, ..] = blueprint_items.as_slice() {
        let place = |item: &Value| format!("{:?} ({})", krm::name_of(item), Declared::of_item(item).describe());
        let message = format!(
            "more than one Windsor Blueprint item: {} and {}; keep one base blueprint and express the rest as features",
            place(first),
            place(second)
        );
        step.results.push(Diagnostic::error(Kind::Render, message).about(second));
    }
    if let Some(item) = blueprint_items.first() {
        let origin = Declared::of_item(item);
        base = parse_blueprint(&mut step, item, &origin).map(|b| (b, origin));
        // The item is the source's own blueprint, stamped before the operator's overlay.
        if let (Some(source), Some((blueprint, _))) = (step.source.as_deref(), base.as_mut()) {
            stamp_source(blueprint, source);
        }
    }
    // With v0.9, spec.blueprint over a Blueprint item is the context's own blueprint
    // (`contexts/<context>/blueprint.yaml`): its components are merged after the facets, as
    // `applyUserBlueprint` merges the user's layer over the composed sources.
    let mut user_layer: Option<Blueprint> = None;
    if !spec.blueprint.is_empty() {
        let origin = config_origin.at(config_origin.origin.field.clone().key("blueprint"));
        if let Some(mut inline) = parse_blueprint(&mut step, &Value::Object(spec.blueprint.clone()), &origin) {
            base = Some(match base {
                None => (inline, origin),
                Some((mut blueprint, item_origin)) => {
                    if v09 {
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
                    overlay_blueprint(&mut blueprint, inline, v09);
                    (blueprint, item_origin)
                }
            });
        }
    }
    let (mut blueprint, _) = base.unwrap_or_else(|| (Blueprint::default(), config_origin.clone()));
    // A blueprint without a name takes the functionConfig's (Windsor names it after the context).
    if blueprint.metadata.name.is_empty() {
        blueprint.metadata.name = render.config.name.clone();
    }
    check_package_source(&mut step, &blueprint, spec.windsor.source.as_deref(), v09, &config_origin);
    let dev_repository = v09.then(|| dev_repository(step.values, spec)).flatten();
    if v09 {
        normalize_oci_refs(&mut blueprint);
    }

    // Features, items and inline alike, in order of metadata.name.
    let mut features: Vec<(Feature, Declared)> = Vec::new();
    for item in &feature_items {
        let origin = Declared::of_item(item);
        if let Some(feature) = parse_feature(&mut step, item, &origin) {
            features.push((feature, origin));
        }
    }
    for (i, inline) in spec.features.iter().enumerate() {
        let origin = config_origin.at(config_origin.origin.field.clone().key("features").index(i));
        if let Some(feature) = parse_feature(&mut step, inline, &origin) {
            features.push((feature, origin));
        }
    }
    for (inline, env, implementation) in &render.scoped_features {
        let field = FieldPath::root().key("spec").key("features").index(features.len());
        let origin = Declared { origin: implementation.at(field), env: Some(env.clone()) };
        if let Some(feature) = parse_feature(&mut step, inline, &origin) {
            features.push((feature, origin));
        }
    }
    let mut report = Report::default();
    if !v09 {
        // v0.8.1 has no Facet kind; composing one as a Feature would apply it differently.
        for item in &facet_items {
            let message = "a Facet is Windsor v0.9's, and spec.windsor.version is \"0.8\" (Windsor v0.8.1 has no \
                           Facet): set spec.windsor.version to \"0.9\", or write it as a Feature"
                .to_string();
            step.results.push(Diagnostic::error(Kind::Render, message).about(item));
        }
    }
    let mut excluded: Vec<facets::Excluded> = Vec::new();
    if !v09 {
        features.sort_by(|a, b| a.0.metadata.name.cmp(&b.0.metadata.name));
        for (feature, origin) in features {
            v08::warn_facet_only_fields(&mut step, &feature, &origin);
            let decision = v08::apply_feature(&mut step, &mut blueprint, feature, &origin);
            report.features.push(decision);
        }
    } else {
        // Composed as Windsor v0.9 does, Features read as facets (v0.9's loader reads
        // `features/` into the same type, `kind: Feature` renamed to `Facet`).
        for item in &facet_items {
            let origin = Declared::of_item(item);
            if let Some(facet) = parse_feature(&mut step, item, &origin) {
                features.push((facet, origin));
            }
        }
        let facets = features.into_iter().map(|(feature, origin)| facets::Facet::new(feature, origin)).collect();
        let overlay = render.set_values.as_ref().unwrap_or(&render.values);
        let composed = facets::compose(&mut step, &mut blueprint, facets, &config_origin, overlay);
        let stopped;
        (report.features, excluded, stopped) = composed;
        report.facets = true;
        if stopped {
            // Unmet requirements end the composition, as in Windsor: no follow-up findings.
            render.results.append(&mut step.results);
            return report;
        }
        // The user's layer, as `strategicMergeTerraformComponent` and `strategicMergeKustomization`
        // merge it: a terraform component keeps the path and source the facets gave it.
        if let Some(user) = user_layer.take() {
            for component in user.terraform {
                apply_terraform(&mut blueprint.terraform, component, Strategy::Merge);
            }
            for kustomization in user.kustomize {
                merge_kustomization(&mut blueprint.kustomize, kustomization);
            }
        }
    }

    // `Generate`'s `setRepositoryDefaults`: a dev context without a repository gets the dev one.
    if blueprint.repository.as_ref().is_none_or(|r| r.url.is_empty()) {
        if let Some(repository) = dev_repository {
            blueprint.repository = Some(repository);
        }
    }
    let with_values = apply_value_substitutions(&mut blueprint, step.values);
    // Facets' substitutions under `values.substitutions.common` and the derived variables,
    // as Windsor's `applyCommonSubstitutions` layers them.
    let mut common = blueprint.substitutions.clone();
    let flavor = if v09 { flux::Flavor::V09 } else { flux::Flavor::V08 };
    let context = spec.windsor.context.as_deref();
    common.extend(flux::common_values(step.values, context, flavor));
    // The ConfigMaps every Kustomization reads (Windsor's `blueprint.ConfigMaps`): values-common
    // when it has data before empty fragments are dropped; with v0.9 also values-<name> for each
    // kustomization `values.substitutions.<name>` sets (Go map order there; sorted here).
    let mut shared: Vec<(String, Map)> = Vec::new();
    if !common.is_empty() {
        shared.push(("values-common".into(), common));
    }
    if v09 {
        shared.extend(with_values.into_iter().map(|(name, data)| (format!("values-{name}"), data)));
        shared.sort_by(|a, b| a.0.cmp(&b.0));
        shared.dedup_by(|a, b| a.0 == b.0);
        drop_empty_fragments(&mut blueprint, &mut shared);
        // After composing, as `processAndCompose` does: a base `${x ?? ""}` stays "".
        evaluate_terraform_inputs(&mut step, &mut blueprint, &config_origin);
    }
    // Flux systems become their tier Kustomizations next to the plain ones (Windsor's
    // `resolveTierDependencies`, `AllKustomizations`).
    tiers::resolve_tier_dependencies(&mut blueprint);
    // v0.9's composer, in its order: the `crds` layer ahead of every root, then each
    // globalDependency system ahead of everything outside its own closure.
    let mut crd_layers = Vec::new();
    if v09 {
        barriers::finalize_crd_layers(&mut blueprint);
        crd_layers = barriers::crd_layers(&blueprint);
        reserved_names(&mut step, &blueprint, &config_origin);
        validate_sources(&mut step, &blueprint, &config_origin);
        barriers::crd_layer_barrier(&mut blueprint, &crd_layers);
        barriers::global_dependency_barrier(&mut blueprint);
    }
    // Windsor v0.9 gives a Flux Kustomization without a path its name (v0.8.1: the prefix alone).
    let v09_paths = step.facets && blueprint.kustomize.iter().any(|k| k.path.is_empty());
    let compiled: std::borrow::Cow<Blueprint> = if blueprint.flux.is_empty() && !v09_paths && crd_layers.is_empty() {
        std::borrow::Cow::Borrowed(&blueprint)
    } else {
        let mut compiled = blueprint.clone();
        // The provisioner's `withCrdLayer`: the CRD layer first, then every kustomization.
        compiled.kustomize = crd_layers.iter().cloned().chain(tiers::all_kustomizations(&blueprint)).collect();
        if step.facets {
            for k in compiled.kustomize.iter_mut().filter(|k| k.path.is_empty()) {
                k.path = k.name.clone();
            }
        }
        std::borrow::Cow::Owned(compiled)
    };
    if v09 {
        missing_dependencies(&mut step, &blueprint, &compiled.kustomize, &excluded, &config_origin);
    }
    match order::check(&compiled.kustomize) {
        // v0.9 refuses them (above); v0.8.1 applies them, and Flux waits for what never comes.
        Ok(_) if v09 => {}
        Ok(unknown) => {
            for (name, dependency) in unknown {
                let message = format!("kustomization {name:?} depends on {dependency:?}, which is not defined");
                step.results.push(graph_diagnostic(&config_origin, Severity::Warning, message));
            }
        }
        Err(cycle) => {
            let message = format!("dependency cycle detected in kustomizations: {}", cycle.join(" -> "));
            step.results.push(graph_diagnostic(&config_origin, Severity::Error, message));
        }
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
    // v0.9 applies its objects in the values' `gitops.namespace` (`fluxNamespace`), unless the
    // RenderBlueprint says otherwise; v0.8.1 always in `system-gitops`.
    if v09 && settings.namespace.is_none() {
        settings.namespace = lookup(step.values, "gitops.namespace").and_then(Value::as_str).map(str::to_string);
    }
    // v0.9's `Install` applies the repository, the sources and the shared ConfigMaps whether or
    // not there is a kustomization; v0.8.1's output is the kustomizations'.
    let any = !compiled.kustomize.is_empty() || (v09 && (!shared.is_empty() || has_sources(&blueprint)));
    if settings.enabled.unwrap_or(true) && any {
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
        // v0.9's `ownershipLabels`, stamped by `ApplyBlueprint`, when the render knows the context.
        let labels = context.filter(|_| v09).map(|name| {
            let id = step.values.get("id").map(crate::expr::go_format).unwrap_or_default();
            let mut labels = Map::new();
            labels.insert("windsorcli.dev/context".into(), Value::from(name));
            labels.insert("windsorcli.dev/context-id".into(), Value::from(id));
            labels
        });
        let objects = flux::objects(&compiled, &settings, &shared, labels.as_ref(), flavor, &exists);
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

/// Windsor v0.9's dev repository (`resolveRepositoryDefaults`): in dev mode, without a repository,
/// `http://git.<dns.domain, else test>/git/<project folder>` on branch `main` with the secret
/// `flux-system`. Only when `spec.windsor.project` names the folder.
fn dev_repository(values: &Value, spec: &crate::config::Spec) -> Option<model::Source> {
    let project = spec.windsor.project.as_deref().filter(|p| !p.is_empty() && *p != ".")?;
    if lookup(values, "dev") != Some(&Value::Bool(true)) {
        return None;
    }
    let domain = match lookup(values, "dns.domain") {
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

/// `values.substitutions.<name>` overrides what features set for kustomization `<name>`; returns
/// what it set (as text) for each kustomization it set something for.
fn apply_value_substitutions(blueprint: &mut Blueprint, values: &Value) -> Vec<(String, Map)> {
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
fn stamp_source(blueprint: &mut Blueprint, source: &str) {
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

/// `spec.windsor.source` names a `sources` entry Windsor would load the package from: one with
/// an `oci://` URL (Windsor's `loadSources` loads no other kind) that installs (`orderSources`
/// composes in only installing sources; here leaving the package out would render nothing of it).
fn check_package_source(step: &mut Step, blueprint: &Blueprint, source: Option<&str>, v09: bool, config: &Declared) {
    let Some(name) = source else { return };
    let field = "windsor.source";
    let message = if !v09 {
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
    excluded: &[facets::Excluded],
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
