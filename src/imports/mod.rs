//! The imports step (compat: Gardener Landscaper): declared imports validated
//! against JSON Schema, defaults and conditional imports, import executions that add bindings or
//! stop the render, deploy executions that produce resources, export executions, and
//! subinstallations (written out or templated by subinstallation executions) wired by `dataRef`
//! and rendered in dependency order, a blueprint of another component with that component's
//! descriptor.
//!
//! The blueprint comes from a Landscaper `Blueprint` item and/or the same fields inline in the
//! functionConfig. Import values are `values.<name>`. Error texts follow Landscaper
//! (apis/core/validation/blueprint.go, pkg/landscaper/installations/imports/constructor.go).
//!
//! This file holds the step's entry points ([`run`], [`render_implementations`]); the types the
//! parts share (the step's state, where a blueprint was declared, the report) are in `step`; the
//! parts are `validation` (declarations, and import values against their schemas), `executions`
//! (import, deploy and export executions), `subinstallations` (with the render of one scope,
//! which renders its subinstallations and is rendered by them) and `exports`.

mod executions;
mod exports;
pub mod files;
pub mod gotemplate;
mod mappings;
pub use crate::model::imports as model;
pub mod schema;
mod step;
mod subinstallations;
mod validation;

use crate::config::parse_section;
use crate::diag::{Diagnostic, Kind};
use crate::doc::{FieldPath, Map, Value};
use crate::krm::{self, type_of};
use crate::package::Files;
use crate::render::{Generated, Render};
use model::Blueprint;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use step::{Declared, Step, Wire};
pub use step::{ImportReport, Report, ScopeReport};
use subinstallations::{referenced_files, render_blueprint};
use validation::validate;

