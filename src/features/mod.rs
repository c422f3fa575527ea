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
pub mod model;
mod order;

use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{deep_merge, FieldPath, Map, Value};
use crate::expr::interpolate::{embedded_text, interpolate_value, InterpolationError, Template};
use crate::expr::{to_text, type_name, Expression, Host};
use crate::krm::{self, annotations as ann, set_annotation};
use crate::package::{resolve, Files};
use crate::render::{Generated, Render};
use model::{Blueprint, Feature, Kustomization, Strategy, TerraformComponent};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// What the step decided, for `explain` and `graph`.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub features: Vec<FeatureDecision>,
    /// The merged blueprint, when there was one to merge.
    pub blueprint: Option<Blueprint>,
    /// Whether the package was composed as Windsor v0.9 (`spec.windsor.version` "0.9").
    pub facets: bool,
    /// The Kustomizations Flux systems compile to (after the blueprint's own).
    pub flux_tiers: Vec<Kustomization>,
    /// The Kustomizations that install the CRDs: the blueprint's `crds`, then each source's
    /// (before the blueprint's own).
    pub crd_layers: Vec<Kustomization>,
}

#[derive(Clone, Debug)]
pub struct FeatureDecision {
    pub name: String,
    /// Where the feature was declared: its file, or `spec.features[i]`.
    pub origin: String,
    pub when: String,
    pub enabled: bool,
    /// The values the condition read, as `(path, value)`.
    pub reads: Vec<(String, Value)>,
    pub components: Vec<ComponentDecision>,
}

#[derive(Clone, Debug)]
pub struct ComponentDecision {
    /// `terraform` or `kustomization`.
    pub kind: &'static str,
    pub name: String,
    pub when: String,
    pub enabled: bool,
    pub reads: Vec<(String, Value)>,
    /// `appended`, `merged`, `replaced`, or `skipped`.
    pub action: &'static str,
}

/// A feature or blueprint declaration: where it is (the item or config to point diagnostics at,
/// the field inside it; the item's file is the one its relative paths resolve from), and the
/// values it sees.
#[derive(Clone)]
struct Declared {
    origin: Origin,
    /// The values this declaration sees when they differ from the render's (a feature of an
    /// implementation chosen by policy sees `implementation` too).
    env: Option<Value>,
}

impl Declared {
    fn of_item(item: &Value) -> Self {
        Self { origin: Origin::of(item), env: None }
    }

    /// The same declaration's item, at `field`.
    fn at(&self, field: FieldPath) -> Self {
        Self { origin: self.origin.at(field), env: self.env.clone() }
    }

    fn describe(&self) -> String {
        match (self.origin.file(), self.origin.field.is_root(), &self.origin.resource) {
            (Some(file), true, _) => file.to_string(),
            (_, false, _) => self.origin.field.to_string(),
            (None, true, Some(resource)) => format!("{} {}", resource.kind, resource.name),
            (None, true, None) => " ".to_string(),
        }
    }

    fn diagnostic(&self, severity: Severity, message: String, field: &str) -> Diagnostic {
        self.origin.diagnostic(severity, Kind::Render, message, field)
    }
}

impl PackageHost<'_> {
    /// Why a package file could not be read, naming it as every message does ([`Files::shown`]).
    fn cannot_read(&self, what: &str, resolved: &str, err: crate::package::FileError) -> String {
        format!("cannot read {what}{:?}: {err}", self.files.shown(resolved))
    }

    /// A kustomization patch's `path:`, named as such (not as a `file()` call).
    fn patch_file(&self, path: &str) -> Result<String, String> {
        let resolved = resolve(self.from, path)?;
        self.files.read(&resolved).map_err(|err| self.cannot_read("patch file ", &resolved, err))
    }
}

/// `file()` and `jsonnet()` for one declaring file; Jsonnet results are shared across features.
struct PackageHost<'a> {
    files: &'a dyn Files,
    from: Option<&'a str>,
    values: &'a Value,
    jsonnet_cache: &'a RefCell<HashMap<String, Result<Value, String>>>,
    jsonnet: &'a crate::jsonnet::Session,
    /// Evaluating as Windsor v0.9 does (facets): [`Host::windsor_v09`].
    v09: bool,
    /// `spec.windsor.terraformOutputs`, when given.
    terraform_outputs: Option<&'a TerraformOutputs>,
    /// What `env()` reads.
    environment: &'a crate::render::Environment,
}

type TerraformOutputs = std::collections::BTreeMap<String, std::collections::BTreeMap<String, Value>>;

