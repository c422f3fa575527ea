//! The imports step (compat: Gardener Landscaper): declared imports validated
//! against JSON Schema, defaults and conditional imports, import executions that add bindings or
//! stop the render, deploy executions that produce resources, export executions, and
//! subinstallations wired by `dataRef` and rendered in dependency order.
//!
//! The blueprint comes from a Landscaper `Blueprint` item and/or the same fields inline in the
//! functionConfig. Import values are `values.<name>`. Error texts follow Landscaper
//! (apis/core/validation/blueprint.go, pkg/landscaper/installations/imports/constructor.go).

pub mod gotemplate;
pub use crate::model::imports as model;
pub mod schema;

use crate::config::parse_section;
use crate::diag::{Diagnostic, Kind, Severity};
use crate::doc::{deep_merge, read_yaml_documents, FieldPath, Map, Value};
use crate::krm::{self, annotations as ann, set_annotation, type_of};
use crate::package::{resolve, Files};
use crate::render::{Generated, Render};
use crate::template::{Engine, TemplateError};
use model::{import_type, Blueprint, Execution, ExportDecl, ImportDecl, InstallationTemplate, Subinstallation};
use schema::Schema;
use serde_json::json;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Subinstallations nest at most this deep (file references could otherwise loop).
const MAX_DEPTH: usize = 16;

/// Installations one render expands to at most: files that each include the next several times
/// multiply without a cycle (2 per level over 16 levels is 65 536).
const MAX_INSTALLATIONS: usize = 1000;

/// How an inclusion cycle's message starts (reported once per render, not once per path).
const FILE_CYCLE: &str = "subinstallation files include each other";

/// What the step decided, for `explain` and `graph`.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub scopes: Vec<ScopeReport>,
    /// Places in the values tree that the top-level imports' schemas mark secret
    /// (`values.<import>` and a key path inside it), for `explain` to redact.
    pub secret_values: Vec<Vec<String>>,
}

#[derive(Clone, Debug, Default)]
pub struct ScopeReport {
    /// `platform`, or `platform/child` for a subinstallation.
    pub name: String,
    pub imports: Vec<ImportReport>,
    /// Subinstallations in render order, with the siblings each depends on.
    pub subinstallations: Vec<(String, Vec<String>)>,
    pub exports: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct ImportReport {
    pub name: String,
    /// `value`, `default`, `binding`, `absent` or `removed`.
    pub source: &'static str,
    /// `valid`, `no schema`, or what failed.
    pub verdict: String,
    /// The value imported (`None` when absent).
    pub value: Option<Value>,
    /// For a subinstallation's `value`: what it is wired to (`import x of parent`); empty at
    /// the top level, where the value's own source (a values layer) says it.
    pub wired: String,
    /// Key paths inside the value that are secret (an empty path: all of it), from this
    /// import's schema and from whatever the wiring brought in.
    pub secret: Vec<Vec<String>>,
}

impl ImportReport {
    fn absent(name: &str, verdict: &str) -> Self {
        ImportReport {
            name: name.to_string(),
            source: "absent",
            verdict: verdict.into(),
            value: None,
            wired: String::new(),
            secret: Vec::new(),
        }
    }
}

/// Where a subinstallation's import comes from: a label for `explain`, and the secret places
/// of what it is wired to (a parent's secret import stays secret in the child).
#[derive(Clone, Debug, Default)]
struct Wire {
    label: String,
    secret: Vec<Vec<String>>,
}

/// Where a blueprint was declared, for diagnostics and relative paths.
#[derive(Clone)]
struct Origin {
    item: Value,
    /// The field path of the blueprint inside the item (`spec` inline, root for an item).
    field: FieldPath,
    /// The file relative paths (execution files, subinstallation files) resolve from.
    file: Option<String>,
    /// `subinstallation "a": ` for nested blueprints.
    prefix: String,
    /// The subinstallation files read on the way here, to refuse one that includes itself.
    chain: Vec<String>,
}

impl Origin {
    fn diagnostic(&self, severity: Severity, message: impl AsRef<str>, field: &str) -> Diagnostic {
        let mut path = self.field.clone();
        if !field.is_empty() {
            path = path.join(&FieldPath::parse(field));
        }
        Diagnostic::new(severity, Kind::Render, format!("{}{}", self.prefix, message.as_ref()))
            .at(path)
            .about(&self.item)
    }

    fn error(&self, message: impl AsRef<str>, field: &str) -> Diagnostic {
        self.diagnostic(Severity::Error, message, field)
    }
}

struct Step<'a> {
    files: &'a dyn Files,
    values: &'a Value,
    kots_config: Value,
    /// Inside a chosen implementation's scope (policy): `implementation` in the binding.
    implementation: Option<Value>,
    engine: Engine,
    /// GoTemplate executions: Landscaper's functions and the compiled templates.
    go: gotemplate::GoTemplates,
    descriptors: gotemplate::Descriptors,
    results: Vec<Diagnostic>,
    generated: Vec<Generated>,
    report: Report,
    /// Inclusion cycles already reported, and installations rendered so far.
    cycles: HashSet<String>,
    installations: usize,
}

