//! windsorcli/core's own composition tests, run against this crate as `windsor test` runs them.
//!
//! `tests/fixtures/features/windsor-core/contexts/_template/` is a copy of windsorcli/core's
//! `contexts/_template` (README.md there names the commit). Every case of its
//! `tests/*.test.yaml` is one test here, named `<file>/<case name>`: the package's facets and
//! `blueprint.yaml` are rendered through the library with the case's `values` (the schema next to
//! `blueprint.yaml` read, its defaults only when the case sets `applySchemaDefaults`, and its `terraformOutputs` answering
//! `terraform_output()`, and its `env` (over `WINDSOR_CONTEXT=test`) the only variables `env()`
//! sees, as windsorcli/cli's `createGenerator` does), and
//! the merged Blueprint is checked as windsorcli/cli's `pkg/test/runner.go` checks it:
//! - `expectError`: the render must fail;
//! - else the render must succeed, and pass the runner's `validateBlueprint` (no duplicate
//!   terraform ids, kustomization names or components in one kustomization, no dependency cycle,
//!   no `dependsOn` naming nothing; the `crds` layers count as kustomizations);
//! - `expect` (`matchBlueprint`): each terraform component found by `name` or `path`, its
//!   `source` and `path` equal when set, its `dependsOn` a subset, each `inputs` key present and
//!   equal (`deepEqualInputsValue`: maps a subset, lists the same length with each element a
//!   subset, scalars equal as Go's `%v` writes them); each kustomization found by name among the
//!   plain ones and the Flux systems' compiled tiers (`AllKustomizations`), `path`/`source` equal
//!   when set, `dependsOn` and `components` subsets, `substitutions` equal per key; each Flux
//!   system by name (`matchFluxSystem`: path, source, when, strategy, dependsOn subset, ordinal,
//!   globalDependency when expected true, install and resources variants as kustomizations, a
//!   variant found by name, else by components); each `crds` entry in the Blueprint's `crds` or a
//!   source's;
//! - `exclude` (`matchExclusions`): the named entries absent (with `components:`, only those
//!   components absent from the entry).
//!
//! Two more kinds of trial: `matrix/<platform>/<context>/<option>` renders core for 64
//! combinations of platform, context (`local`, a dev context, and `prod`) and options as a user
//! renders it (schema found next to `blueprint.yaml`, `spec.warningsAsErrors: true`): each renders
//! without a warning, or fails with Windsor's requirements error alone. No recorded Windsor output
//! is compared there (the CLI is not built here). `platform: none` is left out: outside a local
//! context, core's schema defaults turn the gateway on while platform-base (which provides the
//! pki and csi it depends on) is off, a dependency error. `deferred/registry-mirrors-resolve-to-a-map`
//! resolves core's deferred registry mirrors as Windsor resolves them once terraform has run.
//!
//! Cases this crate cannot pass yet are listed in `tests/windsor_core_pending.txt`, one per line
//! as `<file>/<case name> | <reason>`. A listed case that fails is reported as passing (with its
//! reason, under `--nocapture`); a listed case that passes fails, so the list only shrinks; an
//! unlisted failure fails. `WINDSOR_CORE_REPORT=1` prints every failing case with its diffs.

#[path = "common/windsor.rs"]
mod windsor;

use libtest_mimic::{Arguments, Failed, Trial};
use render_blueprint::doc::{read_yaml_documents, Map, Value};
use render_blueprint::features::model::{Blueprint, Kustomization, TerraformComponent};
use render_blueprint::krm::Item;
use render_blueprint::package::DiskFiles;
use render_blueprint::pipeline::{render, Input};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

const PENDING: &str = "tests/windsor_core_pending.txt";

fn template_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/features/windsor-core/contexts/_template")
}

/// One `*.test.yaml` case.
struct Case {
    values: Map,
    expect: Option<Value>,
    exclude: Option<Value>,
    expect_error: bool,
    schema_defaults: bool,
    /// `terraformOutputs`: component → output → value, what `terraform_output()` gives.
    terraform_outputs: Option<Value>,
    /// `env`: what `env()` reads, over the runner's `WINDSOR_CONTEXT=test`.
    env: BTreeMap<String, String>,
}

