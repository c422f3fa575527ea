//! What the imports step's parts share: the step's state ([`Step`]), where a blueprint was
//! declared ([`Declared`]), how an import is wired ([`Wire`]), and the report they fill. A
//! module of its own so the parts use it, and `mod.rs` uses them, without a circle.

use super::files;
use super::gotemplate;
use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{FieldPath, Map, Value};
use crate::package::Files;
use crate::render::Generated;
use crate::template::Engine;
use std::collections::{HashMap, HashSet};

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
    pub(super) fn absent(name: &str, verdict: &str) -> Self {
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
pub(super) struct Wire {
    pub(super) label: String,
    pub(super) secret: Vec<Vec<String>>,
    /// At the top level, the values layers the value came from (`--set`, `-f values.yaml:3`,
    /// `spec.values`), for messages about it; a subinstallation's is its `label`.
    pub(super) from: Vec<String>,
}

/// Where a blueprint was declared, for diagnostics and relative paths.
#[derive(Clone)]
pub(super) struct Declared {
    /// The item (or config) to point diagnostics at, and the field path of the blueprint inside
    /// it (`spec` inline, root for an item).
    pub(super) origin: Origin,
    /// The file relative paths (execution files, subinstallation files) resolve from.
    pub(super) file: Option<String>,
    /// The blueprint's own files: its directory, or its inline filesystem.
    pub(super) fs: files::BlueprintFs,
    /// `subinstallation "a": ` for nested blueprints.
    pub(super) prefix: String,
    /// The subinstallation files read on the way here, to refuse one that includes itself.
    pub(super) chain: Vec<String>,
}

impl Declared {
    /// The blueprint at `field` of `item`, its relative paths resolving from the item's file.
    pub(super) fn in_item(item: &Value, field: FieldPath) -> Self {
        Declared::at(Origin::of(item).at(field))
    }

    /// The blueprint at `origin`, its relative paths resolving from its item's file.
    pub(super) fn at(origin: Origin) -> Self {
        let file = origin.file().map(str::to_string);
        let fs = files::BlueprintFs::of_file(file.as_deref());
        Declared { origin, file, fs, prefix: String::new(), chain: Vec::new() }
    }

    /// A file the blueprint names (`what`: "template file"), resolved and read through its
    /// filesystem: the resolved path and the text, or why not.
    pub(super) fn read(&self, files: &dyn Files, path: &str, what: &str) -> Result<(String, String), String> {
        let resolved = self.fs.resolve(self.file.as_deref(), path)?;
        match self.fs.read(files, &resolved) {
            Ok(text) => Ok((resolved, text)),
            Err(err) => Err(format!("cannot read {what} {:?}: {err}", self.fs.show(files, &resolved))),
        }
    }

    pub(super) fn diagnostic(&self, severity: Severity, message: impl AsRef<str>, field: &str) -> Diagnostic {
        self.origin.diagnostic(severity, Kind::Render, format!("{}{}", self.prefix, message.as_ref()), field)
    }

    pub(super) fn error(&self, message: impl AsRef<str>, field: &str) -> Diagnostic {
        self.diagnostic(Severity::Error, message, field)
    }
}

pub(super) struct Step<'a> {
    pub(super) files: &'a dyn Files,
    pub(super) values: &'a Value,
    pub(super) kots_config: Value,
    /// Inside a chosen implementation's scope (policy): `implementation` in the binding.
    pub(super) implementation: Option<Value>,
    pub(super) engine: Engine,
    /// GoTemplate executions: Landscaper's functions and the compiled templates.
    /// The render's budget, which importDataMappings' concatenations are charged to.
    pub(super) budget: std::sync::Arc<crate::limits::Budget>,
    pub(super) go: gotemplate::GoTemplates,
    pub(super) descriptors: gotemplate::Descriptors,
    /// What deployers would read back, by `[<subinstallation>/…]<deploy item>` (`deployitems`).
    pub(super) deploy_item_exports: Map,
    /// The file that declares the component descriptor (the RenderBlueprint's): local
    /// resources' paths resolve from it.
    pub(super) descriptor_file: Option<String>,
    /// The files of the referenced descriptors (`descriptors.list`), alongside them.
    pub(super) descriptor_files: Vec<Option<String>>,
    /// The component being rendered when it is one of `descriptors.list` (a subinstallation's
    /// blueprint of another component), and the GoTemplate functions of those rendered before.
    pub(super) component: Option<usize>,
    pub(super) component_go: HashMap<usize, gotemplate::GoTemplates>,
    pub(super) results: Vec<Diagnostic>,
    pub(super) generated: Vec<Generated>,
    pub(super) report: Report,
    /// Inclusion cycles already reported, and installations rendered so far.
    pub(super) cycles: HashSet<String>,
    pub(super) installations: usize,
    /// The functionConfig, where `spec.values` is: a value from there that fails its import's
    /// schema is reported at its own line.
    pub(super) config: Option<crate::diag::Origin>,
}

impl<'a> Step<'a> {
    /// A step over the values and KOTS config, with a template engine whose `getResource`
    /// answers from `resources` and `backend` from the policy's rules.
    pub(super) fn new(
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
pub(super) struct Component {
    pub(super) index: Option<usize>,
    pub(super) descriptors: gotemplate::Descriptors,
    pub(super) file: Option<String>,
    pub(super) go: gotemplate::GoTemplates,
}

impl Step<'_> {
    /// Renders with the component at `index` of `spec.componentDescriptors` as the blueprint's
    /// own (`.cd`, `.components`, getResource…, `cd://resources/…`), as Landscaper gives a
    /// subinstallation whose blueprint is that component's; returns what to restore.
    pub(super) fn enter_component(&mut self, index: usize) -> Component {
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
    pub(super) fn leave_component(&mut self, parent: Component) {
        let go = std::mem::replace(&mut self.go, parent.go);
        if let Some(index) = std::mem::replace(&mut self.component, parent.index) {
            self.component_go.insert(index, go);
        }
        self.descriptors = parent.descriptors;
        self.descriptor_file = parent.file;
    }
}
