//! The policy step (compat: Capact's engine — pkg/hub/client/policy_merger.go,
//! policy_enforced_client.go, public/{filter,sort}.go): policy layers merged in priority order,
//! a rule looked up per interface, implementations filtered by the rule's constraints and sorted
//! by path then highest revision, and TypeInstances and parameters injected. It renders nothing
//! itself: each chosen implementation is left in `Render::implementations`, and the imports step
//! (`imports::render_implementations`) renders its resources and deploy executions in its scope
//! and hands its features, with that scope, to the features step.
//!
//! `implementationConstraints.path` is a Go (RE2) regular expression searched for anywhere in the
//! implementation's path, as Capact's `regexp.Match` does; each is compiled once per load. One
//! deliberate difference from Capact: the higher layer wins every merge (Capact lets the lower
//! layer win for `default.inject` and TypeInstance backend rules).

pub use crate::model::policy as model;

use crate::config::parse_section;
use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{deep_merge, FieldPath, Map, Value};
use crate::krm;
use crate::render::{Chosen, Render};
use model::{
    BackendRule, Choice, Constraints, ImplementationSpec, Inject, InterfaceRef, PolicyItemSpec, PolicyLayer, TypeRef,
};
use regex::Regex;
use serde_json::json;
use std::cmp::Ordering;
use std::sync::Arc;

const API_VERSION: &str = "fn.blueprint.dev/v1alpha1";
const LAYERS: [&str; 3] = ["action", "global", "workflow"];

/// One interface's resolution, for `info` results and `explain`.
#[derive(Clone, Debug, Default)]
pub struct Decision {
    pub interface: String,
    pub path: String,
    /// `<layer> (<place>)`, or empty when no rule applied.
    pub rule: String,
    /// `<layer> layer (<place>)` of the lower rules merged into `rule`.
    pub merged: Vec<String>,
    /// The rule's interface as written (`cap.*` for any) and the interface it was found for.
    pub rule_match: String,
    /// The chosen entry's constraints and what each matched, such as the path pattern and the path.
    pub constraints_match: String,
    /// `(implementation, verdict)`: `chosen`, or why it was passed over.
    pub candidates: Vec<(String, String)>,
    pub chosen: Option<String>,
    pub injected: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub decisions: Vec<Decision>,
}

/// A policy element and where it was declared.
#[derive(Clone, Debug)]
struct Placed<T> {
    value: T,
    layer: String,
    place: String,
}

/// A `oneOf` entry with its path pattern compiled once, when the policies are loaded.
#[derive(Clone, Debug)]
struct MergedChoice {
    placed: Placed<Choice>,
    path: Option<Regex>,
}

#[derive(Clone, Debug, Default)]
struct MergedRule {
    interface: TypeRef,
    layer: String,
    place: String,
    /// `<layer> layer (<place>)` of the other rules merged into this one, for `explain`.
    merged_from: Vec<String>,
    choices: Vec<MergedChoice>,
}

/// The merged policy of a render.
#[derive(Clone, Debug, Default)]
pub struct Merged {
    rules: Vec<MergedRule>,
    defaults: Vec<Placed<model::RequiredTypeInstance>>,
    backends: Vec<Placed<BackendRule>>,
}

/// One policy and where it came from: the item and field its errors point at.
#[derive(Clone)]
struct Source {
    layer: String,
    policy: PolicyLayer,
    place: String,
    /// The policy's item (or the config) and field, for its errors.
    origin: Origin,
}

/// Every `Policy` item, parsed once.
fn policy_items(render: &Render, results: &mut Vec<Diagnostic>) -> Vec<Source> {
    let mut out = Vec::new();
    for item in render.items.iter().filter(|i| i.type_of() == (API_VERSION, "Policy")).map(|i| &**i) {
        let spec = item.get("spec").cloned().unwrap_or(Value::Null);
        if spec.is_null() {
            let message = "a Policy needs spec.layer (action, global or workflow) and its rules";
            results.push(Diagnostic::error(Kind::Config, message).about(item).at(FieldPath::root().key("spec")));
            continue;
        }
        match parse_section::<PolicyItemSpec>(&spec) {
            Ok(policy) if LAYERS.contains(&policy.layer.as_str()) => {
                let file = krm::item_location(item).0.map(|f| format!(" in {f}")).unwrap_or_default();
                let place = format!("Policy {:?}{file}", krm::name_of(item));
                out.push(Source {
                    layer: policy.layer,
                    policy: PolicyLayer { interface: policy.interface, type_instance: policy.type_instance },
                    place,
                    origin: Origin::of(item).at(FieldPath::root().key("spec")),
                });
            }
            Ok(policy) => {
                let message =
                    format!("spec.layer {:?} is not a policy layer: use action, global or workflow", policy.layer);
                results.push(
                    Diagnostic::error(Kind::Config, message).about(item).at(FieldPath::root().key("spec").key("layer")),
                );
            }
            Err((field, message)) => results.push(
                Diagnostic::error(Kind::Config, message).about(item).at(FieldPath::root().key("spec").join(&field)),
            ),
        }
    }
    out
}