fn cases(dir: &Path) -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("tests"))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|f| f.to_string_lossy().ends_with(".test.yaml"));
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let stem = file.file_name().map(|n| n.to_string_lossy().replace(".test.yaml", "")).unwrap_or_default();
        let text = std::fs::read_to_string(&file).unwrap_or_else(|err| panic!("{}: {err:?}", file.display()));
        let documents = read_yaml_documents(&text).unwrap_or_else(|err| panic!("{}: {err:?}", file.display()));
        let list = documents.first().and_then(|d| d.get("cases")).and_then(Value::as_array).cloned();
        for case in list.unwrap_or_default() {
            let name = case.get("name").and_then(Value::as_str).unwrap_or_default();
            let values = case.get("values").and_then(Value::as_object).cloned().unwrap_or_default();
            let flag = |key: &str| case.get(key).and_then(Value::as_bool).unwrap_or(false);
            out.push((
                format!("{stem}/{name}"),
                Case {
                    values,
                    expect: case.get("expect").filter(|v| !v.is_null()).cloned(),
                    exclude: case.get("exclude").filter(|v| !v.is_null()).cloned(),
                    expect_error: flag("expectError"),
                    schema_defaults: flag("applySchemaDefaults"),
                    terraform_outputs: case.get("terraformOutputs").filter(|v| !v.is_null()).cloned(),
                    env: std::iter::once(("WINDSOR_CONTEXT".to_string(), "test".to_string()))
                        .chain(
                            case.get("env")
                                .and_then(Value::as_object)
                                .into_iter()
                                .flatten()
                                .map(|(k, v)| (k.clone(), self::text(v))),
                        )
                        .collect(),
                },
            ));
        }
    }
    out
}

/// What a render gave: the merged Blueprint and the Flux systems' compiled tiers, or the errors.
struct Composed {
    blueprint: Blueprint,
    tiers: Vec<Kustomization>,
}

fn compose(dir: &Path, items: &[Value], case: &Case) -> Result<Composed, String> {
    // `windsor test` sets every value but `context` and `_testName` (createGenerator).
    let mut values = case.values.clone();
    values.shift_remove("context");
    let mut spec = json!({"values": Value::Object(values), "windsor": {}});
    // The template's schema.yaml is read next to blueprint.yaml, as the runner loads it; its
    // defaults only with `applySchemaDefaults` (`SetApplySchemaDefaults`).
    if !case.schema_defaults {
        spec["windsor"]["schemaDefaults"] = json!(false);
    }
    // windsor test's mock: a listed component's outputs, nil for a key not listed.
    if let Some(outputs) = &case.terraform_outputs {
        spec["windsor"]["terraformOutputs"] = outputs.clone();
    }
    let config = json!({
        "apiVersion": "fn.blueprint.dev/v1alpha1",
        "kind": "RenderBlueprint",
        "metadata": {"name": "test", "annotations": {"internal.config.kubernetes.io/path": "render.yaml"}},
        "spec": spec,
    });
    let files = DiskFiles::new(dir, 8 << 20);
    let input = Input {
        items: items.iter().cloned().map(Item::from).collect(),
        function_config: Some(config),
        environment: Arc::new(case.env.clone()),
        ..Input::default()
    };
    let output = render(input, &files);
    if output.has_errors() {
        let errors: Vec<String> = output
            .results
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("composition error: {}", d.message))
            .collect();
        return Err(errors.join("\n"));
    }
    // The package's schema declares what its facets read: a "did you mean" warning on stock core
    // is a false alarm, and `spec.warningsAsErrors: true` would refuse the render.
    let typos: Vec<String> = output
        .results
        .iter()
        .filter(|d| !d.is_error() && d.message.contains("which no value sets"))
        .map(|d| format!("unexpected warning: {}", d.message))
        .collect();
    if !typos.is_empty() {
        return Err(typos.join("\n"));
    }
    let blueprint = output.report.features.blueprint.ok_or("no blueprint was composed")?;
    Ok(Composed { blueprint, tiers: output.report.features.flux_tiers })
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value.and_then(Value::as_array).into_iter().flatten().map(text).collect()
}

