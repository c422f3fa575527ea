//! Windsor v0.9 composition (windsorcli/cli v0.9.0, pkg/composer/blueprint/processor.go): used
//! with `spec.windsor.version` "0.9" (the default). Facets (and, as v0.9's loader reads them,
//! Features) are ranked by ordinal then name; inclusion and config blocks are settled in rounds;
//! included facets' entries are collected per identity, resolved by ordinal and strategy
//! precedence, then applied to the base blueprint as replaces, merges and removes. `requires` left
//! unmet by included facets are one error, worded as Windsor words it.

use super::merge::{
    apply_terraform, combine_kustomization, deep_merge_maps, is_empty, merge_kustomization_fields,
    merge_terraform_fields, push_unique, subtract_kustomization,
};
use super::model::{Feature, FluxSystem, Kustomization, Requirement, SecretEntry, Strategy, TerraformComponent};
use super::order;
use super::report::{ComponentDecision, FeatureDecision};
use super::step::{decide, graph_diagnostic, Declared, Step};
use super::tiers::compile_tiers;
use crate::diag::Severity;
use crate::doc::{dotted, Map, Value};
use std::collections::{BTreeMap, HashMap};

/// Windsor's `OrdinalFromBasename`: the default rank of a facet read from a file of that name.
pub fn ordinal_from_basename(basename: &str) -> i64 {
    let has = |prefixes: &[&str]| prefixes.iter().any(|p| basename.starts_with(p));
    if has(&["config-"]) {
        100
    } else if has(&["provider-", "platform-"]) {
        if basename.contains("-base") {
            199
        } else {
            200
        }
    } else if has(&["options-", "option-"]) {
        300
    } else if has(&["addons-", "addon-"]) {
        400
    } else {
        0
    }
}

/// A facet ready to compose: its declaration and its rank.
pub struct Facet {
    pub feature: Feature,
    pub origin: Declared,
    pub ordinal: i64,
}

impl Facet {
    /// The facet's own `ordinal`, else the rank of its file's base name (0 without a file).
    pub fn new(feature: Feature, origin: Declared) -> Self {
        let basename = origin.origin.file().map(|f| f.rsplit('/').next().unwrap_or(f).to_string());
        let ordinal = feature.ordinal.unwrap_or_else(|| basename.as_deref().map(ordinal_from_basename).unwrap_or(0));
        Self { feature, origin, ordinal }
    }
}

/// Windsor's `strategyPrecedence`: at equal ordinal, remove > replace > merge.
fn precedence(strategy: Strategy) -> u8 {
    match strategy {
        Strategy::Merge => 1,
        Strategy::Replace => 2,
        Strategy::Remove => 3,
    }
}

/// One collected entry: the combined item, its strategy and ordinal, and which declarations
/// (facet index, entry index in its kind) it still carries, for `explain`.
struct Entry<T> {
    item: T,
    strategy: Strategy,
    ordinal: i64,
    from: Vec<(usize, usize)>,
}

/// How two entries with one identity combine (`updateKustomizationEntry`,
/// `updateTerraformComponentEntry`, `apply…EntryByStrategy`).
trait Combine: Sized {
    /// `overlay` merged over `base` (Windsor's `StrategicMerge` of one entry).
    fn merged(base: Self, overlay: Self) -> Self;
    /// Two removals: the union of what they remove.
    fn accumulated(existing: Self, new: Self) -> Self;
    /// Where a higher-ordinal newcomer simply takes the entry's place, whatever it would merge.
    fn takes_over(new: Strategy, existing: Strategy) -> bool;
}

impl Combine for Kustomization {
    fn merged(mut base: Self, overlay: Self) -> Self {
        merge_kustomization_fields(&mut base, overlay);
        base
    }
    fn accumulated(existing: Self, new: Self) -> Self {
        let mut out = Kustomization { name: existing.name, ..Default::default() };
        out.depends_on = existing.depends_on;
        push_unique(&mut out.depends_on, new.depends_on);
        out.components = existing.components;
        push_unique(&mut out.components, new.components);
        out.patches = existing.patches;
        out.patches.extend(new.patches);
        out.substitutions = existing.substitutions;
        out.substitutions.extend(new.substitutions);
        out
    }
    fn takes_over(new: Strategy, existing: Strategy) -> bool {
        existing == Strategy::Remove || new == Strategy::Remove
    }
}

impl Combine for TerraformComponent {
    fn merged(mut base: Self, overlay: Self) -> Self {
        merge_terraform_fields(&mut base, overlay);
        base
    }
    fn accumulated(existing: Self, new: Self) -> Self {
        let mut out = TerraformComponent {
            name: existing.name,
            path: existing.path,
            source: existing.source,
            ..Default::default()
        };
        out.inputs = existing.inputs;
        out.inputs.extend(new.inputs);
        out.depends_on = existing.depends_on;
        push_unique(&mut out.depends_on, new.depends_on);
        out
    }
    fn takes_over(new: Strategy, existing: Strategy) -> bool {
        new == Strategy::Replace || (new == Strategy::Remove && existing != Strategy::Remove)
    }
}