impl<'a> Step<'a> {
    /// A step over the values and KOTS config, with a template engine whose `getResource`
    /// answers from `resources` and `backend` from the policy's rules.
    fn new(
        files: &'a dyn Files,
        values: &'a Value,
        kots_config: &Map,
        backends: crate::template::BackendLookup,
        resources: crate::template::ResourceLookup,
        budget: std::sync::Arc<crate::limits::Budget>,
        descriptors: gotemplate::Descriptors,
    ) -> Self {
        Step {
            files,
            values,
            kots_config: Value::Object(kots_config.clone()),
            implementation: None,
            engine: Engine::new(resources, backends, budget.clone()),
            go: gotemplate::GoTemplates::new(files.share(), &descriptors, budget),
            descriptors,
            results: Vec::new(),
            generated: Vec::new(),
            report: Report::default(),
            cycles: HashSet::new(),
            installations: 0,
        }
    }
}

pub fn run(render: &mut Render, files: &dyn Files) -> Report {
    let spec = &render.config.spec;
    let config_item = render.config.item.clone();
    let mut results = Vec::new();
    let candidates: Vec<&Value> =
        render.items.iter().filter(|i| i.type_of() == (model::API_VERSION, "Blueprint")).map(|i| &**i).collect();
    // A blueprint that another blueprint's subinstallation names by file is that
    // subinstallation's, not a second top level.
    let referenced: HashSet<String> = candidates.iter().flat_map(|item| referenced_files(item, files)).collect();
    let items: Vec<&Value> = candidates
        .into_iter()
        .filter(|item| krm::item_location(item).0.is_none_or(|path| !referenced.contains(&path)))
        .collect();
    let mut blueprint = Blueprint::default();
    let mut origin = Origin {
        item: config_item.clone(),
        field: FieldPath::root().key("spec"),
        file: krm::item_location(&config_item).0,
        prefix: String::new(),
        chain: Vec::new(),
    };
    let mut name = render.config.name.clone();
    if let [first, second, ..] = items.as_slice() {
        let message = format!(
            "more than one Landscaper Blueprint item ({:?} and {:?}): render one blueprint and wire others as subinstallations",
            krm::name_of(first),
            krm::name_of(second)
        );
        results.push(Diagnostic::error(Kind::Render, message).about(second));
    }
    if let Some(item) = items.first() {
        origin = Origin {
            item: (*item).clone(),
            field: FieldPath::root(),
            file: krm::item_location(item).0,
            prefix: String::new(),
            chain: Vec::new(),
        };
        name = krm::name_of(item).to_string();
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
        gotemplate::descriptors(&spec.component_descriptor, &spec.component_descriptors),
    );
    step.results = results;
    let source = render.values.as_object().cloned().unwrap_or_default();
    // Values from a Secret are secret imports too, down every wiring (unlabelled: `explain`
    // names the values layer itself).
    let mut wiring: HashMap<String, Wire> = HashMap::new();
    let sources = &render.value_sources;
    for (path, layer) in &sources.paths {
        if let (Some((key, inside)), Some(true)) = (path.split_first(), sources.layers.get(*layer).map(|l| l.secret)) {
            wiring.entry(key.clone()).or_default().secret.push(inside.to_vec());
        }
    }
    render_blueprint(&mut step, &blueprint, &name, &origin, (&source, &wiring), 0);
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

/// Files a blueprint item's subinstallations read (`file:` templates and `blueprint.file`),
/// following nested file references.
fn referenced_files(item: &Value, files: &dyn Files) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut pending: Vec<(Value, Option<String>)> = vec![(item.clone(), krm::item_location(item).0)];
    while let Some((blueprint, from)) = pending.pop() {
        if found.len() > 256 {
            break;
        }
        let entries = blueprint.get("subinstallations").and_then(Value::as_array).cloned().unwrap_or_default();
        for entry in entries {
            let mut template = entry.clone();
            let mut template_from = from.clone();
            if let Some(path) = entry.get("file").and_then(Value::as_str) {
                let Ok(resolved) = resolve(from.as_deref(), path) else { continue };
                if !found.insert(resolved.clone()) {
                    continue;
                }
                let Some(document) = files.read(&resolved).ok().and_then(|t| single_document(&t).ok()) else {
                    continue;
                };
                template = document;
                template_from = Some(resolved);
            }
            match template.get("blueprint") {
                Some(Value::Object(inline)) if inline.contains_key("file") => {
                    let path = inline.get("file").and_then(Value::as_str).unwrap_or_default();
                    let Ok(resolved) = resolve(template_from.as_deref(), path) else { continue };
                    if found.insert(resolved.clone()) {
                        if let Some(document) = files.read(&resolved).ok().and_then(|t| single_document(&t).ok()) {
                            pending.push((document, Some(resolved)));
                        }
                    }
                }
                Some(inline @ Value::Object(_)) => pending.push((inline.clone(), template_from)),
                _ => {}
            }
        }
    }
    found
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
    let mut step = Step::new(
        files,
        &render.values,
        &render.config_values,
        render.backends.clone(),
        no_resources,
        render.budget.clone(),
        gotemplate::descriptors(&render.config.spec.component_descriptor, &render.config.spec.component_descriptors),
    );
    let mut scoped_features = Vec::new();
    for implementation in &chosen {
        let mut env = render.values.clone();
        if let Value::Object(map) = &mut env {
            map.insert("implementation".into(), implementation.scope.clone());
        }
        let origin = Origin {
            item: implementation.item.clone(),
            field: FieldPath::root().key("spec"),
            file: krm::item_location(&implementation.item).0,
            prefix: String::new(),
            chain: Vec::new(),
        };
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
            deploy(&mut step, &blueprint, &implementation.interface, &origin, &Map::new());
        }
        for feature in &implementation.spec.features {
            scoped_features.push((feature.clone(), env.clone(), implementation.item.clone()));
        }
    }
    render.results.append(&mut step.results);
    render.generated.append(&mut step.generated);
    render.scoped_features = scoped_features;
    render.implementations = chosen;
}

