//! What both Windsor versions' compositions share: each declaration's place and the values it
//! sees ([`Declared`]), what `file()`, `jsonnet()` and `env()` read ([`PackageHost`]), and the
//! evaluation of conditions and `${…}` and the preparation of entries ([`Step`]).

use super::known;
use super::model::{self, Kustomization, Strategy, TerraformComponent};
use super::report::ComponentDecision;
use crate::config::WindsorVersion::{self, V08, V09};
use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{dotted, FieldPath, Map, Value};
use crate::expr::interpolate::{embedded_text, interpolate_value, InterpolationError, Template};
use crate::expr::{to_text, type_name, Expression, Host, Semantics};
use crate::package::{resolve, Files};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A feature or blueprint declaration: where it is (the item or config to point diagnostics at,
/// the field inside it; the item's file is the one its relative paths resolve from), and the
/// values it sees.
#[derive(Clone)]
pub(super) struct Declared {
    pub(super) origin: Origin,
    /// The values this declaration sees when they differ from the render's (a feature of an
    /// implementation chosen by policy sees `implementation` too).
    pub(super) env: Option<Value>,
}

impl Declared {
    pub(super) fn of_item(item: &Value) -> Self {
        Self { origin: Origin::of(item), env: None }
    }

    /// The same declaration's item, at `field`.
    pub(super) fn at(&self, field: FieldPath) -> Self {
        Self { origin: self.origin.at(field), env: self.env.clone() }
    }

    pub(super) fn describe(&self) -> String {
        match (self.origin.file(), self.origin.field.is_root(), &self.origin.resource) {
            (Some(file), true, _) => file.to_string(),
            (_, false, _) => self.origin.field.to_string(),
            (None, true, Some(resource)) => format!("{} {}", resource.kind, resource.name),
            (None, true, None) => " ".to_string(),
        }
    }

    pub(super) fn diagnostic(&self, severity: Severity, message: String, field: &str) -> Diagnostic {
        self.origin.diagnostic(severity, Kind::Render, message, field)
    }
}

impl PackageHost<'_> {
    /// Why a package file could not be read, naming it as every message does ([`Files::shown`]).
    pub(super) fn cannot_read(&self, what: &str, resolved: &str, err: crate::package::FileError) -> String {
        format!("cannot read {what}{:?}: {err}", self.files.shown(resolved))
    }

    /// A kustomization patch's `path:`, named as such (not as a `file()` call).
    pub(super) fn patch_file(&self, path: &str) -> Result<String, String> {
        let resolved = resolve(self.from, path)?;
        self.files.read(&resolved).map_err(|err| self.cannot_read("patch file ", &resolved, err))
    }
}

/// `file()` and `jsonnet()` for one declaring file; Jsonnet results are shared across features.
pub(super) struct PackageHost<'a> {
    pub(super) files: &'a dyn Files,
    pub(super) from: Option<&'a str>,
    pub(super) values: &'a Value,
    pub(super) jsonnet_cache: &'a RefCell<HashMap<String, Result<Value, String>>>,
    pub(super) jsonnet: &'a crate::jsonnet::Session,
    /// `spec.windsor.terraformOutputs`, when given.
    pub(super) terraform_outputs: Option<&'a TerraformOutputs>,
    /// What `env()` reads.
    pub(super) environment: &'a crate::render::Environment,
}

pub(super) type TerraformOutputs = std::collections::BTreeMap<String, std::collections::BTreeMap<String, Value>>;

impl Host for PackageHost<'_> {
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
pub(super) type Compiled = Result<Option<Rc<Template>>, InterpolationError>;

