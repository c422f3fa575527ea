//! Landscaper's three kinds of execution (import, deploy, export) share one renderer, GoTemplate
//! or Handlebars, each with the binding Landscaper builds for that kind; what the import and deploy
//! executions then do with the result (bindings and errors, resources and deploy items) follows
//! pkg/landscaper/installations/executions and apis/core/validation/execution.go.

use super::gotemplate;
use super::step::{Declared, ImportReport, ScopeReport, Step};
use crate::doc::{read_yaml_documents, Map, Value};
use crate::krm::{self, type_of};
use crate::model::imports::{self as model, import_type, Blueprint, Execution, ImportDecl};
use crate::render::Generated;
use crate::template::TemplateError;
use serde_json::json;
use std::collections::{HashMap, HashSet};

/// The standard binding of every template: `{values, imports, config}`, plus `dataobjects` (exports of
/// subinstallations) and `deployitems` for export executions.
fn binding(step: &Step, scope: &str, imports: &Map, dataobjects: Option<&Map>) -> Value {
    let mut data = json!({"values": step.values, "imports": imports, "config": step.kots_config});
    if let (Some(implementation), Value::Object(map)) = (&step.implementation, &mut data) {
        map.insert("implementation".into(), implementation.clone());
    }
    if let (Some(dataobjects), Value::Object(map)) = (dataobjects, &mut data) {
        map.insert("dataobjects".into(), Value::Object(dataobjects.clone()));
        map.insert("deployitems".into(), Value::Object(deployitems(step, scope)));
    }
    data
}

/// What the deployers read back for the deploy items of the installation `scope`
/// (`spec.deployItemExports`): the entries named `<item>` for the top-level blueprint,
/// `<child>/…/<item>` for a subinstallation's.
fn deployitems(step: &Step, scope: &str) -> Map {
    let prefix = match scope.split_once('/') {
        Some((_, path)) => format!("{path}/"),
        None => String::new(),
    };
    let entries = step.deploy_item_exports.iter().filter_map(|(key, value)| {
        let item = key.strip_prefix(prefix.as_str())?;
        (!item.contains('/')).then(|| (item.to_string(), value.clone()))
    });
    entries.collect()
}

/// Which execution runs: each kind gets Landscaper's binding for it.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Phase {
    Import,
    Deploy,
    Export,
}

/// The data of a GoTemplate execution, as Landscaper's executors build it
/// (template/options.go): `imports`, `cd`, `components` and, for deploy and export executions,
/// an empty `state`; export executions get `values` = `{deployitems, dataobjects, targets}` and
/// the same three keys at the top. Ours add `config` and `implementation`, and `values` (the
/// render's values) outside export executions, where Landscaper has no `values`.
fn go_binding(
    step: &Step,
    scope: &str,
    phase: Phase,
    imports: &Map,
    dataobjects: Option<&Map>,
) -> crate::template::go::GoValue {
    use gotemplate::to_go_json;
    let mut entries = vec![
        ("imports", to_go_json(&Value::Object(imports.clone()))),
        ("cd", to_go_json(&step.descriptors.cd)),
        ("components", to_go_json(&step.descriptors.components)),
        ("config", to_go_json(&step.kots_config)),
    ];
    if let Some(implementation) = &step.implementation {
        entries.push(("implementation", to_go_json(implementation)));
    }
    if phase != Phase::Import {
        entries.push(("state", to_go_json(&json!({}))));
    }
    match (phase, dataobjects) {
        (Phase::Export, dataobjects) => {
            // Landscaper's context holds the installation's imports as data objects too.
            let mut all = imports.clone();
            all.extend(dataobjects.cloned().unwrap_or_default());
            let dataobjects = Value::Object(all);
            let deployitems = Value::Object(deployitems(step, scope));
            let exports = json!({"deployitems": deployitems, "dataobjects": dataobjects, "targets": {}});
            entries.push(("values", to_go_json(&exports)));
            for key in ["deployitems", "dataobjects", "targets"] {
                entries.push((key, to_go_json(&exports[key])));
            }
        }
        _ => entries.push(("values", to_go_json(step.values))),
    }
    gotemplate::binding(entries)
}