impl Combine for FluxSystem {
    /// `applyFluxSystemEntryByStrategy` merge: dependsOn unioned and sorted, install merged as a
    /// kustomization, variants merged by name (their `when`s ANDed).
    fn merged(base: Self, overlay: Self) -> Self {
        let mut merged = base;
        let mut depends_on = std::mem::take(&mut merged.depends_on);
        push_unique(&mut depends_on, overlay.depends_on);
        depends_on.sort();
        merged.depends_on = depends_on;
        merged.install = merge_install(merged.install.take(), overlay.install);
        merged.resources = merge_variants(std::mem::take(&mut merged.resources), overlay.resources);
        merged.global_dependency |= overlay.global_dependency;
        merge_secrets(&mut merged.secrets, overlay.secrets);
        merged
    }
    /// `accumulateFluxSystemRemovals`.
    fn accumulated(existing: Self, new: Self) -> Self {
        let mut out = FluxSystem { name: existing.name.clone(), ..Default::default() };
        let mut depends_on = existing.depends_on;
        push_unique(&mut depends_on, new.depends_on);
        depends_on.sort();
        out.depends_on = depends_on;
        if existing.install.is_some() || new.install.is_some() {
            let (a, b) = (existing.install.unwrap_or_default(), new.install.unwrap_or_default());
            out.install = Some(Kustomization::accumulated(a, b));
        }
        out.resources = existing.resources;
        out.resources.extend(new.resources);
        out
    }
    fn takes_over(new: Strategy, existing: Strategy) -> bool {
        existing == Strategy::Remove || new == Strategy::Remove
    }
}

/// Windsor's `mergeSecretData`: Secrets by name, the overlay winning per data key, namespaces
/// unioned in order.
fn merge_secrets(base: &mut BTreeMap<String, SecretEntry>, overlay: BTreeMap<String, SecretEntry>) {
    for (name, entry) in overlay {
        let merged = base.entry(name).or_default();
        for namespace in entry.namespaces {
            if !merged.namespaces.contains(&namespace) {
                merged.namespaces.push(namespace);
            }
        }
        merged.data.extend(entry.data);
        merged.extra.extend(entry.extra);
    }
}

/// Windsor's `validateSystemSecrets`: a Secret needs data keys (under `data:`), and each value a
/// complete `${…}`, since the value as written is stored with the blueprint (a literal secret
/// would land in git).
fn secret_errors(system: &FluxSystem) -> Vec<(String, String)> {
    let mut errors = Vec::new();
    for (name, entry) in &system.secrets {
        if entry.data.is_empty() {
            let message = format!(
                "secret {name:?} in flux system {:?} declares no data keys; nest them under `data:` (an entry is \
                 `data: {{<key>: <ref>}}` plus an optional `namespaces:` selector)",
                system.name
            );
            errors.push((format!("secrets.{name}"), message));
            continue;
        }
        for (key, reference) in &entry.data {
            let complete = reference.find("${").is_some_and(|open| reference[open + 2..].contains('}'));
            if !complete {
                let message = format!(
                    "secret {name:?} key {key:?} in flux system {:?} must contain a complete ${{...}} expression (a \
                     reference or a secret() call), not a plaintext literal or unterminated expression, got \
                     {reference:?}",
                    system.name
                );
                errors.push((format!("secrets.{name}.data.{key}"), message));
            }
        }
    }
    errors
}

/// `MergeFluxInstall`: either side alone is kept; both merge as kustomizations.
fn merge_install(existing: Option<Kustomization>, overlay: Option<Kustomization>) -> Option<Kustomization> {
    match (existing, overlay) {
        (Some(base), Some(over)) => Some(Kustomization::merged(base, over)),
        (base, over) => over.or(base),
    }
}

/// `MergeFluxVariants`: a same-named variant merges (the two `when`s ANDed), a new one is appended.
fn merge_variants(mut existing: Vec<Kustomization>, overlay: Vec<Kustomization>) -> Vec<Kustomization> {
    for variant in overlay {
        match existing.iter().position(|v| v.name == variant.name) {
            None => existing.push(variant),
            Some(i) => {
                let base = std::mem::take(&mut existing[i]);
                let when = combine_when(&base.when, &variant.when);
                let mut merged = Kustomization::merged(base, variant);
                merged.when = when;
                existing[i] = merged;
            }
        }
    }
    existing
}

/// Windsor's `combineWhen`.
fn combine_when(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (false, false) => format!("({a}) && ({b})"),
        (false, true) => a.to_string(),
        _ => b.to_string(),
    }
}

/// Adds `new` under `key`, or resolves it against the entry already there: a higher ordinal
/// wins (a lower-ordinal merge still merges underneath), equal ordinals go by strategy
/// precedence, and equal strategies combine.
fn collect<T: Combine>(entries: &mut BTreeMap<String, Entry<T>>, key: String, new: Entry<T>) {
    let Some(existing) = entries.remove(&key) else {
        entries.insert(key, new);
        return;
    };
    let combine = |new: Entry<T>, existing: Entry<T>, strategy: Strategy| -> Entry<T> {
        let from = || existing.from.iter().chain(&new.from).copied().collect();
        match strategy {
            Strategy::Replace => Entry { strategy, ..new },
            Strategy::Merge => Entry {
                from: from(),
                item: T::merged(existing.item, new.item),
                strategy: Strategy::Merge,
                ordinal: new.ordinal,
            },
            Strategy::Remove => Entry {
                from: from(),
                item: T::accumulated(existing.item, new.item),
                strategy: Strategy::Remove,
                ordinal: new.ordinal,
            },
        }
    };
    let result = if new.ordinal > existing.ordinal {
        if T::takes_over(new.strategy, existing.strategy) {
            new
        } else {
            let strategy = new.strategy;
            combine(new, existing, strategy)
        }
    } else if new.ordinal < existing.ordinal {
        if new.strategy != Strategy::Merge || existing.strategy == Strategy::Remove {
            existing
        } else {
            // The higher-ordinal entry is merged over the newcomer, and the result is a merge.
            combine(existing, new, Strategy::Merge)
        }
    } else {
        match precedence(new.strategy).cmp(&precedence(existing.strategy)) {
            std::cmp::Ordering::Greater => new,
            std::cmp::Ordering::Less => existing,
            std::cmp::Ordering::Equal => {
                let strategy = new.strategy;
                combine(new, existing, strategy)
            }
        }
    };
    entries.insert(key, result);
}