/// A scalar as Go's `%v` writes it (how the runner compares mismatched types).
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => render_blueprint::expr::go_format(other),
    }
}

fn field<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `deepEqual`: maps with the same keys, lists the same length, scalars equal as `%v`.
fn deep_equal(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len() && e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| deep_equal(ev, av)))
        }
        (Value::Object(_), _) => false,
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(e, a)| deep_equal(e, a)),
        (Value::Array(_), _) => false,
        (e, a) => e == a || text(e) == text(a),
    }
}

/// `deepEqualInputsValue`: maps a subset, lists element-wise subsets of the same length.
fn inputs_equal(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(e, a)| inputs_equal(e, a)),
        (Value::Array(_), _) => false,
        (Value::Object(e), Value::Object(a)) => e.iter().all(|(k, ev)| a.get(k).is_some_and(|av| inputs_equal(ev, av))),
        (Value::Object(_), _) => false,
        (e, a) => deep_equal(e, a),
    }
}

fn short(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    if text.len() > 300 {
        format!("{}…", &text[..text.char_indices().nth(300).map_or(text.len(), |(i, _)| i)])
    } else {
        text
    }
}

/// The composed blueprint as the runner sees it: terraform, all kustomizations, systems, crds.
struct View {
    terraform: Vec<Value>,
    kustomizations: Vec<Value>,
    systems: Vec<Value>,
    crds: Vec<String>,
}

impl View {
    fn new(composed: &Composed) -> Self {
        let bp = &composed.blueprint;
        let mut crds = bp.crds.clone();
        for source in &bp.sources {
            crds.extend(strings(source.extra.get("crds")));
        }
        let kustomizations = bp.kustomize.iter().chain(&composed.tiers).map(to_value).collect();
        View {
            terraform: bp.terraform.iter().map(to_value).collect(),
            kustomizations,
            systems: bp.flux.iter().map(to_value).collect(),
            crds,
        }
    }

    fn terraform(&self, expect: &Value) -> Option<&Value> {
        let (name, path) = (field(expect, "name"), field(expect, "path"));
        self.terraform
            .iter()
            .find(|t| (!name.is_empty() && field(t, "name") == name) || (!path.is_empty() && field(t, "path") == path))
    }

    fn kustomization(&self, name: &str) -> Option<&Value> {
        self.kustomizations.iter().find(|k| field(k, "name") == name)
    }

    fn system(&self, name: &str) -> Option<&Value> {
        self.systems.iter().find(|s| field(s, "name") == name)
    }
}

fn list<'v>(value: &'v Value, key: &str) -> &'v [Value] {
    value.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn match_kustomization(actual: &Value, expect: &Value, label: &str, diffs: &mut Vec<String>) {
    for key in ["path", "source"] {
        let e = field(expect, key);
        if !e.is_empty() && field(actual, key) != e {
            diffs.push(format!("kustomize[{label}].{key}: expected {e:?}, got {:?}", field(actual, key)));
        }
    }
    for key in ["dependsOn", "components"] {
        let have = strings(actual.get(key));
        for item in strings(expect.get(key)) {
            if !have.contains(&item) {
                diffs.push(format!("kustomize[{label}].{key}: missing {item:?}"));
            }
        }
    }
    if let Some(subs) = expect.get("substitutions").and_then(Value::as_object) {
        for (key, e) in subs {
            match actual.get("substitutions").and_then(|s| s.get(key)) {
                None => diffs.push(format!("kustomize[{label}].substitutions[{key}]: key not found")),
                Some(a) if text(a) != text(e) => diffs.push(format!(
                    "kustomize[{label}].substitutions[{key}]: expected {:?}, got {:?}",
                    text(e),
                    text(a)
                )),
                Some(_) => {}
            }
        }
    }
}