impl Host for PackageHost<'_> {
    fn windsor_v09(&self) -> bool {
        self.v09
    }

    fn env(&self, name: &str) -> Option<String> {
        self.environment.get(name).cloned()
    }

    fn terraform_output(&self, component: &str, key: &str) -> Option<Value> {
        let outputs = self.terraform_outputs?;
        Some(outputs.get(component).and_then(|keys| keys.get(key)).cloned().unwrap_or(Value::Null))
    }

    fn file(&self, path: &str) -> Result<String, String> {
        let resolved = resolve(self.from, path)?;
        self.files.read(&resolved).map_err(|err| format!("file({path:?}): {}", self.cannot_read("", &resolved, err)))
    }

    fn yaml_file(&self, path: &str) -> Result<Option<String>, String> {
        let resolved = resolve(self.from, path).map_err(|err| format!("file({path:?}): {err}"))?;
        match self.files.read(&resolved) {
            Ok(text) => Ok(Some(text)),
            Err(crate::package::FileError::NotFound { .. } | crate::package::FileError::NotInPackage) => Ok(None),
            Err(err) => Err(format!("file({path:?}): {}", self.cannot_read("", &resolved, err))),
        }
    }

    fn jsonnet(&self, path: &str) -> Result<Value, String> {
        let resolved = resolve(self.from, path)?;
        if let Some(cached) = self.jsonnet_cache.borrow().get(&resolved) {
            return cached.clone();
        }
        let values = crate::doc::wide_integers_as_floats(self.values);
        let result = crate::jsonnet::evaluate(self.jsonnet, self.files, &resolved, &values);
        self.jsonnet_cache.borrow_mut().insert(resolved, result.clone());
        result
    }
}

/// A `${…}` text compiled (`None`: it holds no `${`).
type Compiled = Result<Option<Rc<Template>>, InterpolationError>;

struct Step<'a> {
    files: &'a dyn Files,
    values: &'a Value,
    budget: std::sync::Arc<crate::limits::Budget>,
    jsonnet_cache: RefCell<HashMap<String, Result<Value, String>>>,
    jsonnet: crate::jsonnet::Session,
    results: Vec<Diagnostic>,
    /// Composing Windsor v0.9 facets: `${…}` as v0.9 evaluates it.
    facets: bool,
    /// The facets' scope: the values with the config blocks over them.
    scope: Option<Value>,
    /// `${…}` texts compiled once per render, however many facet rounds evaluate them.
    templates: RefCell<HashMap<String, Compiled>>,
    terraform_outputs: Option<&'a TerraformOutputs>,
    /// The environment variables `env()` reads.
    environment: std::sync::Arc<crate::render::Environment>,
    /// `spec.windsor.source` (v0.9): the source the package's entries come from.
    source: Option<String>,
    /// Paths the package declares or reads with a default: never taken for typos.
    known: known::Known,
    /// `spec.allowUnknown`: unknown fields and likely typos of value paths are warnings, not
    /// errors.
    allow_unknown: bool,
}

impl<'a> Step<'a> {
    /// Unknown fields and likely typos of value paths: errors unless `spec.allowUnknown`.
    fn unknown_severity(&self) -> Severity {
        if self.allow_unknown {
            Severity::Warning
        } else {
            Severity::Error
        }
    }