/// Windsor's `isPresentAtPath`: set, not nil, and not an empty string, list or map.
fn is_present(scope: &Value, path: &str) -> bool {
    !path.is_empty() && dotted(scope, path).is_some_and(|v| !v.is_null() && !is_empty(v))
}

/// Unmet requirements of one facet: `(missing paths, message)` per block.
type Misses = Vec<(Vec<String>, String)>;

/// Windsor's `maxFacetRounds`.
const MAX_ROUNDS: usize = 10;

/// One inclusion round: each facet's decision, the included ones (indexes, in order), unmet
/// requirements, and the config blocks merged (not yet evaluated).
#[derive(Default)]
struct Round {
    decisions: Vec<FeatureDecision>,
    included: Vec<usize>,
    pending: BTreeMap<String, Misses>,
    config: Map,
}

/// One pass over the facets against `step.scope` (`resolveConfigAndInclusion`'s loop body):
/// an active facet contributes its config blocks even while its requirements are unmet.
fn include(step: &mut Step, facets: &[Facet], context: &Value) -> Round {
    let mut round = Round::default();
    let mut held = BTreeMap::new();
    for (index, facet) in facets.iter().enumerate() {
        let mut decision = FeatureDecision {
            name: facet.feature.metadata.name.clone(),
            origin: facet.origin.describe(),
            when: facet.feature.when.clone(),
            enabled: false,
            reads: Vec::new(),
            components: Vec::new(),
        };
        match step.condition(&facet.feature.when, &facet.origin, "when") {
            Ok((enabled, reads)) => (decision.enabled, decision.reads) = (enabled, reads),
            Err(message) => step.results.push(facet.origin.diagnostic(Severity::Error, message, "when")),
        }
        if decision.enabled {
            let misses = requirements(step, facet);
            let blocks = config_blocks(step, facet, context);
            super::config::merge_blocks(&mut round.config, &mut held, blocks);
            if misses.is_empty() {
                round.included.push(index);
            } else {
                // An active facet with unmet requirements contributes nothing (Windsor fails).
                decision.enabled = false;
                round.pending.entry(facet.feature.metadata.name.clone()).or_default().extend(misses);
            }
        }
        round.decisions.push(decision);
    }
    round
}

/// A facet's config blocks whose `when` holds (each tested blind to the keys it writes),
/// same-name ones combined.
fn config_blocks(step: &mut Step, facet: &Facet, context: &Value) -> Vec<super::config::Incoming> {
    let mut blocks = Vec::new();
    for (i, block) in facet.feature.config.iter().enumerate() {
        let field = format!("config[{i}]");
        if block.name.is_empty() {
            continue;
        }
        let Some(value) = &block.value else {
            let message = format!("config block {:?}: value is required", block.name);
            step.results.push(facet.origin.diagnostic(Severity::Error, message, &field));
            continue;
        };
        if !block.when.is_empty() {
            let scope = step.scope.clone().unwrap_or_else(|| step.values.clone());
            let guard = super::config::blind_scope(&scope, context, &block.name, value);
            let saved = std::mem::replace(&mut step.scope, guard.or(Some(scope)));
            let holds = step.condition(&block.when, &facet.origin, &format!("{field}.when"));
            step.scope = saved;
            match holds {
                Ok((true, _)) => {}
                Ok((false, _)) => continue,
                Err(message) => {
                    step.results.push(facet.origin.diagnostic(Severity::Error, message, &format!("{field}.when")));
                    continue;
                }
            }
        }
        blocks.push(super::config::Incoming {
            name: block.name.clone(),
            ordinal: block.ordinal.unwrap_or(facet.ordinal),
            strategy: block.strategy,
            // `value: null` is an empty map, as Windsor reads it.
            value: if value.is_null() { Value::Object(Map::new()) } else { value.clone() },
        });
    }
    super::config::combine_facet_blocks(blocks)
}

/// `${…}` of config blocks, through the step's compiled templates.
struct ConfigEval<'s, 'a> {
    step: &'s Step<'a>,
    origin: &'s Declared,
}

impl super::config::Eval for ConfigEval<'_, '_> {
    fn value(&self, value: &Value, scope: &Value) -> Result<Value, String> {
        self.step.evaluate_value(value, scope, self.origin).map_err(|err| err.to_string())
    }
    fn reads(&self, text: &str) -> (Vec<String>, Vec<String>) {
        match self.step.template(text) {
            Ok(Some(template)) => {
                let mut reads = Vec::new();
                let mut in_calls = Vec::new();
                for expression in template.expressions() {
                    reads.extend(expression.identifiers());
                    in_calls.extend(expression.call_argument_paths());
                }
                (reads, in_calls)
            }
            _ => (Vec::new(), Vec::new()),
        }
    }
}

