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
//! This file holds the step's entry points ([`run`], [`render_implementations`]), the render of
//! one scope that they share, and the types the parts share; the parts are `validation`
//! (declarations, and import values against their schemas), `executions` (import, deploy and
//! export executions), `subinstallations` and `exports`.

mod executions;
mod exports;
pub mod files;
pub mod gotemplate;
mod mappings;
pub use crate::model::imports as model;
pub mod schema;
mod subinstallations;
mod validation;

use crate::config::parse_section;
use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{FieldPath, Map, Value};
use crate::krm::{self, type_of};
use crate::package::Files;
use crate::render::{Generated, Render};
use crate::template::Engine;
use model::Blueprint;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use subinstallations::referenced_files;
use validation::{resolve_imports, validate};

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
    /// At the top level, the values layers the value came from (`--set`, `-f values.yaml:3`,
    /// `spec.values`), for messages about it; a subinstallation's is its `label`.
    from: Vec<String>,
}

/// Where a blueprint was declared, for diagnostics and relative paths.
#[derive(Clone)]
struct Declared {
    /// The item (or config) to point diagnostics at, and the field path of the blueprint inside
    /// it (`spec` inline, root for an item).
    origin: Origin,
    /// The file relative paths (execution files, subinstallation files) resolve from.
    file: Option<String>,
    /// The blueprint's own files: its directory, or its inline filesystem.
    fs: files::BlueprintFs,
    /// `subinstallation "a": ` for nested blueprints.
    prefix: String,
    /// The subinstallation files read on the way here, to refuse one that includes itself.
    chain: Vec<String>,
}

impl Declared {
    /// The blueprint at `field` of `item`, its relative paths resolving from the item's file.
    fn in_item(item: &Value, field: FieldPath) -> Self {
        Declared::at(Origin::of(item).at(field))
    }

    /// The blueprint at `origin`, its relative paths resolving from its item's file.
    fn at(origin: Origin) -> Self {
        let file = origin.file().map(str::to_string);
        let fs = files::BlueprintFs::of_file(file.as_deref());
        Declared { origin, file, fs, prefix: String::new(), chain: Vec::new() }
    }

    /// A file the blueprint names (`what`: "template file"), resolved and read through its
    /// filesystem: the resolved path and the text, or why not.
    fn read(&self, files: &dyn Files, path: &str, what: &str) -> Result<(String, String), String> {
        let resolved = self.fs.resolve(self.file.as_deref(), path)?;
        match self.fs.read(files, &resolved) {
            Ok(text) => Ok((resolved, text)),
            Err(err) => Err(format!("cannot read {what} {:?}: {err}", self.fs.show(files, &resolved))),
        }
    }

    fn diagnostic(&self, severity: Severity, message: impl AsRef<str>, field: &str) -> Diagnostic {
        self.origin.diagnostic(severity, Kind::Render, format!("{}{}", self.prefix, message.as_ref()), field)
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
    /// The render's budget, which importDataMappings' concatenations are charged to.
    budget: std::sync::Arc<crate::limits::Budget>,
    go: gotemplate::GoTemplates,
    descriptors: gotemplate::Descriptors,
    /// What deployers would read back, by `[<subinstallation>/…]<deploy item>` (`deployitems`).
    deploy_item_exports: Map,
    /// The file that declares the component descriptor (the RenderBlueprint's): local
    /// resources' paths resolve from it.
    descriptor_file: Option<String>,
    /// The files of the referenced descriptors (`descriptors.list`), alongside them.
    descriptor_files: Vec<Option<String>>,
    /// The component being rendered when it is one of `descriptors.list` (a subinstallation's
    /// blueprint of another component), and the GoTemplate functions of those rendered before.
    component: Option<usize>,
    component_go: HashMap<usize, gotemplate::GoTemplates>,
    results: Vec<Diagnostic>,
    generated: Vec<Generated>,
    report: Report,
    /// Inclusion cycles already reported, and installations rendered so far.
    cycles: HashSet<String>,
    installations: usize,
    /// The functionConfig, where `spec.values` is: a value from there that fails its import's
    /// schema is reported at its own line.
    config: Option<crate::diag::Origin>,
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
            go: gotemplate::GoTemplates::new(files.share(), &descriptors, budget.clone()),
            budget,
            descriptors,
            deploy_item_exports: Map::new(),
            descriptor_file: None,
            descriptor_files: Vec::new(),
            component: None,
            component_go: HashMap::new(),
            results: Vec::new(),
            generated: Vec::new(),
            report: Report::default(),
            cycles: HashSet::new(),
            installations: 0,
            config: None,
        }
    }
}

/// What a step holds for the component being rendered, put aside while a blueprint of another
/// component renders: its descriptors, their file and its GoTemplate functions.
struct Component {
    index: Option<usize>,
    descriptors: gotemplate::Descriptors,
    file: Option<String>,
    go: gotemplate::GoTemplates,
}

impl Step<'_> {
    /// Renders with the component at `index` of `spec.componentDescriptors` as the blueprint's
    /// own (`.cd`, `.components`, getResource…, `cd://resources/…`), as Landscaper gives a
    /// subinstallation whose blueprint is that component's; returns what to restore.
    fn enter_component(&mut self, index: usize) -> Component {
        let cd = self.descriptors.list.get(index).and_then(Value::as_object).cloned().unwrap_or_default();
        let descriptors = gotemplate::descriptors(&cd, &self.descriptors.list);
        let go = match self.component_go.remove(&index) {
            Some(go) => go,
            None => gotemplate::GoTemplates::new(self.files.share(), &descriptors, self.budget.clone()),
        };
        let file = self.descriptor_files.get(index).cloned().flatten();
        let entered = self.component.replace(index);
        Component {
            index: entered,
            descriptors: std::mem::replace(&mut self.descriptors, descriptors),
            file: std::mem::replace(&mut self.descriptor_file, file),
            go: std::mem::replace(&mut self.go, go),
        }
    }

    /// Back to the component `enter_component` left; the functions of the one left are kept for
    /// its next blueprint (templates compile once).
    fn leave_component(&mut self, parent: Component) {
        let go = std::mem::replace(&mut self.go, parent.go);
        if let Some(index) = std::mem::replace(&mut self.component, parent.index) {
            self.component_go.insert(index, go);
        }
        self.descriptors = parent.descriptors;
        self.descriptor_file = parent.file;
    }

    /// The descriptors as the blueprint being rendered sees them.
    fn components(&self) -> subinstallations::Components<'_> {
        subinstallations::Components {
            cd: &self.descriptors.cd,
            cd_file: self.descriptor_file.as_deref(),
            list: &self.descriptors.list,
            files: &self.descriptor_files,
        }
    }
}

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

/// Renders one blueprint in its scope, its imports taken from `source` (each with its wiring,
/// for a subinstallation); returns its exports, or `None` when it failed.
fn render_blueprint(
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
    let dataobjects = subinstallations::render(step, blueprint, name, origin, &imports, depth, &mut report);
    let exports = exports::render(step, blueprint, name, origin, &imports, &dataobjects?);
    report.exports = exports.as_ref().map(|e| e.keys().cloned().collect()).unwrap_or_default();
    step.report.scopes.push(report);
    if step.results[errors_before..].iter().any(Diagnostic::is_error) {
        return None;
    }
    exports
}