/// A layer's policies in merge order: `spec.policy.<layer>` (workflow steps outermost first), then
/// `Policy` items of that layer.
fn layer_policies(render: &Render, layer: &str, items: &[Source]) -> Vec<Source> {
    let settings = &render.config.spec.policy;
    let config = |policy: &PolicyLayer, field: FieldPath, name: String| {
        let file = krm::item_location(&render.config.item).0.map(|f| format!(" in {f}")).unwrap_or_default();
        Source {
            layer: layer.to_string(),
            policy: policy.clone(),
            place: format!("spec.policy.{name}{file}"),
            origin: Origin::of(&render.config.item).at(field),
        }
    };
    let root = FieldPath::root().key("spec").key("policy");
    let mut out = Vec::new();
    match layer {
        "global" => out.extend(settings.global.iter().map(|p| config(p, root.clone().key("global"), "global".into()))),
        "action" => out.extend(settings.action.iter().map(|p| config(p, root.clone().key("action"), "action".into()))),
        _ => out.extend(
            settings
                .workflow
                .iter()
                .enumerate()
                .map(|(i, p)| config(p, root.clone().key("workflow").index(i), format!("workflow[{i}]"))),
        ),
    }
    out.extend(items.iter().filter(|s| s.layer == layer).cloned());
    out
}

fn same_ref(a: &TypeRef, b: &TypeRef) -> bool {
    a.path == b.path && a.revision.as_deref().unwrap_or_default() == b.revision.as_deref().unwrap_or_default()
}

/// Merges `lower` into `higher`, as Capact's policy merger does: additional parameters deep-merged
/// by name with the higher layer winning; type instances keyed by typeRef, the higher layer's kept
/// in place.
fn merge_inject(higher: &mut Inject, lower: &Inject) {
    for parameter in &lower.additional_parameters {
        match higher.additional_parameters.iter_mut().find(|p| p.name == parameter.name) {
            Some(existing) => {
                let mut merged = parameter.value.clone();
                deep_merge(&mut merged, existing.value.clone());
                existing.value = merged;
            }
            None => higher.additional_parameters.push(parameter.clone()),
        }
    }
    for instance in &lower.required_type_instances {
        if !higher.required_type_instances.iter().any(|i| same_ref(&i.type_ref, &instance.type_ref)) {
            higher.required_type_instances.push(instance.clone());
        }
    }
    for instance in &lower.additional_type_instances {
        let same = |i: &model::AdditionalTypeInstance| match (&i.type_ref, &instance.type_ref) {
            (Some(a), Some(b)) => same_ref(a, b),
            _ => i.name == instance.name,
        };
        if !higher.additional_type_instances.iter().any(same) {
            higher.additional_type_instances.push(instance.clone());
        }
    }
}