/// What included facets set besides entries (`emitFacetComponents`): `crds` (evaluated, single
/// path segments, unioned and sorted), `backend` (the last one), `substitutions` (evaluated, later
/// facets winning per key), and `messages` as info results (`resolveMessages`: `when` gates,
/// text interpolated, empty and repeated texts dropped).
fn emit_facet_fields(step: &mut Step, blueprint: &mut super::model::Blueprint, facets: &[Facet], included: &[usize]) {
    // A source's facets list its CRDs, not the blueprint's (`setCrdLayer`).
    let source = step.source.as_deref().and_then(|name| blueprint.sources.iter().position(|s| s.name == name));
    let mut crds: Vec<String> = match source {
        Some(i) => std::mem::take(&mut blueprint.sources[i].crds),
        None => std::mem::take(&mut blueprint.crds),
    };
    let mut shown: Vec<String> = Vec::new();
    for &index in included {
        let facet = &facets[index];
        let origin = &facet.origin;
        for (i, text) in facet.feature.crds.iter().enumerate() {
            let field = format!("crds[{i}]");
            let refs = match step.interpolate_value(&Value::String(text.clone()), origin) {
                Ok(Value::Array(items)) => items.iter().map(crate::expr::to_text).collect(),
                Ok(Value::Null) => Vec::new(),
                Ok(value) => vec![crate::expr::to_text(&value)],
                Err(err) => {
                    step.interpolation_error(origin, &field, err);
                    continue;
                }
            };
            for reference in refs.into_iter().filter(|r| !r.is_empty()) {
                if reference.contains(['/', '\\']) || reference.contains("..") {
                    let message = format!(
                        "invalid crd reference {reference:?}: must be a single path segment without '/', '\\', or '..'"
                    );
                    step.results.push(origin.diagnostic(Severity::Error, message, &field));
                } else if !crds.contains(&reference) {
                    crds.push(reference);
                }
            }
        }
        if let Some(backend) = facet.feature.backend.as_ref().filter(|b| !b.is_empty()) {
            blueprint.backend = Some(backend.clone());
        }
        for (key, value) in &facet.feature.substitutions {
            let field = format!("substitutions.{key}");
            match step.interpolate_value(value, origin) {
                Ok(value) => {
                    let text = if value.is_null() { String::new() } else { crate::expr::to_text(&value) };
                    blueprint.substitutions.insert(key.clone(), Value::String(text));
                }
                Err(err) => step.interpolation_error(origin, &field, err),
            }
        }
        for (i, message) in facet.feature.messages.iter().enumerate() {
            let field = format!("messages[{i}]");
            if message.text.is_empty() {
                continue;
            }
            if !message.when.is_empty() {
                match step.condition(&message.when, origin, &format!("{field}.when")) {
                    Ok((true, _)) => {}
                    // Windsor drops a message whose when is false or not a boolean.
                    Ok((false, _)) | Err(_) => continue,
                }
            }
            match step.interpolate_value(&Value::String(message.text.clone()), origin) {
                Ok(value) => {
                    let text = if value.is_null() { String::new() } else { crate::expr::to_text(&value) };
                    if !text.is_empty() && !shown.contains(&text) {
                        step.results.push(origin.diagnostic(Severity::Info, text.clone(), &field));
                        shown.push(text);
                    }
                }
                Err(err) => step.interpolation_error(origin, &format!("{field}.text"), err),
            }
        }
    }
    crds.sort();
    match source {
        Some(i) => blueprint.sources[i].crds = crds,
        None => blueprint.crds = crds,
    }
}

/// A facet the last round left out, and what it would have provided (Windsor's `ExcludedFacet`),
/// for the message of a dependency on something it declares.
pub struct Excluded {
    pub name: String,
    pub when: String,
    pub provides: Vec<String>,
}

/// Windsor's `facetProvides`: terraform identities, kustomization names, Flux system tier names.
fn provides(facet: &Feature) -> Vec<String> {
    let mut names: Vec<String> = facet.terraform.iter().map(|c| c.id().to_string()).collect();
    names.extend(facet.kustomize.iter().map(|k| k.name.clone()));
    names.extend(facet.flux.iter().flat_map(compile_tiers).map(|k| k.name));
    names
}