/// `findFluxVariant`: by name when the expectation names one, else by components (a subset); a
/// bare expectation matches the only variant.
fn find_variant<'v>(actual: &'v [Value], expect: &Value) -> Option<&'v Value> {
    let name = field(expect, "name");
    let components = strings(expect.get("components"));
    for variant in actual {
        if !name.is_empty() {
            if field(variant, "name") == name {
                return Some(variant);
            }
            continue;
        }
        let have = strings(variant.get("components"));
        if !components.is_empty() && components.iter().all(|c| have.contains(c)) {
            return Some(variant);
        }
    }
    (name.is_empty() && components.is_empty() && actual.len() == 1).then(|| &actual[0])
}

fn variant_id(variant: &Value) -> String {
    let name = field(variant, "name");
    if name.is_empty() {
        strings(variant.get("components")).join(",")
    } else {
        name.to_string()
    }
}

fn match_system(actual: &Value, expect: &Value, diffs: &mut Vec<String>) {
    let name = field(expect, "name");
    for key in ["path", "source", "when", "strategy"] {
        let e = field(expect, key);
        if !e.is_empty() && field(actual, key) != e {
            diffs.push(format!("flux[{name}].{key}: expected {e:?}, got {:?}", field(actual, key)));
        }
    }
    let have = strings(actual.get("dependsOn"));
    for item in strings(expect.get("dependsOn")) {
        if !have.contains(&item) {
            diffs.push(format!("flux[{name}].dependsOn: missing {item:?}"));
        }
    }
    if let Some(ordinal) = expect.get("ordinal").filter(|o| !o.is_null()) {
        match actual.get("ordinal") {
            Some(a) if text(a) == text(ordinal) => {}
            a => diffs.push(format!("flux[{name}].ordinal: expected {}, got {a:?}", text(ordinal))),
        }
    }
    if expect.get("globalDependency").and_then(Value::as_bool) == Some(true)
        && actual.get("globalDependency").and_then(Value::as_bool) != Some(true)
    {
        diffs.push(format!("flux[{name}].globalDependency: expected true, got false"));
    }
    if let Some(install) = expect.get("install").filter(|i| !i.is_null()) {
        match actual.get("install").filter(|i| !i.is_null()) {
            None => diffs.push(format!("flux[{name}].install: expected present, got absent")),
            Some(a) => match_kustomization(a, install, &format!("{name}.install"), diffs),
        }
    }
    for variant in list(expect, "resources") {
        let id = variant_id(variant);
        let Some(found) = find_variant(list(actual, "resources"), variant) else {
            diffs.push(format!("flux[{name}].resources: variant not found: {id}"));
            continue;
        };
        let when = field(variant, "when");
        if !when.is_empty() && field(found, "when") != when {
            diffs.push(format!("flux[{name}].resources[{id}].when: expected {when:?}, got {:?}", field(found, "when")));
        }
        match_kustomization(found, variant, &format!("{name}.resources[{id}]"), diffs);
    }
}

fn match_blueprint(view: &View, expect: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    for e in list(expect, "terraform") {
        let id = if field(e, "name").is_empty() { field(e, "path") } else { field(e, "name") };
        let Some(actual) = view.terraform(e) else {
            diffs.push(format!("terraform component not found: {id}"));
            continue;
        };
        for key in ["source", "path"] {
            let want = field(e, key);
            if !want.is_empty() && field(actual, key) != want {
                diffs.push(format!("terraform[{id}].{key}: expected {want:?}, got {:?}", field(actual, key)));
            }
        }
        let have = strings(actual.get("dependsOn"));
        for item in strings(e.get("dependsOn")) {
            if !have.contains(&item) {
                diffs.push(format!("terraform[{id}].dependsOn: missing {item:?}"));
            }
        }
        for (key, want) in e.get("inputs").and_then(Value::as_object).into_iter().flatten() {
            match actual.get("inputs").and_then(|i| i.get(key)) {
                None => diffs.push(format!("terraform[{id}].inputs[{key}]: key not found")),
                Some(got) if !inputs_equal(want, got) => {
                    diffs.push(format!("terraform[{id}].inputs[{key}]: expected {}, got {}", short(want), short(got)))
                }
                Some(_) => {}
            }
        }
    }
    for e in list(expect, "kustomize") {
        let name = field(e, "name");
        match view.kustomization(name) {
            None => diffs.push(format!("kustomization not found: {name}")),
            Some(actual) => match_kustomization(actual, e, name, &mut diffs),
        }
    }
    for e in list(expect, "flux") {
        let name = field(e, "name");
        match view.system(name) {
            None => diffs.push(format!("flux system not found: {name}")),
            Some(actual) => match_system(actual, e, &mut diffs),
        }
    }
    for crd in strings(expect.get("crds")) {
        if !view.crds.contains(&crd) {
            diffs.push(format!("crd reference not found: {crd}"));
        }
    }
    diffs
}