    fn unknown_hint(&self) -> &'static str {
        if self.allow_unknown {
            ""
        } else {
            " (fix it, or set spec.allowUnknown: true to make this a warning)"
        }
    }

    fn env<'s>(&'s self, origin: &'s Declared) -> &'s Value {
        origin.env.as_ref().or(self.scope.as_ref()).unwrap_or(self.values)
    }

    /// `text` compiled, from the cache when it was compiled before.
    fn template(&self, text: &str) -> Compiled {
        if let Some(cached) = self.templates.borrow().get(text) {
            return cached.clone();
        }
        let compiled = Template::compile_windsor(text).map(|t| t.map(Rc::new));
        self.templates.borrow_mut().insert(text.to_string(), compiled.clone());
        compiled
    }

    /// Windsor v0.9's `Evaluate` of every string in `value` against `scope`: a string that is one
    /// `${…}` whose result is text holding `${` is evaluated again (as v0.9 does, at most 20
    /// times), which is how a derived config key is read where it is used.
    fn evaluate_value(&self, value: &Value, scope: &Value, origin: &Declared) -> Result<Value, InterpolationError> {
        match value {
            Value::Array(items) => {
                items.iter().map(|v| self.evaluate_nested(v, scope, origin)).collect::<Result<_, _>>().map(Value::Array)
            }
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| self.evaluate_nested(v, scope, origin).map(|v| (k.clone(), v)))
                .collect::<Result<_, _>>()
                .map(Value::Object),
            other => self.evaluate_leaf(other, scope, origin),
        }
    }

    /// An element inside a map or list being evaluated, as v0.9's `evaluateValue` treats it: a
    /// string still holding a `${…}` once evaluated (a deferred expression, or the text of one it
    /// read) keeps its text as written, so `mirrors: ${talos_registry_mirrors.mirrors}` stays a
    /// reference that `string()` writes as is, and the deferred text is put in where it is read.
    fn evaluate_nested(&self, value: &Value, scope: &Value, origin: &Declared) -> Result<Value, InterpolationError> {
        let evaluated = self.evaluate_value(value, scope, origin)?;
        match (value, &evaluated) {
            (Value::String(written), Value::String(text))
                if !written.contains("$${") && text.contains("${") && matches!(self.template(text), Ok(Some(_))) =>
            {
                Ok(value.clone())
            }
            _ => Ok(evaluated),
        }
    }

    fn evaluate_leaf(&self, value: &Value, scope: &Value, origin: &Declared) -> Result<Value, InterpolationError> {
        match value {
            Value::String(text) => {
                let mut text = std::borrow::Cow::Borrowed(text.as_str());
                for _ in 0..20 {
                    let Some(template) = self.template(&text)? else {
                        return Ok(Value::String(text.into_owned()));
                    };
                    let host = PackageHost { values: scope, ..self.host(origin) };
                    let (result, whole) = template.eval_whole(scope, &host, &self.budget)?;
                    match result {
                        Value::String(next) if whole && next.contains("${") && next != *text => {
                            text = std::borrow::Cow::Owned(next);
                        }
                        other => return Ok(other),
                    }
                }
                Ok(Value::String(text.into_owned()))
            }
            other => Ok(other.clone()),
        }
    }

    /// `${…}` in every string of `value`, against the declaration's values (v0.9's way for facets).
    fn interpolate_value(&self, value: &Value, origin: &Declared) -> Result<Value, InterpolationError> {
        if self.facets {
            self.evaluate_value(value, self.env(origin), origin)
        } else {
            interpolate_value(value, self.env(origin), &self.host(origin), &self.budget)
        }
    }

    fn host(&'a self, origin: &'a Declared) -> PackageHost<'a> {
        PackageHost {
            files: self.files,
            from: origin.origin.file(),
            values: self.env(origin),
            jsonnet_cache: &self.jsonnet_cache,
            jsonnet: &self.jsonnet,
            v09: self.facets,
            terraform_outputs: self.terraform_outputs,
            environment: &self.environment,
        }
    }

    /// Evaluates a `when`: empty is true, nil is false, anything but a boolean is an error. A
    /// path it reads that no value sets, but that is a few characters from one that is, gets a
    /// warning at `field`: a typo turns a feature off without a word otherwise.
    fn condition(
        &mut self,
        when: &str,
        origin: &Declared,
        field: &str,
    ) -> Result<(bool, Vec<(String, Value)>), String> {
        if when.trim().is_empty() {
            return Ok((true, Vec::new()));
        }
        // v0.9 evaluates `when` with the same functions as `${…}` (`cidrhost()` among them).
        let compile = if self.facets { Expression::compile_value } else { Expression::compile };
        let expression = compile(when).map_err(|err| {
            format!("failed to compile expression '{}': {}", crate::expr::excerpt(when), err.render(when))
        })?;
        let env = self.env(origin);
        let reads = expression.identifiers().into_iter().map(|path| {
            let value = lookup(env, &path).cloned().unwrap_or(Value::Null);
            (path, value)
        });
        let reads: Vec<(String, Value)> = reads.collect();
        // Only a path close to one that is set is taken for a typo: a condition on an optional
        // value nobody set (`observability.enabled ?? false`) is ordinary and stays quiet.
        let unset: Vec<String> = reads
            .iter()
            .filter(|(path, _)| lookup(env, path).is_none() && !self.known.contains(path))
            .filter_map(|(path, _)| {
                let near = closest_path(env, path)?;
                Some(format!("the condition reads {path}, which no value sets (it reads as nil): did you mean {near}?"))
            })
            .collect();
        let value = expression.eval(env, &self.host(origin), &self.budget).map_err(|err| {
            format!("failed to evaluate expression '{}': {}", crate::expr::excerpt(when), err.render(when))
        });
        let severity = self.unknown_severity();
        for message in unset {
            self.results.push(origin.diagnostic(severity, format!("{message}{}", self.unknown_hint()), field));
        }
        let value = value?;
        match value {
            Value::Bool(b) => Ok((b, reads)),
            Value::Null => Ok((false, reads)),
            other => Err(format!("expression '{when}' must evaluate to boolean, got {}", type_name(&other))),
        }
    }

    fn interpolation_error(&mut self, origin: &Declared, field: &str, err: InterpolationError) {
        self.results.push(origin.diagnostic(Severity::Error, err.to_string(), field));
    }

    /// Evaluates a terraform component's inputs; a whole-expression input that is nil is dropped.
    fn prepare_terraform(
        &mut self,
        mut component: TerraformComponent,
        origin: &Declared,
        field: &str,
    ) -> TerraformComponent {
        // A removal names the inputs to delete: its keys matter (`toRemove: null` too), not values.
        if component.strategy == Strategy::Remove {
            component.source = component.source.filter(|s| !s.is_empty());
            return component;
        }
        let mut inputs = Map::new();
        let written = std::mem::take(&mut component.inputs);
        for (key, value) in written.clone() {
            match self.interpolate_value(&value, origin) {
                // v0.8.1 drops an input that is nil; v0.9's `EvaluateMap` keeps its key (null).
                Ok(Value::Null) if !self.facets => {}
                Ok(value) => {
                    inputs.insert(key, value);
                }
                Err(err) => self.interpolation_error(origin, &format!("{field}.inputs.{key}"), err),
            }
        }
        // v0.8.1 takes the evaluated inputs only when one is left (`len(filteredInputs) > 0`);
        // when every input gave nil, the entry keeps its inputs as written.
        component.inputs = if inputs.is_empty() && !self.facets { written } else { inputs };
        component.source = component.source.filter(|s| !s.is_empty());
        component
    }

    /// Evaluates substitutions (then stringified) and inline patch text; reads path patches.
    /// With v0.9, `substitute` (its other spelling) is merged in first, winning on a shared key
    /// (`mergeSubstitute`).
    fn prepare_kustomization(
        &mut self,
        mut kustomization: Kustomization,
        origin: &Declared,
        field: &str,
    ) -> Kustomization {
        if self.facets {
            if let Some(Value::Object(substitute)) = kustomization.extra.remove("substitute") {
                kustomization.substitutions.extend(substitute);
            }
        }
        let mut substitutions = Map::new();
        for (key, value) in std::mem::take(&mut kustomization.substitutions) {
            match self.interpolate_value(&value, origin) {
                Ok(value) => {
                    substitutions.insert(key, Value::String(to_text(&value)));
                }
                Err(err) => self.interpolation_error(origin, &format!("{field}.substitutions.{key}"), err),
            }
        }
        kustomization.substitutions = substitutions;
        let mut patches = Vec::new();
        for (i, mut patch) in std::mem::take(&mut kustomization.patches).into_iter().enumerate() {
            let patch_field = format!("{field}.patches[{i}]");
            match (patch.patch.take(), patch.path.take()) {
                (Some(text), None) => match self.interpolate_value(&Value::String(text), origin) {
                    Ok(value) => patch.patch = Some(embedded_text(&value)),
                    Err(err) => {
                        self.interpolation_error(origin, &format!("{patch_field}.patch"), err);
                        continue;
                    }
                },
                // Path patches are read and inlined as they are: their `${…}` are left for Flux.
                // Only the package's bookkeeping annotations are left out (kpt writes back the
                // local-config one the first run set, which would make kustomize drop the target).
                (None, Some(path)) => match self.host(origin).patch_file(&path) {
                    Ok(text) => patch.patch = Some(crate::krm::annotations::without_bookkeeping(&text).into_owned()),
                    Err(err) => {
                        self.results.push(origin.diagnostic(Severity::Error, err, &format!("{patch_field}.path")));
                        continue;
                    }
                },
                (Some(_), Some(_)) => {
                    let message = "a patch has either patch (inline text) or path (a file), not both".to_string();
                    self.results.push(origin.diagnostic(Severity::Error, message, &patch_field));
                    continue;
                }
                (None, None) => {
                    let message = "a patch needs patch (inline text) or path (a file)".to_string();
                    self.results.push(origin.diagnostic(Severity::Error, message, &patch_field));
                    continue;
                }
            }
            if let Err(message) =
                crate::patch::check(patch.patch.as_deref().unwrap_or_default(), patch.target.is_some())
            {
                self.results.push(origin.diagnostic(Severity::Error, message, &patch_field));
                continue;
            }
            patches.push(patch);
        }
        kustomization.patches = patches;
        kustomization.source = kustomization.source.filter(|s| !s.is_empty());
        kustomization
    }

    fn warn_unknown_fields(&mut self, origin: &Declared, found: Vec<(String, String, Option<&'static str>)>) {
        for (path, key, closest) in found {
            // v0.9's kustomization fields are read with version "0.9" (a kustomization, or a Flux
            // system's install or resources tier).
            let kustomization = (path.starts_with("kustomize[") && !path.contains(".patches"))
                || path.ends_with(".install")
                || path.contains(".resources[");
            if self.facets && kustomization && model::V09_KUSTOMIZATION_FIELDS.contains(&key.as_str()) {
                continue;
            }
            let terraform = path.starts_with("terraform[");
            if self.facets && terraform && model::V09_TERRAFORM_FIELDS.contains(&key.as_str()) {
                continue;
            }
            let field = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            let kept = if self.allow_unknown { " is kept but not used" } else { "" };
            let message = match closest {
                Some(known) => format!("unknown field {key:?}{kept}; the closest known field is {known:?}"),
                None => format!("unknown field {key:?}{kept}"),
            };
            let message = format!("{message}{}", self.unknown_hint());
            self.results.push(origin.diagnostic(self.unknown_severity(), message, &field));
        }
    }
}

