//! windsorcli/core composed by this crate and by the Windsor CLI's own code, over a matrix of
//! contexts and options.
//!
//! `tests/windsor-oracle/matrix.yaml` lists the cases: a context's name and its `values.yaml`
//! (written there, or the values of a case of core's own tests). `tests/windsor-oracle/run.py`
//! composed each one with windsorcli/cli v0.9.0's code (`tests/windsor-oracle/main.go`, what
//! `windsor show blueprint --raw` runs in a clone of core with `contexts/<context>/values.yaml`)
//! and stored the Blueprint, or the error, in `tests/windsor-oracle/expected/<case>.yaml`; this
//! test runs offline from those files.
//!
//! Each case here renders `tests/fixtures/features/windsor-core/contexts/_template` (the
//! Blueprint and every facet, its `schema.yaml` read next to `blueprint.yaml`) through the
//! library with `spec.values` the case's values, `spec.windsor.context` its context and
//! `spec.blueprint` its context blueprint (when it has one), `env()`
//! seeing `WINDSOR_CONTEXT`, `WINDSOR_PROJECT_ROOT` and the case's `env`, as the oracle does.
//! Then:
//! - the CLI failed: the render must fail too (the messages are not compared);
//! - else the render must succeed, and the merged Blueprint's `terraform`, `kustomize` and
//!   `flux` lists must equal the CLI's, entry by entry in order, after the same normalization on
//!   both sides: the composition's own bookkeeping (`when`, `ordinal`, `strategy`, `enabled`) and
//!   empty values left out, a deferred value the CLI prints as `{expression: "${…}"}` compared
//!   as its text, `interval`/`retryInterval`/`timeout` compared as lengths of time (the CLI
//!   holds Go durations: `5m` prints as `5m0s`), a whole number compared as an integer
//!   (`10.0`, a float64 in the CLI, is 10), and `source: template` (the CLI's name for the
//!   project's own `contexts/_template`) taken as no source, which is how this crate leaves the
//!   package's own entries;
//! - for a case that recorded them (`kustomizations: true`), each Flux Kustomization
//!   `windsor show kustomization` lists must be among this crate's output items, with the same
//!   namespace, `dependsOn`, `path`, `components`, `postBuild.substituteFrom` ConfigMaps, `prune`,
//!   `wait`, `deletionPolicy` and durations (`sourceRef` is not compared: the CLI names the
//!   project's own template after the context's blueprint, this crate after the package's).
//!
//! Cases that differ today are listed in `tests/windsor_matrix_pending.txt`, one per line as
//! `<case> | <reason>`: a listed case that differs passes (its reason shown under
//! `--nocapture`), a listed case that agrees fails (take it off the list), an unlisted case that
//! differs fails. `WINDSOR_MATRIX_REPORT=1` prints every differing case with its differences.

#[path = "common/windsor.rs"]
mod windsor;

use libtest_mimic::{Arguments, Failed, Trial};
use render_blueprint::doc::{read_yaml_documents, Map, Value};
use render_blueprint::krm::Item;
use render_blueprint::package::DiskFiles;
use render_blueprint::pipeline::{render, Input};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

const PENDING: &str = "tests/windsor_matrix_pending.txt";
const ORACLE: &str = "tests/windsor-oracle";
/// The composition's bookkeeping, not part of what the CLI prints.
const BOOKKEEPING: [&str; 4] = ["when", "ordinal", "strategy", "enabled"];
/// Fields the CLI holds as Go durations (`5m` printed as `5m0s`).
const DURATIONS: [&str; 3] = ["interval", "retryInterval", "timeout"];

/// A Go duration's length in milliseconds (`1h2m3.5s`, `90s`, `5m0s`), or `None` for other text.
fn duration_ms(text: &str) -> Option<u64> {
    let (mut total, mut number, mut rest) = (0f64, String::new(), text);
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let c = rest.chars().next()?;
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            rest = &rest[1..];
            continue;
        }
        let (unit, len) = [("ms", 2, 1.0), ("h", 1, 3_600_000.0), ("m", 1, 60_000.0), ("s", 1, 1000.0)]
            .iter()
            .find(|(u, _, _)| rest.starts_with(u))
            .map(|(_, l, f)| (*f, *l))?;
        total += number.parse::<f64>().ok()? * unit;
        number.clear();
        rest = &rest[len..];
    }
    number.is_empty().then_some(total as u64)
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn template_dir() -> PathBuf {
    manifest_dir().join("tests/fixtures/features/windsor-core/contexts/_template")
}

fn read_documents(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    read_yaml_documents(&text).map_err(|e| format!("{}: {e:?}", path.display()))
}

fn read_yaml(path: &Path) -> Result<Value, String> {
    let mut documents = read_documents(path)?;
    Ok(if documents.is_empty() { Value::Null } else { documents.swap_remove(0) })
}

