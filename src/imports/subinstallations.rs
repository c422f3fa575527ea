//! Subinstallations are where a blueprint stops being one scope: children written out or
//! templated by subinstallation executions, read from files that may include each other or from
//! the components the descriptors reference, wired to the parent's imports and to their
//! siblings' exports (through data mappings too), ordered by those wires and rendered recursively. The limits on that recursion (depth, count, file
//! cycles) live here with it.

use super::executions::{self, execute, Phase};
use super::files::{BlueprintFs, BLUEPRINT_FILE};
use super::step::{Declared, ScopeReport, Step, Wire};
use super::validation::{resolve_imports, validate};
use super::{exports, files, gotemplate, schema};
use crate::config::parse_section;
use crate::diag::Diagnostic;
use crate::doc::{read_yaml_documents, FieldPath, Map, Value};
use crate::krm;
use crate::model::imports::{import_type, Blueprint, ImportDecl, InstallationTemplate, TargetRef};
use crate::package::Files;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Subinstallations nest at most this deep (file references could otherwise loop).
const MAX_DEPTH: usize = 16;

/// Installations one render expands to at most: files that each include the next several times
/// multiply without a cycle (2 per level over 16 levels is 65 536).
const MAX_INSTALLATIONS: usize = 1000;

/// The files the search for the top-level blueprint reads, each read and parsed once (`None`:
/// not one YAML document): it starts from every Blueprint item, and 1 000 blueprint files that
/// chain by `blueprint.file` were each read again from every item above them.
pub(super) type Parsed = HashMap<String, Result<Option<Value>, crate::package::FileError>>;

fn parsed<'a>(
    files: &dyn Files,
    cache: &'a mut Parsed,
    path: &str,
) -> &'a Result<Option<Value>, crate::package::FileError> {
    cache.entry(path.to_string()).or_insert_with(|| files.read(path).map(|text| single_document(&text).ok()))
}

/// A blueprint waiting to be searched for the files it references: its value, its file, its
/// filesystem and the descriptors as it sees them.
type Pending<'a> = (Value, Option<String>, BlueprintFs, Components<'a>);

/// Files a blueprint item's subinstallations read (`file:` templates, `blueprint.file` and the
/// `blueprint.yaml` a `blueprint.ref` names in the component descriptors, a subinstallation
/// execution's literal `cd://…` references included), following nested references, each
/// through its blueprint's filesystem.
pub(super) fn referenced_files(
    item: &Value,
    files: &dyn Files,
    components: Components,
    cache: &mut Parsed,
) -> HashSet<String> {
    let mut found = HashSet::new();
    let from = krm::item_location(item).0;
    let mut pending: Vec<Pending> =
        vec![(item.clone(), from.clone(), BlueprintFs::of_file(from.as_deref()), components)];
    while let Some((blueprint, from, fs, components)) = pending.pop() {
        if found.len() > 256 {
            break;
        }
        let entries = blueprint.get("subinstallations").and_then(Value::as_array).cloned().unwrap_or_default();
        for entry in entries {
            let mut template = entry.clone();
            let mut template_from = from.clone();
            if let Some(path) = entry.get("file").and_then(Value::as_str) {
                let Ok(resolved) = fs.resolve(from.as_deref(), path) else { continue };
                if !found.insert(resolved.clone()) {
                    continue;
                }
                let Some(document) = parsed(files, cache, &resolved).as_ref().ok().cloned().flatten() else {
                    continue;
                };
                template = document;
                template_from = Some(resolved);
            }
            match template.get("blueprint") {
                Some(Value::Object(inline)) if inline.contains_key("file") => {
                    let path = inline.get("file").and_then(Value::as_str).unwrap_or_default();
                    let Ok(mut resolved) = fs.resolve_blueprint(template_from.as_deref(), path) else { continue };
                    let directory = Err(crate::package::FileError::NotRegular { directory: true });
                    if *parsed(files, cache, &resolved) == directory {
                        resolved = format!("{resolved}/{BLUEPRINT_FILE}");
                    }
                    if found.insert(resolved.clone()) {
                        if let Some(document) = parsed(files, cache, &resolved).as_ref().ok().cloned().flatten() {
                            let child = fs.at_file(&resolved);
                            pending.push((document, Some(resolved), child, components));
                        }
                    }
                }
                Some(Value::Object(inline)) if inline.contains_key("ref") => {
                    let reference = inline.get("ref").and_then(Value::as_str).unwrap_or_default();
                    follow_ref(reference, components, files, cache, &mut found, &mut pending);
                }
                Some(Value::Object(inline)) if inline.contains_key("filesystem") || inline.contains_key("inline") => {}
                Some(inline @ Value::Object(_)) => {
                    pending.push((inline.clone(), template_from, fs.clone(), components))
                }
                _ => {}
            }
        }
        // A subinstallation execution's blueprints are known when it renders; the references it
        // writes as literal text (as the public blueprints do) name them ahead.
        let executions = blueprint.get("subinstallationExecutions").and_then(Value::as_array).cloned();
        for execution in executions.unwrap_or_default() {
            let text = match (execution.get("template"), execution.get("file").and_then(Value::as_str)) {
                (Some(Value::String(text)), _) => text.clone(),
                (None, Some(path)) => {
                    match fs.resolve(from.as_deref(), path).ok().and_then(|p| fs.read(files, &p).ok()) {
                        Some(text) => text,
                        None => continue,
                    }
                }
                _ => continue,
            };
            for reference in literal_refs(&text) {
                follow_ref(reference, components, files, cache, &mut found, &mut pending);
            }
        }
    }
    found
}

/// Adds the blueprint `reference` names to `found`, and to `pending` to be searched in turn.
fn follow_ref<'a>(
    reference: &str,
    components: Components<'a>,
    files: &dyn Files,
    cache: &mut Parsed,
    found: &mut HashSet<String>,
    pending: &mut Vec<Pending<'a>>,
) {
    let Ok(Referenced { dir, component }) = referenced_blueprint(components, reference) else { return };
    let resolved = format!("{dir}/{BLUEPRINT_FILE}");
    if found.insert(resolved.clone()) {
        if let Some(document) = parsed(files, cache, &resolved).as_ref().ok().cloned().flatten() {
            let components = component.map_or(components, |i| components.of(i));
            pending.push((document, Some(resolved), BlueprintFs::package(&dir), components));
        }
    }
}

/// The `cd://…` references written out in a template's text; one that a template action
/// completes (`cd://resources/{{ .name }}`) is not.
fn literal_refs(text: &str) -> Vec<&str> {
    let is_part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '.' | '-');
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("cd://") {
        let tail = &rest[start..];
        let end = tail[5..].find(|c: char| !is_part(c)).map_or(tail.len(), |e| e + 5);
        if !tail[end..].starts_with('{') {
            out.push(&tail[..end]);
        }
        rest = &tail[end..];
    }
    out
}

/// An installation template to load, with where it is: the field it is reported at (a templated
/// one is not in the blueprint: its execution's field), its name in messages and the field of
/// its blueprint.
struct Entry {
    template: Value,
    field: String,
    shown: String,
    blueprint_at: String,
}