/// Composes the facets onto `blueprint`; returns each facet's decision, in composition order,
/// and the facets left out. `overlay` is what the operator set (Windsor's `GetSetValues`): it
/// stays above facet config.
pub(super) fn compose(
    step: &mut Step,
    blueprint: &mut super::model::Blueprint,
    mut facets: Vec<Facet>,
    config: &Declared,
    overlay: &Value,
) -> (Vec<FeatureDecision>, Vec<Excluded>, bool) {
    facets.sort_by(|a, b| (a.ordinal, &a.feature.metadata.name).cmp(&(b.ordinal, &b.feature.metadata.name)));
    let context = step.values.clone();
    let context_map = context.as_object().cloned().unwrap_or_default();
    let mut scope = context.clone();
    // Windsor compares each round with the one before, the first with an empty set: a first round
    // that includes nothing ends the rounds.
    let mut previous: Vec<usize> = Vec::new();
    let mark = step.results.len();
    let mut round = Round::default();
    // Windsor's `resolveConfigAndInclusion`: config and inclusion are re-evaluated in rounds,
    // each seeing the config the last one computed, until the included set repeats; at most
    // MAX_ROUNDS rounds (each one pass over the facets), as Windsor bounds them.
    let mut settled = false;
    for _ in 0..MAX_ROUNDS {
        // Only the last round's findings stand: earlier rounds saw a scope still settling.
        step.results.truncate(mark);
        step.scope = Some(scope.clone());
        round = include(step, &facets, &context);
        let evaluator = ConfigEval { step: &*step, origin: config };
        if let Err(message) = super::config::evaluate(&mut round.config, &context_map, &evaluator) {
            step.results.push(graph_diagnostic(config, Severity::Error, message));
        }
        // The values with the config over them, and what the operator set over both.
        let merged = deep_merge_maps(context_map.clone(), round.config.clone());
        scope = Value::Object(deep_merge_maps(merged, overlay.as_object().cloned().unwrap_or_default()));
        if previous == round.included {
            settled = true;
            break;
        }
        previous = round.included.clone();
    }
    if !settled {
        let message = format!(
            "the set of included facets did not settle after {MAX_ROUNDS} rounds (a facet's when reads config that \
             its inclusion changes); the last round's set is used, as Windsor uses it"
        );
        step.results.push(graph_diagnostic(config, Severity::Warning, message));
    }
    step.scope = Some(scope);
    let Round { mut decisions, included, pending, .. } = round;
    if !pending.is_empty() {
        // Windsor stops here (`ProcessGlobally` returns the RequirementsError, and
        // `processAndCompose` returns it before composing): nothing is emitted, nothing checked.
        step.results.push(graph_diagnostic(config, Severity::Error, requirements_message(&pending)));
        return (decisions, Vec::new(), true);
    }
    emit_facet_fields(step, blueprint, &facets, &included);
    let mut is_included = vec![false; facets.len()];
    included.iter().for_each(|&i| is_included[i] = true);
    let excluded = (0..facets.len())
        .filter(|&i| !is_included[i])
        .map(|i| Excluded {
            name: facets[i].feature.metadata.name.clone(),
            when: facets[i].feature.when.clone(),
            provides: provides(&facets[i].feature),
        })
        .collect();

    // (facet index, decision index, entry position) of each enabled entry, for its action.
    let mut placed: Vec<(usize, usize, usize)> = Vec::new();
    let mut terraform: BTreeMap<String, Entry<TerraformComponent>> = BTreeMap::new();
    let mut kustomize: BTreeMap<String, Entry<Kustomization>> = BTreeMap::new();
    let mut flux: BTreeMap<String, Entry<FluxSystem>> = BTreeMap::new();
    for &index in &included {
        let facet = &facets[index];
        let origin = &facet.origin;
        for (i, component) in facet.feature.terraform.iter().enumerate() {
            let field = format!("terraform[{i}]");
            let name = if component.id().is_empty() { field.clone() } else { component.id().to_string() };
            // An entry without `when` takes its facet's, which already held in this scope.
            let Some(decision) = decide(step, "terraform", name, &component.when, origin, &field) else {
                continue;
            };
            if decision.enabled {
                let ordinal = component.ordinal.unwrap_or(facet.ordinal);
                let strategy = component.strategy;
                let mut prepared = step.prepare_terraform(component.clone(), origin, &field);
                prepared.depends_on =
                    evaluate_strings(step, &prepared.depends_on, origin, &format!("{field}.dependsOn"));
                (prepared.when, prepared.strategy, prepared.ordinal, prepared.requires) =
                    (String::new(), Strategy::Merge, None, Vec::new());
                // The loader's source, on an entry without its own (`resolveSourceName`).
                prepared.source = prepared.source.or_else(|| step.source.clone());
                let key = prepared.id().to_string();
                let entry = Entry { item: prepared, strategy, ordinal, from: vec![(index, i)] };
                collect(&mut terraform, key, entry);
                placed.push((index, decisions[index].components.len(), i));
            }
            decisions[index].components.push(decision);
        }
        let offset = facet.feature.terraform.len();
        for (i, kustomization) in facet.feature.kustomize.iter().enumerate() {
            let field = format!("kustomize[{i}]");
            if kustomization.name.is_empty() {
                step.results.push(origin.diagnostic(Severity::Error, "a kustomization needs a name".into(), &field));
                continue;
            }
            let name = kustomization.name.clone();
            let Some(decision) = decide(step, "kustomization", name, &kustomization.when, origin, &field) else {
                continue;
            };
            if decision.enabled {
                let ordinal = kustomization.ordinal.unwrap_or(facet.ordinal);
                let strategy = kustomization.strategy;
                let mut prepared = step.prepare_kustomization(kustomization.clone(), origin, &field);
                evaluate_kustomization_lists(step, &mut prepared, origin, &field);
                (prepared.when, prepared.strategy, prepared.ordinal, prepared.requires) =
                    (String::new(), Strategy::Merge, None, Vec::new());
                prepared.source = prepared.source.or_else(|| step.source.clone());
                let key = prepared.name.clone();
                let entry = Entry { item: prepared, strategy, ordinal, from: vec![(index, offset + i)] };
                collect(&mut kustomize, key, entry);
                placed.push((index, decisions[index].components.len(), offset + i));
            }
            decisions[index].components.push(decision);
        }
        let offset = offset + facet.feature.kustomize.len();
        for (i, system) in facet.feature.flux.iter().enumerate() {
            let field = format!("flux[{i}]");
            if system.name.is_empty() {
                step.results.push(origin.diagnostic(Severity::Error, "a flux system needs a name".into(), &field));
                continue;
            }
            // A system without `when` takes its facet's.
            let when = if system.when.is_empty() { &facet.feature.when } else { &system.when };
            let Some(decision) = decide(step, "flux system", system.name.clone(), when, origin, &field) else {
                continue;
            };
            if decision.enabled {
                if let Some(mut prepared) = prepare_flux_system(step, system, when, origin, &field) {
                    prepared.source = prepared.source.or_else(|| step.source.clone());
                    let ordinal = system.ordinal.unwrap_or(facet.ordinal);
                    let entry =
                        Entry { item: prepared, strategy: system.strategy, ordinal, from: vec![(index, offset + i)] };
                    collect(&mut flux, system.name.clone(), entry);
                    placed.push((index, decisions[index].components.len(), offset + i));
                }
            }
            decisions[index].components.push(decision);
        }
    }

    // Applied as Windsor's `applyCollectedComponents` does: by identity in sorted order, replaces,
    // then merges, then removes; terraform first.
    let mut actions: HashMap<(usize, usize), &'static str> = HashMap::new();
    for pass in [Strategy::Replace, Strategy::Merge, Strategy::Remove] {
        for entry in terraform.values().filter(|e| e.strategy == pass) {
            let action = apply_terraform(&mut blueprint.terraform, entry.item.clone(), pass);
            record(&mut actions, entry, action);
        }
    }
    for pass in [Strategy::Replace, Strategy::Merge, Strategy::Remove] {
        for entry in kustomize.values().filter(|e| e.strategy == pass) {
            let mut item = entry.item.clone();
            item.strategy = pass;
            let action = combine_kustomization(&mut blueprint.kustomize, item);
            let _ = order::sort_kustomizations(&mut blueprint.kustomize);
            record(&mut actions, entry, action);
        }
    }
    // Flux systems: every non-removal upserted (merged into a same-named one), then removals.
    for pass in [Strategy::Merge, Strategy::Remove] {
        let chosen = flux.values().filter(|e| (e.strategy == Strategy::Remove) == (pass == Strategy::Remove));
        for entry in chosen {
            let action = apply_flux_system(&mut blueprint.flux, entry.item.clone(), pass);
            record(&mut actions, entry, action);
        }
    }
    // What each enabled entry came to: the action of the entry that carried it, or `overridden`
    // when a higher-ranking one displaced it.
    for (index, slot, position) in placed {
        if let Some(component) = decisions[index].components.get_mut(slot) {
            set_action(component, &actions, (index, position));
        }
    }
    (decisions, excluded, false)
}