/// The value path closest to `path` (at most a quarter of its characters different), looked for
/// only when a condition reads a path that is not set. The walk stops after 10 000 paths.
fn closest_path(values: &Value, path: &str) -> Option<String> {
    // Lengths further apart than the allowed distance cannot match, and a key's children are
    // longer than the key: neither is compared, nor their dotted path made.
    let allowed = (path.chars().count() / 4).max(1);
    let longest = path.len() + allowed;
    let mut best: Option<(usize, String)> = None;
    let mut stack: Vec<(&Value, String)> = vec![(values, String::new())];
    let mut seen = 0;
    while let Some((value, at)) = stack.pop() {
        let Value::Object(map) = value else { continue };
        for (key, child) in map {
            seen += 1;
            if seen > 10_000 {
                return best.map(|(_, near)| near);
            }
            let len = if at.is_empty() { key.len() } else { at.len() + 1 + key.len() };
            if len > longest {
                continue;
            }
            let candidate = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
            if len.abs_diff(path.len()) <= allowed && !letters_too_far(path, &candidate, allowed) {
                let distance = strsim::levenshtein(path, &candidate);
                if distance <= allowed && best.as_ref().is_none_or(|(d, _)| distance < *d) {
                    best = Some((distance, candidate.clone()));
                }
            }
            stack.push((child, candidate));
        }
    }
    best.map(|(_, near)| near)
}