/// The installation templates the subinstallation executions produce (Landscaper's
/// TemplateSubinstallationExecutions): each execution renders with the binding of a deploy
/// execution, and its `subinstallations` list is appended in order.
fn templated(step: &mut Step, blueprint: &Blueprint, scope: &str, origin: &Declared, imports: &Map) -> Vec<Entry> {
    let mut out = Vec::new();
    for (k, execution) in blueprint.subinstallation_executions.iter().enumerate() {
        let field = format!("subinstallationExecutions[{k}]");
        let Some(rendered) = execute(step, execution, scope, &field, origin, Phase::Deploy, imports, None) else {
            continue;
        };
        match rendered.get("subinstallations") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for (j, template) in list.iter().enumerate() {
                    let shown = format!("{field}.subinstallations[{j}]");
                    out.push(Entry {
                        template: template.clone(),
                        field: field.clone(),
                        shown,
                        blueprint_at: field.clone(),
                    });
                }
            }
            Some(_) => {
                let message = format!(
                    "execution {:?}: subinstallations must be a list of installation templates",
                    execution.name
                );
                step.results.push(origin.error(message, &field));
            }
        }
    }
    out
}

/// The blueprints of the components the blueprint's own descriptor does not describe
/// (`spec.componentDescriptors`): each resource with local content, `input: {type: dir, path}`,
/// names a directory whose `blueprint.yaml` is that component's.
pub(super) fn component_blueprints(components: Components) -> Vec<String> {
    let own = (gotemplate::component_name(components.cd), gotemplate::component_version(components.cd));
    let mut found = Vec::new();
    for (i, descriptor) in components.list.iter().enumerate() {
        if (gotemplate::component_name(descriptor), gotemplate::component_version(descriptor)) == own {
            continue;
        }
        let file = components.files.get(i).and_then(Option::as_deref);
        let resources = gotemplate::spec_of(descriptor).and_then(|c| c.get("resources")).and_then(Value::as_array);
        for resource in resources.into_iter().flatten() {
            let input = resource.get("input");
            if input.and_then(|i| i.get("type")).and_then(Value::as_str) != Some("dir") {
                continue;
            }
            if let Some(Ok(dir)) =
                input.and_then(|i| i.get("path")).and_then(Value::as_str).map(|p| crate::package::resolve(file, p))
            {
                found.push(format!("{dir}/{BLUEPRINT_FILE}"));
            }
        }
    }
    found
}

/// `at: message`, or the message alone when it concerns the whole value.
fn located(at: &FieldPath, message: &str) -> String {
    if at.is_root() {
        message.to_string()
    } else {
        format!("{at}: {message}")
    }
}

/// Whether `name` is an optional import of the parent or nested under one (Landscaper's
/// isOptionalParentImport): wiring to it may be removed when it is not satisfied.
fn is_optional_parent_import(name: &str, decls: &[ImportDecl], conditional: bool) -> bool {
    decls.iter().any(|decl| {
        (decl.name == name && (conditional || !decl.is_required()))
            || is_optional_parent_import(name, &decl.imports, true)
    })
}