fn component_exclusions(actual: &Value, exclude: &Value, label: &str, diffs: &mut Vec<String>) {
    let have = strings(actual.get("components"));
    for component in strings(exclude.get("components")) {
        if have.contains(&component) {
            diffs.push(format!("{label}.components: should not contain {component:?}"));
        }
    }
}

fn match_exclusions(view: &View, exclude: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    for e in list(exclude, "terraform") {
        if view.terraform(e).is_some() {
            let id = if field(e, "name").is_empty() { field(e, "path") } else { field(e, "name") };
            diffs.push(format!("terraform component should not exist: {id}"));
        }
    }
    for e in list(exclude, "kustomize") {
        let name = field(e, "name");
        let Some(found) = view.kustomization(name) else { continue };
        if strings(e.get("components")).is_empty() {
            diffs.push(format!("kustomization should not exist: {name}"));
        } else {
            component_exclusions(found, e, &format!("kustomize[{name}]"), &mut diffs);
        }
    }
    for e in list(exclude, "flux") {
        let name = field(e, "name");
        let Some(found) = view.system(name) else { continue };
        let install = e.get("install").filter(|i| !i.is_null());
        if install.is_none() && list(e, "resources").is_empty() {
            diffs.push(format!("flux system should not exist: {name}"));
            continue;
        }
        if let (Some(install), Some(actual)) = (install, found.get("install").filter(|i| !i.is_null())) {
            if strings(install.get("components")).is_empty() {
                diffs.push(format!("flux[{name}].install: should not exist"));
            } else {
                component_exclusions(actual, install, &format!("flux[{name}].install"), &mut diffs);
            }
        }
        for variant in list(e, "resources") {
            let Some(actual) = find_variant(list(found, "resources"), variant) else { continue };
            if strings(variant.get("components")).is_empty() {
                diffs.push(format!("flux[{name}].resources: variant should not exist: {}", variant_id(variant)));
            } else {
                let label = format!("flux[{name}].resources[{}]", variant_id(variant));
                component_exclusions(actual, variant, &label, &mut diffs);
            }
        }
    }
    for crd in strings(exclude.get("crds")) {
        if view.crds.contains(&crd) {
            diffs.push(format!("crd reference should not exist: {crd}"));
        }
    }
    diffs
}

/// `detectCycles` over `graph` (edges to unknown nodes skipped), nodes in sorted order.
fn cycles(graph: &BTreeMap<String, Vec<String>>, kind: &str) -> Vec<String> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        seen: &mut HashSet<String>,
        stack: &mut HashSet<String>,
        out: &mut Vec<String>,
        kind: &str,
    ) {
        seen.insert(node.to_string());
        stack.insert(node.to_string());
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if !graph.contains_key(next) {
                continue;
            }
            if stack.contains(next) {
                let start = path.iter().position(|p| p == next).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(next.clone());
                out.push(format!("circular dependency detected in {kind}: {}", cycle.join(" -> ")));
            } else if !seen.contains(next) {
                visit(next, graph, path, seen, stack, out, kind);
            }
        }
        path.pop();
        stack.remove(node);
    }
    let (mut seen, mut out) = (HashSet::new(), Vec::new());
    for node in graph.keys() {
        if !seen.contains(node) {
            visit(node, graph, &mut Vec::new(), &mut seen, &mut HashSet::new(), &mut out, kind);
        }
    }
    out
}