fn set_action(component: &mut ComponentDecision, actions: &HashMap<(usize, usize), &'static str>, at: (usize, usize)) {
    if component.enabled {
        component.action = actions.get(&at).copied().unwrap_or("overridden");
    }
}

/// What each entry that carried a collected one came to: the first the applied action; the
/// others of a merge were merged into it while collecting, so `explain` says `merged` for them.
fn record<T>(actions: &mut HashMap<(usize, usize), &'static str>, entry: &Entry<T>, action: &'static str) {
    for (n, &from) in entry.from.iter().enumerate() {
        let merged = n > 0 && entry.strategy == Strategy::Merge && action != "skipped";
        actions.insert(from, if merged { "merged" } else { action });
    }
}

/// Windsor's `collectFluxSystems` for one system whose `when` held: dependsOn and components
/// evaluated (empty ones dropped), an install tier kept only with components (or substitutions,
/// patches, or as a removal), variants whose own `when` (ANDed with the system's) holds, each
/// variant name once.
fn prepare_flux_system(
    step: &mut Step,
    system: &FluxSystem,
    when: &str,
    origin: &Declared,
    field: &str,
) -> Option<FluxSystem> {
    let errors = secret_errors(system);
    if !errors.is_empty() {
        for (at, message) in errors {
            step.results.push(origin.diagnostic(Severity::Error, message, &format!("{field}.{at}")));
        }
        return None;
    }
    let mut out = system.clone();
    let remove = system.strategy == Strategy::Remove;
    out.depends_on = evaluate_strings(step, &system.depends_on, origin, &format!("{field}.dependsOn"));
    if let Some(install) = out.install.take() {
        let install_field = format!("{field}.install");
        let components = evaluate_strings(step, &install.components, origin, &format!("{install_field}.components"));
        if !components.is_empty() || remove || !install.substitutions.is_empty() || !install.patches.is_empty() {
            let mut prepared =
                if remove { install } else { step.prepare_kustomization(install, origin, &install_field) };
            prepared.components = components;
            out.install = Some(prepared);
        }
    }
    let mut seen: Vec<String> = Vec::new();
    let mut variants = Vec::new();
    for (j, variant) in system.resources.iter().enumerate() {
        let variant_field = format!("{field}.resources[{j}]");
        let combined = combine_when(when, &variant.when);
        match step.condition(&combined, origin, &format!("{variant_field}.when")) {
            Ok((true, _)) => {}
            Ok((false, _)) => continue,
            Err(message) => {
                step.results.push(origin.diagnostic(Severity::Error, message, &format!("{variant_field}.when")));
                continue;
            }
        }
        let key = match variant.name.as_str() {
            "" => format!("{}-resources", system.name),
            name => format!("{}-resources-{name}", system.name),
        };
        if seen.contains(&key) {
            let message = format!(
                "duplicate resources variant {key:?} in system {:?}; add a unique name: field to each variant",
                system.name
            );
            step.results.push(origin.diagnostic(Severity::Error, message, &variant_field));
            return None;
        }
        seen.push(key);
        let components = evaluate_strings(step, &variant.components, origin, &format!("{variant_field}.components"));
        let depends_on = evaluate_strings(step, &variant.depends_on, origin, &format!("{variant_field}.dependsOn"));
        let mut prepared =
            if remove { variant.clone() } else { step.prepare_kustomization(variant.clone(), origin, &variant_field) };
        (prepared.components, prepared.depends_on, prepared.when) = (components, depends_on, String::new());
        variants.push(prepared);
    }
    out.resources = variants;
    (out.when, out.strategy, out.ordinal) = (String::new(), Strategy::Merge, None);
    Some(out)
}

