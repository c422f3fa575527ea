//! The golden harness: every directory `tests/fixtures/<area>/<case>/` is one case, and so is
//! every example under `examples/`. Each case is a test of its own, named by its directory:
//! `<area>/<case>` (`patches/kustomize/<case>` for a case grouped by its source),
//! `examples/<name>`, or `examples/<name>/<case>` for an example that holds cases. This file is a
//! custom harness (`harness = false` in Cargo.toml) run by libtest-mimic, which runs the cases on
//! its own threads and takes libtest's arguments:
//! `cargo test --test golden -- features/component-when` runs the cases whose name contains that
//! text, `--exact` just the one so named; `--list`, `--skip`, `--ignored` and `--test-threads`
//! work as libtest's do. One more test, `cases-found`, fails when `tests/fixtures` or `examples`
//! holds no case at all.
//!
//! A case holds the input and the expected result of one run of the built binary:
//! - `input.yaml`: a ResourceList fed to KRM mode on stdin; or
//! - `cmd`: command-line arguments (one per line), run in the case directory, with `stdin` fed
//!   when present and `env` (`KEY=VALUE` lines; `KEY=@file` reads the value from a file) set;
//! - `expected.yaml`: stdout; `expected.stderr`: stderr (absent when empty);
//!   `expected.exit`: the exit code (absent when 0).
//!
//! `BLESS=1 cargo test --test golden` rewrites the expectations (of the cases the filter selects;
//! all of them without one); review every diff.
//! KRM cases are also rendered a second time, from their own output plus the same functionConfig,
//! and must come out the same, items and results: running the function on its own output must
//! not change it (docs/krm.md, "Running twice"). And every case whose input is a ResourceList
//! is run once more with that list written as JSON, and must give the same items, results and
//! exit code (docs/krm.md, "JSON input"). And every KRM case whose functionConfig has a
//! `spec.substitute` or `spec.values` leaf is rendered once more over its own output with that
//! leaf changed, as kpt renders a package after a config edit: it must give what a render of
//! the input with the changed config gives, or refuse with the documented error
//! (docs/patches.md, "Running twice").

