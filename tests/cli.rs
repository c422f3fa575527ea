//! Command-line behaviour that golden files do not express well: help text, the schema's shape,
//! stdout/stderr separation and exit codes.

use assert_cmd::Command;

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("render-blueprint").unwrap_or_else(|err| panic!("binary not built: {err}"));
    cmd.env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING");
    cmd
}

fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&cmd.output().map(|o| o.stdout).unwrap_or_default()).into_owned()
}

#[test]
fn help_teaches_with_an_example() {
    let help = stdout_of(bin().arg("--help"));
    for needle in [
        "ResourceList",
        "kind: RenderBlueprint",
        "render-blueprint render",
        "Exit codes",
        "local-config",
        "explain",
        "graph",
    ] {
        assert!(help.contains(needle), "--help lacks {needle:?}:\n{help}");
    }
    let render_help = stdout_of(bin().args(["render", "--help"]));
    for needle in ["--set", "--keep-local-config", "-o, --output", "-c, --config", "-f, --values"] {
        assert!(render_help.contains(needle), "render --help lacks {needle:?}:\n{render_help}");
    }
}

#[test]
fn schema_is_json_schema_of_render_blueprint() {
    let text = stdout_of(bin().arg("schema"));
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(schema["title"], "RenderBlueprint");
    assert!(schema["$schema"].as_str().is_some_and(|s| s.contains("json-schema.org")));
    assert!(schema["$defs"]["ValuesSource"]["properties"]["optional"].is_object());
}

#[test]
fn unusable_input_writes_nothing_on_stdout_and_one_line_on_stderr() {
    let output = bin().write_stdin("{{{").output().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
}

#[test]
fn error_results_exit_1_and_still_write_the_list() {
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\nfunctionConfig:\n  apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n";
    let output = bin().write_stdin(input).output().unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("severity: error") && stdout.contains("name: a"), "{stdout}");
}

#[test]
fn krm_mode_without_function_config_passes_items_through() {
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n";
    bin().write_stdin(input).assert().success().stdout(input.to_string());
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    bin().arg("frobnicate").assert().code(2);
}

#[test]
fn legacy_plugin_mode_needs_the_environment() {
    // Without KUSTOMIZE_PLUGIN_CONFIG_STRING a file argument is not a subcommand: usage error.
    bin().arg("plugin.yaml").assert().code(2);
}

/// Too large for a checked-in fixture: the inputs are made here. A 10 MB string is over the
/// per-string limit; 100 MB is over the parser's scalar budget. Both exit 2 with nothing on stdout.
#[test]
fn huge_strings_are_refused_with_the_limit_named() {
    for (size, expected) in [
        (10 << 20, "data.blob is a string of 10485760 bytes; the limit is 8 MiB"),
        (100 << 20, "more than 64 MiB of scalar text"),
    ] {
        let input = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  \
             metadata: {{name: big}}\n  data:\n    blob: {}\n",
            "x".repeat(size)
        );
        let output = bin().write_stdin(input).output().unwrap_or_else(|err| panic!("run: {err}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        assert!(output.stdout.is_empty());
    }
    let dir = std::env::temp_dir().join(format!("rb-huge-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let manifest =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: {}\n", "y".repeat(9 << 20));
    let _ = std::fs::write(dir.join("big.yaml"), manifest);
    let output = bin().arg("render").arg(&dir).output().unwrap_or_else(|err| panic!("run: {err}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("big.yaml: document 1: data.blob is a string of 9437184 bytes"), "{stderr}");
    assert!(output.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A render of `input` (a ResourceList) in KRM mode: exit code, stdout and stderr.
fn krm(input: String) -> (Option<i32>, String, String) {
    let output = bin().write_stdin(input).output().unwrap_or_else(|err| panic!("run: {err}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A ResourceList with a RenderBlueprint `spec` (YAML text indented four spaces) and `items`.
fn with_spec(spec: &str, items: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:{items}\nfunctionConfig:\n  \
         apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata:\n    name: p\n  spec:\n{spec}"
    )
}

/// limits/envsubst-trim-glob-quadratic at size: a 1 MB value (100 KB took 15 s when every prefix
/// was tried against the glob).
#[test]
fn envsubst_trim_glob_on_a_large_value_finishes() {
    let value = "ab".repeat(500_000) + "c";
    let items = "\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: t}\n  data:\n    \
                 x: \"x${v##*b*c}x\"\n    s: \"s${v%%a*b*}s\"";
    let (code, stdout, stderr) = krm(with_spec(&format!("    substitute:\n      v: {value}\n"), items));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("x: xx") && stdout.contains("s: ss"), "{stdout}");
}

/// limits/expression-string-index-quadratic at size: `${v[5]}` 2 000 times on a 4 MB value
/// (14 s when each use copied the string into a list of characters).
#[test]
fn expression_string_index_on_a_large_value_finishes() {
    let value = "x".repeat(4 << 20);
    let uses = "${v[5]}".repeat(2_000);
    let spec = format!(
        "    values:\n      v: {value}\n    blueprint:\n      terraform:\n      - path: net\n        inputs:\n          \
         i: \"{uses}\"\n"
    );
    let (code, stdout, stderr) = krm(with_spec(&spec, " []"));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("i: {}", "x".repeat(2_000))), "the indexed characters are joined");
}

/// limits/configmap-dotted-key-depth and limits/set-dotted-key-depth at size: 20 000 dotted
/// segments overflowed the stack (exit 134).
#[test]
fn dotted_keys_of_twenty_thousand_segments_are_refused() {
    let key = vec!["a"; 20_000].join(".");
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: fn.blueprint.dev/v1alpha1\n  \
         kind: RenderBlueprint\n  metadata: {{name: p}}\n  spec: {{}}\nfunctionConfig:\n  apiVersion: v1\n  \
         kind: ConfigMap\n  metadata: {{name: function-input}}\n  data:\n    ? {key}\n    : \"1\"\n"
    );
    let (code, _, stderr) = krm(input);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("has 20000 dotted segments, but values nest at most 256 levels: use fewer dots"),
        "{stderr}"
    );
    let dir = std::env::temp_dir().join(format!("rb-dotted-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join("render.yaml"),
        "apiVersion: fn.blueprint.dev/v1alpha1\nkind: RenderBlueprint\nmetadata: {name: p}\n",
    );
    let output = bin().arg("render").arg("--set").arg(format!("{key}=1")).arg(&dir).output();
    let output = output.unwrap_or_else(|err| panic!("run: {err}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--set: the key a.a.a"), "{stderr}");
    assert!(stderr.contains("has 20000 dotted segments"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// limits/substitution-amplification and limits/expression-amplification at size: a 1 MiB value
/// referenced 3 000 times reached 8 GB; it is now an error naming --max-output-size.
#[test]
fn a_large_value_referenced_many_times_exhausts_the_output_budget() {
    let value = "x".repeat(1 << 20);
    let refs = "${v}".repeat(3_000);
    let items =
        format!("\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: big}}\n  data:\n    big: \"{refs}\"");
    let (code, _, stderr) = krm(with_spec(&format!("    substitute:\n      v: {value}\n"), &items));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("data.big: variable substitution failed: the render would produce more than 256 MiB"),
        "{stderr}"
    );
    assert!(stderr.contains("(--max-output-size)"), "{stderr}");
    let spec = format!(
        "    values:\n      v: {value}\n    blueprint:\n      terraform:\n      - path: net\n        inputs:\n          \
         big: \"{refs}\"\n"
    );
    let (code, _, stderr) = krm(with_spec(&spec, " []"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("inputs.big: the render would produce more than 256 MiB"), "{stderr}");
}