/// Renders one execution (compiled once per text); the result is the YAML mapping it produced.
#[allow(clippy::too_many_arguments)]
pub(super) fn execute(
    step: &mut Step,
    execution: &Execution,
    scope: &str,
    field: &str,
    origin: &Declared,
    phase: Phase,
    imports: &Map,
    dataobjects: Option<&Map>,
) -> Option<Map> {
    // The template text, and the field and file its positions refer to. A leading `/` is the
    // blueprint's directory, as in Landscaper's blueprint file system.
    let (source, field, file) = match (&execution.template, &execution.file) {
        (Some(Value::String(text)), None) => (text.clone(), format!("{field}.template"), None),
        (Some(_), None) => {
            let message = format!("{field}: a template is text: write `template: |` followed by the template");
            step.results.push(origin.error(message, &format!("{field}.template")));
            return None;
        }
        (None, Some(file)) => match origin.read(step.files, file, "template file") {
            Ok((resolved, text)) => (text, format!("{field}.file"), Some(origin.fs.show(step.files, &resolved))),
            Err(message) => {
                step.results.push(origin.error(message, &format!("{field}.file")));
                return None;
            }
        },
        _ => return None,
    };
    let field = field.as_str();
    let in_file = file.map(|file| format!("in {file}: ")).unwrap_or_default();
    let text = if execution.kind == "GoTemplate" {
        let data = go_binding(step, scope, phase, imports, dataobjects);
        let rendered = match step.go.render(&source, &origin.fs, origin.file.as_deref(), &data) {
            Ok(text) => text,
            Err(err) => {
                let mut message = format!("execution {:?}: {in_file}{}", execution.name, err.render(&source));
                // Landscaper fills deployitems with what deployers read back from the cluster.
                if phase == Phase::Export && source.contains(".deployitems") && deployitems(step, scope).is_empty() {
                    message.push_str(
                        "\n(deployitems is empty: it holds what deployers read back from the cluster, and a \
                         render runs no deployer; give those values in spec.deployItemExports, or import them)",
                    );
                }
                step.results.push(origin.error(message, field));
                return None;
            }
        };
        // Landscaper refuses deploy and export results that print a missing value.
        if phase != Phase::Import {
            let found = rendered.lines().enumerate().find_map(|(i, l)| l.find("<no value>").map(|c| (i, c, l)));
            if let Some((i, column, line)) = found {
                let message = format!(
                    "execution {:?}: {in_file}the rendered template contains fields with \"no value\" (line {}:{column} \
                     of the rendered text: {}): a key the template reads is missing; import it or give a default \
                     (`default`)",
                    execution.name,
                    i + 1,
                    line.trim()
                );
                step.results.push(origin.error(message, field));
                return None;
            }
        }
        rendered
    } else {
        let data = binding(step, scope, imports, dataobjects);
        let name = format!("{scope}/{field}");
        let template_error =
            |err: TemplateError| format!("execution {:?}: {in_file}{}", execution.name, err.render(&source));
        if let Err(err) = step.engine.compile(&name, &source) {
            step.results.push(origin.error(template_error(err), field));
            return None;
        }
        match step.engine.render(&name, &data) {
            Ok(text) => text,
            Err(err) => {
                step.results.push(origin.error(template_error(err), field));
                return None;
            }
        }
    };
    match read_yaml_documents(&text) {
        Ok(documents) => match documents.as_slice() {
            [] => Some(Map::new()),
            [Value::Object(map)] => Some(map.clone()),
            _ => {
                let message = format!("execution {:?}: the rendered template is not one YAML mapping", execution.name);
                step.results.push(origin.error(message, field));
                None
            }
        },
        Err(err) => {
            let at = err.line.map(|l| format!(" (line {l} of the rendered text)")).unwrap_or_default();
            let message =
                format!("execution {:?}: the rendered template is not valid YAML{at}: {}", execution.name, err.message);
            step.results.push(origin.error(message, field));
            None
        }
    }
}

