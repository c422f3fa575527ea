//! Composes the steps of a render: config → clean-up of the previous run → configuration kinds →
//! values → KOTS config and policy rules → imports (with their GoTemplate and Handlebars
//! executions) → policy's choices (whose implementations the imports step renders) → features →
//! repeat (KOTS clones and templates) → patches and substitution ([`transform`]) → generated
//! items. It does no I/O: files come through [`Files`], output goes back to the caller.
//!
//! A render is all or nothing: when any step reports an error, [`Output::items`] is `None` and the
//! caller writes the input items unchanged, so users never receive a half-rendered package.

use crate::config::{self, FunctionConfig};
use crate::diag::{Diagnostic, Kind, Severity};
use crate::doc::Value;
use crate::krm::{self, annotation, annotations as ann, remove_annotation, set_annotation, Item};
use crate::limits::{Budget, Limits};
use crate::package::Files;
use crate::render::{Render, Source, Sources, CONFIGURATION_KINDS};
use crate::{features, imports, patch, policy, repeat, subst, transform, values};

/// What the caller hands to a render.
#[derive(Default)]
pub struct Input {
    pub items: Vec<Item>,
    /// The ResourceList's functionConfig (or the CLI's `-c`); when absent, a `RenderBlueprint`
    /// among the items is used.
    pub function_config: Option<Value>,
    /// Values layers from the command line (`-f`, then `--set`), merged last, each with the
    /// label `explain` names it by (`-f values.yaml`, `--set`).
    pub value_overrides: Vec<(String, Value)>,
    /// The operator's limits for this render.
    pub limits: Limits,
    /// Where `jsonnet()` evaluations run; `None`: on threads of this process.
    pub jsonnet: Option<crate::jsonnet::Isolate>,
    /// The environment variables Windsor's `env()` reads: the command line's snapshot (empty:
    /// none), so that a render is a function of its input.
    pub environment: std::sync::Arc<crate::render::Environment>,
}

pub struct Output {
    /// The rendered items, or `None` when the render failed (write the input back unchanged).
    pub items: Option<Vec<Item>>,
    pub results: Vec<Diagnostic>,
    /// What each step decided, for `explain` and `graph`.
    pub report: Report,
}

/// Decisions of the steps, kept for `explain` and `graph`; never written to the ResourceList.
/// Assembled here from each step's returned report and the render state the steps shared.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub values: Value,
    /// Where each value came from (see [`Sources`]).
    pub value_sources: Sources,
    /// Resolved KOTS config values (the `config` binding of templates).
    pub config: crate::doc::Map,
    /// Where each KOTS config value came from, by item name; secret for `type: password`.
    pub config_sources: std::collections::HashMap<String, Source>,
    pub imports: imports::Report,
    pub policy: policy::Report,
    pub features: features::Report,
    pub repeat: repeat::Report,
    /// Every `spec.patches` entry and what it matched (empty when the render stopped earlier).
    pub patches: Vec<patch::PatchReport>,
    /// The post-build variables, when the config substitutes.
    pub substitution: Option<subst::Report>,
}

impl Output {
    pub fn has_errors(&self) -> bool {
        self.results.iter().any(Diagnostic::is_error)
    }
}