/// `at: message`, or the message alone when it concerns the whole value.
fn located(at: &FieldPath, message: &str) -> String {
    if at.is_root() {
        message.to_string()
    } else {
        format!("{at}: {message}")
    }
}

/// Renders one blueprint in its scope, its imports taken from `source` (each with its wiring,
/// for a subinstallation); returns its exports, or `None` when it failed.
fn render_blueprint(
    step: &mut Step,
    blueprint: &Blueprint,
    name: &str,
    origin: &Origin,
    source: (&Map, &HashMap<String, Wire>),
    depth: usize,
) -> Option<Map> {
    let errors_before = step.results.len();
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
    // Import executions: bindings accumulate; the first execution with errors stops the run.
    for (i, execution) in blueprint.import_executions.iter().enumerate() {
        let field = format!("importExecutions[{i}]");
        let Some(rendered) = execute(step, execution, name, &field, origin, Phase::Import, &imports, None) else {
            step.report.scopes.push(report);
            return None;
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
            step.report.scopes.push(report);
            return None;
        }
    }
    deploy(step, blueprint, name, origin, &imports);
    let dataobjects = subinstallations(step, blueprint, name, origin, &imports, depth, &mut report);
    let exports = exports(step, blueprint, name, origin, &imports, &dataobjects?);
    report.exports = exports.as_ref().map(|e| e.keys().cloned().collect()).unwrap_or_default();
    step.report.scopes.push(report);
    if step.results[errors_before..].iter().any(Diagnostic::is_error) {
        return None;
    }
    exports
}

/// The standard binding of every template: `{values, imports, config}`, plus `dataobjects` (exports of
/// subinstallations) and `deployitems` for export executions.
fn binding(step: &Step, imports: &Map, dataobjects: Option<&Map>) -> Value {
    let mut data = json!({"values": step.values, "imports": imports, "config": step.kots_config});
    if let (Some(implementation), Value::Object(map)) = (&step.implementation, &mut data) {
        map.insert("implementation".into(), implementation.clone());
    }
    if let (Some(dataobjects), Value::Object(map)) = (dataobjects, &mut data) {
        map.insert("dataobjects".into(), Value::Object(dataobjects.clone()));
        map.insert("deployitems".into(), json!({}));
    }
    data
}

/// Landscaper's blueprint validation: names, duplicates across nesting levels, conditional
/// imports only under optional imports, types and their schema/targetType, GoTemplate or
/// Handlebars executions.
fn validate(step: &mut Step, blueprint: &Blueprint, origin: &Origin) {
    let mut names = HashSet::new();
    validate_imports(step, &blueprint.imports, "imports", "imports", &mut names, origin);
    let mut export_names = HashSet::new();
    for (i, export) in blueprint.exports.iter().enumerate() {
        let path = format!("exports[{i}][{}]", export.name);
        let field = format!("exports[{i}]");
        if export.name.is_empty() {
            step.results
                .push(origin.error(format!("exports[{i}].name: Required value: name must not be empty"), &field));
        } else if !export_names.insert(export.name.clone()) {
            step.results.push(origin.error(format!("{path}: Duplicate value: \"duplicated export name\""), &field));
        }
        match (export.kind.as_deref(), &export.schema, &export.target_type) {
            (Some("data") | None, Some(_), None) | (Some("target") | None, None, Some(_)) => {}
            (Some("data"), None, _) => step
                .results
                .push(origin.error(format!("{path}: Required value: Schema must not be empty for type data"), &field)),
            (Some("target"), _, None) => step.results.push(
                origin.error(format!("{path}: Required value: TargetType must not be empty for type target"), &field),
            ),
            (Some(other), _, _) if other != "data" && other != "target" => step.results.push(origin.error(
                format!("{path}.type: Unsupported value: {other:?}: supported values: \"data\", \"target\""),
                &field,
            )),
            _ => step.results.push(
                origin.error(format!("{path}: Invalid value: exactly one of [Schema, TargetType] must be set"), &field),
            ),
        }
    }
    for (list, executions) in [
        ("importExecutions", &blueprint.import_executions),
        ("deployExecutions", &blueprint.deploy_executions),
        ("exportExecutions", &blueprint.export_executions),
    ] {
        for (i, execution) in executions.iter().enumerate() {
            let field = format!("{list}[{i}]");
            match execution.kind.as_str() {
                "GoTemplate" | "Handlebars" => {}
                "Spiff" => step.results.push(origin.error(
                    "type Spiff is not supported: GoTemplate and Handlebars are the supported engines (type: \
                     GoTemplate or type: Handlebars)",
                    &format!("{field}.type"),
                )),
                other => step.results.push(origin.error(
                    format!(
                        "type {other:?} is not supported: GoTemplate and Handlebars are the supported engines (type: \
                         GoTemplate or type: Handlebars)"
                    ),
                    &format!("{field}.type"),
                )),
            }
            if execution.template.is_some() == execution.file.is_some() {
                step.results.push(origin.error("set exactly one of template and file", &field));
            }
        }
    }
}