/// Import executions, in order: the bindings each produces are added to `imports` (and to the
/// scope's report); the first execution that fails or reports errors stops the scope (`false`).
pub(super) fn import(
    step: &mut Step,
    blueprint: &Blueprint,
    name: &str,
    origin: &Declared,
    imports: &mut Map,
    report: &mut ScopeReport,
) -> bool {
    for (i, execution) in blueprint.import_executions.iter().enumerate() {
        let field = format!("importExecutions[{i}]");
        let Some(rendered) = execute(step, execution, name, &field, origin, Phase::Import, imports, None) else {
            return false;
        };
        if let Some(Value::Object(bindings)) = rendered.get("bindings") {
            for (key, value) in bindings {
                imports.insert(key.clone(), value.clone());
                report.imports.push(ImportReport {
                    name: key.clone(),
                    source: "binding",
                    verdict: "no schema".into(),
                    value: Some(value.clone()),
                    wired: String::new(),
                    secret: Vec::new(),
                });
            }
        }
        let errors: Vec<String> = match rendered.get("errors") {
            Some(Value::Array(errors)) => {
                errors.iter().map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string)).collect()
            }
            _ => Vec::new(),
        };
        let errors: Vec<String> = errors.into_iter().filter(|e| !e.trim().is_empty()).collect();
        if !errors.is_empty() {
            step.results.push(origin.error(format!("import validation failed: {}", errors.join(", ")), &field));
            return false;
        }
    }
    true
}

/// Deploy executions: `resources` are emitted; `deployItems` of type kubernetes-manifest
/// contribute their manifests, other deploy items are emitted as Landscaper `DeployItem`s. The
/// deploy items of all executions are checked together first, as Landscaper checks the
/// execution's list (executions/operation.go, validation/execution.go): names, types, target
/// imports and `dependsOn`.
pub(super) fn deploy(step: &mut Step, blueprint: &Blueprint, scope: &str, origin: &Declared, imports: &Map) {
    let mut seen_resources: HashMap<(String, String, String, String), String> = HashMap::new();
    let mut rendered_all: Vec<(usize, String, Map)> = Vec::new();
    for (i, execution) in blueprint.deploy_executions.iter().enumerate() {
        let field = format!("deployExecutions[{i}]");
        if let Some(rendered) = execute(step, execution, scope, &field, origin, Phase::Deploy, imports, None) {
            rendered_all.push((i, execution.name.clone(), rendered));
        }
    }
    // Every deploy item with the execution that produced it, numbered across executions as in
    // Landscaper's messages (`deployExecutions[<item>]`).
    let items: Vec<(usize, &Value)> = rendered_all
        .iter()
        .flat_map(|(i, _, rendered)| match rendered.get("deployItems") {
            Some(Value::Array(items)) => items.iter().map(|item| (*i, item)).collect(),
            _ => Vec::new(),
        })
        .collect();
    let errors_before = step.results.len();
    check_deploy_items(step, blueprint, origin, imports, &items);
    if step.results.len() > errors_before {
        return;
    }
    let mut items = items.into_iter().peekable();
    for (i, name, rendered) in &rendered_all {
        let field = format!("deployExecutions[{i}]");
        let mut produced: Vec<Value> = Vec::new();
        if let Some(resources) = rendered.get("resources") {
            match resources {
                Value::Array(list) => produced.extend(list.iter().cloned()),
                Value::Null => {}
                _ => step.results.push(origin.error(format!("execution {name:?}: resources must be a list"), &field)),
            }
        }
        while let Some((_, item)) = items.next_if(|(from, _)| from == i) {
            let item_name = item.get("name").and_then(Value::as_str).unwrap_or_default();
            if item.get("type").and_then(Value::as_str) == Some("landscaper.gardener.cloud/kubernetes-manifest") {
                let manifests = item.get("config").and_then(|c| c.get("manifests")).and_then(Value::as_array);
                for manifest in manifests.into_iter().flatten() {
                    produced.push(manifest.get("manifest").cloned().unwrap_or_else(|| manifest.clone()));
                }
            } else {
                produced.push(deploy_item(item, item_name));
            }
        }
        for resource in produced {
            if !resource.is_object() || type_of(&resource).1.is_empty() || krm::name_of(&resource).is_empty() {
                let message = format!("execution {name:?}: every resource needs apiVersion, kind and metadata.name");
                step.results.push(origin.error(message, &field));
                continue;
            }
            let (api_version, kind) = type_of(&resource);
            let key = (
                api_version.to_string(),
                kind.to_string(),
                krm::namespace_of(&resource).to_string(),
                krm::name_of(&resource).to_string(),
            );
            if let Some(previous) = seen_resources.insert(key.clone(), name.clone()) {
                let message = format!(
                    "{} {:?} is produced by executions {previous:?} and {name:?}; names are unique across executions",
                    key.1, key.3
                );
                step.results.push(origin.error(message, &field));
                continue;
            }
            step.generated.push(Generated { item: resource, substitute: true });
        }
    }
}