pub fn render(mut input: Input, files: &dyn Files) -> Output {
    // No configuration: no functionConfig, or the empty ConfigMap kpt passes without
    // --fn-config, and no RenderBlueprint among the items. The repeated-identity warning is
    // then not given: a result written after the items has kpt move a comment that ends the
    // last item into it, so a run that changes nothing would rewrite a file.
    let unconfigured = input.function_config.as_ref().is_none_or(|config| {
        krm::type_of(config) == ("v1", "ConfigMap")
            && config.get("data").is_none_or(|data| data.as_object().is_some_and(|d| d.is_empty()))
    }) && !input.items.iter().any(|item| item.type_of() == (config::API_VERSION, config::KIND));
    let (config, overrides) = match choose_config(input.function_config.take(), &input.items) {
        Ok(config) => config,
        Err(diagnostic) => return Output { items: None, results: vec![diagnostic], report: Report::default() },
    };
    let value_overrides = overrides.into_iter().chain(input.value_overrides).collect();
    let mut render = Render::new(config, input.items, value_overrides);
    render.budget = Budget::shared(input.limits);
    render.jsonnet = input.jsonnet;
    render.environment = input.environment;
    forget_previous_run(&mut render);
    for item in render.items.iter_mut().filter(|item| CONFIGURATION_KINDS.contains(&item.type_of())) {
        set_annotation(item.header_mut(), ann::LOCAL_CONFIG, "true");
    }
    mark_patch_files(&mut render);
    let mut report = Report::default();
    values::run(&mut render, files);
    // Two steps read their configuration here and act later: the KOTS config values are the
    // `config` that imports' templates read, the merged policy rules answer their `backend`.
    let kots = if render.failed() { None } else { Some(repeat::load(&mut render)) };
    let policies = policy::load(&mut render);
    if !render.failed() {
        report.imports = imports::run(&mut render, files);
    }
    if !render.failed() {
        report.policy = policy::run(&mut render, policies);
        imports::render_implementations(&mut render, files);
    }
    if !render.failed() {
        report.features = features::run(&mut render, files);
    }
    if let (false, Some(kots)) = (render.failed(), kots) {
        report.repeat = repeat::run(&mut render, kots);
    }
    if !render.failed() {
        let transformed = transform::run(&mut render, files);
        (report.patches, report.substitution) = (transformed.patches, transformed.substitution);
    }
    if !render.failed() {
        let generated = std::mem::take(&mut render.generated).into_iter().map(|g| g.item).collect();
        let generated = finish_generated(&render.config.name, generated);
        render.items.extend(generated.into_iter().map(Item::from));
        if !unconfigured {
            warn_duplicates(&mut render);
        }
    }
    if render.config.spec.warnings_as_errors {
        warnings_become_errors(&mut render.results);
    }
    report.values = std::mem::take(&mut render.values);
    report.value_sources = std::mem::take(&mut render.value_sources);
    report.config = std::mem::take(&mut render.config_values);
    report.config_sources = std::mem::take(&mut render.config_sources);
    if render.failed() {
        return Output { items: None, results: render.results, report };
    }
    Output { items: Some(render.items), results: render.results, report }
}

/// Two output objects with the same apiVersion, kind, namespace and name (two clusters'
/// packages rendered together, a copy left behind): kustomize refuses the build ("already
/// registered id") and a cluster keeps only the one applied last, so each repeat is a warning
/// naming where the first came from. Items that are not applied (local-config) and items
/// without a name are left out. One pass, a set of identities.
fn warn_duplicates(render: &mut Render) {
    let mut warnings = Vec::new();
    for (earlier, index) in krm::repeated_identities(render.items.iter()) {
        let (item, identity) = (&render.items[index], render.items[index].identity());
        let (here, there) = (identity.path.as_deref(), render.items[earlier].identity().path);
        let first = match there.as_deref() {
            Some(path) if here != Some(path) => format!("the first is in {path}"),
            Some(_) => "the first is in this file".to_string(),
            None => "the first has no file".to_string(),
        };
        let message = format!(
            "another object in the output has the same apiVersion, kind, namespace and name ({first}): \
             kustomize refuses the build and a cluster keeps only the one applied last; remove one, or give it \
             another name or namespace"
        );
        warnings.push(Diagnostic::warning(Kind::Render, message).about(item.header()));
    }
    render.results.extend(warnings);
}

/// `spec.warningsAsErrors`: each warning becomes an error that says, on its first line (a
/// message may go on with an excerpt of the source), why it is one.
fn warnings_become_errors(results: &mut [Diagnostic]) {
    for result in results.iter_mut().filter(|result| result.severity == Severity::Warning) {
        result.severity = Severity::Error;
        let end = result.message.find('\n').unwrap_or(result.message.len());
        result.message.insert_str(end, " (an error: spec.warningsAsErrors is set)");
    }
}

/// The kinds of the `fn.blueprint.dev` group, all read by this function.
const OUR_KINDS: [(&str, &str); 3] =
    [(config::API_VERSION, config::KIND), (config::API_VERSION, "Policy"), (config::API_VERSION, "Implementation")];

/// Whether an item's type is in this function's group (`fn.blueprint.dev`) but none of its kinds.
fn misspelt_kind((api_version, kind): (&str, &str)) -> bool {
    api_version.split('/').next() == Some("fn.blueprint.dev") && !OUR_KINDS.contains(&(api_version, kind))
}