use libtest_mimic::{Arguments, Failed, Trial};
use render_blueprint::doc::{read_yaml_documents, to_yaml, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

struct Run {
    stdout: String,
    stderr: String,
    code: i32,
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_render-blueprint")
}

fn run(dir: &Path, args: &[String], env: &[(String, String)], stdin: &[u8]) -> Run {
    use std::io::Write;
    let mut command = Command::new(binary());
    command.args(args).current_dir(dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command.env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING").env_remove("KUSTOMIZE_PLUGIN_CONFIG_ROOT");
    // The operator's limits in the environment would change what a case gives.
    for limit in ["FILE_SIZE", "OUTPUT_SIZE", "STEPS", "INPUT_SIZE", "JSONNET_CPU"] {
        command.env_remove(format!("RENDER_BLUEPRINT_MAX_{limit}"));
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap_or_else(|err| panic!("cannot start {}: {err}", binary()));
    if let Some(mut pipe) = child.stdin.take() {
        // The binary may exit before reading everything (exit 2); a broken pipe is fine then.
        let _ = pipe.write_all(stdin);
    }
    let output = child.wait_with_output().unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code().unwrap_or(-1),
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn is_case(dir: &Path) -> bool {
    dir.join("input.yaml").is_file() || dir.join("cmd").is_file()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The directory itself when it is a case, else the cases among its subdirectories.
fn case_or_cases(dir: PathBuf) -> Vec<PathBuf> {
    if is_case(&dir) {
        vec![dir]
    } else {
        subdirs(&dir).into_iter().filter(|d| is_case(d)).collect()
    }
}

/// `<root>/<area>/<case>/` directories, and `<root>/<area>/<group>/<case>/` for cases grouped by
/// their source (`patches/kustomize/` holds kustomize's own tests).
fn cases(root: &Path) -> Vec<PathBuf> {
    subdirs(root).iter().flat_map(|area| subdirs(area)).flat_map(case_or_cases).collect()
}

/// `examples/<name>/`: an example is a case itself, or holds cases (one per value set) beside its
/// package. Every example runs its `cmd` and must print its checked-in `expected.yaml`.
fn examples(root: &Path) -> Vec<PathBuf> {
    subdirs(root).into_iter().flat_map(case_or_cases).collect()
}

/// A `cmd` case's arguments, one per line (blank lines and `#` comments left out).
fn args(case: &Path) -> Vec<String> {
    read(&case.join("cmd"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Runs a case, with `stdin` in place of its own input when given.
fn run_case(case: &Path, stdin: Option<&[u8]>) -> Run {
    if case.join("cmd").is_file() {
        let args = args(case);
        let env: Vec<(String, String)> = read(&case.join("env"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| match v.strip_prefix('@') {
                Some(file) => (k.to_string(), read(&case.join(file)).unwrap_or_default()),
                None => (k.to_string(), v.to_string()),
            })
            .collect();
        let mut env = env;
        if requires(case).iter().any(|tool| tool == "kustomize") {
            let path = std::env::var("PATH").unwrap_or_default();
            env.push(("PATH".into(), format!("{}:{path}", pinned_kubectl().display())));
        }
        let own = || std::fs::read(case.join("stdin")).unwrap_or_default();
        run(case, &args, &env, &stdin.map_or_else(own, <[u8]>::to_vec))
    } else {
        let own = || std::fs::read(case.join("input.yaml")).unwrap_or_default();
        run(case, &[], &[], &stdin.map_or_else(own, <[u8]>::to_vec))
    }
}

/// The ResourceList a KRM-mode case reads (`input.yaml`, or the `stdin` of a `cmd` that names
/// no subcommand), when it reads as one.
fn resource_list_input(case: &Path) -> Option<Value> {
    let text = if case.join("cmd").is_file() {
        // KRM mode takes options only: every argument is an option or an option's value.
        if args(case).first().is_some_and(|arg| !arg.starts_with('-')) {
            return None;
        }
        read(&case.join("stdin"))?
    } else {
        read(&case.join("input.yaml"))?
    };
    let mut documents = read_yaml_documents(&text).ok()?;
    let list = documents.pop().filter(|_| documents.is_empty())?;
    (list.get("kind").and_then(Value::as_str) == Some("ResourceList")).then_some(list)
}

/// Envelope invariance: the case's ResourceList written as JSON gives the same items, results
/// and exit code as its YAML (docs/krm.md, "JSON input"). The JSON is the value the YAML reads
/// as, so any style the YAML text had (quotes, anchors, comments) is gone, as it is for a client
/// that sends JSON. One style means something: a plain `${n}` (Flux) or KOTS template is typed
/// by what it becomes, a quoted one stays a string, and every JSON string is a quoted one (kyaml
/// reads it double-quoted). Where the YAML leaves such a string plain, the JSON must give what
/// the same YAML with every string quoted gives ([`quoted_yaml`]): no case is exempt.
fn json_envelope_problem(case: &Path, yaml_run: &Run) -> Option<String> {
    let list = resource_list_input(case)?;
    let json = serde_json::to_string_pretty(&list).ok()?;
    let json_run = run_case(case, Some(json.as_bytes()));
    let outcome = |run: &Run| {
        let list = read_yaml_documents(&run.stdout).ok().and_then(|mut docs| docs.pop());
        let field = |key: &str| list.as_ref().and_then(|l| l.get(key)).cloned().unwrap_or(Value::Null);
        (field("items"), field("results"), run.code)
    };
    if outcome(yaml_run) == outcome(&json_run) {
        return None;
    }
    let mut quoted = String::new();
    quoted_yaml(&list, 0, &mut quoted);
    let quoted_run = run_case(case, Some(quoted.as_bytes()));
    if outcome(&quoted_run) == outcome(&json_run) {
        return None;
    }
    Some(format!(
        "{}: the same ResourceList as JSON gives another answer than as YAML with every string quoted (exit {} \
         then {})\n--- YAML, strings quoted\n{}\n--- its output\n{}\n--- JSON's output\n{}",
        case.display(),
        quoted_run.code,
        json_run.code,
        quoted,
        quoted_run.stdout,
        json_run.stdout
    ))
}

/// `value` as block YAML in which every string, keys included, is quoted: single-quoted where
/// that holds it as it is (one line, no `'`, no control character), else double-quoted with
/// JSON's escapes. It says what JSON says, in YAML's syntax: the reference for a JSON input.
fn quoted_yaml(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, value) in map {
                out.push_str(&pad);
                out.push_str(&quoted_scalar(&Value::String(key.clone())));
                out.push(':');
                nested(value, indent, out);
            }
        }
        Value::Array(list) if !list.is_empty() => {
            for value in list {
                out.push_str(&pad);
                out.push('-');
                nested(value, indent, out);
            }
        }
        scalar => {
            out.push_str(&pad);
            out.push_str(&quoted_scalar(scalar));
            out.push('\n');
        }
    }
}

/// The value after a key's `:` or a list's `-`: a scalar on the same line, a collection below.
fn nested(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            quoted_yaml(value, indent + 2, out);
        }
        Value::Array(list) if !list.is_empty() => {
            out.push('\n');
            quoted_yaml(value, indent + 2, out);
        }
        scalar => {
            out.push(' ');
            out.push_str(&quoted_scalar(scalar));
            out.push('\n');
        }
    }
}

fn quoted_scalar(value: &Value) -> String {
    match value {
        Value::String(s) if !s.contains('\'') && !s.chars().any(char::is_control) => format!("'{s}'"),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// The output of a KRM run with the input's functionConfig put back, as the next run's input.
fn rerun_input(input: &str, output: &str) -> Option<String> {
    let config = read_yaml_documents(input).ok()?.into_iter().next()?.get("functionConfig").cloned();
    rerun_input_with(input, output, config.as_ref())
}

/// The text of a YAML list's top-level `functionConfig:` entry, to the next top-level key.
fn config_section(input: &str) -> Option<(usize, usize)> {
    let start = input.find("\nfunctionConfig:")? + 1;
    let rest = &input[start..];
    let mut end = 0;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        if i > 0 && line.starts_with(|c: char| c.is_ascii_alphabetic()) {
            break;
        }
        end += line.len();
    }
    Some((start, start + end))
}

/// The output of a KRM run with `config` as its functionConfig, as the next run's input: the
/// input's own text when `config` is the input's, else `config` written as YAML.
fn rerun_input_with(input: &str, output: &str, config: Option<&Value>) -> Option<String> {
    let parsed_input = read_yaml_documents(input).ok()?.into_iter().next()?;
    let own = parsed_input.get("functionConfig") == config;
    let mut parsed = read_yaml_documents(output).ok()?.into_iter().next()?;
    // Our YAML output as written (kpt keeps its quoting when it writes the package back), with
    // the results dropped and the input's functionConfig text appended.
    let yaml_input = !input.trim_start().starts_with('{');
    if yaml_input && output.starts_with("apiVersion:") && !output.contains("\nfunctionConfig:") {
        let body = output.find("\nresults:\n").map_or(output, |at| &output[..=at]);
        let config = match (own, config) {
            (true, _) => config_section(input).map_or(String::new(), |(start, end)| input[start..end].to_string()),
            (false, Some(config)) => config_yaml(config),
            (false, None) => String::new(),
        };
        return Some(format!("{body}{config}"));
    }
    let object = parsed.as_object_mut()?;
    object.shift_remove("results");
    if let Some(config) = config {
        object.insert("functionConfig".into(), config.clone());
    }
    // A JSON list runs again as JSON: its envelope is the client's, not ours to change.
    if !yaml_input {
        return serde_json::to_string_pretty(&Value::Object(object.clone())).ok();
    }
    Some(to_yaml(&Value::Object(object.clone())))
}

/// `functionConfig:` and the config under it, as the last entry of a YAML list.
fn config_yaml(config: &Value) -> String {
    let mut wrapped = render_blueprint::doc::Map::new();
    wrapped.insert("functionConfig".into(), config.clone());
    to_yaml(&Value::Object(wrapped))
}

/// The refusal of an item an earlier render with another config changed (docs/patches.md,
/// "Running twice").
const REFUSAL: &str = "holds the output of an earlier render with other patches or variables";

/// The config with one value changed: the first `spec.substitute` variable, else the first
/// scalar leaf of `spec.values`; `None` when it has neither. The field it changed is returned
/// too, for the failure message.
fn changed_config(config: &Value) -> Option<(Value, String)> {
    fn change(value: &mut Value) -> bool {
        match value {
            Value::String(text) => text.push_str("-changed"),
            Value::Bool(flag) => *flag = !*flag,
            Value::Number(number) => match number.as_i64() {
                Some(n) => *value = Value::from(n.wrapping_add(1)),
                None => *value = Value::from(number.as_f64().unwrap_or_default() + 1.0),
            },
            _ => return false,
        }
        true
    }
    fn first_leaf(value: &mut Value, path: &mut String) -> bool {
        match value {
            Value::Object(map) => map.iter_mut().any(|(key, value)| {
                let len = path.len();
                path.push('.');
                path.push_str(key);
                let found = first_leaf(value, path);
                if !found {
                    path.truncate(len);
                }
                found
            }),
            Value::Array(items) => items.iter_mut().enumerate().any(|(i, value)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = first_leaf(value, path);
                if !found {
                    path.truncate(len);
                }
                found
            }),
            other => change(other),
        }
    }
    let mut changed = config.clone();
    let spec = changed.get_mut("spec")?;
    let mut field = String::from("spec.substitute");
    if let Some(Value::Object(variables)) = spec.get_mut("substitute") {
        if let Some((name, value)) = variables.iter_mut().next() {
            if change(value) {
                field.push_str(&format!(".{name}"));
                return Some((changed, field));
            }
        }
    }
    field = String::from("spec.values");
    let values = spec.get_mut("values")?;
    first_leaf(values, &mut field).then_some((changed, field))
}

/// A render over the case's own output with one config value changed, as kpt renders a package
/// after a config edit: the same items, results and exit code as a render of the input with the
/// changed config, or the refusal (exit 1).
fn changed_config_problem(case: &Path, input: &str, got: &Run) -> Option<String> {
    if input.trim_start().starts_with('{') {
        return None;
    }
    let list = read_yaml_documents(input).ok()?.into_iter().next()?;
    let function_config = list.get("functionConfig")?;
    // Under kustomize (which finds a container function by this annotation) the output is the
    // build's and never comes back as input: no mark guards it (docs/patches.md).
    let annotations = function_config.get("metadata").and_then(|m| m.get("annotations"));
    if annotations.is_some_and(|a| a.get("config.kubernetes.io/function").is_some()) {
        return None;
    }
    let (config, field) = changed_config(function_config)?;
    let fresh_input = match config_section(input) {
        Some((start, end)) => format!("{}{}{}", &input[..start], &input[end..], config_yaml(&config)),
        None => return None,
    };
    let fresh = run(case, &[], &[], fresh_input.as_bytes());
    let over_output = rerun_input_with(input, &got.stdout, Some(&config))?;
    let again = run(case, &[], &[], over_output.as_bytes());
    let outcome = |run: &Run| {
        let list = read_yaml_documents(&run.stdout).ok().and_then(|mut docs| docs.pop());
        let field = |key: &str| list.as_ref().and_then(|l| l.get(key)).cloned().unwrap_or(Value::Null);
        (field("items"), field("results"), run.code)
    };
    let refused = again.code == 1 && results(&again.stdout).iter().any(|r| r.contains(REFUSAL));
    // A failed render writes nothing (kpt keeps the files, and the items are each run's input):
    // its results are its answer.
    let failed = fresh.code == 1 && again.code == 1;
    let same = outcome(&fresh) == outcome(&again) || failed && results(&fresh.stdout) == results(&again.stdout);
    if same || refused {
        return None;
    }
    Some(format!(
        "{}: rendered over its own output with {field} changed, it gives neither what the input with that \
             change gives nor the refusal (exit {} then {})\n--- fresh\n{}\n--- over the output\n{}",
        case.display(),
        fresh.code,
        again.code,
        fresh.stdout,
        again.stdout
    ))
}

/// The severity and message of each result of a KRM run, in order.
fn results(output: &str) -> Vec<String> {
    let list = read_yaml_documents(output).ok().and_then(|docs| docs.into_iter().next());
    let results = list.as_ref().and_then(|l| l.get("results")).and_then(Value::as_array).cloned().unwrap_or_default();
    let text = |result: &Value, key: &str| result.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    results.iter().map(|r| format!("{}: {}", text(r, "severity"), text(r, "message"))).collect()
}

/// Runs one case and compares (or, blessing, writes) its expectations; the problems found, each
/// naming the case's directory.
fn check(case: &Path, bless: bool) -> Vec<String> {
    let mut failures = Vec::new();
    let got = run_case(case, None);
    failures.extend(json_envelope_problem(case, &got));
    let expected_files = [
        ("expected.yaml", got.stdout.clone()),
        ("expected.stderr", got.stderr.clone()),
        ("expected.exit", if got.code == 0 { String::new() } else { format!("{}\n", got.code) }),
    ];
    for (file, actual) in &expected_files {
        let path = case.join(file);
        if bless {
            let result = if actual.is_empty() && *file != "expected.yaml" {
                std::fs::remove_file(&path).or_else(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
            } else {
                std::fs::write(&path, actual)
            };
            if let Err(err) = result {
                failures.push(format!("{}: cannot bless: {err}", path.display()));
            }
            continue;
        }
        let expected = read(&path).unwrap_or_default();
        if &expected != actual {
            failures
                .push(format!("{}: {file} differs\n--- expected\n{expected}\n--- actual\n{actual}", case.display()));
        }
    }
    if got.code == 2 || !case.join("input.yaml").is_file() {
        return failures;
    }
    let input = read(&case.join("input.yaml")).unwrap_or_default();
    if let Some(problem) = kpt_annotations_problem(&input, &got.stdout) {
        failures.push(format!("{}: {problem}", case.display()));
    }
    // Idempotency: our own output, rendered again with the same functionConfig, is unchanged.
    let Some(second_input) = rerun_input(&input, &got.stdout) else {
        failures.push(format!("{}: output is not a ResourceList", case.display()));
        return failures;
    };
    failures.extend(changed_config_problem(case, &input, &got));
    let again = run(case, &[], &[], second_input.as_bytes());
    let first = rerun_input(&input, &got.stdout);
    let second = rerun_input(&input, &again.stdout);
    // The results too: a second run that warns where the first did not is not the same render.
    if results(&got.stdout) != results(&again.stdout) {
        failures.push(format!(
            "{}: the second run's results differ\n--- first\n{}\n--- second\n{}",
            case.display(),
            results(&got.stdout).join("\n"),
            results(&again.stdout).join("\n")
        ));
    }
    if first != second || again.code != got.code {
        failures.push(format!(
            "{}: not idempotent (exit {} then {})\n--- first\n{}\n--- second\n{}",
            case.display(),
            got.code,
            again.code,
            got.stdout,
            again.stdout
        ));
    }
    failures
}

const TRACKING: [&str; 4] = [
    "internal.config.kubernetes.io/path",
    "internal.config.kubernetes.io/index",
    "config.kubernetes.io/path",
    "config.kubernetes.io/index",
];

fn annotation<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get("metadata")?.get("annotations")?.get(key)?.as_str()
}

fn identity(item: &Value) -> String {
    let field = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    let metadata = item.get("metadata");
    format!(
        "{}/{}/{}/{}",
        field(item.get("apiVersion")),
        field(item.get("kind")),
        field(metadata.and_then(|m| m.get("namespace"))),
        field(metadata.and_then(|m| m.get("name")))
    )
}

/// kpt's contract: the path and index annotations of input items are untouched, and every item
/// the function generates gets a path (both forms).
fn kpt_annotations_problem(input: &str, output: &str) -> Option<String> {
    let items = |text: &str| -> Vec<Value> {
        read_yaml_documents(text)
            .ok()
            .and_then(|docs| docs.into_iter().next())
            .and_then(|list| list.get("items").and_then(Value::as_array).cloned())
            .unwrap_or_default()
    };
    let inputs = items(input);
    for item in items(output) {
        if annotation(&item, "fn.blueprint.dev/generated-by").is_some() && !inputs.iter().any(|i| i == &item) {
            for key in ["internal.config.kubernetes.io/path", "config.kubernetes.io/path"] {
                if annotation(&item, key).is_none() {
                    return Some(format!("generated item {} has no {key} annotation", identity(&item)));
                }
            }
            continue;
        }
        // A package may hold two items of one identity (a patch file and the resource it
        // patches): prefer the one from the same file.
        let same = |i: &&Value| identity(i) == identity(&item);
        let same_file = |i: &&Value| annotation(i, TRACKING[0]) == annotation(&item, TRACKING[0]);
        let Some(original) = inputs.iter().filter(same).find(same_file).or_else(|| inputs.iter().find(same)) else {
            continue;
        };
        for key in TRACKING {
            if annotation(original, key) != annotation(&item, key) {
                return Some(format!("input item {} changed its {key} annotation", identity(&item)));
            }
        }
    }
    None
}

/// The tools a case needs: its `requires` file, one per line. `kustomize` is the kubectl that
/// `scripts/install-kubectl` pins in `.tools/`: its kustomize made the expectations.
fn requires(case: &Path) -> Vec<String> {
    read(&case.join("requires"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

fn pinned_kubectl() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kubectl/bin")
}

/// Why a case cannot run here, if it cannot: it is then listed as ignored, with the reason.
fn missing_tool(case: &Path) -> Option<String> {
    requires(case).into_iter().find_map(|tool| match tool.as_str() {
        "kustomize" if pinned_kubectl().join("kubectl").is_file() => None,
        "kustomize" => Some("skipped: needs kustomize, run scripts/install-kubectl".to_string()),
        other => Some(format!("skipped: needs {other}")),
    })
}

/// One case as a test: [`check`] on a thread of its own with a large stack, its problems as the
/// test's failure.
fn trial(name: String, case: PathBuf, bless: bool) -> Trial {
    if let Some(reason) = missing_tool(&case) {
        return Trial::test(name, || Ok(())).with_kind(reason).with_ignored_flag(true);
    }
    Trial::test(name.clone(), move || {
        // Fixtures nest up to the reader's 256 levels; a debug build's recursive YAML reader needs
        // more than a test thread's 2 MiB of stack for them (the release binary runs on 8 MiB).
        let thread =
            std::thread::Builder::new().name(name.clone()).stack_size(64 << 20).spawn(move || check(&case, bless));
        let joined = thread.map_err(|err| format!("cannot start the case's thread: {err}"))?.join();
        let failures = joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Failed::from(failures.join("\n\n")))
        }
    })
}

/// A case's test name: its directory below `base`, with `/` between the parts.
fn name(case: &Path, base: &Path) -> String {
    let relative = case.strip_prefix(base).unwrap_or(case);
    relative.iter().map(|part| part.to_string_lossy()).collect::<Vec<_>>().join("/")
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let fixtures = cases(&root.join("tests/fixtures"));
    let examples = examples(&root.join("examples"));
    let (fixture_count, example_count) = (fixtures.len(), examples.len());
    let mut trials = vec![Trial::test("cases-found", move || match (fixture_count, example_count) {
        (0, _) => Err("no golden cases found in tests/fixtures".into()),
        (_, 0) => Err("no golden cases found in examples".into()),
        _ => Ok(()),
    })];
    let base = root.join("tests/fixtures");
    trials.extend(fixtures.into_iter().map(|case| trial(name(&case, &base), case, bless)));
    trials.extend(examples.into_iter().map(|case| trial(name(&case, root), case, bless)));
    libtest_mimic::run(&args, trials).exit_code()
}