pub fn run(render: &mut Render, files: &dyn Files) -> Report {
    let spec = &render.config.spec;
    let mut results = Vec::new();
    let candidates: Vec<&Value> =
        render.items.iter().filter(|i| i.type_of() == (model::API_VERSION, "Blueprint")).map(|i| &**i).collect();
    // A blueprint that another blueprint's subinstallation names by file is that
    // subinstallation's, not a second top level.
    let (descriptors, cd_file, descriptor_files) = load_descriptors(render, files, &mut results);
    let components = subinstallations::Components {
        cd: &descriptors.cd,
        cd_file: cd_file.as_deref(),
        list: &descriptors.list,
        files: &descriptor_files,
    };
    let mut parsed = subinstallations::Parsed::new();
    // What each item references, itself left out: a blueprint that names itself (a cycle,
    // reported when it renders) is not another's.
    let mut referenced: HashSet<String> = HashSet::new();
    for item in &candidates {
        let own = krm::item_location(item).0;
        let found = referenced_files(item, files, components, &mut parsed);
        referenced.extend(found.into_iter().filter(|path| Some(path) != own.as_ref()));
    }
    // A blueprint of a component that the blueprint's own references (spec.componentDescriptors)
    // is reached through `cd://componentReferences/…`, a subinstallation execution's too: it is
    // never the top level.
    if !descriptors.cd.is_null() {
        referenced.extend(subinstallations::component_blueprints(components));
    }
    let items: Vec<&Value> = candidates
        .iter()
        .copied()
        .filter(|item| krm::item_location(item).0.is_none_or(|path| !referenced.contains(&path)))
        .collect();
    let mut blueprint = Blueprint::default();
    let mut origin = Declared::in_item(&render.config.item, FieldPath::root().key("spec"));
    let mut name = render.config.name.clone();
    if let [first, second, ..] = items.as_slice() {
        // A blueprint.yaml as Landscaper writes it has no name: its file tells it apart.
        let shown = |item: &Value| match (krm::name_of(item), krm::item_location(item).0) {
            ("", Some(path)) => path,
            (name, _) => format!("{name:?}"),
        };
        let message = format!(
            "more than one Landscaper Blueprint item ({} and {}): render one blueprint (the top-level one's \
             directory) and wire others as subinstallations (a blueprint that a subinstallation execution names \
             through a template action is known only when it renders)",
            shown(first),
            shown(second)
        );
        results.push(Diagnostic::error(Kind::Render, message).about(second));
    }
    if let Some(item) = items.first() {
        origin = Declared::in_item(item, FieldPath::root());
        // A blueprint.yaml as Landscaper writes it has no name: the RenderBlueprint's then.
        if !krm::name_of(item).is_empty() {
            name = krm::name_of(item).to_string();
        }
        match parse_section::<Blueprint>(item) {
            Ok(parsed) => blueprint = parsed,
            Err((field, message)) => results.push(origin.error(message, &field.to_string())),
        }
    }
    let inline = Blueprint {
        json_schema_version: spec.json_schema_version.clone(),
        local_types: spec.local_types.clone(),
        imports: spec.imports.clone(),
        exports: spec.exports.clone(),
        import_executions: spec.import_executions.clone(),
        deploy_executions: spec.deploy_executions.clone(),
        export_executions: spec.export_executions.clone(),
        subinstallations: spec.subinstallations.clone(),
        ..Default::default()
    };
    blueprint.extend(inline);
    // Blueprint items that are all another's (each other's, or referenced components') leave
    // nothing on top: say so rather than render nothing.
    if items.is_empty() && blueprint.is_empty() {
        if let Some(first) = candidates.first() {
            let paths: Vec<String> = candidates.iter().filter_map(|i| krm::item_location(i).0).collect();
            let message = format!(
                "no top-level Landscaper blueprint: every Blueprint item ({}) is the blueprint of a subinstallation \
                 or of a component the descriptor references; render the top-level blueprint's directory, or \
                 give the top-level blueprint's fields in spec",
                paths.join(", ")
            );
            results.push(Diagnostic::error(Kind::Render, message).about(first));
        }
    }
    if !results.is_empty() || blueprint.is_empty() {
        render.results.extend(results);
        return Report::default();
    }
    // Items as compact JSON, parsed again only when a template asks for one: the lookup must be
    // shareable across threads, and whole values would multiply the render's memory.
    let index: Arc<HashMap<(String, String, String), String>> = Arc::new(
        render
            .items
            .iter()
            .map(|i| {
                let h = i.header();
                let key = (type_of(h).1.to_string(), krm::name_of(h).to_string(), krm::namespace_of(h).to_string());
                (key, i.with_value(|v| serde_json::to_string(v).unwrap_or_default()))
            })
            .collect(),
    );
    let resources = Arc::new(move |kind: &str, name: &str, namespace: Option<&str>| {
        let text = index
            .get(&(kind.to_string(), name.to_string(), namespace.unwrap_or_default().to_string()))
            .or_else(|| {
                namespace
                    .is_none()
                    .then(|| index.iter().find(|((k, n, _), _)| k == kind && n == name).map(|(_, v)| v))
                    .flatten()
            })?;
        crate::doc::from_own_json(text).ok()
    });
    let mut step = Step::new(
        files,
        &render.values,
        &render.config_values,
        render.backends.clone(),
        resources,
        render.budget.clone(),
        descriptors,
    );
    step.results = results;
    step.descriptor_file = cd_file;
    step.descriptor_files = descriptor_files;
    step.deploy_item_exports = spec.deploy_item_exports.clone();
    step.config = Some(crate::diag::Origin::of(&render.config.item));
    let no_values = Map::new();
    let source = render.values.as_object().unwrap_or(&no_values);
    // Values from a Secret are secret imports too, down every wiring (unlabelled: `explain`
    // names the values layer itself).
    let mut wiring: HashMap<String, Wire> = HashMap::new();
    let sources = &render.value_sources;
    for (path, layer) in &sources.paths {
        let (Some((key, inside)), Some(layer)) = (path.split_first(), sources.layers.get(*layer)) else { continue };
        let wire = wiring.entry(key.clone()).or_default();
        if layer.secret {
            wire.secret.push(inside.to_vec());
        }
        if !wire.from.contains(&layer.label) {
            wire.from.push(layer.label.clone());
        }
    }
    render_blueprint(&mut step, &blueprint, &name, &origin, (source, &wiring), 0);
    // The top-level scope is pushed last (children finish first); its imports are values.
    if let Some(top) = step.report.scopes.last().filter(|scope| scope.name == name) {
        let secret = top.imports.iter().filter(|i| i.value.is_some()).flat_map(|import| {
            import.secret.iter().map(|path| std::iter::once(import.name.clone()).chain(path.iter().cloned()).collect())
        });
        step.report.secret_values = secret.collect();
    }
    // Scopes finish children first; list them parent first (`a` before `a/child`).
    step.report.scopes.sort_by(|a, b| a.name.cmp(&b.name));
    render.results.append(&mut step.results);
    render.generated.append(&mut step.generated);
    step.report
}