/// A lower bound of the edit distance that costs one pass: each edit changes the letter counts
/// by at most two, so counts that differ by more than twice `allowed` cannot be within it. Most
/// names of a large values tree are ruled out so, before the full distance is computed. ASCII
/// only (the bound counts bytes); other text is left to the full distance.
fn letters_too_far(a: &str, b: &str, allowed: usize) -> bool {
    if !a.is_ascii() || !b.is_ascii() {
        return false;
    }
    let mut counts = [0i32; 128];
    a.bytes().for_each(|c| counts[usize::from(c)] += 1);
    b.bytes().for_each(|c| counts[usize::from(c)] -= 1);
    counts.iter().map(|n| n.unsigned_abs() as usize).sum::<usize>() > 2 * allowed
}

fn lookup<'v>(values: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(values, |node, key| node.get(key))
}

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
    if let Some((schema, discovered)) = windsor_schema(&render.config.item, spec, &blueprint_items, files) {
        match schema {
            Ok(schema) => {
                known.add_schema(&schema);
                // The schema next to the blueprint, as Windsor reads `_template/schema.yaml`: its
                // defaults under the values (a schema the RenderBlueprint names is applied already).
                if discovered && spec.windsor.schema_defaults != Some(false) {
                    let defaults = Value::Object(crate::values::defaults_of(&schema));
                    let missing = not_set(&defaults, &render.values);
                    if missing.as_object().is_some_and(|m| !m.is_empty()) {
                        if render.set_values.is_none() {
                            render.set_values = Some(render.values.clone());
                        }
                        let label = "schema defaults (schema.yaml next to the Blueprint item)".to_string();
                        let source = crate::render::Source { label, secret: false };
                        render.value_sources.record(&render.values, &missing, source);
                        deep_merge(&mut render.values, missing);
                    }
                }
            }
            Err(message) => schema_results.push(Diagnostic::error(Kind::Values, message).about(&render.config.item)),
        }
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
    if v09 {
        // The facets' overlay is what was set (`GetSetValues`), never what is derived: without
        // a schema that is the values as they are before deriving.
        if render.set_values.is_none() {
            render.set_values = Some(render.values.clone());
        }
        if let Some(name) = render.config.spec.windsor.context.clone() {
            apply_context_defaults(&mut render.values, &mut render.set_values, &mut render.value_sources, &name);
        }
        crate::values::apply_windsor_derived(&mut render.values, &mut render.value_sources);
        if let Some(name) = &render.config.spec.windsor.context {
            crate::values::apply_windsor_context(&mut render.values, &mut render.value_sources, name);
        }
    }
    let spec = &render.config.spec;
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
            warn_facet_only_fields(&mut step, &feature, &origin);
            let decision = apply_feature(&mut step, &mut blueprint, feature, &origin);
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
                facets::apply_terraform(&mut blueprint.terraform, component, Strategy::Merge);
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
    facets::resolve_tier_dependencies(&mut blueprint);
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
        compiled.kustomize = crd_layers.iter().cloned().chain(facets::all_kustomizations(&blueprint)).collect();
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
    report.flux_tiers = blueprint.flux.iter().flat_map(facets::compile_tiers).collect();
    report.crd_layers = crd_layers;
    report.blueprint = Some(blueprint);
    report
}