/// v0.9's `collectKustomizations`: `${…}` in `path` (its text), `dependsOn` (empty results
/// dropped) and `components` (nil dropped, empty text kept, as `evaluateStringSlice` does).
fn evaluate_kustomization_lists(step: &mut Step, k: &mut Kustomization, origin: &Declared, field: &str) {
    if k.path.contains("${") {
        match step.interpolate_value(&Value::String(k.path.clone()), origin) {
            Ok(Value::Null) => {}
            Ok(value) => k.path = crate::expr::to_text(&value),
            Err(err) => step.interpolation_error(origin, &format!("{field}.path"), err),
        }
    }
    k.depends_on = evaluate_strings(step, &k.depends_on, origin, &format!("{field}.dependsOn"));
    if k.components.iter().any(|c| c.contains("${")) {
        let mut components = Vec::new();
        for (i, text) in k.components.iter().enumerate() {
            match step.interpolate_value(&Value::String(text.clone()), origin) {
                Ok(Value::Array(items)) => {
                    components.extend(items.iter().filter(|v| !v.is_null()).map(crate::expr::to_text))
                }
                Ok(Value::Null) => {}
                Ok(value) => components.push(crate::expr::to_text(&value)),
                Err(err) => step.interpolation_error(origin, &format!("{field}.components[{i}]"), err),
            }
        }
        k.components = components;
    }
}