/// Renders the subinstallations in dependency order; returns the data objects of this scope
/// (sibling exports by dataRef), or `None` when ordering failed.
pub(super) fn render(
    step: &mut Step,
    blueprint: &Blueprint,
    scope: &str,
    origin: &Declared,
    imports: &Map,
    depth: usize,
    report: &mut ScopeReport,
) -> Option<Map> {
    let mut dataobjects = Map::new();
    if blueprint.subinstallations.is_empty() && blueprint.subinstallation_executions.is_empty() {
        return Some(dataobjects);
    }
    // Which sibling's export each data object is, for the imports wired to it.
    let mut exported: HashMap<String, Wire> = HashMap::new();
    // The targets the siblings exported so far, by name in this scope.
    let mut target_objects = Map::new();
    if depth >= MAX_DEPTH {
        step.results
            .push(origin.error(format!("subinstallations nest deeper than {MAX_DEPTH} levels"), "subinstallations"));
        return None;
    }
    // The static templates, then those the subinstallation executions produce, as Landscaper's
    // renderer merges them (utils/landscaper/blueprint.go renderSubInstallations).
    let mut entries: Vec<Entry> = blueprint
        .subinstallations
        .iter()
        .enumerate()
        .map(|(i, template)| {
            let field = format!("subinstallations[{i}]");
            let blueprint_at = format!("{field}.blueprint");
            Entry { template: template.clone(), shown: field.clone(), field, blueprint_at }
        })
        .collect();
    entries.extend(templated(step, blueprint, scope, origin, imports));
    let mut children = Vec::new();
    let mut names = HashSet::new();
    for Entry { template, field, shown, blueprint_at } in &entries {
        match load_subinstallation(step, template, origin) {
            Ok(child) if !names.insert(child.name.clone()) => {
                step.results.push(origin.error(
                    format!("subinstallations.{}: Duplicate value: \"duplicated subinstallation\"", child.name),
                    field,
                ));
            }
            Ok(child) => children.push(((field.clone(), blueprint_at.clone()), child)),
            Err(LoadError::FileCycle(cycle)) if !step.cycles.insert(cycle.clone()) => {}
            Err(err) => {
                // Landscaper writes a field of the template after a dot: `subinstallations[2].name`.
                let text = match &err {
                    LoadError::Field { at, message } if *at == FieldPath::root().key("name") => {
                        format!("{shown}.name: {message}")
                    }
                    err => format!("{shown}: {err}"),
                };
                step.results.push(origin.error(text, field));
            }
        }
    }
    // Landscaper's checks of the installation templates (validation/blueprint.go): DNS-label
    // names, and data and target exports neither exported twice nor imported by the parent.
    let parent_data = parent_imports(&blueprint.imports, imports, &["data"]);
    let parent_targets = parent_imports(&blueprint.imports, imports, &["target", "targetList", "targetMap"]);
    let errors_before = step.results.len();
    let mut exporters: HashMap<&str, (&str, String)> = HashMap::new();
    let mut target_paths: HashMap<&str, String> = HashMap::new();
    for ((field, _), child) in &children {
        let path = format!("subinstallations.{}", child.name);
        for problem in installation_name_problems(&child.name) {
            let message = format!("{path}.name: Invalid value: {:?}: {problem}", child.name);
            step.results.push(origin.error(message, &inside(field, "name")));
        }
        for (j, (export, data_ref)) in child.exports.iter().enumerate() {
            let data_path = format!("{path}.exports.data[{j}][{export}/{data_ref}]");
            let at = inside(field, &format!("exports.data[{j}]"));
            match exporters.get(data_ref.as_str()) {
                Some((_, first)) => {
                    let message =
                        format!("{data_path}: Forbidden: data export '{data_ref}' is already exported by {first}");
                    step.results.push(origin.error(message, &at));
                }
                None => {
                    exporters.insert(data_ref, (&child.name, data_path.clone()));
                }
            }
            if parent_data.contains(data_ref.as_str()) {
                step.results
                    .push(origin.error(format!("{data_path}: Forbidden: export is imported by its parent"), &at));
            }
        }
        for (j, (export, target)) in child.target_exports.iter().enumerate() {
            let target_path = format!("{path}.exports.targets[{j}][{export}/{target}]");
            let at = inside(field, &format!("exports.targets[{j}]"));
            match target_paths.get(target.as_str()) {
                Some(first) => {
                    let message =
                        format!("{target_path}: Forbidden: target export '{target}' is already exported by {first}");
                    step.results.push(origin.error(message, &at));
                }
                None => {
                    target_paths.insert(target, target_path.clone());
                }
            }
            if parent_targets.contains(target.as_str()) {
                step.results
                    .push(origin.error(format!("{target_path}: Forbidden: export is imported by its parent"), &at));
            }
        }
    }
    if step.results.len() > errors_before {
        return None;
    }
    // Who exports each data object, and so who waits for whom.
    let exporters: HashMap<&str, &str> = exporters.into_iter().map(|(data_ref, (name, _))| (data_ref, name)).collect();
    // Targets are wired like data: a sibling's target export is waited for.
    let target_exporters: HashMap<&str, &str> = children
        .iter()
        .flat_map(|(_, child)| child.target_exports.iter().map(|(_, target)| (target.as_str(), child.name.as_str())))
        .collect();
    let depends: Vec<Vec<String>> = children
        .iter()
        .map(|(_, child)| {
            let mut deps: Vec<String> = child
                .imports
                .iter()
                .filter_map(|(_, data_ref)| exporters.get(data_ref.as_str()).map(|s| s.to_string()))
                .chain(
                    child
                        .targets
                        .iter()
                        .flat_map(target_names)
                        .filter_map(|t| target_exporters.get(element_of(t).0).map(|s| s.to_string())),
                )
                .filter(|d| d != &child.name)
                .collect();
            deps.sort();
            deps.dedup();
            deps
        })
        .collect();
    let order = match order_siblings(&children.iter().map(|(_, c)| c.name.clone()).collect::<Vec<_>>(), &depends) {
        Ok(order) => order,
        Err(cycle) => {
            let message = format!("the subinstallations have a cycle: {}", cycle.join(" -{depends_on}-> "));
            step.results.push(origin.error(message, "subinstallations"));
            return None;
        }
    };
    for position in order {
        let ((field, blueprint_at), child) = &children[position];
        report.subinstallations.push((child.name.clone(), depends[position].clone()));
        let mut source = Map::new();
        let mut wiring = HashMap::new();
        let mut wired = true;
        for (j, (import, data_ref)) in child.imports.iter().enumerate() {
            if let Some(value) = imports.get(data_ref) {
                source.insert(import.clone(), value.clone());
                let parent = report.imports.iter().rev().find(|i| &i.name == data_ref);
                let secret = parent.map(|p| p.secret.clone()).unwrap_or_default();
                wiring.insert(
                    import.clone(),
                    Wire { label: format!("import {data_ref} of {scope}"), secret, from: Vec::new() },
                );
            } else if let Some(value) = dataobjects.get(data_ref) {
                source.insert(import.clone(), value.clone());
                wiring.insert(import.clone(), exported.get(data_ref).cloned().unwrap_or_default());
            } else if exporters.contains_key(data_ref.as_str()) {
                // The exporting sibling failed; its error is already reported.
                wired = false;
            } else if is_optional_parent_import(data_ref, &blueprint.imports, false) {
                // Landscaper's conditional imports: wiring to an unsatisfied optional or conditional parent import
                // is removed; the child still fails if its own blueprint requires the import.
                continue;
            } else {
                // Landscaper's path names the subinstallation (`subinstallations.<name>`).
                let message = format!(
                    "subinstallations.{}.imports.data[{j}][{import}]: Not found: \"import not satisfied\" \
                     ({data_ref:?} is not an import of the parent nor an export of a sibling)",
                    child.name
                );
                step.results.push(origin.error(message, &inside(field, &format!("imports.data[{j}]"))));
                wired = false;
            }
        }
        for (j, target) in child.targets.iter().enumerate() {
            let path = format!("subinstallations.{}.imports.targets[{j}]", child.name);
            let at = inside(field, &format!("imports.targets[{j}]"));
            match wire_target(target, blueprint, imports, &target_objects, &target_exporters) {
                Ok(Some((value, label))) => {
                    source.insert(target.name.clone(), value);
                    // A target built from a secret parent import is secret as a whole.
                    let mut names: Vec<&str> = target_names(target).into_iter().map(|t| element_of(t).0).collect();
                    names.extend(target.target_list_ref.as_deref());
                    names.extend(target.target_map_ref.as_deref());
                    let secret =
                        report.imports.iter().any(|i| names.contains(&i.name.as_str()) && !i.secret.is_empty());
                    let secret = if secret { vec![Vec::new()] } else { Vec::new() };
                    wiring.insert(
                        target.name.clone(),
                        Wire { label: format!("{label} of {scope}"), secret, from: Vec::new() },
                    );
                }
                Ok(None) => {}
                Err(TargetProblem::SiblingFailed) => wired = false,
                Err(TargetProblem::Invalid(message)) => {
                    step.results.push(origin.error(format!("{path}{message}"), &at));
                    wired = false;
                }
            }
        }
        // importDataMappings replace the child's data imports they name, computed from what the
        // template imports (Landscaper's Construct: mapping first, then the data object).
        if wired && !child.mappings.is_empty() {
            match super::mappings::evaluate(&child.mappings, &source, super::mappings::Names::Imports, &step.budget) {
                Ok(mapped) => {
                    let secret = wiring.values().any(|w: &Wire| !w.secret.is_empty());
                    for (key, value) in mapped {
                        let decl = find_decl(&child.blueprint.imports, &key);
                        if decl.is_none_or(|d| import_type(d) != "data") {
                            continue;
                        }
                        let secret = if secret { vec![Vec::new()] } else { Vec::new() };
                        let label = format!("importDataMappings.{key} of subinstallation {} of {scope}", child.name);
                        wiring.insert(key.clone(), Wire { label, secret, from: Vec::new() });
                        source.insert(key, value);
                    }
                }
                Err((at, message)) => {
                    let path = format!("subinstallations.{}.importDataMappings.{at}", child.name);
                    let key = mapping_key(&child.mappings, &at);
                    step.results.push(origin.error(
                        format!("{path}: unable to template import mapping: {message}"),
                        &inside(field, &format!("importDataMappings.{key}")),
                    ));
                    wired = false;
                }
            }
        }
        if !wired {
            continue;
        }
        step.installations += 1;
        if step.installations > MAX_INSTALLATIONS {
            if step.installations == MAX_INSTALLATIONS + 1 {
                let message = format!(
                    "the subinstallations expand to more than {MAX_INSTALLATIONS} installations: a file is \
                     included many times over (each level multiplies); include it once and wire its exports"
                );
                step.results.push(origin.error(message, field));
            }
            return None;
        }
        let mut chain = origin.chain.clone();
        chain.extend(child.files.iter().cloned());
        let child_origin = Declared {
            origin: origin.origin.at(origin.origin.field.clone().join(&FieldPath::parse(blueprint_at))),
            file: child.file.clone(),
            fs: child.fs.clone(),
            prefix: format!("{}subinstallation {:?}: ", origin.prefix, child.name),
            chain,
        };
        let child_scope = format!("{scope}/{}", child.name);
        // A blueprint of another component renders with that component as its own.
        let parent_component = child.component.map(|index| step.enter_component(index));
        let rendered =
            render_blueprint(step, &child.blueprint, &child_scope, &child_origin, (&source, &wiring), depth + 1);
        if let Some(parent) = parent_component {
            step.leave_component(parent);
        }
        if let Some(mut exports) = rendered {
            let declared_secret = |export: &str| -> Vec<Vec<String>> {
                let declared = child.blueprint.exports.iter().find(|e| e.name == export);
                let schema = declared.and_then(|e| e.schema.as_ref());
                schema.map(|s| schema::secret_paths(s, &child.blueprint.local_types)).unwrap_or_default()
            };
            // exportDataMappings add (or replace) exports computed from the child's exports before
            // they are wired (Landscaper's exports Constructor: templateDataMappings).
            let mut mapped_keys = HashSet::new();
            if !child.export_mappings.is_empty() {
                let mut names = exports.clone();
                names.insert("exports".into(), Value::Object(exports.clone()));
                let names_what = super::mappings::Names::Exports;
                match super::mappings::evaluate(&child.export_mappings, &names, names_what, &step.budget) {
                    Ok(mapped) => {
                        for (key, value) in mapped {
                            mapped_keys.insert(key.clone());
                            exports.insert(key, value);
                        }
                    }
                    Err((at, message)) => {
                        let path = format!("subinstallations.{}.exportDataMappings.{at}", child.name);
                        let key = mapping_key(&child.export_mappings, &at);
                        step.results.push(origin.error(
                            format!("{path}: unable to template export mapping: {message}"),
                            &inside(field, &format!("exportDataMappings.{key}")),
                        ));
                        continue;
                    }
                }
            }
            let any_secret = child.blueprint.exports.iter().any(|e| !declared_secret(&e.name).is_empty());
            // Landscaper's exports Constructor: an `exports` entry naming nothing the installation
            // exports is an error (exports/constructor.go "data export is not defined").
            let undefined = |what: &str, list: &str, j: usize, export: &str| {
                let message = format!(
                    "subinstallations.{}.exports.{list}.{export}: {what} export is not defined (its blueprint \
                     declares no export {export:?} and no exportDataMappings key makes it)",
                    child.name
                );
                origin.error(message, &inside(field, &format!("exports.{list}[{j}]")))
            };
            for (j, (export, _)) in child.exports.iter().enumerate() {
                if !exports.contains_key(export) {
                    step.results.push(undefined("data", "data", j, export));
                }
            }
            for (j, (export, _)) in child.target_exports.iter().enumerate() {
                if !exports.contains_key(export) {
                    step.results.push(undefined("target", "targets", j, export));
                }
            }
            for (export, data_ref) in &child.exports {
                if let Some(value) = exports.get(export) {
                    dataobjects.insert(data_ref.clone(), value.clone());
                    let (label, secret) = if mapped_keys.contains(export) {
                        // Built from any of the child's exports: secret when one of them is.
                        let secret = if any_secret { vec![Vec::new()] } else { Vec::new() };
                        (format!("exportDataMappings.{export} of {child_scope}"), secret)
                    } else {
                        (format!("export {export} of {child_scope}"), declared_secret(export))
                    };
                    exported.insert(data_ref.clone(), Wire { label, secret, from: Vec::new() });
                }
            }
            // An exported target spec becomes a Target named after it, as Landscaper's
            // simulator converts it (installation_simulator.go convertTargetSpecToTarget).
            for (export, target) in &child.target_exports {
                if let Some(spec) = exports.get(export) {
                    let object = serde_json::json!({"metadata": {"name": target}, "spec": spec});
                    target_objects.insert(target.clone(), object);
                }
            }
        }
    }
    Some(dataobjects)
}