struct Case {
    name: String,
    context: String,
    values: Map,
    env: BTreeMap<String, String>,
    /// The context's blueprint.yaml, when the case has one.
    blueprint: Option<Value>,
}

/// A scalar as text (what `env` entries become).
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => render_blueprint::expr::go_format(other),
    }
}

/// The values (and `env`) of `<file>/<case name>` in core's tests.
fn test_case_inputs(dir: &Path, reference: &str) -> Result<(Map, BTreeMap<String, String>), String> {
    let (file, name) =
        reference.split_once('/').ok_or_else(|| format!("testCase {reference:?}: want <file>/<name>"))?;
    let tests = read_yaml(&dir.join("tests").join(format!("{file}.test.yaml")))?;
    let case = tests
        .get("cases")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
        .ok_or_else(|| format!("no case {name:?} in {file}.test.yaml"))?;
    let mut values = case.get("values").and_then(Value::as_object).cloned().unwrap_or_default();
    values.shift_remove("context");
    let env =
        case.get("env").and_then(Value::as_object).into_iter().flatten().map(|(k, v)| (k.clone(), text(v))).collect();
    Ok((values, env))
}

fn cases(dir: &Path) -> Result<Vec<Case>, String> {
    let matrix = read_yaml(&manifest_dir().join(ORACLE).join("matrix.yaml"))?;
    let mut out = Vec::new();
    for case in matrix.get("cases").and_then(Value::as_array).into_iter().flatten() {
        let field = |key: &str| case.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
        let (values, env) = match case.get("testCase").and_then(Value::as_str) {
            Some(reference) => test_case_inputs(dir, reference)?,
            None => (case.get("values").and_then(Value::as_object).cloned().unwrap_or_default(), BTreeMap::new()),
        };
        let blueprint = case.get("blueprint").filter(|b| !b.is_null()).cloned();
        out.push(Case { name: field("name"), context: field("context"), values, env, blueprint });
    }
    Ok(out)
}

/// This crate's merged Blueprint for the case, as JSON, and the Flux Kustomizations it wrote, or
/// its errors.
fn compose(dir: &Path, items: &[Value], case: &Case) -> Result<(Value, Vec<Value>), String> {
    let mut spec = json!({"values": Value::Object(case.values.clone()), "windsor": {"context": case.context}});
    if let Some(blueprint) = &case.blueprint {
        spec["blueprint"] = blueprint.clone();
    }
    let config = json!({
        "apiVersion": "fn.blueprint.dev/v1alpha1",
        "kind": "RenderBlueprint",
        "metadata": {"name": "matrix", "annotations": {"internal.config.kubernetes.io/path": "render.yaml"}},
        "spec": spec,
    });
    let mut environment: BTreeMap<String, String> = BTreeMap::new();
    environment.insert("WINDSOR_CONTEXT".into(), case.context.clone());
    environment.insert("WINDSOR_PROJECT_ROOT".into(), "/project/core".into());
    environment.extend(case.env.clone());
    let input = Input {
        items: items.iter().cloned().map(Item::from).collect(),
        function_config: Some(config),
        environment: Arc::new(environment),
        ..Input::default()
    };
    let output = render(input, &DiskFiles::new(dir, 8 << 20));
    if output.has_errors() {
        let errors: Vec<String> = output.results.iter().filter(|d| d.is_error()).map(|d| d.message.clone()).collect();
        return Err(errors.join("\n"));
    }
    let flux: Vec<Value> = output
        .items
        .unwrap_or_default()
        .into_iter()
        .map(Item::into_value)
        .filter(|v| {
            v.get("kind").and_then(Value::as_str) == Some("Kustomization")
                && v.get("apiVersion")
                    .and_then(Value::as_str)
                    .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"))
        })
        .collect();
    let blueprint = output.report.features.blueprint.ok_or("no blueprint was composed")?;
    Ok((serde_json::to_value(&blueprint).map_err(|e| e.to_string())?, flux))
}