fn validate_imports(
    step: &mut Step,
    decls: &[ImportDecl],
    path: &str,
    field: &str,
    names: &mut HashSet<String>,
    origin: &Origin,
) {
    for (i, decl) in decls.iter().enumerate() {
        let def_path = format!("{path}[{i}][{}]", decl.name);
        let def_field = format!("{field}[{i}]");
        if decl.name.is_empty() {
            step.results
                .push(origin.error(format!("{path}[{i}].name: Required value: name must not be empty"), &def_field));
        } else if !names.insert(decl.name.clone()) {
            step.results
                .push(origin.error(format!("{def_path}: Duplicate value: \"duplicate import name\""), &def_field));
        }
        match (import_type(decl), &decl.schema, &decl.target_type) {
            ("", None, None) => step.results.push(origin.error(
                format!("{def_path}: Required value: either schema or targetType must not be empty"),
                &def_field,
            )),
            ("data", None, _) => step.results.push(origin.error(
                format!("{def_path}: Required value: Schema must not be empty for type data"),
                &def_field,
            )),
            ("target" | "targetList" | "targetMap", _, None) => step.results.push(origin.error(
                format!("{def_path}: Required value: TargetType must not be empty for type {}", import_type(decl)),
                &def_field,
            )),
            ("data" | "target" | "targetList" | "targetMap", _, _) => {}
            (other, _, _) => step.results.push(origin.error(
                format!(
                    "{def_path}.type: Unsupported value: {other:?}: supported values: \"data\", \"target\", \"targetList\", \"targetMap\""
                ),
                &def_field,
            )),
        }
        if !decl.imports.is_empty() {
            if decl.is_required() {
                step.results.push(origin.error(
                    format!("{def_path}: Invalid value: {:?}: conditional imports on required import", decl.name),
                    &def_field,
                ));
            }
            validate_imports(
                step,
                &decl.imports,
                &format!("{def_path}.conditionalImports"),
                &format!("{def_field}.imports"),
                names,
                origin,
            );
        }
    }
}

/// Resolves declared imports from `source` (recursively for conditional imports).
#[allow(clippy::too_many_arguments)]
fn resolve_imports(
    step: &mut Step,
    blueprint: &Blueprint,
    decls: &[ImportDecl],
    field: &str,
    source: (&Map, &HashMap<String, Wire>),
    origin: &Origin,
    imports: &mut Map,
    report: &mut ScopeReport,
) {
    let (values, wiring) = source;
    for (i, decl) in decls.iter().enumerate() {
        let decl_field = format!("{field}[{i}]");
        let kind = import_type(decl);
        let (value, from) = match (values.get(&decl.name), decl.is_required(), &decl.default) {
            (Some(value), _, _) => (value.clone(), "value"),
            (None, false, Some(default)) if !default.value.is_null() => (default.value.clone(), "default"),
            (None, false, _) => {
                report.imports.push(ImportReport::absent(&decl.name, "not evaluated"));
                skip_nested(&decl.imports, report);
                continue;
            }
            (None, true, _) => {
                let message =
                    format!("blueprint defines import {:?} of type {kind}, which is not satisfied", decl.name);
                step.results.push(origin.error(message, &decl_field));
                report.imports.push(ImportReport::absent(&decl.name, "not satisfied"));
                continue;
            }
        };
        let verdict = match kind {
            "data" => check_data(step, blueprint, decl, (&value, from), origin, &decl_field),
            _ => check_target(step, decl, &value, origin, &decl_field),
        };
        let wire = wiring.get(&decl.name).filter(|_| from == "value");
        let mut secret =
            decl.schema.as_ref().map(|s| schema::secret_paths(s, &blueprint.local_types)).unwrap_or_default();
        secret.extend(wire.into_iter().flat_map(|w| w.secret.iter().cloned()));
        report.imports.push(ImportReport {
            name: decl.name.clone(),
            source: from,
            verdict,
            value: Some(value.clone()),
            wired: wire.map(|w| w.label.clone()).unwrap_or_default(),
            secret,
        });
        imports.insert(decl.name.clone(), value);
        if !decl.imports.is_empty() {
            resolve_imports(
                step,
                blueprint,
                &decl.imports,
                &format!("{decl_field}.imports"),
                source,
                origin,
                imports,
                report,
            );
        }
    }
}