/// The functionConfig, or the one `RenderBlueprint` among the items, or the empty config; and a
/// values layer to put over the chosen config's values.
///
/// kpt always sends a functionConfig: without `--fn-config` it is a ConfigMap (`function-input`)
/// holding the `-- key=value` arguments, often none. So a ConfigMap functionConfig next to one
/// `RenderBlueprint` in the package does not replace it: the package's RenderBlueprint is the
/// config and the ConfigMap's data are values over its values, read as `--set` reads them.
fn choose_config(
    function_config: Option<Value>,
    items: &[Item],
) -> Result<(FunctionConfig, Option<(String, Value)>), Diagnostic> {
    // A misspelt kind or version of ours would pass through as a manifest and its configuration
    // be ignored: this group's kinds are all ours, so any other is an error.
    if let Some(item) = items.iter().find(|item| misspelt_kind(item.type_of())) {
        let (api_version, kind) = item.type_of();
        return Err(Diagnostic::error(
            Kind::Config,
            format!(
                "kind {kind:?} (apiVersion {api_version:?}) is not supported: use kind RenderBlueprint, Policy or \
                 Implementation with apiVersion {}",
                config::API_VERSION
            ),
        )
        .about(item.header())
        .at(crate::doc::FieldPath::root().key(if OUR_KINDS.iter().any(|(_, k)| *k == kind) {
            "apiVersion"
        } else {
            "kind"
        })));
    }
    let mut candidates =
        items.iter().filter(|item| item.type_of() == (config::API_VERSION, config::KIND)).map(|i| &**i);
    if let Some(given) = function_config {
        let given = FunctionConfig::from_value(given)?;
        return match (&given.data_values, candidates.next(), candidates.next()) {
            (Some(data), Some(blueprint), None) => {
                let mut layer = Value::Object(crate::doc::Map::new());
                for (key, value) in data {
                    let text = value.as_str().unwrap_or_default();
                    let assignment = crate::values::assignment_layer(key, text).map_err(|message| {
                        Diagnostic::error(Kind::Config, message)
                            .at(crate::doc::FieldPath::root().key("data").key(key.as_str()))
                            .about(&given.item)
                    })?;
                    crate::doc::deep_merge(&mut layer, assignment);
                }
                let label = format!("functionConfig ConfigMap {} data", krm::name_of(&given.item));
                Ok((FunctionConfig::from_item(blueprint)?, Some((label, layer))))
            }
            _ => Ok((given, None)),
        };
    }
    match (candidates.next(), candidates.next()) {
        (None, _) => Ok((FunctionConfig::empty(), None)),
        (Some(config), None) => Ok((FunctionConfig::from_item(config)?, None)),
        (Some(first), Some(second)) => {
            let place = |item: &Value| {
                let (path, _) = krm::item_location(item);
                format!("{:?}{}", krm::name_of(item), path.map(|p| format!(" in {p}")).unwrap_or_default())
            };
            Err(Diagnostic::error(
                Kind::Config,
                format!(
                    "more than one RenderBlueprint among the items ({} and {}) and no functionConfig: \
                     pass one with -c or keep one in the package",
                    place(first),
                    place(second)
                ),
            )
            .about(second))
        }
    }
}

/// Patch files named by `path` (a feature's or blueprint's `kustomize[].patches[]`, or
/// `spec.patches[]`) are configuration the function reads, not resources: a package directory
/// holds them next to its manifests, so kpt sends them and `render` reads them as items. They are
/// marked local-config like every configuration item, whether or not the feature naming them is
/// on this time, so an `IngressClass` patch with `${cluster}` left for Flux is never applied or
/// printed as a resource of its own.
fn mark_patch_files(render: &mut Render) {
    fn patch_paths<'a>(kustomize: Option<&'a Value>) -> impl Iterator<Item = &'a str> {
        let list = |value: Option<&'a Value>| value.and_then(Value::as_array).into_iter().flatten();
        list(kustomize).flat_map(move |k| list(k.get("patches"))).filter_map(|p| p.get("path")?.as_str())
    }
    let windsor = |item: &Item| item.type_of().0 == features::model::API_VERSION;
    let mut named: Vec<(Option<String>, &str)> = Vec::new();
    for item in render.items.iter().filter(|item| windsor(item)) {
        let from = krm::item_location(item.header()).0;
        named.extend(patch_paths(item.get("kustomize")).map(|path| (from.clone(), path)));
    }
    let config = &render.config;
    let from = krm::item_location(&config.item).0;
    let spec = config.item.get("spec");
    let blueprint = spec.and_then(|s| s.get("blueprint"));
    named.extend(patch_paths(blueprint.and_then(|b| b.get("kustomize"))).map(|path| (from.clone(), path)));
    let inline_features = spec.and_then(|s| s.get("features")).and_then(Value::as_array).into_iter().flatten();
    named.extend(inline_features.flat_map(|f| patch_paths(f.get("kustomize"))).map(|path| (from.clone(), path)));
    let spec_patches = spec.and_then(|s| s.get("patches")).and_then(Value::as_array).into_iter().flatten();
    named.extend(spec_patches.filter_map(|p| p.get("path")?.as_str()).map(|path| (from.clone(), path)));
    let files: std::collections::HashSet<String> =
        named.into_iter().filter_map(|(from, path)| crate::package::resolve(from.as_deref(), path).ok()).collect();
    if files.is_empty() {
        return;
    }
    for item in render.items.iter_mut() {
        let is_patch_file = krm::item_location(item.header()).0.is_some_and(|path| files.contains(&path));
        if is_patch_file {
            set_annotation(item.header_mut(), ann::LOCAL_CONFIG, "true");
        }
    }
}