/// What is compared of a Flux Kustomization: its namespace, `dependsOn` (`namespace/name`),
/// `path`, `components`, the ConfigMaps of `postBuild.substituteFrom`, `prune`, `wait`,
/// `deletionPolicy` and the durations (the CLI prints a Go duration as `{duration: 5m0s}`).
fn flux_view(k: &Value) -> Value {
    let spec = k.get("spec").cloned().unwrap_or(Value::Null);
    let namespace = k.pointer("/metadata/namespace").cloned().unwrap_or(Value::Null);
    let depends: Vec<String> = spec
        .get("dependsOn")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|d| format!("{}/{}", field_text(d, "namespace"), field_text(d, "name")))
        .collect();
    let from: Vec<String> = spec
        .pointer("/postBuild/substituteFrom")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|d| format!("{}/{}", field_text(d, "kind"), field_text(d, "name")))
        .collect();
    let mut view = json!({
        "namespace": namespace,
        "dependsOn": depends,
        "path": spec.get("path").cloned().unwrap_or(Value::Null),
        "components": spec.get("components").cloned().unwrap_or(Value::Null),
        "substituteFrom": from,
        "prune": spec.get("prune").cloned().unwrap_or(Value::Null),
        "wait": spec.get("wait").cloned().unwrap_or(Value::Null),
        "deletionPolicy": spec.get("deletionPolicy").cloned().unwrap_or(Value::Null),
    });
    for key in DURATIONS {
        let text = match spec.get(key) {
            Some(Value::Object(d)) => d.get("duration").and_then(Value::as_str).map(str::to_string),
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        view[key] = text.and_then(|t| duration_ms(&t)).map_or(Value::Null, |ms| json!(format!("{ms}ms")));
    }
    normalize(&view).unwrap_or(Value::Null)
}

fn field_text(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// Each Flux Kustomization the CLI lists (`show kustomization`), against this crate's of that
/// name (this crate's others, such as the `crds` layers `show kustomization` does not list, are
/// not compared).
fn compare_flux(expected: &[Value], ours: &[Value], out: &mut Vec<String>) {
    for k in expected {
        let name = k.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
        match ours.iter().find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(name)) {
            None => out.push(format!("Kustomization {name}: windsor writes it, ours does not")),
            Some(o) => diff(&format!("Kustomization[{name}]"), Some(&flux_view(k)), Some(&flux_view(o)), out),
        }
    }
}

/// Both sides' entries, made comparable: bookkeeping and empty values left out, a deferred
/// `{expression: "${…}"}` as its text.
fn normalize(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Object(map) => {
            if map.len() == 1 {
                if let Some(Value::String(s)) = map.get("expression") {
                    return Some(Value::String(s.clone()));
                }
            }
            let out: Map = map
                .iter()
                .filter(|(k, _)| !BOOKKEEPING.contains(&k.as_str()))
                // The CLI's own template is the source `template`; this crate names no source
                // for the package's own entries.
                .filter(|(k, v)| !(k.as_str() == "source" && v.as_str() == Some("template")))
                .filter_map(|(k, v)| {
                    let v = match (DURATIONS.contains(&k.as_str()), v.as_str().and_then(duration_ms)) {
                        (true, Some(ms)) => json!(format!("{ms}ms")),
                        _ => normalize(v)?,
                    };
                    Some((k.clone(), v))
                })
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(list) => {
            let out: Vec<Value> = list.iter().map(|v| normalize(v).unwrap_or(Value::Null)).collect();
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Value::String(s) if s.is_empty() => None,
        // A whole number the CLI holds as a float64 (`10.0`) is the same number.
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) && !n.is_i64() => {
            n.as_f64().map(|f| json!(f as i64))
        }
        other => Some(other.clone()),
    }
}

fn short(value: Option<&Value>) -> String {
    let text = value.map_or("(absent)".into(), |v| serde_json::to_string(v).unwrap_or_default());
    match text.char_indices().nth(240) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Where two normalized values differ, as paths (at most a few per entry).
fn diff(path: &str, expected: Option<&Value>, actual: Option<&Value>, out: &mut Vec<String>) {
    match (expected, actual) {
        (Some(Value::Object(e)), Some(Value::Object(a))) => {
            let keys: Vec<&String> = e.keys().chain(a.keys().filter(|k| !e.contains_key(*k))).collect();
            for key in keys {
                diff(&format!("{path}.{key}"), e.get(key), a.get(key), out);
            }
        }
        (Some(Value::Array(e)), Some(Value::Array(a))) if e.len() == a.len() => {
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                diff(&format!("{path}[{i}]"), Some(e), Some(a), out);
            }
        }
        (e, a) if e == a => {}
        (Some(Value::String(e)), Some(Value::String(a))) if e.contains('\n') || a.contains('\n') => {
            // Multi-line text (a Talos patch): the first line that differs.
            let (el, al): (Vec<&str>, Vec<&str>) = (e.lines().collect(), a.lines().collect());
            let at = el.iter().zip(&al).position(|(x, y)| x != y).unwrap_or(el.len().min(al.len()));
            out.push(format!(
                "{path}: line {}: windsor {:?}, ours {:?}",
                at + 1,
                el.get(at).copied().unwrap_or("(end)"),
                al.get(at).copied().unwrap_or("(end)")
            ));
        }
        (e, a) => out.push(format!("{path}: windsor {}, ours {}", short(e), short(a))),
    }
}

/// An entry's name (terraform: its name, else path).
fn entry_id(entry: &Value) -> String {
    ["name", "path"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_str).filter(|s| !s.is_empty()))
        .unwrap_or("?")
        .to_string()
}