/// The key of `mappings` that the place `at` (`key.field[0]`) is inside of.
fn mapping_key<'m>(mappings: &'m Map, at: &'m str) -> &'m str {
    let within =
        |k: &&String| at.strip_prefix(k.as_str()).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']));
    mappings.keys().find(within).map_or(at, String::as_str)
}

/// The field `rest` of the installation template at `field`; a template that an execution
/// produced is not in the blueprint, which has the execution's field alone.
fn inside(field: &str, rest: &str) -> String {
    if field.starts_with("subinstallationExecutions") {
        field.to_string()
    } else {
        format!("{field}.{rest}")
    }
}

/// Why a child's target import cannot be wired.
enum TargetProblem {
    /// The sibling exporting the target failed; its error is already reported.
    SiblingFailed,
    /// Landscaper's message after the import's path.
    Invalid(String),
}

/// The target names a target import refers to (its `target`, `targets` and `targetMap`).
fn target_names(target: &TargetRef) -> Vec<&str> {
    let mut names: Vec<&str> = target.target.iter().map(String::as_str).collect();
    names.extend(target.targets.iter().flatten().map(String::as_str));
    names.extend(target.target_map.iter().flat_map(|m| m.values()).map(String::as_str));
    names
}

/// `name[index]` as Landscaper's IsIndexed splits it: the import and the list index or map
/// key, or the name alone.
fn element_of(name: &str) -> (&str, Option<&str>) {
    match name.strip_suffix(']').and_then(|rest| rest.rsplit_once('[')) {
        Some((base, index)) => (base, Some(index)),
        None => (name, None),
    }
}