/// Merges every layer, highest priority first, compiling each path pattern once.
pub fn load(render: &mut Render) -> Merged {
    let mut results = Vec::new();
    let order: Vec<String> =
        render.config.spec.policy.order.clone().unwrap_or_else(|| LAYERS.iter().map(|s| s.to_string()).collect());
    for layer in &order {
        if !LAYERS.contains(&layer.as_str()) {
            results.push(
                Diagnostic::error(
                    Kind::Config,
                    format!("spec.policy.order: unknown layer {layer:?}: use action, global and workflow"),
                )
                .at(FieldPath::root().key("spec").key("policy").key("order")),
            );
        }
    }
    let items = policy_items(render, &mut results);
    let mut merged = Merged::default();
    for layer in &order {
        // Within a layer as across layers, an earlier policy wins: Capact merges nested workflow
        // step policies outermost first, and two rules for one interface into one.
        for source in layer_policies(render, layer, &items) {
            let Source { policy, place, origin, .. } = source;
            let field = &origin.field;
            for (i, rule) in policy.interface.rules.iter().enumerate() {
                let rule_place = format!("{place} interface.rules[{i}]");
                let rule_field = field.clone().key("interface").key("rules").index(i);
                let mut choices = Vec::new();
                for (j, choice) in rule.one_of.iter().enumerate() {
                    let path = match compile_path(&choice.implementation_constraints) {
                        Ok(path) => path,
                        Err(message) => {
                            let at =
                                rule_field.clone().key("oneOf").index(j).key("implementationConstraints").key("path");
                            results.push(Diagnostic::error(Kind::Config, message).about_origin(&origin).at(at));
                            continue;
                        }
                    };
                    let placed = Placed {
                        value: choice.clone(),
                        layer: layer.clone(),
                        place: format!("{rule_place}.oneOf[{j}]"),
                    };
                    choices.push(MergedChoice { placed, path });
                }
                merge_rule(&mut merged, &rule.interface, choices, layer, &rule_place);
            }
            if let Some(defaults) = &policy.interface.default {
                for (i, instance) in defaults.inject.required_type_instances.iter().enumerate() {
                    if !merged.defaults.iter().any(|d| same_ref(&d.value.type_ref, &instance.type_ref)) {
                        let place = format!("{place} interface.default.inject.requiredTypeInstances[{i}]");
                        merged.defaults.push(Placed { value: instance.clone(), layer: layer.clone(), place });
                    }
                }
            }
            for (i, rule) in policy.type_instance.rules.iter().enumerate() {
                if !merged.backends.iter().any(|b| same_ref(&b.value.type_ref, &rule.type_ref)) {
                    let place = format!("{place} typeInstance.rules[{i}]");
                    merged.backends.push(Placed { value: rule.clone(), layer: layer.clone(), place });
                }
            }
        }
    }
    render.results.extend(results);
    let backends = merged.backends.clone();
    render.backends = Arc::new(move |path: &str, revision: &str| Ok(backend(&backends, path, revision)));
    merged
}

/// Compiles `implementationConstraints.path` as Go's `regexp` reads it; Capact skips an
/// implementation when its pattern does not compile, which would deny silently, so here it is an
/// error.
fn compile_path(constraints: &Constraints) -> Result<Option<Regex>, String> {
    let Some(pattern) = &constraints.path else {
        return Ok(None);
    };
    crate::template::sprig::regex::compile(pattern).map(Some).map_err(|err| {
        // The crate's error draws a caret under the pattern over several lines; its last line
        // says what is wrong.
        let reason = err.lines().last().unwrap_or_default().trim().trim_start_matches("error: ");
        format!(
            "implementationConstraints.path {pattern:?} is not a valid regular expression: {reason}; \
             write a Go (RE2) pattern, with \\. for a literal dot"
        )
    })
}

/// Adds a rule's entries to the merged rule for its interface: the existing (higher) rule's
/// entries come first; an entry with equal constraints merges its injections into the existing
/// one, the others are appended in order, as Capact's policy merger does.
fn merge_rule(merged: &mut Merged, interface: &TypeRef, choices: Vec<MergedChoice>, layer: &str, place: &str) {
    let Some(existing) = merged.rules.iter_mut().find(|r| same_ref(&r.interface, interface)) else {
        merged.rules.push(MergedRule {
            interface: interface.clone(),
            layer: layer.to_string(),
            place: place.to_string(),
            merged_from: Vec::new(),
            choices,
        });
        return;
    };
    existing.merged_from.push(format!("{layer} layer ({place})"));
    for choice in choices {
        match existing
            .choices
            .iter_mut()
            .find(|c| c.placed.value.implementation_constraints == choice.placed.value.implementation_constraints)
        {
            Some(higher) => merge_inject(&mut higher.placed.value.inject, &choice.placed.value.inject),
            None => existing.choices.push(choice),
        }
    }
}