fn skip_nested(decls: &[ImportDecl], report: &mut ScopeReport) {
    for decl in decls {
        report.imports.push(ImportReport::absent(&decl.name, "parent import absent"));
        skip_nested(&decl.imports, report);
    }
}

fn check_data(
    step: &mut Step,
    blueprint: &Blueprint,
    decl: &ImportDecl,
    (value, from): (&Value, &str),
    origin: &Origin,
    field: &str,
) -> String {
    let Some(schema) = &decl.schema else { return "no schema".into() };
    // A default that fails its own schema is the declaration's mistake: point at it.
    let (failure_field, whose) = match from {
        "default" => (format!("{field}.default.value"), " (the value is the import's default)"),
        _ => (field.to_string(), ""),
    };
    match Schema::compile(schema, &blueprint.local_types, blueprint.json_schema_version.as_deref()) {
        Err(message) => {
            step.results.push(origin.error(format!("import {:?}: {message}", decl.name), &format!("{field}.schema")));
            "schema error".into()
        }
        Ok(schema) => match schema.check(value).as_slice() {
            [] => "valid".into(),
            failures => {
                let message = format!(
                    "import {:?}: imported datatype does not have the expected schema: {}{whose}",
                    decl.name,
                    failures.join("; ")
                );
                step.results.push(origin.error(&message, &failure_field));
                message
            }
        },
    }
}

/// A target value's type is `spec.type` (a Target object) or `type`; a targetMap holds targets.
fn check_target(step: &mut Step, decl: &ImportDecl, value: &Value, origin: &Origin, field: &str) -> String {
    let expected = model::full_target_type(decl.target_type.as_deref().unwrap_or_default());
    let type_of_target = |v: &Value| {
        v.get("spec").and_then(|s| s.get("type")).or_else(|| v.get("type")).and_then(Value::as_str).map(str::to_string)
    };
    let targets: Vec<(String, &Value)> = match (import_type(decl), value) {
        ("targetMap", Value::Object(map)) => map.iter().map(|(k, v)| (format!("[{k}]"), v)).collect(),
        ("targetList", Value::Array(list)) => list.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect(),
        _ => vec![(String::new(), value)],
    };
    for (at, target) in targets {
        match type_of_target(target) {
            Some(actual) if actual == expected => {}
            actual => {
                let actual = actual.unwrap_or_else(|| "missing".into());
                let message =
                    format!("import {:?}{at}: imported target type is {actual} but expected {expected}", decl.name);
                step.results.push(origin.error(&message, field));
                return message;
            }
        }
    }
    "valid".into()
}

/// Which execution runs: each kind gets Landscaper's binding for it.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Import,
    Deploy,
    Export,
}

/// The data of a GoTemplate execution, as Landscaper's executors build it
/// (template/options.go): `imports`, `cd`, `components` and, for deploy and export executions,
/// an empty `state`; export executions get `values` = `{deployitems, dataobjects, targets}` and
/// the same three keys at the top. Ours add `config` and `implementation`, and `values` (the
/// render's values) outside export executions, where Landscaper has no `values`.
fn go_binding(step: &Step, phase: Phase, imports: &Map, dataobjects: Option<&Map>) -> crate::template::go::GoValue {
    use gotemplate::to_go_json;
    let components = match step.descriptors.list.as_slice() {
        [] if step.descriptors.cd.is_null() => Value::Null,
        list => json!({"meta": {"schemaVersion": "v2"}, "components": list}),
    };
    let mut entries = vec![
        ("imports", to_go_json(&Value::Object(imports.clone()))),
        ("cd", to_go_json(&step.descriptors.cd)),
        ("components", to_go_json(&components)),
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
            let exports = json!({"deployitems": {}, "dataobjects": dataobjects, "targets": {}});
            entries.push(("values", to_go_json(&exports)));
            for key in ["deployitems", "dataobjects", "targets"] {
                entries.push((key, to_go_json(&exports[key])));
            }
        }
        _ => entries.push(("values", to_go_json(step.values))),
    }
    gotemplate::binding(entries)
}

/// A Go template error followed by the template line it names (`template: 8:42: …`, 1-based)
/// with a caret under the column.
fn go_error(message: &str, source: &str) -> String {
    let position: Option<Vec<usize>> = message
        .strip_prefix("template: ")
        .and_then(|rest| rest.split(": ").next())
        .and_then(|at| at.split(':').map(|n| n.parse::<usize>().ok()).collect::<Option<Vec<_>>>());
    let Some(&[line, column]) = position.as_deref() else { return message.to_string() };
    match source.lines().nth(line.saturating_sub(1)).filter(|text| !text.trim().is_empty()) {
        Some(text) => {
            let text = text.replace('\t', " ");
            format!("{message}\n | {text}\n | {}^", ".".repeat(column.saturating_sub(1)))
        }
        None => message.to_string(),
    }
}