fn compare_list(key: &str, expected: &Value, actual: &Value, out: &mut Vec<String>) {
    let list = |v: &Value| -> Vec<Value> {
        v.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(normalize).collect()
    };
    let (e, a) = (list(expected), list(actual));
    let names = |l: &[Value]| l.iter().map(entry_id).collect::<Vec<_>>();
    let (en, an) = (names(&e), names(&a));
    if en != an {
        let missing: Vec<&String> = en.iter().filter(|n| !an.contains(n)).collect();
        let extra: Vec<&String> = an.iter().filter(|n| !en.contains(n)).collect();
        if missing.is_empty() && extra.is_empty() {
            out.push(format!("{key}: order differs: windsor {en:?}, ours {an:?}"));
        } else {
            out.push(format!("{key}: windsor only {missing:?}, ours only {extra:?}"));
        }
    }
    for entry in &e {
        let id = entry_id(entry);
        if let Some(ours) = a.iter().find(|x| entry_id(x) == id) {
            diff(&format!("{key}[{id}]"), Some(entry), Some(ours), out);
        }
    }
}

fn run_case(dir: &Path, items: &[Value], case: &Case) -> Vec<String> {
    let path = manifest_dir().join(ORACLE).join("expected").join(format!("{}.yaml", case.name));
    let mut documents = match read_documents(&path) {
        Ok(v) if !v.is_empty() => v,
        Ok(_) => return vec![format!("{}: empty: run tests/windsor-oracle/run.py --write", path.display())],
        Err(err) => return vec![format!("no recorded output: {err}: run tests/windsor-oracle/run.py --write")],
    };
    // The Blueprint, then (for a case with `kustomizations: true`) the Flux Kustomizations.
    let flux = documents.split_off(1);
    let expected = documents.swap_remove(0);
    let ours = compose(dir, items, case);
    if let Some(error) = expected.get("error").and_then(Value::as_str) {
        return match ours {
            Err(_) => Vec::new(),
            Ok(_) => vec![format!("windsor fails ({}), ours renders", error.lines().next().unwrap_or_default())],
        };
    }
    let (ours, ours_flux) = match ours {
        Ok(v) => v,
        Err(err) => return vec![format!("windsor renders, ours fails: {err}")],
    };
    let mut out = Vec::new();
    for key in ["terraform", "kustomize", "flux"] {
        compare_list(key, &expected, &ours, &mut out);
    }
    compare_flux(&flux, &ours_flux, &mut out);
    out
}

/// `<case> | <reason>` lines; `#` starts a comment.
fn pending() -> HashMap<String, String> {
    let text = std::fs::read_to_string(manifest_dir().join(PENDING)).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(" | ") {
            Some((name, reason)) => (name.trim().to_string(), reason.trim().to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect()
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let dir = template_dir();
    let setup = windsor::package_items(&dir).and_then(|items| cases(&dir).map(|cases| (items, cases)));
    let (items, all) = match setup {
        Ok(found) => found,
        Err(err) => {
            let trial = Trial::test("matrix-found", move || Err(Failed::from(err.clone())));
            return libtest_mimic::run(&args, vec![trial]).exit_code();
        }
    };
    let items = Arc::new(items);
    let pending = pending();
    let report = std::env::var_os("WINDSOR_MATRIX_REPORT").is_some_and(|v| v == "1");
    let known: HashSet<String> = all.iter().map(|c| c.name.clone()).collect();
    let stale: Vec<String> = pending.keys().filter(|n| !known.contains(*n)).cloned().collect();
    let count = all.len();
    let mut trials = vec![Trial::test("matrix-found", move || {
        if count < 50 {
            return Err(format!("the matrix has {count} cases, fewer than 50").into());
        }
        if !stale.is_empty() {
            return Err(format!("{PENDING} lists cases that do not exist: {stale:?}").into());
        }
        Ok(())
    })];
    let mut seen = HashSet::new();
    for case in all {
        let name = case.name.clone();
        if !seen.insert(name.clone()) {
            trials.push(Trial::test(format!("{name} (duplicate)"), || Err("two cases share this name".into())));
            continue;
        }
        let (dir, items, reason) = (dir.clone(), items.clone(), pending.get(&name).cloned());
        trials.push(Trial::test(name.clone(), move || {
            let diffs = run_case(&dir, &items, &case);
            if report && !diffs.is_empty() {
                eprintln!("DIFFERS {name}\n  {}", diffs.join("\n  "));
            }
            match (diffs.is_empty(), reason) {
                (true, None) => Ok(()),
                (false, None) => Err(Failed::from(diffs.join("\n"))),
                (true, Some(reason)) => {
                    Err(Failed::from(format!("agrees now: remove it from {PENDING} (it was listed as: {reason})")))
                }
                (false, Some(_)) => Ok(()),
            }
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