pub(super) struct Step<'a> {
    pub(super) files: &'a dyn Files,
    pub(super) values: &'a Value,
    pub(super) budget: std::sync::Arc<crate::limits::Budget>,
    pub(super) jsonnet_cache: RefCell<HashMap<String, Result<Value, String>>>,
    pub(super) jsonnet: crate::jsonnet::Session,
    pub(super) results: Vec<Diagnostic>,
    /// The Windsor release composed: how `${…}` and conditions are evaluated, which nil inputs
    /// are kept, which fields are known.
    pub(super) version: WindsorVersion,
    /// The facets' scope: the values with the config blocks over them.
    pub(super) scope: Option<Value>,
    /// `${…}` texts compiled once per render, however many facet rounds evaluate them.
    pub(super) templates: RefCell<HashMap<String, Compiled>>,
    pub(super) terraform_outputs: Option<&'a TerraformOutputs>,
    /// The environment variables `env()` reads.
    pub(super) environment: std::sync::Arc<crate::render::Environment>,
    /// `spec.windsor.source` (v0.9): the source the package's entries come from.
    pub(super) source: Option<String>,
    /// Paths the package declares or reads with a default: never taken for typos.
    pub(super) known: known::Known,
    /// `spec.allowUnknown`: unknown fields and likely typos of value paths are warnings, not
    /// errors.
    pub(super) allow_unknown: bool,
}

impl<'a> Step<'a> {
    /// Unknown fields and likely typos of value paths: errors unless `spec.allowUnknown`.
    pub(super) fn unknown_severity(&self) -> Severity {
        if self.allow_unknown {
            Severity::Warning
        } else {
            Severity::Error
        }
    }