/// Landscaper's checks of the deploy items of all deploy executions, with its texts: a name
/// and a type each, unique names, a `target.import` naming a satisfied target import of the
/// blueprint (targetList with `index`, targetMap with `key`), and `dependsOn` naming existing
/// items without a cycle. `items` holds each item with the index of its execution.
fn check_deploy_items(
    step: &mut Step,
    blueprint: &Blueprint,
    origin: &Declared,
    imports: &Map,
    items: &[(usize, &Value)],
) {
    let field = |execution: usize| format!("deployExecutions[{execution}]");
    let mut names: HashSet<&str> = HashSet::new();
    let mut duplicates = false;
    let mut graph: Vec<(&str, Vec<&str>)> = Vec::new();
    for (k, (execution, item)) in items.iter().enumerate() {
        let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
        let mut path = format!("deployExecutions[{k}]");
        if !name.is_empty() {
            if !names.insert(name) {
                step.results.push(origin.error(format!("{path}: Duplicate value: {name:?}"), &field(*execution)));
                duplicates = true;
            }
            path = format!("{path}[{name}]");
        } else {
            let message = format!("{path}.name: Required value: name must not be empty");
            step.results.push(origin.error(message, &field(*execution)));
        }
        if item.get("type").and_then(Value::as_str).unwrap_or_default().is_empty() {
            let message = format!("{path}.type: Required value: type must not be empty");
            step.results.push(origin.error(message, &field(*execution)));
        }
        if let Some(target) = item.get("target").filter(|t| !t.is_null()) {
            if let Err(problem) = target_reference(blueprint, imports, target) {
                let message = format!("invalid deployitem specification {name:?}: {problem}");
                step.results.push(origin.error(message, &format!("{}.target", field(*execution))));
            }
        }
        let depends_on = match item.get("dependsOn") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) if list.iter().all(Value::is_string) => {
                list.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                let message = format!("{path}.dependsOn: must be a list of deploy item names");
                step.results.push(origin.error(message, &field(*execution)));
                Vec::new()
            }
        };
        graph.push((name, depends_on));
    }
    // Landscaper identifies items by name here, so it skips this check when names repeat.
    if duplicates {
        return;
    }
    let (cycles, undefined) = dependency_problems(&graph);
    for cycle in cycles {
        let cycle = serde_json::to_string(&cycle).unwrap_or_default();
        step.results.push(origin.error(
            format!("deployExecutions: Invalid value: {cycle}: cycle found in dependencies"),
            "deployExecutions",
        ));
    }
    for (source, target) in undefined {
        let Some(k) = graph.iter().position(|(name, _)| *name == source) else { continue };
        let execution = items.get(k).map_or(0, |(execution, _)| *execution);
        let message =
            format!("deployExecutions[{k}][{source}]: Invalid value: {target:?}: depends on undefined deploy item");
        step.results.push(origin.error(message, &format!("{}.dependsOn", field(execution))));
    }
}