/// What a child's target import is wired to, as Landscaper resolves an installation
/// template's TargetImport (installations/operation.go, utils/landscaper/installation_simulator.go):
/// `target` one target of the parent's scope (a parent import, `list[i]` or `map[key]` of one,
/// or a sibling's export), `targets` a list and `targetMap` a map of them, `targetListRef` and
/// `targetMapRef` a parent's targetList or targetMap import whole. `Ok(None)` when it names a
/// parent import that is declared but not satisfied: the wiring is dropped and the child
/// fails only if it requires the import.
fn wire_target(
    target: &TargetRef,
    blueprint: &Blueprint,
    imports: &Map,
    siblings: &Map,
    exporters: &HashMap<&str, &str>,
) -> Result<Option<(Value, String)>, TargetProblem> {
    const FIELDS: &str = "Target, Targets, TargetMap, TargetMapReference, TargetListReference";
    let set: Vec<&str> = [
        ("Target", target.target.is_some()),
        ("Targets", target.targets.is_some()),
        ("TargetMap", target.target_map.is_some()),
        ("TargetMapReference", target.target_map_ref.is_some()),
        ("TargetListReference", target.target_list_ref.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, is_set)| is_set.then_some(name))
    .collect();
    let invalid = |message: String| Err(TargetProblem::Invalid(message));
    match set.as_slice() {
        [] => return invalid(format!(": Required value: exactly one of [{FIELDS}] must be set (currently set: none)")),
        [_] => {}
        _ => {
            let message = format!(
                ": Invalid value: {:?}: exactly one of [{FIELDS}] must be set (currently set: [{}])",
                target.name,
                set.join(", ")
            );
            return invalid(message);
        }
    }
    let name = &target.name;
    let declared = |import: &str, kinds: &[&str]| {
        find_decl(&blueprint.imports, import).is_some_and(|decl| kinds.contains(&import_type(decl)))
    };
    // One target of the parent's scope, by name; `Ok(None)`: declared by the parent, not given.
    let one = |reference: &str, at: &str| -> Result<Option<Value>, TargetProblem> {
        if let Some(value) = siblings.get(reference) {
            return Ok(Some(value.clone()));
        }
        if exporters.contains_key(reference) {
            return Err(TargetProblem::SiblingFailed);
        }
        let (base, index) = element_of(reference);
        let kinds: &[&str] = if index.is_some() { &["targetList", "targetMap"] } else { &["target"] };
        if declared(base, kinds) {
            let value = imports.get(base);
            return match (value, index) {
                (None, _) => Ok(None),
                (Some(value), None) => Ok(Some(value.clone())),
                (Some(Value::Array(list)), Some(index)) => {
                    match index.parse::<usize>().ok().and_then(|i| list.get(i)) {
                        Some(element) => Ok(Some(element.clone())),
                        None => Err(TargetProblem::Invalid(format!(
                        "[{name}]{at}: Not found: {reference:?}: the targetList import {base:?} has no element {index}"
                    ))),
                    }
                }
                (Some(Value::Object(map)), Some(key)) => match map.get(key) {
                    Some(element) => Ok(Some(element.clone())),
                    None => Err(TargetProblem::Invalid(format!(
                        "[{name}]{at}: Not found: {reference:?}: the targetMap import {base:?} has no key {key:?}"
                    ))),
                },
                (Some(_), Some(_)) => Ok(None),
            };
        }
        Err(TargetProblem::Invalid(format!(
            "[{name}]{at}: Not found: \"import not satisfied\" ({reference:?} is not a target import of the parent \
             nor a target export of a sibling)"
        )))
    };
    let whole = |reference: &str, kind: &str| -> Result<Option<Value>, TargetProblem> {
        if declared(reference, &[kind]) {
            return Ok(imports.get(reference).cloned());
        }
        Err(TargetProblem::Invalid(format!(
            "[{name}]: Not found: \"import not satisfied\" ({reference:?} is not a {kind} import of the parent)"
        )))
    };
    let (value, label) = if let Some(reference) = &target.target {
        (one(reference, "")?, format!("target {reference}"))
    } else if let Some(references) = &target.targets {
        let mut list = Vec::new();
        for (k, reference) in references.iter().enumerate() {
            match one(reference, &format!(".targets[{k}]"))? {
                Some(value) => list.push(value),
                None => return Ok(None),
            }
        }
        (Some(Value::Array(list)), format!("targets {}", references.join(", ")))
    } else if let Some(references) = &target.target_map {
        let mut map = Map::new();
        for (key, reference) in references {
            match one(reference, &format!(".targets[{key}]"))? {
                Some(value) => map.insert(key.clone(), value),
                None => return Ok(None),
            };
        }
        (Some(Value::Object(map)), "targetMap".to_string())
    } else if let Some(reference) = &target.target_list_ref {
        (whole(reference, "targetList")?, format!("targetList {reference}"))
    } else if let Some(reference) = &target.target_map_ref {
        (whole(reference, "targetMap")?, format!("targetMap {reference}"))
    } else {
        (None, String::new())
    };
    Ok(value.map(|value| (value, label)))
}

/// The parent's declaration of import `name`, conditional imports included.
fn find_decl<'d>(decls: &'d [ImportDecl], name: &str) -> Option<&'d ImportDecl> {
    decls.iter().find_map(|decl| if decl.name == name { Some(decl) } else { find_decl(&decl.imports, name) })
}

/// The parent's imports of the given types that a subinstallation may not export, as Landscaper
/// lists them (subinstallations/helper.go buildCoreImports): every import of those types, and
/// those among conditional imports whose parent import is satisfied.
fn parent_imports<'d>(decls: &'d [ImportDecl], imports: &Map, types: &[&str]) -> HashSet<&'d str> {
    let mut names = HashSet::new();
    for decl in decls {
        if types.contains(&import_type(decl)) {
            names.insert(decl.name.as_str());
        }
        if imports.contains_key(&decl.name) {
            names.extend(parent_imports(&decl.imports, imports, types));
        }
    }
    names
}

/// Longest subinstallation name: Landscaper prefixes installation names with `Inst.` within a
/// DNS label's 63 characters and adds a `-` and 5 characters when it creates them.
const MAX_INSTALLATION_NAME: usize = 63 - 5 - 5 - 1;

/// Why a subinstallation name is not a DNS-1123 label short enough for Landscaper, in the
/// texts of Kubernetes' validation (IsDNS1123Label, MaxLenError).
fn installation_name_problems(name: &str) -> Vec<String> {
    const LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    let mut problems = Vec::new();
    if name.len() > 63 {
        problems.push("must be no more than 63 characters".to_string());
    }
    let is_label = |text: &str| {
        let bytes = text.as_bytes();
        let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        bytes.first().is_some_and(alphanumeric)
            && bytes.last().is_some_and(alphanumeric)
            && bytes.iter().all(|b| alphanumeric(b) || *b == b'-')
    };
    if !is_label(name) {
        if name.split('.').all(is_label) {
            problems.push("must not contain dots".to_string());
        } else {
            problems.push(format!(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must \
                 start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for \
                 validation is '{LABEL}')"
            ));
        }
    }
    if name.len() > MAX_INSTALLATION_NAME {
        problems.push(format!("must be no more than {MAX_INSTALLATION_NAME} characters"));
    }
    problems
}

/// Kahn's algorithm with name order for ties; `Err` holds a cycle.
fn order_siblings(names: &[String], depends: &[Vec<String>]) -> Result<Vec<usize>, Vec<String>> {
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut waiting: Vec<usize> = depends.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); names.len()];
    for (i, deps) in depends.iter().enumerate() {
        for dep in deps {
            if let Some(&d) = index.get(dep.as_str()) {
                dependents[d].push(i);
            }
        }
    }
    let mut ready: BTreeSet<(&str, usize)> =
        (0..names.len()).filter(|&i| waiting[i] == 0).map(|i| (names[i].as_str(), i)).collect();
    let mut order = Vec::new();
    while let Some((_, next)) = ready.pop_first() {
        order.push(next);
        for &dependent in &dependents[next] {
            waiting[dependent] -= 1;
            if waiting[dependent] == 0 {
                ready.insert((names[dependent].as_str(), dependent));
            }
        }
    }
    if order.len() == names.len() {
        return Ok(order);
    }
    let mut path: Vec<usize> = Vec::new();
    let mut current = (0..names.len()).filter(|&i| waiting[i] > 0).min_by_key(|&i| &names[i]);
    while let Some(at) = current {
        if let Some(start) = path.iter().position(|&p| p == at) {
            let mut cycle: Vec<String> = path[start..].iter().map(|&i| names[i].clone()).collect();
            cycle.push(names[at].clone());
            return Err(cycle);
        }
        path.push(at);
        current = depends[at]
            .iter()
            .filter_map(|d| index.get(d.as_str()).copied())
            .filter(|&d| waiting[d] > 0)
            .min_by_key(|&d| &names[d]);
    }
    Err(Vec::new())
}