/// Makes a run on our own output equal to a run on the original input (idempotency):
/// drops what this functionConfig generated and undoes the exclusions it made.
fn forget_previous_run(render: &mut Render) {
    let name = render.config.name.as_str();
    render.items.retain(|item| {
        !item.header_contains(ann::GENERATED_BY) || annotation(item.header(), ann::GENERATED_BY) != Some(name)
    });
    for item in &mut render.items {
        if item.header_contains(ann::EXCLUDED) && annotation(item.header(), ann::EXCLUDED) == Some("true") {
            remove_annotation(item.header_mut(), ann::EXCLUDED);
            remove_annotation(item.header_mut(), ann::LOCAL_CONFIG);
        }
    }
}

/// Tags generated items with their generator and gives those without a file one under
/// `generated/`, in both the internal and the legacy annotation form (kpt reads either).
fn finish_generated(config_name: &str, generated: Vec<Value>) -> Vec<Value> {
    generated
        .into_iter()
        .map(|mut item| {
            set_annotation(&mut item, ann::GENERATED_BY, config_name);
            if krm::item_location(&item).0.is_none() {
                let kind = krm::type_of(&item).1.to_lowercase();
                let name = krm::name_of(&item).to_string();
                let path = match krm::namespace_of(&item) {
                    "" => format!("generated/{kind}_{name}.yaml"),
                    namespace => format!("generated/{namespace}/{kind}_{name}.yaml"),
                };
                for key in [ann::PATH, ann::LEGACY_PATH] {
                    set_annotation(&mut item, key, &path);
                }
                for key in [ann::INDEX, ann::LEGACY_INDEX] {
                    set_annotation(&mut item, key, "0");
                }
            }
            item
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::CHANGE_BATCH;
    use serde_json::json;

    /// Enough items that they are changed on two threads: the results, the names each patch
    /// matched and the items come out as one pass in the items' order gives them.
    #[test]
    fn items_changed_on_two_threads_read_as_one_pass() {
        let config = json!({
            "apiVersion": crate::config::API_VERSION, "kind": crate::config::KIND, "metadata": {"name": "p"},
            "spec": {
                "patches": [{
                    "target": {"kind": "Deployment"},
                    "patch": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\n  labels:\n    patched: \"${n}\"\n",
                }],
                "substitute": {"n": "1"},
            },
        });
        let count = CHANGE_BATCH * 2 + 7;
        let items: Vec<Item> = (0..count)
            .map(|i| {
                let kind = if i % 3 == 0 { "ConfigMap" } else { "Deployment" };
                Item::from(json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": format!("r{i}")}}))
            })
            .collect();
        let input = Input { items, function_config: Some(config), ..Default::default() };
        let output = render(input, &crate::package::MemoryFiles::default());
        let messages: Vec<&str> = output.results.iter().map(|r| r.message.as_str()).collect();
        let deployments = (0..count).filter(|i| i % 3 != 0).count();
        assert_eq!(
            messages,
            vec![format!(
                "patch spec.patches[0]: its metadata.name \"any\" is not applied: the resource keeps the name \"r1\" \
                 (as in kustomize); set options.allowNameChange: true to rename it, or leave metadata.name out of the \
                 patch (the same for {} more resources the patch selects)",
                deployments - 1
            )]
        );
        let names: Vec<String> = (0..count).filter(|i| i % 3 != 0).map(|i| format!("Deployment/r{i}")).collect();
        assert_eq!(output.report.patches[0].matched.iter().map(|n| n.as_str()).collect::<Vec<_>>(), names);
        let items = output.items.unwrap_or_default();
        assert_eq!(items.len(), count);
        for (i, item) in items.iter().enumerate() {
            assert_eq!(krm::name_of(item.header()), format!("r{i}"));
            let label = item.header()["metadata"]["labels"]["patched"].clone();
            assert_eq!(label, if i % 3 == 0 { Value::Null } else { json!(1) }, "r{i}");
        }
    }

    /// A run over an earlier run's output with another config (kpt writes the output over the
    /// files): an item patched but not substituted takes the new variables; one the changed
    /// part of the config changed is refused, naming it and the way back; one no step changed
    /// takes the new config as the files would.
    #[test]
    fn a_changed_config_over_marked_items_gives_the_fresh_result_or_refuses() {
        let config = |tag: &str, extra: &str| {
            json!({
                "apiVersion": crate::config::API_VERSION, "kind": crate::config::KIND, "metadata": {"name": "p"},
                "spec": {"patches": [{
                    "target": {"kind": "Deployment", "name": "web"},
                    "patch": "[{\"op\": \"add\", \"path\": \"/spec/args/-\", \"value\": \"--verbose\"}]",
                }, {
                    "target": {"kind": "Deployment", "name": "api"},
                    "patch": format!("[{{\"op\": \"add\", \"path\": \"/spec/args/-\", \"value\": \"{extra}\"}}]"),
                }], "substitute": {"tag": tag}},
            })
        };
        let items = || {
            vec![
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                       "spec": {"image": "nginx:${tag}", "args": ["--port=80"]}}),
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
                       "spec": {"args": ["--port=81"]}}),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tag"}, "data": {"t": "${tag}"}}),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}, "data": {"t": "x"}}),
            ]
        };
        let run = |items: Vec<Value>, config: Value| {
            let items = items.into_iter().map(Item::from).collect();
            render(
                Input { items, function_config: Some(config), ..Default::default() },
                &crate::package::MemoryFiles::default(),
            )
        };
        let values = |output: &Output| -> Vec<Value> {
            output.items.clone().unwrap_or_default().into_iter().map(Item::into_value).collect()
        };
        let errors = |output: &Output| -> Vec<String> {
            output.results.iter().filter(|r| r.is_error()).map(|r| r.message.clone()).collect()
        };
        let first = values(&run(items(), config("1.27", "-v")));
        assert!(first.iter().take(3).all(|item| krm::annotation(item, ann::APPLIED).is_some()));
        assert_eq!(krm::annotation(&first[3], ann::APPLIED), None, "no step changed it: no mark");
        // The same config: nothing changes (kpt's rule).
        assert_eq!(values(&run(first.clone(), config("1.27", "-v"))), first);
        // Another tag: web and the tag ConfigMap were substituted, their ${tag} is gone.
        let refused = run(first.clone(), config("1.28", "-v"));
        let refused_errors = errors(&refused);
        assert_eq!(refused_errors.len(), 2, "{refused_errors:?}");
        assert!(refused_errors[0].starts_with("Deployment web holds the output of an earlier render"));
        assert!(refused_errors[1].starts_with("ConfigMap tag holds the output of an earlier render"));
        assert!(refused_errors.iter().all(|e| e.contains("restore the package's files as committed")));
        assert!(refused.results.iter().all(|r| r.is_error()), "no warning about patches matching nothing");
        // Without the substituted items, the patched-only api and the untouched ConfigMap take
        // the new tag as a render of the files does.
        let fresh = values(&run(vec![items()[1].clone(), items()[3].clone()], config("1.28", "-v")));
        assert_eq!(values(&run(vec![first[1].clone(), first[3].clone()], config("1.28", "-v"))), fresh);
        // Another patch for api: api is refused; the substituted ConfigMap, which no patch
        // selects, is still what the files give.
        let refused = errors(&run(first[1..].to_vec(), config("1.27", "-x")));
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].starts_with("Deployment api holds"), "{refused:?}");
        let kept = values(&run(first[2..].to_vec(), config("1.27", "-x")));
        assert_eq!(kept, first[2..].to_vec());
        // No patches nor variables any more: every marked item holds stale values.
        let bare = json!({"apiVersion": crate::config::API_VERSION, "kind": crate::config::KIND,
                          "metadata": {"name": "p"}, "spec": {}});
        assert_eq!(errors(&run(first.clone(), bare)).len(), 3);
    }

    /// A second run over the first's output, on two threads: items the first marked (a JSON patch
    /// appending to a list) are only counted, so the items and the results are the first's.
    #[test]
    fn marked_items_are_counted_on_two_threads() {
        let config = json!({
            "apiVersion": crate::config::API_VERSION, "kind": crate::config::KIND, "metadata": {"name": "p"},
            "spec": {"patches": [{
                "target": {"kind": "ConfigMap"},
                "patch": "[{\"op\": \"add\", \"path\": \"/data/list/-\", \"value\": \"x\"}]",
            }, {
                "target": {"kind": "ConfigMap", "name": "nothing"},
                "patch": "[{\"op\": \"add\", \"path\": \"/data/b\", \"value\": \"y\"}]",
            }]},
        });
        let items = (0..CHANGE_BATCH * 2 + 7).map(|i| {
            let kind = if i % 4 == 0 { "Secret" } else { "ConfigMap" };
            Item::from(
                json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": format!("r{i}")}, "data": {"list": []}}),
            )
        });
        let run = |items: Vec<Item>| {
            let input = Input { items, function_config: Some(config.clone()), ..Default::default() };
            render(input, &crate::package::MemoryFiles::default())
        };
        let items: Vec<Item> = items.collect();
        // The reference: the same run on this thread only.
        crate::krm::ONE_THREAD.with(|flag| flag.set(true));
        let (one, one_again) = {
            let one = run(items.clone());
            let again: Vec<Item> = one.items.clone().unwrap_or_default();
            (one, run(again))
        };
        crate::krm::ONE_THREAD.with(|flag| flag.set(false));
        let values = |output: &Output| -> Vec<Value> {
            output.items.clone().unwrap_or_default().into_iter().map(Item::into_value).collect()
        };
        let first = run(items);
        let first_items = values(&first);
        let marked = first_items.iter().filter(|item| krm::annotation(item, ann::APPLIED).is_some()).count();
        assert_eq!(marked, (0..CHANGE_BATCH * 2 + 7).filter(|i| i % 4 != 0).count());
        let second = run(first_items.iter().cloned().map(Item::from).collect());
        let second_items = values(&second);
        assert_eq!(second_items, first_items);
        let messages = |output: &Output| output.results.iter().map(|r| r.message.clone()).collect::<Vec<_>>();
        assert_eq!(messages(&second), messages(&first));
        assert_eq!(second.report.patches[0].matched, first.report.patches[0].matched);
        assert!(!messages(&first).is_empty(), "the second patch matches nothing: a warning");
        assert_eq!((values(&one), messages(&one)), (first_items, messages(&first)));
        assert_eq!((values(&one_again), messages(&one_again)), (second_items, messages(&second)));
    }

    /// Patches and substitution on large random lists: changed on two threads, the output (items and
    /// results) is the one thread's, byte for byte (docs/krm.md: results read as one pass).
    #[test]
    fn items_changed_on_two_threads_match_one_thread() {
        crate::krm::differential::on_a_big_stack(check_changed_on_two_threads);
    }

    fn check_changed_on_two_threads() {
        use crate::krm::differential::{generate::Rng, parse, pool};
        let config = |text: &str| crate::doc::read_yaml_documents(text).ok().and_then(|mut d| d.pop());
        let Some(config) = config(
            "apiVersion: fn.blueprint.dev/v1alpha1\nkind: RenderBlueprint\nmetadata: {name: two}\nspec:\n  \
             substitute: {v: prod-eu, n: '3'}\n  patches:\n  - target: {kind: ConfigMap}\n    patch: |\n      \
             apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: any\n        labels: {x: '${v}'}\n  \
             - target: {kind: Deployment}\n    patch: '[{\"op\": \"add\", \"path\": \"/metadata/annotations\", \
             \"value\": {\"y\": \"${n}\"}}]'\n",
        ) else {
            panic!("the test's config does not read");
        };
        let run = |list: &crate::krm::ResourceList, one: bool| {
            crate::krm::ONE_THREAD.with(|flag| flag.set(one));
            let input =
                Input { items: list.items.clone(), function_config: Some(config.clone()), ..Default::default() };
            let output = render(input, &crate::package::MemoryFiles::default());
            crate::krm::ONE_THREAD.with(|flag| flag.set(false));
            let results = output.results.iter().map(crate::diag::Diagnostic::to_result).collect();
            let mut out = Vec::new();
            let written = list.write_to(&mut out, output.items.unwrap_or_default(), results);
            (written.is_ok(), String::from_utf8_lossy(&out).into_owned())
        };
        // Fixture items of Kubernetes kinds without KOTS templates or variables (other steps' kinds,
        // templates and variables fail renders on their own), half of them kinds the patches target.
        let core = |item: &&String| ["apiVersion: v1\n", "apiVersion: apps/v1\n"].iter().any(|a| item.contains(a));
        // Items an expectation marked are another config's output, which this one refuses.
        let plain = |item: &&String| {
            !["kots.io", "repl", "$", "fn.blueprint.dev/applied"].iter().any(|text| item.contains(text))
        };
        let kubernetes: Vec<&String> = pool().iter().filter(core).filter(plain).collect();
        let targeted: Vec<&String> = kubernetes
            .iter()
            .copied()
            .filter(|item| item.contains("kind: ConfigMap") || item.contains("kind: Deployment"))
            .collect();
        let env = |key: &str, default: u64| std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        let (mut lists, mut changed) = (0, 0);
        for seed in 1..=env("DIFF_ROUNDS", 4) {
            let mut rng = Rng::seeded(seed);
            let mut text = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
            // 600 of them as one block list.
            for _ in 0..600 {
                let item = if rng.chance(50) { rng.pick(&targeted) } else { rng.pick(&kubernetes) };
                for (i, line) in item.lines().enumerate() {
                    text.push_str(if i == 0 {
                        "- "
                    } else if line.is_empty() {
                        ""
                    } else {
                        "  "
                    });
                    text.push_str(line);
                    text.push('\n');
                }
            }
            let Ok(list) = parse(&text, u64::MAX) else { continue };
            let two = run(&list, false);
            assert_eq!(two, run(&list, true), "seed {seed}");
            lists += 1;
            changed += two.1.matches("prod-eu").count();
        }
        // Enough items changed that batches went to two threads.
        assert!(lists > 0 && changed > 4 * 16, "{lists} lists, {changed} items changed");
    }

    #[test]
    fn generated_items_get_a_path_and_their_generator() {
        let items = finish_generated(
            "p",
            vec![json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}})],
        );
        assert_eq!(annotation(&items[0], ann::GENERATED_BY), Some("p"));
        assert_eq!(annotation(&items[0], ann::PATH), Some("generated/ns/configmap_a.yaml"));
        assert_eq!(annotation(&items[0], ann::LEGACY_PATH), Some("generated/ns/configmap_a.yaml"));
        assert_eq!(annotation(&items[0], ann::INDEX), Some("0"));
    }

    #[test]
    fn a_generating_source_keeps_its_own_path() {
        let item = json!({"kind": "ConfigMap", "metadata": {"name": "a", "annotations": {ann::PATH: "out/a.yaml"}}});
        let items = finish_generated("p", vec![item]);
        assert_eq!(annotation(&items[0], ann::PATH), Some("out/a.yaml"));
    }

    #[test]
    fn previous_output_is_forgotten() {
        let config = FunctionConfig { name: "p".into(), ..FunctionConfig::empty() };
        let mut render = Render::new(
            config,
            vec![
                json!({"kind": "A", "metadata": {"name": "gen", "annotations": {ann::GENERATED_BY: "p"}}}),
                json!({"kind": "A", "metadata": {"name": "other", "annotations": {ann::GENERATED_BY: "q"}}}),
                json!({"kind": "A", "metadata": {"name": "ex", "annotations": {ann::EXCLUDED: "true", ann::LOCAL_CONFIG: "true"}}}),
            ]
            .into_iter()
            .map(Item::from)
            .collect(),
            vec![],
        );
        forget_previous_run(&mut render);
        let items: Vec<Value> = render.items.into_iter().map(Item::into_value).collect();
        assert_eq!(
            items,
            vec![
                json!({"kind": "A", "metadata": {"name": "other", "annotations": {ann::GENERATED_BY: "q"}}}),
                json!({"kind": "A", "metadata": {"name": "ex"}}),
            ]
        );
    }
}