/// TypeInstance backend for a type, in the order of Capact's policy documentation: exact
/// `path:revision`, then the exact path in any revision, then `<prefix>.*` with the revision, then
/// without, walking up the path to `cap.*`. Nothing found: null (Capact stores the TypeInstance in
/// its built-in storage).
fn backend(rules: &[Placed<BackendRule>], path: &str, revision: &str) -> Value {
    let find = |p: &str, r: Option<&str>| {
        rules
            .iter()
            .find(|rule| rule.value.type_ref.path == p && rule.value.type_ref.revision.as_deref() == r)
            .map(|rule| rule.value.backend.clone())
    };
    let revision = Some(revision).filter(|r| !r.is_empty());
    // Capact's documented order: exact path and revision, then the exact path in any revision.
    if let Some(found) = revision.and_then(|r| find(path, Some(r))).or_else(|| find(path, None)) {
        return found;
    }
    let mut sub = path;
    while let Some((parent, _)) = sub.rsplit_once('.') {
        let pattern = format!("{parent}.*");
        if let Some(found) = revision.and_then(|r| find(&pattern, Some(r))).or_else(|| find(&pattern, None)) {
            return found;
        }
        sub = parent;
    }
    Value::Null
}

/// Semantic-version order (Masterminds semver in Capact); unparsable revisions compare as text.
fn compare_revisions(a: &str, b: &str) -> Ordering {
    let parse = |v: &str| -> Option<(Vec<u64>, String)> {
        let v = v.trim_start_matches('v');
        let (core, pre) = v.split_once('-').unwrap_or((v, ""));
        let numbers = core.split('.').map(|n| n.parse::<u64>().ok()).collect::<Option<Vec<_>>>()?;
        Some((numbers, pre.to_string()))
    };
    match (parse(a), parse(b)) {
        (Some((x, xp)), Some((y, yp))) => x.cmp(&y).then_with(|| match (xp.is_empty(), yp.is_empty()) {
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => xp.cmp(&yp),
        }),
        _ => a.cmp(b),
    }
}

struct Candidate {
    spec: ImplementationSpec,
    /// The Implementation item, for its errors and for the render of what it produces.
    origin: Origin,
}

impl Candidate {
    fn id(&self) -> String {
        format!("{}:{}", self.spec.path, self.spec.revision)
    }
}

fn has_ref(list: &[TypeRef], wanted: &TypeRef) -> bool {
    list.iter()
        .any(|r| r.path == wanted.path && wanted.revision.as_ref().is_none_or(|rev| r.revision.as_ref() == Some(rev)))
}

/// Why an implementation does not satisfy constraints, or `None` when it does.
fn rejection(candidate: &Candidate, constraints: &Constraints, path: Option<&Regex>) -> Option<String> {
    if let Some(pattern) = path {
        if !pattern.is_match(&candidate.spec.path) {
            return Some(format!("path does not match pattern {:?}", constraints.path.as_deref().unwrap_or_default()));
        }
    }
    if let Some(missing) = constraints.attributes.iter().find(|a| !has_ref(&candidate.spec.attributes, a)) {
        return Some(format!("lacks attribute {}", missing.describe()));
    }
    let requires: Vec<TypeRef> = candidate
        .spec
        .requires
        .iter()
        .map(|r| TypeRef { path: r.path.clone(), revision: r.revision.clone() })
        .collect();
    if let Some(missing) = constraints.requires.iter().find(|r| !has_ref(&requires, r)) {
        return Some(format!("does not require {}", missing.describe()));
    }
    None
}