/// The Windsor schema of the render: the file `spec.windsor.schema` names (`false`: its defaults
/// are applied by the values step), else `schema.yaml` next to the Blueprint item when there is
/// one (`true`). `None` when there is neither.
fn windsor_schema(
    config: &Value,
    spec: &crate::config::Spec,
    blueprints: &[&Value],
    files: &dyn Files,
) -> Option<(Result<Map, String>, bool)> {
    let (path, discovered) = match &spec.windsor.schema {
        Some(named) => (resolve(krm::item_location(config).0.as_deref(), named).ok()?, false),
        None => {
            let blueprint = krm::item_location(blueprints.first()?).0?;
            (resolve(Some(&blueprint), "schema.yaml").ok()?, true)
        }
    };
    // A missing file next to the blueprint is no schema; a named one was reported by the values step.
    let text = files.read(&path).ok()?;
    let parsed =
        crate::values::parse_schema(&text).map_err(|err| format!("schema file {:?}: {err}", files.shown(&path)));
    Some((parsed, discovered))
}

/// What `defaults` holds that `values` does not set: the defaults as a layer under the values.
fn not_set(defaults: &Value, values: &Value) -> Value {
    let (Value::Object(defaults), Some(values)) = (defaults, values.as_object()) else {
        return Value::Object(Map::new());
    };
    let mut layer = Map::new();
    for (key, default) in defaults {
        match values.get(key) {
            None => {
                layer.insert(key.clone(), default.clone());
            }
            Some(set @ Value::Object(_)) if default.is_object() => {
                let inner = not_set(default, set);
                if inner.as_object().is_some_and(|m| !m.is_empty()) {
                    layer.insert(key.clone(), inner);
                }
            }
            Some(_) => {}
        }
    }
    Value::Object(layer)
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

/// What Windsor v0.9's `ApplyConfigDefaults` and `ResolveConfig` give a context before and after
/// loading its files, as values under (before) and over unset keys of (after) what the operator
/// set: for a context named `local` or `local-*`, `dev: true`, `platform: docker` and
/// `workstation.runtime: docker` (Windsor's choice on Linux; `docker-desktop` on macOS and
/// Windows); for any other, `platform: none`. Then `dns.domain: test` when a workstation runs and
/// DNS is not off, `workstation.dns.address: 127.0.0.1` on Docker Desktop, and `platform: incus`
/// for a dev context on colima with `vm.runtime: incus`. Schema defaults stay under all of it.
fn apply_context_defaults(
    values: &mut Value,
    set_values: &mut Option<Value>,
    sources: &mut crate::render::Sources,
    name: &str,
) {
    let set = set_values.clone().unwrap_or_else(|| values.clone());
    let dev_by_name = name == "local" || name.starts_with("local-");
    let mut before = serde_json::json!({"platform": "none"});
    if dev_by_name {
        before = serde_json::json!({"dev": true, "platform": "docker", "workstation": {"runtime": "docker"}});
    }
    let mut layer = not_set(&before, &set);
    let mut merged = values.clone();
    deep_merge(&mut merged, layer.clone());
    let text = |path: &str| lookup(&merged, path).and_then(Value::as_str).unwrap_or_default().to_string();
    let mut after = Map::new();
    let runtime = text("workstation.runtime");
    let dns_on = matches!(lookup(&merged, "dns.enabled"), None | Some(Value::Null) | Some(Value::Bool(true)));
    if dns_on && !runtime.is_empty() && text("dns.domain").is_empty() {
        after.insert("dns".into(), serde_json::json!({"domain": "test"}));
    }
    if runtime == "docker-desktop" && text("workstation.dns.address").is_empty() {
        after.insert("workstation".into(), serde_json::json!({"dns": {"address": "127.0.0.1"}}));
    }
    let dev = match lookup(&merged, "dev") {
        Some(Value::Bool(dev)) => *dev,
        _ => dev_by_name,
    };
    let vm = match text("vm.runtime") {
        vm if vm.is_empty() => "docker".to_string(),
        vm => vm,
    };
    let platform = text("platform");
    if dev && (platform.is_empty() || platform == "docker") && runtime == "colima" && vm == "incus" {
        after.insert("platform".into(), Value::from("incus"));
    }
    deep_merge(&mut layer, Value::Object(after));
    if layer.as_object().is_none_or(|m| m.is_empty()) {
        return;
    }
    let source = crate::render::Source { label: format!("Windsor's defaults for context {name:?}"), secret: false };
    sources.record(values, &layer, source);
    deep_merge(values, layer.clone());
    if let Some(set) = set_values {
        deep_merge(set, layer);
    }
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

/// A problem of the merged graph, which no single declaration owns: reported on the config.
fn graph_diagnostic(config: &Declared, severity: Severity, message: String) -> Diagnostic {
    Diagnostic::new(severity, Kind::Render, message).about_origin(&config.origin)
}

fn parse_blueprint(step: &mut Step, value: &Value, origin: &Declared) -> Option<Blueprint> {
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
        let raw = if step.facets { std::mem::take(&mut component.inputs) } else { Map::new() };
        let mut component = step.prepare_terraform(component, origin, &format!("terraform[{i}]"));
        if step.facets {
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

fn parse_feature(step: &mut Step, value: &Value, origin: &Declared) -> Option<Feature> {
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
fn flux_system_fields(systems: &[model::FluxSystem], found: &mut Vec<(String, String, Option<&'static str>)>) {
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

/// `spec.blueprint` over a Blueprint item: metadata and repository replace when set, sources
/// replace (v0.9: merge by name);
/// components merge as a feature's would. With v0.9 a terraform component matches by its `GetID` (name, else path), as v0.9's
/// `strategicMergeTerraformComponent` matches it (v0.8.1: path and source).
fn overlay_blueprint(base: &mut Blueprint, overlay: Blueprint, v09: bool) {
    if !overlay.metadata.name.is_empty() {
        base.metadata.name = overlay.metadata.name;
    }
    if overlay.metadata.description.is_some() {
        base.metadata.description = overlay.metadata.description;
    }
    if overlay.repository.is_some() {
        base.repository = overlay.repository;
    }
    if v09 {
        // v0.9's `StrategicMerge`: sources merge by name, the overlay's entry winning with the
        // base's CRD references kept; new names are appended.
        for source in overlay.sources {
            match base.sources.iter_mut().find(|s| s.name == source.name) {
                Some(existing) => {
                    let crds = std::mem::take(&mut existing.crds);
                    *existing = source;
                    push_unique(&mut existing.crds, crds);
                }
                None => base.sources.push(source),
            }
        }
    } else if !overlay.sources.is_empty() {
        base.sources = overlay.sources;
    }
    for component in overlay.terraform {
        if v09 {
            facets::apply_terraform(&mut base.terraform, component, Strategy::Merge);
        } else {
            merge_terraform(&mut base.terraform, component);
        }
    }
    for kustomization in overlay.kustomize {
        merge_kustomization(&mut base.kustomize, kustomization);
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

/// A component's own condition, as a decision (`skipped` until merged); `None` after an error.
fn decide(
    step: &mut Step,
    kind: &'static str,
    name: String,
    when: &str,
    origin: &Declared,
    field: &str,
) -> Option<ComponentDecision> {
    match step.condition(when, origin, &format!("{field}.when")) {
        Ok((enabled, reads)) => {
            Some(ComponentDecision { kind, name, when: when.to_string(), enabled, reads, action: "skipped" })
        }
        Err(message) => {
            step.results.push(origin.diagnostic(Severity::Error, message, &format!("{field}.when")));
            None
        }
    }
}

fn push_unique(list: &mut Vec<String>, items: Vec<String>) {
    for item in items {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// Windsor's terraform merge, then its dependency sort (a cycle is reported once, at the end).
fn merge_terraform(list: &mut Vec<TerraformComponent>, component: TerraformComponent) -> &'static str {
    let action = combine_terraform(list, component);
    let _ = order::sort_terraform(list);
    action
}

/// Match on path and source; `merge` deep-merges inputs (feature wins), unique-appends
/// dependsOn, overwrites destroy and parallelism when set; `replace` swaps the component in
/// place; `remove` (Windsor v0.9's, which v0.8.1 lacks) deletes the inputs and dependsOn it
/// lists; no match appends (or, for `remove`, does nothing).
fn combine_terraform(list: &mut Vec<TerraformComponent>, mut component: TerraformComponent) -> &'static str {
    let strategy = component.strategy;
    component.when.clear();
    component.strategy = Strategy::Merge;
    (component.ordinal, component.requires) = (None, Vec::new());
    let Some(existing) = list.iter_mut().find(|c| c.path == component.path && c.source == component.source) else {
        if strategy == Strategy::Remove {
            return "skipped";
        }
        list.push(component);
        return "appended";
    };
    match strategy {
        Strategy::Replace => {
            *existing = component;
            return "replaced";
        }
        Strategy::Remove => {
            subtract_terraform(existing, &component);
            return "removed";
        }
        Strategy::Merge => {}
    }
    let mut inputs = Value::Object(std::mem::take(&mut existing.inputs));
    deep_merge(&mut inputs, Value::Object(component.inputs));
    if let Value::Object(inputs) = inputs {
        existing.inputs = inputs;
    }
    push_unique(&mut existing.depends_on, component.depends_on);
    existing.destroy = component.destroy.or(existing.destroy);
    existing.parallelism = component.parallelism.or(existing.parallelism);
    existing.extra.extend(component.extra);
    "merged"
}

/// Windsor's kustomization merge, then its dependency sort (a cycle is reported once, at the end).
fn merge_kustomization(list: &mut Vec<Kustomization>, kustomization: Kustomization) -> &'static str {
    let action = combine_kustomization(list, kustomization);
    let _ = order::sort_kustomizations(list);
    action
}

/// Match on name; `merge` unions components (then sorts them, as Windsor does) and dependsOn
/// (order kept), overwrites path, source, destroy and the Flux timings when set, appends
/// patches and merges substitutions (later wins per key); `replace` swaps it whole; `remove`
/// deletes what it lists (v0.9's); no match appends (or, for `remove`, does nothing).
fn combine_kustomization(list: &mut Vec<Kustomization>, mut kustomization: Kustomization) -> &'static str {
    let strategy = kustomization.strategy;
    kustomization.when.clear();
    kustomization.strategy = Strategy::Merge;
    (kustomization.ordinal, kustomization.requires) = (None, Vec::new());
    let Some(existing) = list.iter_mut().find(|k| k.name == kustomization.name) else {
        if strategy == Strategy::Remove {
            return "skipped";
        }
        list.push(kustomization);
        return "appended";
    };
    match strategy {
        Strategy::Replace => {
            *existing = kustomization;
            "replaced"
        }
        Strategy::Remove => {
            subtract_kustomization(existing, &kustomization);
            "removed"
        }
        Strategy::Merge => {
            merge_kustomization_fields(existing, kustomization);
            "merged"
        }
    }
}

/// Windsor's `MergeKustomizationFields`: components and dependsOn unioned, the rest overwritten
/// when the overlay sets it, patches appended, substitutions merged.
fn merge_kustomization_fields(existing: &mut Kustomization, kustomization: Kustomization) {
    push_unique(&mut existing.components, kustomization.components);
    existing.components.sort();
    push_unique(&mut existing.depends_on, kustomization.depends_on);
    if !kustomization.path.is_empty() {
        existing.path = kustomization.path;
    }
    existing.source = kustomization.source.or(existing.source.take());
    existing.destroy = kustomization.destroy.or(existing.destroy);
    existing.interval = kustomization.interval.or(existing.interval.take());
    existing.retry_interval = kustomization.retry_interval.or(existing.retry_interval.take());
    existing.timeout = kustomization.timeout.or(existing.timeout.take());
    existing.wait = kustomization.wait.or(existing.wait);
    existing.force = kustomization.force.or(existing.force);
    existing.prune = kustomization.prune.or(existing.prune);
    existing.patches.extend(kustomization.patches);
    existing.substitutions.extend(kustomization.substitutions);
    existing.extra.extend(kustomization.extra);
}

/// Windsor v0.9's `subtractKustomizationFields`: only what the removal lists goes (dependsOn and
/// components items, patches with the same text, substitution keys); the rest stays.
fn subtract_kustomization(existing: &mut Kustomization, removal: &Kustomization) {
    existing.depends_on.retain(|d| !removal.depends_on.contains(d));
    existing.components.retain(|c| !removal.components.contains(c));
    existing.patches.retain(|p| !removal.patches.iter().any(|r| r.patch.is_some() && r.patch == p.patch));
    existing.substitutions.retain(|key, _| !removal.substitutions.contains_key(key));
}

/// Windsor v0.9's `RemoveTerraformComponent`: the listed input keys and dependsOn items go.
fn subtract_terraform(existing: &mut TerraformComponent, removal: &TerraformComponent) {
    existing.inputs.retain(|key, _| !removal.inputs.contains_key(key));
    existing.depends_on.retain(|d| !removal.depends_on.contains(d));
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