/// The runner's `validateBlueprint`.
fn validate(view: &View, composed: &Composed) -> Vec<String> {
    let mut errs = Vec::new();
    let terraform: Vec<(String, Vec<String>)> = composed
        .blueprint
        .terraform
        .iter()
        .map(|t: &TerraformComponent| (t.id().to_string(), t.depends_on.clone()))
        .collect();
    let mut ids = HashSet::new();
    for (id, _) in &terraform {
        if !ids.insert(id.clone()) {
            errs.push(format!("duplicate terraform component ID: {id}"));
        }
    }
    let mut names = HashSet::new();
    for k in &view.kustomizations {
        let name = field(k, "name").to_string();
        if !names.insert(name.clone()) {
            errs.push(format!("duplicate kustomization name: {name}"));
        }
        let mut components = HashSet::new();
        for c in strings(k.get("components")).into_iter().filter(|c| !c.is_empty()) {
            if !components.insert(c.clone()) {
                errs.push(format!("duplicate component {c:?} in kustomization {name:?}"));
            }
        }
    }
    errs.extend(cycles(&terraform.iter().cloned().collect(), "terraform component"));
    let kgraph: BTreeMap<String, Vec<String>> =
        view.kustomizations.iter().map(|k| (field(k, "name").to_string(), strings(k.get("dependsOn")))).collect();
    errs.extend(cycles(&kgraph, "kustomization"));
    for (id, deps) in &terraform {
        for dep in deps.iter().filter(|d| !ids.contains(*d)) {
            errs.push(format!("terraform component {id:?} depends on non-existent component {dep:?}"));
        }
    }
    // `CrdLayers`: the default layer is named `crds`, a source's `crds-<source>`.
    if !composed.blueprint.crds.is_empty() {
        names.insert("crds".into());
    }
    for source in &composed.blueprint.sources {
        if !strings(source.extra.get("crds")).is_empty() {
            names.insert(format!("crds-{}", source.name));
        }
    }
    for k in &view.kustomizations {
        for dep in strings(k.get("dependsOn")).into_iter().filter(|d| !names.contains(d)) {
            errs.push(format!("kustomization {:?} depends on non-existent kustomization {dep:?}", field(k, "name")));
        }
    }
    errs
}

/// The runner's `runTestCase`: the differences, empty when the case passes.
fn run_case(dir: &Path, items: &[Value], case: &Case) -> Vec<String> {
    let composed = compose(dir, items, case);
    if case.expect_error {
        return match composed {
            Ok(_) => vec!["expected composition to fail, but it succeeded".into()],
            Err(_) => Vec::new(),
        };
    }
    let composed = match composed {
        Ok(c) => c,
        Err(err) => return vec![err],
    };
    let view = View::new(&composed);
    let mut diffs = validate(&view, &composed);
    if let Some(expect) = &case.expect {
        diffs.extend(match_blueprint(&view, expect));
    }
    if let Some(exclude) = &case.exclude {
        diffs.extend(match_exclusions(&view, exclude));
    }
    diffs
}