/// Chooses an implementation for each of `spec.interfaces` by the rules [`load`] merged; the
/// imports step renders the chosen ones (`Render::implementations`).
pub fn run(render: &mut Render, merged: Merged) -> Report {
    let mut report = Report::default();
    let interfaces: Vec<InterfaceRef> = render.config.spec.interfaces.clone();
    if interfaces.is_empty() {
        return report;
    }
    let mut candidates = Vec::new();
    for item in render.items.iter().filter(|i| i.type_of() == (API_VERSION, "Implementation")).map(|i| &**i) {
        let spec = item.get("spec").cloned().unwrap_or(Value::Null);
        match parse_section::<ImplementationSpec>(&spec) {
            Ok(spec) => candidates.push(Candidate { spec, origin: Origin::of(item) }),
            Err((field, message)) => render.results.push(
                Diagnostic::error(Kind::Config, message).about(item).at(FieldPath::root().key("spec").join(&field)),
            ),
        }
    }
    // Choosing among the implementations that did parse would report a misleading second error
    // (no implementation found) for an interface the broken one implements.
    if render.results.iter().any(Diagnostic::is_error) {
        return report;
    }
    let config = Origin::of(&render.config.item);
    let at_config = |diagnostic: Diagnostic| diagnostic.about_origin(&config);
    for (index, interface) in interfaces.iter().enumerate() {
        let field = FieldPath::root().key("spec").key("interfaces").index(index);
        let mut decision =
            Decision { interface: interface.name.clone(), path: interface.path.clone(), ..Default::default() };
        let wanted = TypeRef { path: interface.path.clone(), revision: interface.revision.clone() };
        let denied = |reason: String| {
            format!("no implementations found with current policy for interface {:?}: {reason}", interface.path)
        };
        // Lookup: path:revision, then path without revision, then cap.*.
        let rule = interface
            .revision
            .as_ref()
            .and_then(|_| merged.rules.iter().find(|r| same_ref(&r.interface, &wanted)))
            .or_else(|| {
                merged.rules.iter().find(|r| r.interface.path == interface.path && r.interface.revision.is_none())
            })
            .or_else(|| merged.rules.iter().find(|r| r.interface.path == "cap.*" && r.interface.revision.is_none()));
        let Some(rule) = rule else {
            render.results.push(at_config(
                Diagnostic::error(Kind::Render, denied("no policy rule applies (add one for it, or cap.*)".into()))
                    .at(field),
            ));
            report.decisions.push(decision);
            continue;
        };
        decision.rule = format!("{} layer ({})", rule.layer, rule.place);
        decision.merged.clone_from(&rule.merged_from);
        decision.rule_match = format!("{} matched {}", rule.interface.describe(), wanted.describe());
        let implementing: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| {
                c.spec.implements.iter().any(|i| {
                    i.path == interface.path
                        && interface.revision.as_ref().is_none_or(|r| i.revision.as_ref().is_none_or(|ir| ir == r))
                })
            })
            .collect();
        if rule.choices.is_empty() {
            render.results.push(at_config(
                Diagnostic::error(Kind::Render, denied(format!("the rule in {} allows none (oneOf: [])", rule.place)))
                    .at(field),
            ));
            report.decisions.push(decision);
            continue;
        }
        let mut chosen: Option<(&Candidate, &MergedChoice, Inject)> = None;
        for merged_choice in &rule.choices {
            let choice = &merged_choice.placed;
            // The defaults apply to every rule; the rule wins on the same typeRef.
            let mut inject = choice.value.inject.clone();
            for default in &merged.defaults {
                if !inject.required_type_instances.iter().any(|i| same_ref(&i.type_ref, &default.value.type_ref)) {
                    inject.required_type_instances.push(default.value.clone());
                }
            }
            let mut matching: Vec<&Candidate> = Vec::new();
            for candidate in &implementing {
                match rejection(candidate, &choice.value.implementation_constraints, merged_choice.path.as_ref())
                    .or_else(|| unsatisfied_alias(candidate, &inject))
                {
                    Some(reason) => decision.candidates.push((
                        candidate.id(),
                        format!("rejected by {} ({} layer): {reason}", choice.place, choice.layer),
                    )),
                    None => matching.push(candidate),
                }
            }
            matching.sort_by(|a, b| {
                a.spec.path.cmp(&b.spec.path).then_with(|| compare_revisions(&b.spec.revision, &a.spec.revision))
            });
            if let Some(first) = matching.first() {
                for other in &matching[1..] {
                    decision
                        .candidates
                        .push((other.id(), format!("matched {} but sorts after {}", choice.place, first.id())));
                }
                chosen = Some((first, merged_choice, inject));
                break;
            }
        }
        let Some((candidate, choice, inject)) = chosen else {
            let reason = if implementing.is_empty() {
                "no Implementation item implements it".to_string()
            } else {
                format!("no implementation satisfies the constraints of {}", rule.place)
            };
            render.results.push(at_config(Diagnostic::error(Kind::Render, denied(reason)).at(field)));
            report.decisions.push(decision);
            continue;
        };
        let choice = &choice.placed;
        decision.candidates.push((candidate.id(), format!("chosen by {}", choice.place)));
        decision.chosen = Some(candidate.id());
        decision.constraints_match = constraints_match(&choice.value.implementation_constraints, candidate);
        match scope(candidate, &inject, &choice.place, &mut decision) {
            Ok(implementation) => {
                let message = format!(
                    "interface {:?} ({}): {} chose {}{}",
                    interface.name,
                    interface.path,
                    decision.rule,
                    candidate.id(),
                    if decision.injected.is_empty() {
                        String::new()
                    } else {
                        format!("; injected {}", decision.injected.join(", "))
                    }
                );
                render.results.push(at_config(Diagnostic::new(Severity::Info, Kind::Render, message).at(field)));
                render.implementations.push(Chosen {
                    interface: interface.name.clone(),
                    scope: implementation,
                    spec: candidate.spec.clone(),
                    origin: candidate.origin.clone(),
                });
            }
            Err(message) => {
                render.results.push(Diagnostic::error(Kind::Render, message).about_origin(&candidate.origin));
            }
        }
        report.decisions.push(decision);
    }
    report
}