/// A subinstallation template with its blueprint loaded.
struct Child {
    name: String,
    blueprint: Blueprint,
    /// Import name in the child → data object in the parent's scope.
    imports: Vec<(String, String)>,
    /// The child's target imports, as the template wires them.
    targets: Vec<TargetRef>,
    /// Export name in the child → data object in the parent's scope.
    exports: Vec<(String, String)>,
    /// Target export name in the child → target in the parent's scope.
    target_exports: Vec<(String, String)>,
    /// `importDataMappings`: child import → Spiff template over the template's imports.
    mappings: Map,
    /// `exportDataMappings`: export → Spiff template over the child's exports.
    export_mappings: Map,
    /// The component the child's blueprint belongs to when it is another than the parent's
    /// (a `cd://componentReferences/…` reference): its index in `spec.componentDescriptors`.
    component: Option<usize>,
    /// The file the child's relative paths resolve from, and the child's own files.
    file: Option<String>,
    fs: BlueprintFs,
    /// Every file read to load it (template, blueprint), for inclusion cycles.
    files: Vec<String>,
}

/// Why a subinstallation entry could not be loaded; reported about the entry.
enum LoadError {
    /// Subinstallation files that include each other: the files in order, the first repeated
    /// last. Reported once per render, not once per path that reaches the cycle.
    FileCycle(String),
    /// A field of the entry itself, which Landscaper names after the entry with a dot
    /// (`subinstallations[2].name`).
    Field { at: FieldPath, message: String },
    /// Anything else, as it reads.
    Other(String),
}

impl From<String> for LoadError {
    fn from(message: String) -> Self {
        LoadError::Other(message)
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::FileCycle(cycle) => {
                write!(f, "subinstallation files include each other: {cycle}: remove one of these file references")
            }
            LoadError::Field { at, message } => f.write_str(&located(at, message)),
            LoadError::Other(message) => f.write_str(message),
        }
    }
}

/// A subinstallation entry: inline, or `file:` holding an InstallationTemplate (read through
/// the parent blueprint's filesystem, as Landscaper's GetSubinstallations does). Its blueprint
/// is Landscaper's `{filesystem: {blueprint.yaml: …}}` (also as `{inline: {filesystem: …}}`),
/// ours `{file: …}` naming a blueprint file or its directory, or the blueprint's fields inline.
/// A blueprint from a filesystem or a file reads its files from its own directory.
fn load_subinstallation(step: &Step, entry: &Value, origin: &Declared) -> Result<Child, LoadError> {
    let mut files: Vec<String> = Vec::new();
    let mut enter = |resolved: &str| -> Result<(), LoadError> {
        if let Some(start) = origin.chain.iter().chain(files.iter()).position(|f| f == resolved) {
            let mut cycle: Vec<&str> =
                origin.chain.iter().chain(files.iter()).skip(start).map(String::as_str).collect();
            cycle.push(resolved);
            return Err(LoadError::FileCycle(cycle.join(" -> ")));
        }
        files.push(resolved.to_string());
        Ok(())
    };
    let (template, file): (InstallationTemplate, Option<String>) = match entry.get("file").and_then(Value::as_str) {
        Some(path) if entry.as_object().is_some_and(|m| m.len() == 1) => {
            let resolved = origin.fs.resolve(origin.file.as_deref(), path)?;
            let shown = origin.fs.show(step.files, &resolved);
            enter(&format!("{}{shown}", inline_key(&origin.fs)))?;
            let text = origin.fs.read(step.files, &resolved).map_err(|err| format!("cannot read {shown:?}: {err}"))?;
            let document = single_document(&text).map_err(|err| format!("{shown:?}: {err}"))?;
            let template =
                parse_section(&document).map_err(|(at, err)| format!("{shown:?}: {}", located(&at, &err)))?;
            (template, Some(resolved))
        }
        _ => (parse_section(entry).map_err(|(at, message)| LoadError::Field { at, message })?, None),
    };
    if template.name.is_empty() {
        let message = "Required value: name must be defined".to_string();
        return Err(LoadError::Field { at: FieldPath::root().key("name"), message });
    }
    let from = file.clone().or_else(|| origin.file.clone());
    let mut component = None;
    let (blueprint, fs, own_file) = match &template.blueprint {
        None => return Err(format!("subinstallation {:?} has no blueprint", template.name).into()),
        Some(Value::Object(map)) if map.contains_key("ref") => {
            let reference = map.get("ref").and_then(Value::as_str).unwrap_or_default();
            let Referenced { dir, component: of } = referenced_blueprint(step.components(), reference)?;
            component = of;
            let resolved = format!("{dir}/{BLUEPRINT_FILE}");
            enter(&resolved)?;
            let text = step
                .files
                .read(&resolved)
                .map_err(|err| format!("blueprint {reference:?}: cannot read {resolved:?}: {err}"))?;
            let blueprint = parse_section(&single_document(&text).map_err(|err| format!("{resolved:?}: {err}"))?)
                .map_err(|(at, err)| format!("{resolved:?}: {}", located(&at, &err)))?;
            (blueprint, BlueprintFs::package(&dir), Some(resolved))
        }
        Some(Value::Object(map))
            if map.contains_key("filesystem") || map.get("inline").is_some_and(|i| i.get("filesystem").is_some()) =>
        {
            let filesystem = map.get("filesystem").or_else(|| map.get("inline").and_then(|i| i.get("filesystem")));
            let fs =
                BlueprintFs::inline(filesystem.unwrap_or(&Value::Null)).map_err(|err| format!("blueprint.{err}"))?;
            let text = fs
                .read(step.files, BLUEPRINT_FILE)
                .map_err(|_| format!("blueprint.filesystem needs a {BLUEPRINT_FILE} entry"))?;
            let blueprint = parse_section(&single_document(&text)?)
                .map_err(|(at, err)| format!("{BLUEPRINT_FILE}: {}", located(&at, &err)))?;
            (blueprint, fs, Some(BLUEPRINT_FILE.to_string()))
        }
        Some(Value::Object(map)) if map.len() == 1 && map.contains_key("file") => {
            let path = map.get("file").and_then(Value::as_str).unwrap_or_default();
            let mut resolved = origin.fs.resolve_blueprint(from.as_deref(), path)?;
            let mut read = origin.fs.read(step.files, &resolved);
            // A directory holds its blueprint in blueprint.yaml, as a blueprint's filesystem does.
            if read == Err(crate::package::FileError::NotRegular { directory: true }) {
                resolved = format!("{resolved}/{BLUEPRINT_FILE}");
                read = origin.fs.read(step.files, &resolved);
            }
            let shown = origin.fs.show(step.files, &resolved);
            enter(&format!("{}{shown}", inline_key(&origin.fs)))?;
            let text = read.map_err(|err| format!("cannot read {shown:?}: {err}"))?;
            let blueprint = parse_section(&single_document(&text).map_err(|err| format!("{shown:?}: {err}"))?)
                .map_err(|(at, err)| format!("{shown:?}: {}", located(&at, &err)))?;
            (blueprint, origin.fs.at_file(&resolved), Some(resolved))
        }
        Some(value) => {
            let blueprint = parse_section(value)
                .map_err(|(at, err)| located(&FieldPath::root().key("blueprint").join(&at), &err))?;
            // Fields inline in the template: the template's own files, from where it is written.
            (blueprint, origin.fs.clone(), from)
        }
    };
    Ok(Child {
        name: template.name,
        blueprint,
        imports: template.imports.data.into_iter().map(|d| (d.name, d.data_ref)).collect(),
        targets: template.imports.targets,
        exports: template.exports.data.into_iter().map(|d| (d.name, d.data_ref)).collect(),
        target_exports: template.exports.targets.into_iter().map(|t| (t.name, t.target.unwrap_or_default())).collect(),
        mappings: template.import_data_mappings,
        export_mappings: template.export_data_mappings,
        component,
        file: own_file,
        fs,
        files,
    })
}

