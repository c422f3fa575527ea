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

/// KOTS attacks whose inputs are too large to check in (tests/fixtures/limits/README-style
/// comments live here). `kots-template-flood`: 40 000 `repl{{ … }}` in one string took 21 s
/// (each template searched the rest of the string four times); now one pass, and it renders.
/// `kots-clone-amplification`: a resource holding a 1 MiB string cloned for 3 000 values wrote
/// 3.1 GB; every clone is charged to the output budget before it is made, so the render ends in
/// an error result naming --max-output-size (exit 1).
#[test]
fn kots_floods_and_amplified_clones_finish_with_a_clear_outcome() {
    let flood = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  \
         metadata: {{name: flood}}\n  data:\n    x: '{}'\nfunctionConfig:\n  apiVersion: fn.blueprint.dev/v1alpha1\n  \
         kind: RenderBlueprint\n  metadata: {{name: app}}\n  spec:\n    config:\n      groups:\n      - name: main\n        \
         items:\n        - {{name: a, default: v}}\n",
        "repl{{ ConfigOption \"a\" }}".repeat(40_000)
    );
    let output = bin().write_stdin(flood).output().unwrap_or_else(|err| panic!("run: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(&format!("x: {}", "v".repeat(40_000))));

    let values: String = (0..3000).map(|i| format!("              v{i}: x\n")).collect();
    let clones = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  \
         metadata: {{name: big}}\n  data:\n    name: repl[[ .item ]]\n    blob: {}\nfunctionConfig:\n  apiVersion: \
         fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata: {{name: app}}\n  spec:\n    config:\n      \
         groups:\n      - name: main\n        items:\n        - name: copies\n          repeatable: true\n          \
         templates:\n          - {{apiVersion: v1, kind: ConfigMap, name: big, prefix: big-}}\n          \
         valuesByGroup:\n            main:\n{values}",
        "y".repeat(1 << 20)
    );
    let output = bin().write_stdin(clones).output().unwrap_or_else(|err| panic!("run: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        stdout.contains("more than 256 MiB of evaluated output (--max-output-size)"),
        "{}",
        &stdout[..2000.min(stdout.len())]
    );
    assert!(stdout.len() < 64 << 20, "the error result does not carry the clones");
}