/// What each constraint of the chosen entry matched, for `explain`.
fn constraints_match(constraints: &Constraints, candidate: &Candidate) -> String {
    let mut parts = Vec::new();
    if let Some(pattern) = &constraints.path {
        parts.push(format!("path pattern {pattern:?} matched {:?}", candidate.spec.path));
    }
    let list = |refs: &[TypeRef]| refs.iter().map(TypeRef::describe).collect::<Vec<_>>().join(", ");
    if !constraints.attributes.is_empty() {
        parts.push(format!("has attributes {}", list(&constraints.attributes)));
    }
    if !constraints.requires.is_empty() {
        parts.push(format!("requires {}", list(&constraints.requires)));
    }
    if parts.is_empty() {
        return "implementationConstraints {} (any implementation)".into();
    }
    parts.join("; ")
}

/// An implementation requiring an aliased type needs an injected TypeInstance of that type.
fn unsatisfied_alias(candidate: &Candidate, inject: &Inject) -> Option<String> {
    candidate.spec.requires.iter().filter(|r| r.alias.is_some()).find_map(|requirement| {
        let wanted = TypeRef { path: requirement.path.clone(), revision: requirement.revision.clone() };
        (!inject.required_type_instances.iter().any(|i| same_ref(&i.type_ref, &wanted))).then(|| {
            format!(
                "requires {} as {:?} but no requiredTypeInstances entry injects it",
                wanted.describe(),
                requirement.alias.clone().unwrap_or_default()
            )
        })
    })
}