/// The component descriptors a render knows, with the files they were read from (local
/// resources' `input.path`s resolve from a descriptor's file): the blueprint's own (`cd`) and the
/// referenced ones (`list`, `files` alongside).
#[derive(Clone, Copy)]
pub(super) struct Components<'a> {
    pub cd: &'a Value,
    pub cd_file: Option<&'a str>,
    pub list: &'a [Value],
    pub files: &'a [Option<String>],
}

impl<'a> Components<'a> {
    /// The same descriptors seen from the referenced component at `index` of `list`: a
    /// blueprint of that component resolves its references from there.
    fn of(&self, index: usize) -> Components<'a> {
        let cd = self.list.get(index).unwrap_or(self.cd);
        let cd_file = self.files.get(index).and_then(Option::as_deref);
        Components { cd, cd_file, ..*self }
    }
}

/// What a blueprint reference names: the package directory holding the blueprint, and the
/// component it belongs to when that is another than the referring blueprint's (the index of
/// its descriptor in `spec.componentDescriptors`).
#[derive(Debug, PartialEq)]
pub(super) struct Referenced {
    pub dir: String,
    pub component: Option<usize>,
}

/// The blueprint `cd://[componentReferences/<ref>/…]resources/<name>` names, as Landscaper
/// resolves it in the component descriptor and fetches the resource from the registry
/// (subinstallations/helper.go, cdutils/uri.go): each `componentReferences/<ref>` follows the
/// current component's reference of that name to the descriptor of the component it names
/// (given in `spec.componentDescriptors`), and the resource `<name>` of the last component must
/// carry its content locally, as an OCM component constructor writes it, `input: {type: dir,
/// path: …}`, the path relative to the file declaring that descriptor. A subinstallation whose
/// blueprint is another component's has that component as its own (`.cd`), as in Landscaper.
pub(super) fn referenced_blueprint(components: Components, reference: &str) -> Result<Referenced, String> {
    let fail = |message: String| Err(format!("blueprint reference {reference:?}: {message}"));
    let Some(path) = reference.strip_prefix("cd://") else {
        return fail(
            "only cd://resources/<name> and cd://componentReferences/<ref>/resources/<name>, resources of the \
             component descriptors (spec.componentDescriptor, spec.componentDescriptors), are resolved: inline the \
             blueprint or use file"
                .into(),
        );
    };
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return fail("a path must be defined".into());
    }
    if !parts.len().is_multiple_of(2) {
        return fail("even number of path arguments expected".into());
    }
    let pairs: Vec<(&str, &str)> = parts.chunks(2).map(|pair| (pair[0], pair[1])).collect();
    let mut component = components.cd;
    let mut file = components.cd_file;
    let mut index = None;
    if component.is_null() {
        return fail(
            "no component descriptor defined to resolve the blueprint ref: set spec.componentDescriptor".into(),
        );
    }
    let shown = |cd: &Value| format!("{}:{}", gotemplate::component_name(cd), gotemplate::component_version(cd));
    for (i, (keyword, name)) in pairs.iter().enumerate() {
        let last = i + 1 == pairs.len();
        match *keyword {
            "componentReferences" if !last => {
                let found = gotemplate::references(component)
                    .iter()
                    .find(|r| r.get("name").and_then(Value::as_str) == Some(name));
                let Some(found) = found else {
                    return fail(format!(
                        "unable to resolve blueprint ref in component descriptor {}: component reference {name} \
                         cannot be found",
                        shown(component)
                    ));
                };
                let position = components
                    .list
                    .iter()
                    .position(|d| gotemplate::referenced(std::slice::from_ref(d), found).is_some());
                let Some(position) = position else {
                    let target = found.get("componentName").or_else(|| found.get("component")).and_then(Value::as_str);
                    let version = found.get("version").and_then(Value::as_str).unwrap_or_default();
                    return fail(format!(
                        "component {}:{version} (component reference {name} of {}) cannot be found: add its \
                         descriptor to spec.componentDescriptors",
                        target.unwrap_or_default(),
                        shown(component)
                    ));
                };
                component = &components.list[position];
                file = components.files.get(position).and_then(Option::as_deref);
                index = Some(position);
            }
            "resources" if last => {
                let resources =
                    gotemplate::spec_of(component).and_then(|c| c.get("resources")).and_then(Value::as_array);
                let resource =
                    resources.into_iter().flatten().find(|r| r.get("name").and_then(Value::as_str) == Some(name));
                let Some(resource) = resource else {
                    return fail(format!(
                        "unable to resolve blueprint ref in component descriptor {}: local resource {name} cannot be \
                         found",
                        shown(component)
                    ));
                };
                let input = resource.get("input");
                return match (
                    input.and_then(|i| i.get("type")).and_then(Value::as_str),
                    input.and_then(|i| i.get("path")).and_then(Value::as_str),
                ) {
                    (Some("dir"), Some(path)) => match crate::package::resolve(file, path) {
                        Ok(dir) => Ok(Referenced { dir, component: index }),
                        Err(err) => fail(format!("resource {name:?}: {err}")),
                    },
                    _ => fail(format!(
                        "resource {name:?} of {} has no local content: give it `input: {{type: dir, path: <the \
                         blueprint's directory>}}`, as an OCM component constructor does (a render reads no \
                         component repository)",
                        shown(component)
                    )),
                };
            }
            "componentReferences" | "resources" => {
                return fail(format!(
                    "the selector must name a resource last, after any number of componentReferences/<name>: \
                     {keyword}/{name} is misplaced"
                ))
            }
            other => return fail(format!("unknown keyword {other}")),
        }
    }
    fail("the selector names no resource".into())
}

/// Inclusion cycles are told apart per filesystem: inline files of one blueprint are not
/// another's.
fn inline_key(fs: &BlueprintFs) -> String {
    if fs.is_inline() {
        format!("{} ", fs.key())
    } else {
        String::new()
    }
}

fn single_document(text: &str) -> Result<Value, String> {
    let mut documents = read_yaml_documents(text).map_err(|err| format!("not valid YAML: {}", err.message))?;
    match documents.len() {
        1 => Ok(documents.remove(0)),
        n => Err(format!("expected one YAML document, found {n}")),
    }
}