/// `<file>/<case name> | <reason>` lines; `#` starts a comment.
fn pending() -> HashMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(PENDING);
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(" | ") {
            Some((name, reason)) => (name.trim().to_string(), reason.trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect()
}

/// Terraform's outputs once `workstation` has run, for resolving what composition deferred.
struct Applied;

impl render_blueprint::expr::Host for Applied {
    fn file(&self, path: &str) -> Result<String, String> {
        Err(format!("no file {path}"))
    }
    fn jsonnet(&self, path: &str) -> Result<Value, String> {
        Err(format!("no file {path}"))
    }
    fn terraform_output(&self, component: &str, key: &str) -> Option<Value> {
        let registries = json!({
            "docker.io": {"remote": "https://registry-1.docker.io", "hostname": "docker.test", "local": ""},
            "ghcr.io": {"remote": "https://ghcr.io", "hostname": "ghcr.test", "local": ""},
        });
        Some(if (component, key) == ("workstation", "registries") { registries } else { Value::Null })
    }
}

/// The deferred registry mirrors of a docker workstation, as composition leaves them in the Talos
/// patch text (`common_config_patches`), resolved once terraform has run, as Windsor's
/// `GenerateResolved` resolves them: the text's `${…}` evaluated, its map result put in as
/// indented YAML. Windsor writes the reference as `mirrors:` with the expression on indented
/// lines of its own, which resolves to a map; written as a `|-` block scalar it would resolve to
/// text. (Checked against windsorcli/cli v0.9.0's evaluate loop, findExpressionEnd and
/// indentForEmbeddedYAML with expr-lang v1.17.8 and goccy/go-yaml v1.19.2: the same map.)
fn deferred_mirrors_resolve_to_a_map(dir: &Path, items: &[Value]) -> Result<(), Failed> {
    let values = json!({
        "platform": "docker",
        "workstation": {"runtime": "colima"},
        "dns": {"domain": "test.local"},
        "gateway": {"enabled": false},
        "network": {"cidr_block": "10.5.0.0/16"},
        "cluster": {"driver": "talos", "controlplanes": {"nodes": {"controlplane-1": {
            "endpoint": "10.5.0.10:50000", "node": "10.5.0.10", "hostname": "controlplane-1"}}}},
    });
    let case = Case {
        values: values.as_object().cloned().unwrap_or_default(),
        expect: None,
        exclude: None,
        expect_error: false,
        schema_defaults: false,
        terraform_outputs: None,
        env: BTreeMap::new(),
    };
    let composed = compose(dir, items, &case).map_err(Failed::from)?;
    let cluster = composed.blueprint.terraform.iter().find(|c| c.id() == "cluster").ok_or("no cluster component")?;
    let text = cluster.inputs.get("common_config_patches").and_then(Value::as_str).ok_or("no common_config_patches")?;
    if !text.contains("terraform_output(\"workstation\"") {
        return Err(format!("the mirrors are not deferred in:\n{text}").into());
    }
    let template = render_blueprint::expr::interpolate::Template::compile_windsor(
        text,
        render_blueprint::expr::Semantics::WindsorV09,
    )
    .map_err(|e| Failed::from(e.to_string()))?
    .ok_or("no expression in the patch")?;
    let budget = render_blueprint::limits::Budget::new(render_blueprint::limits::Limits::default());
    let (resolved, _) = template.eval_whole(&json!({}), &Applied, &budget).map_err(|e| Failed::from(e.to_string()))?;
    let resolved = resolved.as_str().ok_or("the resolved patch is not text")?.to_string();
    let documents = read_yaml_documents(&resolved).map_err(|e| Failed::from(format!("{e:?}\n{resolved}")))?;
    let mirrors = documents.first().and_then(|d| d.pointer("/machine/registries/mirrors")).cloned();
    match mirrors {
        Some(Value::Object(map)) if map.contains_key("docker.io") && map.contains_key("ghcr.io") => Ok(()),
        other => Err(format!("machine.registries.mirrors resolved to {other:?}, not a map, in:\n{resolved}").into()),
    }
}

/// Core over a matrix of platforms (all but none), contexts and options, rendered as a user renders it: the schema
/// found next to `blueprint.yaml` (its defaults applied), the context named, the template the
/// context's `core` source, `spec.warningsAsErrors: true`. Each combination renders without a
/// warning, or fails with Windsor's requirements error alone (nothing follows it).
fn matrix() -> Vec<(String, Value, &'static str)> {
    let platforms = [
        ("aws", json!({"platform": "aws", "aws": {"region": "us-east-2"}, "dns": {"domain": "example.com"}})),
        ("azure", json!({"platform": "azure", "dns": {"domain": "example.com"}})),
        ("metal", json!({"platform": "metal", "dns": {"domain": "example.com"}})),
        ("hetzner", json!({"platform": "hetzner", "dns": {"domain": "example.com"}})),
        ("vsphere", json!({"platform": "vsphere", "dns": {"domain": "example.com"}})),
        ("hyperv", json!({"platform": "hyperv", "dns": {"domain": "example.com"}})),
        ("incus", json!({"platform": "incus"})),
        ("docker", json!({"platform": "docker", "workstation": {"runtime": "colima"}})),
    ];
    let options = [
        ("defaults", json!({})),
        ("gateway-off", json!({"gateway": {"enabled": false}, "observability": {"enabled": true}})),
        ("identity", json!({"identity": {"enabled": true}, "database": {"postgres": {"enabled": true}}})),
        ("demo", json!({"demo": {"enabled": true}, "database": {"postgres": {"enabled": true}}})),
    ];
    let mut out = Vec::new();
    for (platform, values) in &platforms {
        for context in ["local", "prod"] {
            for (option, layer) in &options {
                let mut merged = values.clone();
                render_blueprint::doc::deep_merge(&mut merged, layer.clone());
                out.push((format!("matrix/{platform}/{context}/{option}"), merged, context));
            }
        }
    }
    out
}

fn matrix_case(dir: &Path, items: &[Value], values: &Value, context: &str) -> Result<(), Failed> {
    let config = json!({
        "apiVersion": "fn.blueprint.dev/v1alpha1",
        "kind": "RenderBlueprint",
        "metadata": {"name": "core", "annotations": {"internal.config.kubernetes.io/path": "render.yaml"}},
        "spec": {
            "warningsAsErrors": true,
            "values": values,
            "windsor": {"context": context, "project": "platform", "source": "core"},
            "blueprint": {
                "metadata": {"name": context},
                "sources": [{"name": "core", "url": "oci://ghcr.io/windsorcli/core:latest", "install": true}],
            },
        },
    });
    let files = DiskFiles::new(dir, 8 << 20);
    let input = Input {
        items: items.iter().cloned().map(Item::from).collect(),
        function_config: Some(config),
        ..Input::default()
    };
    let output = render(input, &files);
    let problems: Vec<String> = output.results.iter().filter(|d| d.is_error()).map(|d| d.message.clone()).collect();
    match problems.as_slice() {
        [] => Ok(()),
        [only] if only.starts_with("the following required values are not set in values.yaml:") => Ok(()),
        _ => Err(problems.join("\n").into()),
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let dir = template_dir();
    let items = Arc::new(windsor::package_items(&dir).unwrap_or_else(|err| panic!("{err}")));
    let pending = pending();
    let all = cases(&dir);
    let report = std::env::var_os("WINDSOR_CORE_REPORT").is_some_and(|v| v == "1");
    let known: HashSet<String> = all.iter().map(|(n, _)| n.clone()).collect();
    let stale: Vec<String> = pending.keys().filter(|n| !known.contains(*n)).cloned().collect();
    let count = all.len();
    let mut trials = vec![Trial::test("cases-found", move || {
        if count == 0 {
            return Err("no windsor core test cases found".into());
        }
        if !stale.is_empty() {
            return Err(format!("{PENDING} lists cases that do not exist: {stale:?}").into());
        }
        Ok(())
    })];
    let (mirrors_dir, mirrors_items) = (dir.clone(), items.clone());
    trials.push(Trial::test("deferred/registry-mirrors-resolve-to-a-map", move || {
        deferred_mirrors_resolve_to_a_map(&mirrors_dir, &mirrors_items)
    }));
    for (name, values, context) in matrix() {
        let (matrix_dir, matrix_items) = (dir.clone(), items.clone());
        trials.push(Trial::test(name, move || matrix_case(&matrix_dir, &matrix_items, &values, context)));
    }
    let mut seen = HashSet::new();
    for (name, case) in all {
        if !seen.insert(name.clone()) {
            trials.push(Trial::test(format!("{name} (duplicate)"), || Err("two cases share this name".into())));
            continue;
        }
        let (dir, items, reason) = (dir.clone(), items.clone(), pending.get(&name).cloned());
        let shown = name.clone();
        trials.push(Trial::test(name, move || {
            let diffs = run_case(&dir, &items, &case);
            if report && !diffs.is_empty() {
                eprintln!("FAILING {shown}\n  {}", diffs.join("\n  "));
            }
            match (diffs.is_empty(), reason) {
                (true, None) => Ok(()),
                (false, None) => Err(Failed::from(diffs.join("\n"))),
                (true, Some(reason)) => {
                    Err(Failed::from(format!("passes now: remove it from {PENDING} (it was listed as: {reason})")))
                }
                (false, Some(_)) => Ok(()),
            }
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