/// Injects parameters and TypeInstances into the implementation's scope, as Capact's engine does.
fn scope(candidate: &Candidate, inject: &Inject, place: &str, decision: &mut Decision) -> Result<Value, String> {
    let spec = &candidate.spec;
    let implementation_place = |field: &str| {
        let file = candidate.origin.file().map(|f| format!(" in {f}")).unwrap_or_default();
        let name = candidate.origin.resource.as_ref().map_or("", |resource| resource.name.as_str());
        format!("Implementation {name:?}{file} spec.additionalInput.{field}")
    };
    let mut parameters = Map::new();
    for parameter in &inject.additional_parameters {
        if !spec.additional_input.parameters.contains_key(&parameter.name) {
            let declared: Vec<&String> = spec.additional_input.parameters.keys().collect();
            return Err(format!(
                "additional parameter {:?} injected by {place} is not declared in {} (declared: {declared:?})",
                parameter.name,
                implementation_place("parameters")
            ));
        }
        parameters.insert(parameter.name.clone(), parameter.value.clone());
        decision.injected.push(format!("parameter {}", parameter.name));
    }
    let mut type_instances = Map::new();
    for instance in &inject.required_type_instances {
        let requirement = spec.requires.iter().find(|r| {
            r.alias.is_some()
                && same_ref(&TypeRef { path: r.path.clone(), revision: r.revision.clone() }, &instance.type_ref)
        });
        if let Some(alias) = requirement.and_then(|r| r.alias.clone()) {
            type_instances.insert(
                alias.clone(),
                json!({"id": instance.id, "typeRef": instance.type_ref, "description": instance.description}),
            );
            decision.injected.push(format!("typeInstance {alias}={}", instance.id));
        }
    }
    for instance in &inject.additional_type_instances {
        let declared = spec.additional_input.type_instances.get(&instance.name);
        let declared_ref =
            declared.and_then(|d| d.get("typeRef")).and_then(|r| serde_json::from_value::<TypeRef>(r.clone()).ok());
        let matches = match (&declared_ref, &instance.type_ref) {
            (Some(declared), Some(given)) => same_ref(declared, given),
            (Some(_), None) => true,
            _ => false,
        };
        if !matches {
            return Err(format!(
                "additional TypeInstance {:?} injected by {place} cannot be matched: {} has no entry with exact name {:?}{}",
                instance.name,
                implementation_place("typeInstances"),
                instance.name,
                instance.type_ref.as_ref().map(|r| format!(" and Type reference {:?}", r.describe())).unwrap_or_default()
            ));
        }
        type_instances.insert(instance.name.clone(), json!({"id": instance.id, "typeRef": declared_ref}));
        decision.injected.push(format!("typeInstance {}={}", instance.name, instance.id));
    }
    Ok(json!({
        "path": spec.path,
        "revision": spec.revision,
        "parameters": parameters,
        "typeInstances": type_instances,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(entries: &[(&str, Option<&str>, &str)]) -> Vec<Placed<BackendRule>> {
        entries
            .iter()
            .map(|(path, revision, id)| Placed {
                value: BackendRule {
                    type_ref: TypeRef { path: path.to_string(), revision: revision.map(str::to_string) },
                    backend: json!({ "id": id }),
                },
                layer: "global".into(),
                place: String::new(),
            })
            .collect()
    }

    fn rules_any() -> Vec<Placed<BackendRule>> {
        rules(&[("cap.type.aws.auth.credentials", None, "any-revision"), ("cap.type.aws.*", None, "aws")])
    }

    #[test]
    fn backends_walk_up_the_path() {
        let rules = rules(&[
            ("cap.type.aws.auth.credentials", Some("0.1.0"), "exact"),
            ("cap.type.aws.*", Some("0.1.0"), "aws-rev"),
            ("cap.type.aws.*", None, "aws"),
            ("cap.*", None, "any"),
        ]);
        assert_eq!(backend(&rules, "cap.type.aws.auth.credentials", "0.1.0"), json!({"id": "exact"}));
        assert_eq!(backend(&rules, "cap.type.aws.auth.credentials", "0.2.0"), json!({"id": "aws"}));
        let with_any = rules_any();
        assert_eq!(backend(&with_any, "cap.type.aws.auth.credentials", "0.2.0"), json!({"id": "any-revision"}));
        assert_eq!(backend(&rules, "cap.type.aws.s3", "0.1.0"), json!({"id": "aws-rev"}));
        assert_eq!(backend(&rules, "cap.type.gcp.sa", "0.1.0"), json!({"id": "any"}));
        assert_eq!(backend(&rules[..2], "cap.type.gcp.sa", "0.1.0"), Value::Null);
    }

    #[test]
    fn path_patterns_are_unanchored_go_regexps() {
        let pattern = |p: &str| Constraints { path: Some(p.into()), ..Default::default() };
        let compiled = |p: &str| compile_path(&pattern(p)).ok().flatten();
        let postgres = compiled("cap.implementation.db.postgres.*");
        assert!(postgres.as_ref().is_some_and(|r| r.is_match("cap.implementation.db.postgres.install")));
        assert!(!postgres.as_ref().is_some_and(|r| r.is_match("cap.implementation.db.rds.install")));
        assert!(compiled(r"rds\.install").is_some_and(|r| r.is_match("cap.implementation.db.rds.install")));
        assert!(compiled("^rds").is_some_and(|r| !r.is_match("cap.implementation.db.rds.install")));
        assert_eq!(compile_path(&Constraints::default()).ok().map(|r| r.is_none()), Some(true));
        let error = compile_path(&pattern("cap.(db")).err().unwrap_or_default();
        assert!(error.starts_with("implementationConstraints.path \"cap.(db\" is not a valid regular expression: "));
        assert!(!error.contains('\n'));
    }

    #[test]
    fn revisions_compare_as_semver() {
        assert_eq!(compare_revisions("0.10.0", "0.9.1"), Ordering::Greater);
        assert_eq!(compare_revisions("1.0.0-rc1", "1.0.0"), Ordering::Less);
        assert_eq!(compare_revisions("1.2.3", "1.2.3"), Ordering::Equal);
    }
}