/// Renders one execution (compiled once per text); the result is the YAML mapping it produced.
#[allow(clippy::too_many_arguments)]
fn execute(
    step: &mut Step,
    execution: &Execution,
    scope: &str,
    field: &str,
    origin: &Origin,
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
        (None, Some(file)) => match resolve(origin.file.as_deref(), file.trim_start_matches('/'))
            .and_then(|path| step.files.read(&path).map_err(|err| format!("cannot read template file {path:?}: {err}")))
        {
            Ok(text) => (text, format!("{field}.file"), Some(file)),
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
        let data = go_binding(step, phase, imports, dataobjects);
        let rendered = match step.go.render(&source, origin.file.as_deref(), &data) {
            Ok(text) => text,
            Err(err) => {
                let message = format!("execution {:?}: {in_file}{}", execution.name, go_error(&err, &source));
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
        let data = binding(step, imports, dataobjects);
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

/// Deploy executions: `resources` are emitted; `deployItems` of type kubernetes-manifest
/// contribute their manifests, other deploy items are emitted as Landscaper `DeployItem`s. The
/// deploy items of all executions are checked together first, as Landscaper checks the
/// execution's list (executions/operation.go, validation/execution.go): names, types, target
/// imports and `dependsOn`.
fn deploy(step: &mut Step, blueprint: &Blueprint, scope: &str, origin: &Origin, imports: &Map) {
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
    origin: &Origin,
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
fn subinstallations(
    step: &mut Step,
    blueprint: &Blueprint,
    scope: &str,
    origin: &Origin,
    imports: &Map,
    depth: usize,
    report: &mut ScopeReport,
) -> Option<Map> {
    let mut dataobjects = Map::new();
    if blueprint.subinstallations.is_empty() {
        return Some(dataobjects);
    }
    // Which sibling's export each data object is, for the imports wired to it.
    let mut exported: HashMap<String, Wire> = HashMap::new();
    if depth >= MAX_DEPTH {
        step.results
            .push(origin.error(format!("subinstallations nest deeper than {MAX_DEPTH} levels"), "subinstallations"));
        return None;
    }
    let mut children = Vec::new();
    let mut names = HashSet::new();
    for (i, entry) in blueprint.subinstallations.iter().enumerate() {
        let field = format!("subinstallations[{i}]");
        match load_subinstallation(step, entry, origin) {
            Ok(child) if !names.insert(child.name.clone()) => {
                step.results.push(origin.error(
                    format!("subinstallations.{}: Duplicate value: \"duplicated subinstallation\"", child.name),
                    &field,
                ));
            }
            Ok(child) => children.push((i, child)),
            Err(message) if message.starts_with(FILE_CYCLE) && !step.cycles.insert(message.clone()) => {}
            Err(message) => {
                // Landscaper writes a field of the template after a dot: `subinstallations[2].name`.
                let text = match message.strip_prefix("name: ") {
                    Some(rest) => format!("{field}.name: {rest}"),
                    None => format!("{field}: {message}"),
                };
                step.results.push(origin.error(text, &field));
            }
        }
    }
    // Landscaper's checks of the installation templates (validation/blueprint.go): DNS-label
    // names, and data exports neither exported twice nor imported by the parent.
    let parent_data = parent_data_imports(&blueprint.imports, imports);
    let errors_before = step.results.len();
    let mut exporters: HashMap<&str, (&str, String)> = HashMap::new();
    for (i, child) in &children {
        let field = format!("subinstallations[{i}]");
        let path = format!("subinstallations.{}", child.name);
        for problem in installation_name_problems(&child.name) {
            let message = format!("{path}.name: Invalid value: {:?}: {problem}", child.name);
            step.results.push(origin.error(message, &format!("{field}.name")));
        }
        for (j, (export, data_ref)) in child.exports.iter().enumerate() {
            let data_path = format!("{path}.exports.data[{j}][{export}/{data_ref}]");
            let at = format!("{field}.exports.data[{j}]");
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
    }
    if step.results.len() > errors_before {
        return None;
    }
    // Who exports each data object, and so who waits for whom.
    let exporters: HashMap<&str, &str> = exporters.into_iter().map(|(data_ref, (name, _))| (data_ref, name)).collect();
    let depends: Vec<Vec<String>> = children
        .iter()
        .map(|(_, child)| {
            let mut deps: Vec<String> = child
                .imports
                .iter()
                .filter_map(|(_, data_ref)| exporters.get(data_ref.as_str()).map(|s| s.to_string()))
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
        let (i, child) = &children[position];
        report.subinstallations.push((child.name.clone(), depends[position].clone()));
        let field = format!("subinstallations[{i}]");
        let mut source = Map::new();
        let mut wiring = HashMap::new();
        let mut wired = true;
        for (j, (import, data_ref)) in child.imports.iter().enumerate() {
            if let Some(value) = imports.get(data_ref) {
                source.insert(import.clone(), value.clone());
                let parent = report.imports.iter().rev().find(|i| &i.name == data_ref);
                let secret = parent.map(|p| p.secret.clone()).unwrap_or_default();
                wiring.insert(import.clone(), Wire { label: format!("import {data_ref} of {scope}"), secret });
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
                step.results.push(origin.error(message, &format!("{field}.imports.data[{j}]")));
                wired = false;
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
                step.results.push(origin.error(message, &field));
            }
            return None;
        }
        let mut chain = origin.chain.clone();
        chain.extend(child.files.iter().cloned());
        let child_origin = Origin {
            item: origin.item.clone(),
            field: origin.field.clone().join(&FieldPath::parse(&format!("{field}.blueprint"))),
            file: child.file.clone().or_else(|| origin.file.clone()),
            prefix: format!("{}subinstallation {:?}: ", origin.prefix, child.name),
            chain,
        };
        let child_scope = format!("{scope}/{}", child.name);
        let rendered =
            render_blueprint(step, &child.blueprint, &child_scope, &child_origin, (&source, &wiring), depth + 1);
        if let Some(exports) = rendered {
            for (export, data_ref) in &child.exports {
                if let Some(value) = exports.get(export) {
                    dataobjects.insert(data_ref.clone(), value.clone());
                    let declared = child.blueprint.exports.iter().find(|e| &e.name == export);
                    let schema = declared.and_then(|e| e.schema.as_ref());
                    let secret =
                        schema.map(|s| schema::secret_paths(s, &child.blueprint.local_types)).unwrap_or_default();
                    let label = format!("export {export} of {child_scope}");
                    exported.insert(data_ref.clone(), Wire { label, secret });
                }
            }
        }
    }
    Some(dataobjects)
}

/// The parent's data imports a subinstallation may not export, as Landscaper lists them
/// (subinstallations/helper.go buildCoreImports): every import of type data, and those among
/// conditional imports whose parent import is satisfied.
fn parent_data_imports<'d>(decls: &'d [ImportDecl], imports: &Map) -> HashSet<&'d str> {
    let mut names = HashSet::new();
    for decl in decls {
        if import_type(decl) == "data" {
            names.insert(decl.name.as_str());
        }
        if imports.contains_key(&decl.name) {
            names.extend(parent_data_imports(&decl.imports, imports));
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

/// A subinstallation entry: inline, or `file:` holding an InstallationTemplate. Its blueprint
/// is inline fields, `{file: …}`, or Landscaper's `{filesystem: {blueprint.yaml: …}}`.
fn load_subinstallation(step: &Step, entry: &Value, origin: &Origin) -> Result<Subinstallation, String> {
    let mut files: Vec<String> = Vec::new();
    let mut enter = |resolved: &str| -> Result<(), String> {
        if let Some(start) = origin.chain.iter().chain(files.iter()).position(|f| f == resolved) {
            let mut cycle: Vec<&str> =
                origin.chain.iter().chain(files.iter()).skip(start).map(String::as_str).collect();
            cycle.push(resolved);
            return Err(format!("{FILE_CYCLE}: {}: remove one of these file references", cycle.join(" -> ")));
        }
        files.push(resolved.to_string());
        Ok(())
    };
    let (template, file): (InstallationTemplate, Option<String>) = match entry.get("file").and_then(Value::as_str) {
        Some(path) if entry.as_object().is_some_and(|m| m.len() == 1) => {
            let resolved = resolve(origin.file.as_deref(), path)?;
            enter(&resolved)?;
            let text = step.files.read(&resolved).map_err(|err| format!("cannot read {resolved:?}: {err}"))?;
            let document = single_document(&text).map_err(|err| format!("{resolved:?}: {err}"))?;
            let template =
                parse_section(&document).map_err(|(at, err)| format!("{resolved:?}: {}", located(&at, &err)))?;
            (template, Some(resolved))
        }
        _ => (parse_section(entry).map_err(|(at, err)| located(&at, &err))?, None),
    };
    if template.name.is_empty() {
        return Err("name: Required value: name must be defined".into());
    }
    let from = file.clone().or_else(|| origin.file.clone());
    let blueprint = match &template.blueprint {
        None => return Err(format!("subinstallation {:?} has no blueprint", template.name)),
        Some(Value::Object(map)) if map.contains_key("ref") => {
            return Err(
                "blueprint references (ref) need a component repository: inline the blueprint or use file".into()
            )
        }
        Some(Value::Object(map)) if map.contains_key("filesystem") => {
            let text = map
                .get("filesystem")
                .and_then(|fs| fs.get("blueprint.yaml"))
                .and_then(Value::as_str)
                .ok_or("blueprint.filesystem needs a blueprint.yaml entry")?;
            parse_section(&single_document(text)?)
                .map_err(|(at, err)| format!("blueprint.yaml: {}", located(&at, &err)))?
        }
        Some(Value::Object(map)) if map.len() == 1 && map.contains_key("file") => {
            let path = map.get("file").and_then(Value::as_str).unwrap_or_default();
            let resolved = resolve(from.as_deref(), path)?;
            enter(&resolved)?;
            let text = step.files.read(&resolved).map_err(|err| format!("cannot read {resolved:?}: {err}"))?;
            parse_section(&single_document(&text).map_err(|err| format!("{resolved:?}: {err}"))?)
                .map_err(|(at, err)| format!("{resolved:?}: {}", located(&at, &err)))?
        }
        Some(value) => {
            parse_section(value).map_err(|(at, err)| located(&FieldPath::root().key("blueprint").join(&at), &err))?
        }
    };
    Ok(Subinstallation {
        name: template.name,
        blueprint,
        imports: template.imports.data.into_iter().map(|d| (d.name, d.data_ref)).collect(),
        exports: template.exports.data.into_iter().map(|d| (d.name, d.data_ref)).collect(),
        file,
        files,
    })
}

fn single_document(text: &str) -> Result<Value, String> {
    let mut documents = read_yaml_documents(text).map_err(|err| format!("not valid YAML: {}", err.message))?;
    match documents.len() {
        1 => Ok(documents.remove(0)),
        n => Err(format!("expected one YAML document, found {n}")),
    }
}

/// Export executions, deep-merged in order; undeclared exports dropped; declared ones checked
/// against their schema; written to the ConfigMap `<scope>-exports`.
fn exports(
    step: &mut Step,
    blueprint: &Blueprint,
    scope: &str,
    origin: &Origin,
    imports: &Map,
    dataobjects: &Map,
) -> Option<Map> {
    if blueprint.export_executions.is_empty() && blueprint.exports.is_empty() {
        return Some(Map::new());
    }
    let mut merged = Value::Object(Map::new());
    for (i, execution) in blueprint.export_executions.iter().enumerate() {
        let field = format!("exportExecutions[{i}]");
        let rendered = execute(step, execution, scope, &field, origin, Phase::Export, imports, Some(dataobjects))?;
        if let Some(exports) = rendered.get("exports") {
            deep_merge(&mut merged, exports.clone());
        }
    }
    let Value::Object(mut merged) = merged else { return None };
    let declared: HashMap<&str, &ExportDecl> = blueprint.exports.iter().map(|e| (e.name.as_str(), e)).collect();
    let undeclared: Vec<String> = merged.keys().filter(|k| !declared.contains_key(k.as_str())).cloned().collect();
    for key in undeclared {
        merged.shift_remove(&key);
        let message = format!("export {key:?} is not declared by the blueprint and is dropped");
        step.results.push(origin.diagnostic(Severity::Warning, message, "exportExecutions"));
    }
    let mut failed = false;
    for (i, export) in blueprint.exports.iter().enumerate() {
        let field = format!("exports[{i}]");
        let Some(value) = merged.get(&export.name) else {
            step.results.push(
                origin
                    .error(format!("export {:?} is declared but no export execution produced it", export.name), &field),
            );
            failed = true;
            continue;
        };
        if let (Some(expected), None | Some("target")) = (&export.target_type, export.kind.as_deref()) {
            // Landscaper reads the exported target template's `type` (exports/constructor.go).
            let expected = model::full_target_type(expected);
            let problem = match value.get("type").and_then(Value::as_str) {
                None => {
                    Some("exported target does not match the expected target template schema: type is not found".into())
                }
                Some(actual) if actual != expected => {
                    Some(format!("exported target type is {actual} but expected {expected}"))
                }
                Some(_) => None,
            };
            if let Some(problem) = problem {
                step.results.push(origin.error(format!("export {:?}: {problem}", export.name), &field));
                failed = true;
            }
        }
        if let Some(schema) = &export.schema {
            match Schema::compile(schema, &blueprint.local_types, blueprint.json_schema_version.as_deref()) {
                Err(message) => {
                    step.results
                        .push(origin.error(format!("export {:?}: {message}", export.name), &format!("{field}.schema")));
                    failed = true;
                }
                Ok(schema) => {
                    let failures = schema.check(value);
                    if !failures.is_empty() {
                        let message = format!(
                            "export {:?}: exported data does not satisfy the configured schema: {}",
                            export.name,
                            failures.join("; ")
                        );
                        step.results.push(origin.error(message, &field));
                        failed = true;
                    }
                }
            }
        }
    }
    if failed {
        return None;
    }
    let data: Map = merged
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Value::String(v.as_str().map_or_else(|| serde_json::to_string(v).unwrap_or_default(), str::to_string)),
            )
        })
        .collect();
    let name = format!("{}-exports", scope.replace('/', "-"));
    let mut config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    set_annotation(&mut config_map, ann::LOCAL_CONFIG, "true");
    step.generated.push(Generated { item: config_map, substitute: false });
    Some(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn siblings_order_and_cycles() {
        let names: Vec<String> = ["c", "a", "b"].iter().map(|s| s.to_string()).collect();
        let depends = vec![vec![], vec!["b".to_string()], vec!["c".to_string()]];
        assert_eq!(order_siblings(&names, &depends), Ok(vec![0, 2, 1]));
        let cyclic = vec![vec![], vec!["b".to_string()], vec!["a".to_string()]];
        assert_eq!(order_siblings(&names, &cyclic), Err(vec!["a".into(), "b".into(), "a".into()]));
    }
}