    pub(super) fn unknown_hint(&self) -> &'static str {
        if self.allow_unknown {
            ""
        } else {
            " (fix it, or set spec.allowUnknown: true to make this a warning)"
        }
    }

    pub(super) fn env<'s>(&'s self, origin: &'s Declared) -> &'s Value {
        origin.env.as_ref().or(self.scope.as_ref()).unwrap_or(self.values)
    }

    /// `text` compiled, from the cache when it was compiled before.
    pub(super) fn template(&self, text: &str) -> Compiled {
        if let Some(cached) = self.templates.borrow().get(text) {
            return cached.clone();
        }
        let compiled = Template::compile_windsor(text, self.semantics()).map(|t| t.map(Rc::new));
        self.templates.borrow_mut().insert(text.to_string(), compiled.clone());
        compiled
    }

    /// Windsor v0.9's `Evaluate` of every string in `value` against `scope`: a string that is one
    /// `${…}` whose result is text holding `${` is evaluated again (as v0.9 does, at most 20
    /// times), which is how a derived config key is read where it is used.
    pub(super) fn evaluate_value(
        &self,
        value: &Value,
        scope: &Value,
        origin: &Declared,
    ) -> Result<Value, InterpolationError> {
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
    pub(super) fn evaluate_nested(
        &self,
        value: &Value,
        scope: &Value,
        origin: &Declared,
    ) -> Result<Value, InterpolationError> {
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

    pub(super) fn evaluate_leaf(
        &self,
        value: &Value,
        scope: &Value,
        origin: &Declared,
    ) -> Result<Value, InterpolationError> {
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
    pub(super) fn interpolate_value(&self, value: &Value, origin: &Declared) -> Result<Value, InterpolationError> {
        match self.version {
            V08 => interpolate_value(value, self.env(origin), &self.host(origin), &self.budget),
            V09 => self.evaluate_value(value, self.env(origin), origin),
        }
    }

    /// What expressions and templates mean in this release.
    fn semantics(&self) -> Semantics {
        match self.version {
            V08 => Semantics::Expr,
            V09 => Semantics::WindsorV09,
        }
    }

    pub(super) fn host(&'a self, origin: &'a Declared) -> PackageHost<'a> {
        PackageHost {
            files: self.files,
            from: origin.origin.file(),
            values: self.env(origin),
            jsonnet_cache: &self.jsonnet_cache,
            jsonnet: &self.jsonnet,
            terraform_outputs: self.terraform_outputs,
            environment: &self.environment,
        }
    }

    /// Evaluates a `when`: empty is true, nil is false, anything but a boolean is an error. A
    /// path it reads that no value sets, but that is a few characters from one that is, gets a
    /// warning at `field`: a typo turns a feature off without a word otherwise.
    pub(super) fn condition(
        &mut self,
        when: &str,
        origin: &Declared,
        field: &str,
    ) -> Result<(bool, Vec<(String, Value)>), String> {
        if when.trim().is_empty() {
            return Ok((true, Vec::new()));
        }
        // v0.9 evaluates `when` with the same functions as `${…}` (`cidrhost()` among them).
        let compiled = match self.version {
            V08 => Expression::compile(when),
            V09 => Expression::compile_value_as(when, Semantics::WindsorV09),
        };
        let expression = compiled.map_err(|err| {
            format!("failed to compile expression '{}': {}", crate::expr::excerpt(when), err.render(when))
        })?;
        let env = self.env(origin);
        let reads = expression.identifiers().into_iter().map(|path| {
            let value = dotted(env, &path).cloned().unwrap_or(Value::Null);
            (path, value)
        });
        let reads: Vec<(String, Value)> = reads.collect();
        // Only a path close to one that is set is taken for a typo: a condition on an optional
        // value nobody set (`observability.enabled ?? false`) is ordinary and stays quiet.
        let unset: Vec<String> = reads
            .iter()
            .filter(|(path, _)| dotted(env, path).is_none() && !self.known.contains(path))
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

    pub(super) fn interpolation_error(&mut self, origin: &Declared, field: &str, err: InterpolationError) {
        self.results.push(origin.diagnostic(Severity::Error, err.to_string(), field));
    }

    /// Evaluates a terraform component's inputs; a whole-expression input that is nil is dropped.
    pub(super) fn prepare_terraform(
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
                Ok(Value::Null) if self.version == V08 => {}
                Ok(value) => {
                    inputs.insert(key, value);
                }
                Err(err) => self.interpolation_error(origin, &format!("{field}.inputs.{key}"), err),
            }
        }
        // v0.8.1 takes the evaluated inputs only when one is left (`len(filteredInputs) > 0`);
        // when every input gave nil, the entry keeps its inputs as written.
        component.inputs = if inputs.is_empty() && self.version == V08 { written } else { inputs };
        component.source = component.source.filter(|s| !s.is_empty());
        component
    }

    /// Evaluates substitutions (then stringified) and inline patch text; reads path patches.
    /// With v0.9, `substitute` (its other spelling) is merged in first, winning on a shared key
    /// (`mergeSubstitute`).
    pub(super) fn prepare_kustomization(
        &mut self,
        mut kustomization: Kustomization,
        origin: &Declared,
        field: &str,
    ) -> Kustomization {
        if self.version == V09 {
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

    pub(super) fn warn_unknown_fields(
        &mut self,
        origin: &Declared,
        found: Vec<(String, String, Option<&'static str>)>,
    ) {
        for (path, key, closest) in found {
            // v0.9's kustomization fields are read with version "0.9" (a kustomization, or a Flux
            // system's install or resources tier).
            let kustomization = (path.starts_with("kustomize[") && !path.contains(".patches"))
                || path.ends_with(".install")
                || path.contains(".resources[");
            if self.version == V09 && kustomization && model::V09_KUSTOMIZATION_FIELDS.contains(&key.as_str()) {
                continue;
            }
            let terraform = path.starts_with("terraform[");
            if self.version == V09 && terraform && model::V09_TERRAFORM_FIELDS.contains(&key.as_str()) {
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
pub(super) fn closest_path(values: &Value, path: &str) -> Option<String> {
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
pub(super) fn letters_too_far(a: &str, b: &str, allowed: usize) -> bool {
    if !a.is_ascii() || !b.is_ascii() {
        return false;
    }
    let mut counts = [0i32; 128];
    a.bytes().for_each(|c| counts[usize::from(c)] += 1);
    b.bytes().for_each(|c| counts[usize::from(c)] -= 1);
    counts.iter().map(|n| n.unsigned_abs() as usize).sum::<usize>() > 2 * allowed
}

/// A problem of the merged graph, which no single declaration owns: reported on the config.
pub(super) fn graph_diagnostic(config: &Declared, severity: Severity, message: String) -> Diagnostic {
    Diagnostic::new(severity, Kind::Render, message).about_origin(&config.origin)
}

/// A component's own condition, as a decision (`skipped` until merged); `None` after an error.
pub(super) fn decide(
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