/// Renders what the implementations chosen by policy produce: `resources` with `${…}`
/// evaluated in the implementation's scope, deploy executions with `implementation` in the
/// binding, and features handed to the features step with that scope.
pub fn render_implementations(render: &mut Render, files: &dyn Files) {
    if render.implementations.is_empty() {
        return;
    }
    let chosen = std::mem::take(&mut render.implementations);
    let no_resources = Arc::new(|_: &str, _: &str, _: Option<&str>| None);
    // The descriptors' problems are reported by `run`.
    let (descriptors, _, _) = load_descriptors(render, files, &mut Vec::new());
    let mut step = Step::new(
        files,
        &render.values,
        &render.config_values,
        render.backends.clone(),
        no_resources,
        render.budget.clone(),
        descriptors,
    );
    let mut scoped_features = Vec::new();
    for implementation in &chosen {
        let mut env = render.values.clone();
        if let Value::Object(map) = &mut env {
            map.insert("implementation".into(), implementation.scope.clone());
        }
        let origin = Declared::at(implementation.origin.at(FieldPath::root().key("spec")));
        for (i, resource) in implementation.spec.resources.iter().enumerate() {
            match crate::expr::interpolate::interpolate_value(resource, &env, &crate::expr::NoFiles, &render.budget) {
                Ok(item) if item.is_object() && !type_of(&item).1.is_empty() => {
                    step.generated.push(Generated { item, substitute: true })
                }
                Ok(_) => step
                    .results
                    .push(origin.error("a resource needs apiVersion, kind and metadata", &format!("resources[{i}]"))),
                Err(err) => step.results.push(origin.error(err.to_string(), &format!("resources[{i}]"))),
            }
        }
        step.implementation = Some(implementation.scope.clone());
        let blueprint =
            Blueprint { deploy_executions: implementation.spec.deploy_executions.clone(), ..Default::default() };
        let errors_before = step.results.len();
        validate(&mut step, &blueprint, &origin);
        if step.results.len() == errors_before {
            executions::deploy(&mut step, &blueprint, &implementation.interface, &origin, &Map::new());
        }
        for feature in &implementation.spec.features {
            scoped_features.push((feature.clone(), env.clone(), implementation.origin.clone()));
        }
    }
    render.results.append(&mut step.results);
    render.generated.append(&mut step.generated);
    render.scoped_features = scoped_features;
    render.implementations = chosen;
}

/// The component descriptors of the config, each given inline or as `{file: path}` (a
/// descriptor as OCM writes it, YAML or JSON, the path relative to the RenderBlueprint's file),
/// and the file local resources' `input.path`s resolve from: the descriptor's own file, else the
/// RenderBlueprint's; and the file of each referenced descriptor, alongside them.
fn load_descriptors(
    render: &Render,
    files: &dyn Files,
    results: &mut Vec<Diagnostic>,
) -> (gotemplate::Descriptors, Option<String>, Vec<Option<String>>) {
    let spec = &render.config.spec;
    let origin = Declared::in_item(&render.config.item, FieldPath::root().key("spec"));
    let config_file = origin.file.clone();
    let mut load = |value: &Value, field: &str| -> Option<(Value, Option<String>)> {
        let path = match value.as_object() {
            Some(map) if map.len() == 1 => map.get("file").and_then(Value::as_str),
            _ => None,
        };
        let Some(path) = path else { return Some((value.clone(), config_file.clone())) };
        let read = crate::package::resolve(config_file.as_deref(), path).and_then(|resolved| {
            let text = files.read(&resolved).map_err(|err| format!("cannot read {resolved:?}: {err}"))?;
            let mut documents = crate::doc::read_yaml_documents(&text)
                .map_err(|err| format!("{resolved:?} is not valid YAML: {}", err.message))?;
            match documents.len() {
                1 if documents[0].is_object() => Ok((documents.remove(0), Some(resolved))),
                _ => {
                    Err(format!("{resolved:?} must hold one component descriptor (a mapping with meta and component)"))
                }
            }
        });
        match read {
            Ok(loaded) => Some(loaded),
            Err(message) => {
                results.push(origin.error(message, &format!("{field}.file")));
                None
            }
        }
    };
    let (cd, cd_file) = match spec.component_descriptor.is_empty() {
        true => (Map::new(), config_file.clone()),
        false => match load(&Value::Object(spec.component_descriptor.clone()), "componentDescriptor") {
            Some((Value::Object(cd), file)) => (cd, file),
            _ => (Map::new(), config_file.clone()),
        },
    };
    let (list, list_files): (Vec<Value>, Vec<Option<String>>) = spec
        .component_descriptors
        .iter()
        .enumerate()
        .filter_map(|(i, value)| load(value, &format!("componentDescriptors[{i}]")))
        .unzip();
    (gotemplate::descriptors(&cd, &list), cd_file, list_files)
}