/// Landscaper's resolution of a deploy item's `target` against the imported targets: `index`
/// picks from a targetList import, `key` from a targetMap import, `import` alone names a target
/// import, else `name` must be set. The error is Landscaper's text after the item's name.
fn target_reference(blueprint: &Blueprint, imports: &Map, target: &Value) -> Result<(), String> {
    let import = target.get("import").and_then(Value::as_str).unwrap_or_default();
    // The value of a satisfied import of that name and type.
    let imported = |kind: &str| {
        find_import(&blueprint.imports, import)
            .filter(|decl| import_type(decl) == kind)
            .and_then(|_| imports.get(import))
    };
    if let Some(index) = target.get("index").filter(|i| !i.is_null()) {
        let Some(list) = imported("targetList") else {
            return Err(format!("targetlist import {import:?} not found"));
        };
        let length = list.as_array().map_or(0, Vec::len);
        return match index.as_i64() {
            Some(i) if i >= 0 && (i as u64) < length as u64 => Ok(()),
            _ => Err(format!("index {index} out of bounds")),
        };
    }
    if let Some(key) = target.get("key").filter(|k| !k.is_null()) {
        let Some(map) = imported("targetMap") else {
            return Err(format!("targetmap import {import:?} not found"));
        };
        let key = key.as_str().map_or_else(|| key.to_string(), str::to_string);
        return match map.get(key.as_str()).filter(|t| !t.is_null()) {
            Some(_) => Ok(()),
            None => Err(format!("key {key:?} not found in targetmap import {import:?}")),
        };
    }
    if !import.is_empty() {
        return imported("target").map(|_| ()).ok_or_else(|| format!("target import {import:?} not found"));
    }
    match target.get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => Ok(()),
        _ => Err("empty target reference".into()),
    }
}

/// The declaration of import `name`, conditional imports included.
fn find_import<'d>(decls: &'d [ImportDecl], name: &str) -> Option<&'d ImportDecl> {
    decls.iter().find_map(|decl| if decl.name == name { Some(decl) } else { find_import(&decl.imports, name) })
}

/// Landscaper's depth-first walk over `dependsOn` (validation/execution.go), in list order:
/// each cycle as the names on it (from where it closes), and each `(item, missing name)`.
/// Iterative, so a long chain of items cannot exhaust the stack.
#[allow(clippy::type_complexity)]
fn dependency_problems<'n>(graph: &[(&'n str, Vec<&'n str>)]) -> (Vec<Vec<&'n str>>, Vec<(&'n str, &'n str)>) {
    let index = |name: &str| graph.iter().position(|(n, _)| *n == name);
    let mut done: HashSet<&str> = HashSet::new();
    let (mut cycles, mut undefined) = (Vec::new(), Vec::new());
    for start in 0..graph.len() {
        if !done.insert(graph[start].0) || graph[start].1.is_empty() {
            continue;
        }
        // The current path, each with the position of its next dependency.
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some((at, next)) = stack.last_mut() {
            let (name, deps) = &graph[*at];
            let Some(dependency) = deps.get(*next).copied() else {
                stack.pop();
                continue;
            };
            *next += 1;
            if let Some(from) = stack.iter().position(|(i, _)| graph[*i].0 == dependency) {
                cycles.push(stack[from..].iter().map(|(i, _)| graph[*i].0).collect());
                continue;
            }
            match index(dependency) {
                None => undefined.push((*name, dependency)),
                Some(j) => {
                    if done.insert(graph[j].0) && !graph[j].1.is_empty() {
                        stack.push((j, 0));
                    }
                }
            }
        }
    }
    (cycles, undefined)
}

fn deploy_item(item: &Value, name: &str) -> Value {
    let mut spec = crate::doc::Map::new();
    for key in ["type", "target", "config", "dependsOn", "timeout", "updateOnChangeOnly"] {
        if let Some(value) = item.get(key) {
            spec.insert(key.into(), value.clone());
        }
    }
    let mut metadata = json!({"name": name});
    if let (Some(labels), Value::Object(m)) = (item.get("labels"), &mut metadata) {
        m.insert("labels".into(), labels.clone());
    }
    json!({"apiVersion": model::API_VERSION, "kind": "DeployItem", "metadata": metadata, "spec": spec})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depends_on_cycles_and_undefined_items_as_landscaper_finds_them() {
        // Landscaper's execution_test.go "should fail if cyclic dependencies are defined".
        let graph: Vec<(&str, Vec<&str>)> = vec![
            ("a", vec!["a", "c", "y"]),
            ("b", vec!["a"]),
            ("c", vec!["b"]),
            ("d", vec!["a", "f", "e", "z"]),
            ("e", vec!["f"]),
            ("f", vec!["e"]),
            ("g", vec!["a", "b", "c"]),
        ];
        let (cycles, undefined) = dependency_problems(&graph);
        assert_eq!(cycles, vec![vec!["a"], vec!["a", "c", "b"], vec!["f", "e"]]);
        assert_eq!(undefined, vec![("a", "y"), ("d", "z")]);
    }
}