/// Windsor's `evalDropEmpty`: each text evaluated, lists flattened, empty results dropped.
fn evaluate_strings(step: &mut Step, list: &[String], origin: &Declared, field: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, text) in list.iter().enumerate() {
        match step.interpolate_value(&Value::String(text.clone()), origin) {
            Ok(Value::Array(items)) => out.extend(items.iter().filter(|v| !v.is_null()).map(crate::expr::to_text)),
            Ok(Value::Null) => {}
            Ok(value) => out.push(crate::expr::to_text(&value)),
            Err(err) => step.interpolation_error(origin, &format!("{field}[{i}]"), err),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Windsor's `UpsertFluxSystem` (merge into the same-named system, else append) and
/// `RemoveFluxSystem` (dependsOn items, install fields and variants by name).
fn apply_flux_system(list: &mut Vec<FluxSystem>, system: FluxSystem, strategy: Strategy) -> &'static str {
    let existing = list.iter_mut().find(|s| s.name == system.name);
    match (existing, strategy) {
        (None, Strategy::Remove) => "skipped",
        (None, _) => {
            list.push(system);
            "appended"
        }
        (Some(existing), Strategy::Remove) => {
            existing.depends_on.retain(|d| !system.depends_on.contains(d));
            if let (Some(install), Some(removal)) = (existing.install.as_mut(), system.install.as_ref()) {
                subtract_kustomization(install, removal);
            }
            if !system.resources.is_empty() {
                existing.resources.retain(|v| !system.resources.iter().any(|r| r.name == v.name));
            }
            "removed"
        }
        (Some(existing), _) => {
            for dep in system.depends_on {
                if !dep.is_empty() && !existing.depends_on.contains(&dep) {
                    existing.depends_on.push(dep);
                }
            }
            existing.install = merge_install(existing.install.take(), system.install);
            existing.resources = merge_variants(std::mem::take(&mut existing.resources), system.resources);
            merge_secrets(&mut existing.secrets, system.secrets);
            "merged"
        }
    }
}

/// Windsor's `evaluateRequirements`: the facet's blocks, then those of each config block and entry whose own
/// `when` holds. A block applies when its `when` holds; its paths must be present.
fn requirements(step: &mut Step, facet: &Facet) -> Misses {
    let origin = &facet.origin;
    let mut misses = Vec::new();
    let mut blocks: Vec<(&[Requirement], String)> = vec![(&facet.feature.requires, "requires".to_string())];
    for (i, block) in facet.feature.config.iter().enumerate() {
        if !block.requires.is_empty() {
            let field = format!("config[{i}]");
            if entry_applies(step, &block.when, origin, &field) {
                blocks.push((&block.requires, format!("{field}.requires")));
            }
        }
    }
    for (i, component) in facet.feature.terraform.iter().enumerate() {
        if !component.requires.is_empty() {
            let field = format!("terraform[{i}]");
            if entry_applies(step, &component.when, origin, &field) {
                blocks.push((&component.requires, format!("{field}.requires")));
            }
        }
    }
    for (i, kustomization) in facet.feature.kustomize.iter().enumerate() {
        if !kustomization.requires.is_empty() {
            let field = format!("kustomize[{i}]");
            if entry_applies(step, &kustomization.when, origin, &field) {
                blocks.push((&kustomization.requires, format!("{field}.requires")));
            }
        }
    }
    for (list, field) in blocks {
        for (j, block) in list.iter().enumerate() {
            let field = format!("{field}[{j}]");
            if block.paths.is_empty() {
                let message = "requirement block: paths is required and must contain at least one entry".to_string();
                step.results.push(origin.diagnostic(Severity::Error, message, &format!("{field}.paths")));
                continue;
            }
            match step.condition(&block.when, origin, &format!("{field}.when")) {
                Ok((true, _)) => {}
                Ok((false, _)) => continue,
                Err(message) => {
                    step.results.push(origin.diagnostic(Severity::Error, message, &format!("{field}.when")));
                    continue;
                }
            }
            let env = step.env(origin);
            let missing: Vec<String> = block.paths.iter().filter(|p| !is_present(env, p)).cloned().collect();
            if !missing.is_empty() {
                misses.push((missing, block.message.clone()));
            }
        }
    }
    misses
}

/// An entry's own `when` (empty holds), for its `requires`; an error is reported once, later.
fn entry_applies(step: &mut Step, when: &str, origin: &Declared, field: &str) -> bool {
    let mut probe = std::mem::take(&mut step.results);
    let holds = matches!(step.condition(when, origin, &format!("{field}.when")), Ok((true, _)));
    std::mem::swap(&mut probe, &mut step.results);
    holds
}

/// Windsor's `formatRequirementsError`: every missing path once, sorted, then the authors'
/// notes under each path, in facet-name order.
fn requirements_message(pending: &BTreeMap<String, Misses>) -> String {
    let mut messages: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for misses in pending.values() {
        for (paths, message) in misses {
            for path in paths {
                let notes = messages.entry(path.as_str()).or_default();
                if !message.is_empty() && !notes.contains(&message.as_str()) {
                    notes.push(message);
                }
            }
        }
    }
    let mut out = String::from("the following required values are not set in values.yaml:\n\n");
    for path in messages.keys() {
        out.push_str(&format!("  - {path}\n"));
    }
    if messages.values().any(|notes| !notes.is_empty()) {
        out.push_str("\nNotes:\n\n");
        for (path, notes) in messages.iter().filter(|(_, notes)| !notes.is_empty()) {
            out.push_str(&format!("  {path}:\n"));
            for note in notes {
                for line in note.trim_end_matches('\n').split('\n') {
                    out.push_str(&format!("    {line}\n"));
                }
            }
            out.push('\n');
        }
    }
    out.trim_end_matches('\n').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// windsorcli/cli v0.9.0 pkg/composer/blueprint/ordinal_test.go, `TestOrdinalFromBasename`.
    #[test]
    fn ordinal_from_basename_follows_windsor() {
        for (name, want) in [
            ("config-cluster.yaml", 100),
            ("provider-base.yaml", 199),
            ("platform-base.yaml", 199),
            ("provider-aws.yaml", 200),
            ("platform-incus.yaml", 200),
            ("option-cni.yaml", 300),
            ("options-x.yaml", 300),
            ("addon-dns.yaml", 400),
            ("addons-x.yaml", 400),
            ("other.yaml", 0),
            ("", 0),
        ] {
            assert_eq!(ordinal_from_basename(name), want, "{name}");
        }
    }

    fn k(name: &str, components: &[&str], strategy: Strategy, ordinal: i64, from: usize) -> Entry<Kustomization> {
        let item = Kustomization {
            name: name.into(),
            components: components.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        };
        Entry { item, strategy, ordinal, from: vec![(from, 0)] }
    }

    #[test]
    fn replace_beats_merge_at_equal_ordinal_in_either_order() {
        for merge_first in [true, false] {
            let mut entries = BTreeMap::new();
            let merge = k("a", &["m"], Strategy::Merge, 200, 0);
            let replace = k("a", &["r"], Strategy::Replace, 200, 1);
            let (first, second) = if merge_first { (merge, replace) } else { (replace, merge) };
            collect(&mut entries, "a".into(), first);
            collect(&mut entries, "a".into(), second);
            let entry = &entries["a"];
            assert_eq!((entry.strategy, entry.item.components.clone()), (Strategy::Replace, vec!["r".to_string()]));
        }
    }

    #[test]
    fn lower_ordinal_merge_merges_under_a_higher_entry() {
        let mut entries = BTreeMap::new();
        collect(&mut entries, "a".into(), k("a", &["high"], Strategy::Merge, 300, 0));
        collect(&mut entries, "a".into(), k("a", &["low"], Strategy::Merge, 199, 1));
        let entry = &entries["a"];
        assert_eq!(entry.item.components, vec!["high".to_string(), "low".to_string()]);
        assert_eq!(entry.ordinal, 300);
        // A lower-ordinal replace is ignored.
        collect(&mut entries, "a".into(), k("a", &["r"], Strategy::Replace, 100, 2));
        assert_eq!(entries["a"].item.components, vec!["high".to_string(), "low".to_string()]);
    }

    #[test]
    fn requirements_message_is_windsors() {
        let mut pending = BTreeMap::new();
        pending.insert(
            "consumer".to_string(),
            vec![
                (vec!["dns.domain".to_string()], String::new()),
                (vec!["aws.region".to_string(), "aws.account_id".to_string()], "Needs AWS.\nSee docs.\n".to_string()),
            ],
        );
        assert_eq!(
            requirements_message(&pending),
            "the following required values are not set in values.yaml:\n\n  - aws.account_id\n  - aws.region\n  - \
             dns.domain\n\nNotes:\n\n  aws.account_id:\n    Needs AWS.\n    See docs.\n\n  aws.region:\n    Needs \
             AWS.\n    See docs."
        );
    }
}