/// Renders one blueprint in its scope, its imports taken from `source` (each with its wiring,
/// for a subinstallation); returns its exports, or `None` when it failed.
pub(super) fn render_blueprint(
    step: &mut Step,
    blueprint: &Blueprint,
    name: &str,
    origin: &Declared,
    source: (&Map, &HashMap<String, Wire>),
    depth: usize,
) -> Option<Map> {
    let errors_before = step.results.len();
    // Schemas in the blueprint's files (`$ref: blueprint://…`) become local types first.
    let with_files = files::load_schema_files(blueprint, &origin.fs, step.files);
    let blueprint = match &with_files {
        None => blueprint,
        Some(Ok(loaded)) => loaded,
        Some(Err(message)) => {
            step.results.push(origin.error(message, "imports"));
            return None;
        }
    };
    validate(step, blueprint, origin);
    if step.results.len() > errors_before {
        return None;
    }
    let mut report = ScopeReport { name: name.to_string(), ..Default::default() };
    let mut imports = Map::new();
    resolve_imports(step, blueprint, &blueprint.imports, "imports", source, origin, &mut imports, &mut report);
    if step.results[errors_before..].iter().any(Diagnostic::is_error) {
        step.report.scopes.push(report);
        return None;
    }
    if !executions::import(step, blueprint, name, origin, &mut imports, &mut report) {
        step.report.scopes.push(report);
        return None;
    }
    executions::deploy(step, blueprint, name, origin, &imports);
    let dataobjects = render(step, blueprint, name, origin, &imports, depth, &mut report);
    let exports = exports::render(step, blueprint, name, origin, &imports, &dataobjects?);
    report.exports = exports.as_ref().map(|e| e.keys().cloned().collect()).unwrap_or_default();
    step.report.scopes.push(report);
    if step.results[errors_before..].iter().any(Diagnostic::is_error) {
        return None;
    }
    exports
}

impl Step<'_> {
    /// The descriptors as the blueprint being rendered sees them.
    fn components(&self) -> Components<'_> {
        Components {
            cd: &self.descriptors.cd,
            cd_file: self.descriptor_file.as_deref(),
            list: &self.descriptors.list,
            files: &self.descriptor_files,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_parent_imports_include_conditional_ones() {
        let decls: Vec<ImportDecl> = serde_json::from_value(json!([
            {"name": "req", "schema": {}},
            {"name": "opt", "required": false, "schema": {}, "imports": [{"name": "cond", "schema": {}}]}
        ]))
        .unwrap_or_default();
        assert!(!is_optional_parent_import("req", &decls, false));
        assert!(is_optional_parent_import("opt", &decls, false));
        assert!(is_optional_parent_import("cond", &decls, false));
        assert!(!is_optional_parent_import("other", &decls, false));
    }

    /// Reads of each path, over a package in memory.
    #[derive(Default)]
    struct Counting(crate::package::MemoryFiles, std::sync::Mutex<HashMap<String, usize>>);

    impl Files for Counting {
        fn read(&self, path: &str) -> Result<String, crate::package::FileError> {
            *self.1.lock().unwrap_or_else(|p| p.into_inner()).entry(path.to_string()).or_default() += 1;
            self.0.read(path)
        }
        fn share(&self) -> std::sync::Arc<dyn Files> {
            self.0.share()
        }
    }

    /// Blueprint files that chain by `blueprint.file`, each also an item of the render: finding
    /// the top one read each file again from every item above it; now each is read once.
    #[test]
    fn blueprint_chain_files_are_read_once() {
        let files = Counting::default();
        let mut packaged = files.0.clone();
        let mut items = Vec::new();
        for i in 0..20 {
            let text = format!(
                "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nsubinstallations:\n- name: s\n  \
                 blueprint:\n    file: b{}.yaml\n",
                i + 1
            );
            let mut item = single_document(&text).unwrap_or_default();
            krm::set_annotation(&mut item, krm::annotations::PATH, &format!("b{i}.yaml"));
            packaged.0.insert(format!("b{i}.yaml"), text);
            items.push(item);
        }
        let files = Counting(packaged, Default::default());
        let mut cache = Parsed::new();
        let mut referenced = HashSet::new();
        for item in &items {
            referenced.extend(referenced_files(
                item,
                &files,
                Components { cd: &Value::Null, cd_file: None, list: &[], files: &[] },
                &mut cache,
            ));
        }
        assert!(referenced.contains("b1.yaml") && referenced.contains("b19.yaml") && !referenced.contains("b0.yaml"));
        let reads = files.1.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert!(reads.values().all(|n| *n == 1), "{reads:?}");
    }

    /// References through componentReferences follow OCM's v2 descriptors and v3alpha1 ones
    /// (`metadata`, `spec.references` naming `component`), and resolve the resource's path from
    /// the file of the descriptor that holds it.
    #[test]
    fn component_references_resolve_in_v2_and_v3_descriptors() {
        let root = json!({"meta": {"schemaVersion": "v2"}, "component": {"name": "r", "version": "1",
            "componentReferences": [{"name": "mid", "componentName": "m", "version": "2"}], "resources": []}});
        let mid = json!({"apiVersion": "ocm.software/v3alpha1", "kind": "ComponentVersion",
            "metadata": {"name": "m", "version": "2"},
            "spec": {"references": [{"name": "leaf", "component": "l", "version": "3"}], "resources": []}});
        let leaf = json!({"meta": {"schemaVersion": "v2"}, "component": {"name": "l", "version": "3",
            "resources": [{"name": "bp", "type": "blueprint", "input": {"type": "dir", "path": "bp"}}]}});
        let list = vec![mid, leaf];
        let files = vec![Some("components/mid.yaml".to_string()), Some("components/leaf/cd.yaml".to_string())];
        let components = Components { cd: &root, cd_file: Some("render.yaml"), list: &list, files: &files };
        let found =
            referenced_blueprint(components, "cd://componentReferences/mid/componentReferences/leaf/resources/bp");
        assert_eq!(found, Ok(Referenced { dir: "components/leaf/bp".into(), component: Some(1) }));
        // From the leaf's own point of view, its resource is local.
        assert_eq!(
            referenced_blueprint(components.of(1), "cd://resources/bp"),
            Ok(Referenced { dir: "components/leaf/bp".into(), component: None })
        );
        let missing = referenced_blueprint(components, "cd://componentReferences/mid/resources/bp");
        assert!(missing.is_err_and(|e| e.contains("local resource bp cannot be found") && e.contains("m:2")));
    }

    #[test]
    fn literal_refs_are_found_and_templated_ones_skipped() {
        let text = "blueprint:\n  ref: cd://componentReferences/sub/resources/blueprint-sub\n\
                    other: \"cd://resources/{{ .name }}\" last: cd://resources/x";
        assert_eq!(
            literal_refs(text),
            vec!["cd://componentReferences/sub/resources/blueprint-sub", "cd://resources/x"]
        );
    }

    #[test]
    fn siblings_order_and_cycles() {
        let names: Vec<String> = ["c", "a", "b"].iter().map(|s| s.to_string()).collect();
        let depends = vec![vec![], vec!["b".to_string()], vec!["c".to_string()]];
        assert_eq!(order_siblings(&names, &depends), Ok(vec![0, 2, 1]));
        let cyclic = vec![vec![], vec!["b".to_string()], vec!["a".to_string()]];
        assert_eq!(order_siblings(&names, &cyclic), Err(vec!["a".into(), "b".into(), "a".into()]));
    }
}
