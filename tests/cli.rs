//! Command-line behaviour that golden files do not express well: help text, the schema's shape,
//! stdout/stderr separation and exit codes.

use assert_cmd::Command;

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("render-blueprint").unwrap_or_else(|err| panic!("binary not built: {err}"));
    cmd.env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING");
    for limit in ["FILE_SIZE", "OUTPUT_SIZE", "STEPS", "INPUT_SIZE", "JSONNET_CPU"] {
        cmd.env_remove(format!("RENDER_BLUEPRINT_MAX_{limit}"));
    }
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

/// Writes an endless stream to the command's stdin until it stops reading, and returns its exit
/// code and stderr: a reader without a cap would never end (and fill memory), one with a cap stops.
fn endless_stdin(mut cmd: std::process::Command) -> (Option<i32>, String) {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("{err}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let writer = std::thread::spawn(move || {
        let line = b"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n".repeat(1000);
        let _ = stdin.write_all(b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
        while stdin.write_all(&line).is_ok() {}
    });
    let output = child.wait_with_output().unwrap_or_else(|err| panic!("{err}"));
    let _ = writer.join();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// stdin is capped while it is read, in KRM mode (a flag) and as kustomize's legacy exec plugin
/// (the environment: kustomize passes no flags of ours).
#[test]
fn stdin_is_capped_while_reading() {
    let binary = assert_cmd::cargo::cargo_bin("render-blueprint");
    let mut krm = std::process::Command::new(&binary);
    krm.env_remove("KUSTOMIZE_PLUGIN_CONFIG_STRING").env_remove("RENDER_BLUEPRINT_MAX_INPUT_SIZE");
    krm.args(["--max-input-size", "1Mi"]);
    let (code, stderr) = endless_stdin(krm);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("stdin is larger than 1 MiB (--max-input-size"), "{stderr}");
    let dir = scratch("legacy-stdin");
    let mut legacy = std::process::Command::new(&binary);
    legacy
        .current_dir(&dir)
        .env("KUSTOMIZE_PLUGIN_CONFIG_STRING", "apiVersion: fn.blueprint.dev/v1alpha1\nkind: RenderBlueprint\n")
        .env("RENDER_BLUEPRINT_MAX_INPUT_SIZE", "2Mi")
        .arg("plugin.yaml");
    let (code, stderr) = endless_stdin(legacy);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("stdin is larger than 2 MiB") && stderr.contains("RENDER_BLUEPRINT_MAX_INPUT_SIZE"),
        "{stderr}"
    );
    // A variable that does not parse is refused, naming it.
    let output = bin()
        .current_dir(&dir)
        .env("KUSTOMIZE_PLUGIN_CONFIG_STRING", "kind: RenderBlueprint\n")
        .env("RENDER_BLUEPRINT_MAX_INPUT_SIZE", "lots")
        .arg("plugin.yaml")
        .write_stdin("")
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--max-input-size") && stderr.contains("lots"), "{stderr}");
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
    let dir = scratch("huge");
    let manifest =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: {}\n", "y".repeat(9 << 20));
    let _ = std::fs::write(dir.join("big.yaml"), manifest);
    let output = bin().arg("render").arg(&dir).output().unwrap_or_else(|err| panic!("run: {err}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("big.yaml: the file is larger than 8 MiB (--max-file-size)"), "{stderr}");
    assert!(output.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Hostile input: a key of 20 000 dotted segments, from `--set` and from kpt's function-input
/// ConfigMap next to a RenderBlueprint, overflowed the stack (exit 134). Refused at 256 levels.
#[test]
fn dotted_keys_deeper_than_the_limit_are_refused() {
    let key = vec!["a"; 20_000].join(".");
    let dir = scratch("dotted");
    let _ = std::fs::write(dir.join("empty.yaml"), "");
    let output = bin().current_dir(&dir).args(["render", "--set", &format!("{key}=1"), "empty.yaml"]).output();
    let _ = std::fs::remove_dir_all(&dir);
    let output = output.unwrap_or_else(|err| panic!("run: {err}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("20000 dotted segments") && stderr.contains("the limit is 256"), "{stderr}");
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: fn.blueprint.dev/v1alpha1\n  \
         kind: RenderBlueprint\n  metadata: {{name: bp}}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  \
         metadata: {{name: function-input}}\n  data:\n    ? {key}\n    : \"1\"\n"
    );
    let output = bin().write_stdin(input).output().unwrap_or_else(|err| panic!("run: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("20000 dotted segments"), "an error result, not a crash");
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(dir.join("features"));
    dir
}

/// A ResourceList whose Feature (declared in features/f.yaml) reads `file(path)`.
fn reading(path: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: blueprints.windsorcli.dev/v1alpha1\n  \
         kind: Feature\n  metadata:\n    name: f\n    annotations:\n      internal.config.kubernetes.io/path: features/f.yaml\n  \
         kustomize:\n  - name: app\n    path: app\n    substitutions:\n      x: ${{file(\"{path}\")}}\nfunctionConfig:\n  \
         apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata:\n    name: p\n  spec:\n    values: {{}}\n"
    )
}

/// Runs KRM mode in `dir` with extra arguments; returns exit code, stdout and stderr.
fn krm_in(dir: &std::path::Path, args: &[&str], input: String) -> (Option<i32>, String, String) {
    let output = bin().current_dir(dir).args(args).write_stdin(input).output().unwrap_or_else(|err| panic!("{err}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The image's working directory was `/`: `file("proc/self/environ")` printed the environment.
#[test]
fn file_reads_from_a_root_of_slash_are_refused() {
    let (code, stdout, stderr) = krm_in(std::path::Path::new("/"), &[], reading("../proc/self/environ"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("the package root is / (the working directory)"), "{stderr}");
    assert!(stderr.contains("pass --root DIR"), "{stderr}");
    assert!(!stdout.contains("PATH="), "{stdout}");
}

/// /proc and /sys are never read, whatever the root, nor a device (a file that is not regular).
#[test]
fn system_directories_are_never_read() {
    let (code, _, stderr) = krm_in(std::path::Path::new("/"), &["--root", "/proc/self"], reading("../environ"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("is a system directory"), "{stderr}");
    let dir = scratch("system");
    let (code, _, stderr) = bin_output(&["render", "-f", "/proc/self/environ", "features"], Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("/proc and /sys are never read"), "{stderr}");
    let dir = scratch("system-device");
    let (code, _, stderr) = bin_output(&["render", "-f", "/dev/zero", "features"], Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("only regular files are read"), "{stderr}");
}

fn bin_output(args: &[&str], dir: Option<&std::path::Path>) -> (Option<i32>, String, String) {
    let mut cmd = bin();
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let output = cmd.args(args).output().unwrap_or_else(|err| panic!("{err}"));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A FIFO in the package hung every file-reading field; it is refused before it is opened, by
/// file(), by the directory walk and by -c/-f.
#[test]
fn fifo_in_the_package_is_refused() {
    let dir = scratch("fifo");
    let made = std::process::Command::new("mkfifo").arg(dir.join("features/pipe")).arg(dir.join("pipe.yaml")).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let (code, _, stderr) = krm_in(&dir, &[], reading("pipe"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("not a regular file (a FIFO, socket or device)"), "{stderr}");
    let (code, _, stderr) = bin_output(&["render", "."], Some(&dir));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("pipe.yaml: it is not a regular file"), "{stderr}");
    let (code, _, stderr) = bin_output(&["render", "-f", "pipe.yaml", "features"], Some(&dir));
    assert_eq!(code, Some(2), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// file() of a 1 GiB sparse file allocated 7 GB and aborted; the read now stops at the limit.
#[test]
fn sparse_gigabyte_file_is_refused_at_the_limit() {
    let dir = scratch("sparse");
    let file = std::fs::File::create(dir.join("features/sparse")).and_then(|f| f.set_len(1 << 30));
    assert!(file.is_ok());
    let _ = std::fs::File::create(dir.join("values.yaml")).and_then(|f| f.set_len(1 << 30));
    let (code, _, stderr) = krm_in(&dir, &[], reading("sparse"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("the file is larger than 8 MiB (--max-file-size)"), "{stderr}");
    let (code, _, stderr) =
        bin_output(&["render", "--max-file-size", "1Mi", "-f", "values.yaml", "features"], Some(&dir));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("values.yaml: the file is larger than 1 MiB"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 9 MB file() result made output the function then refused: the file-size limit and the
/// longest-string limit are one value, so with a raised limit the next run accepts the output.
#[test]
fn file_read_output_is_accepted_by_the_next_run() {
    let dir = scratch("nine-mb");
    let _ = std::fs::write(dir.join("features/blob.txt"), "x".repeat(9_000_000));
    let (code, first, stderr) = krm_in(&dir, &["--max-file-size", "16Mi"], reading("blob.txt"));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(first.len() > 9_000_000);
    let (code, second, stderr) = krm_in(&dir, &["--max-file-size", "16Mi"], first);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(second.contains(&"x".repeat(9_000_000)), "the 9 MB string did not survive the second run");
    let (code, _, stderr) = krm_in(&dir, &[], reading("blob.txt"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("larger than 8 MiB (--max-file-size)"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Items nested 128 to 255 levels deep came out as null with exit 0; they pass through whole, and
/// the next run accepts the output. (Too deep for the golden harness, which parses on a 2 MiB
/// test thread.)
#[test]
fn deep_nesting_200_levels_passes_through_whole() {
    let nested = format!("{}leaf{}", "{a: ".repeat(200), "}".repeat(200));
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  \
         metadata: {{name: deep}}\n  data:\n    nested: {nested}\n"
    );
    let dir = scratch("deep");
    let (code, first, stderr) = krm_in(&dir, &[], input);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(first.contains("leaf") && !first.contains("null"), "{first}");
    let (code, second, stderr) = krm_in(&dir, &[], first.clone());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(first, second);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A broken pipe was called success; it is exit 2 with "cannot write output". A standard output
/// that is /dev/null opened read-write (Python's subprocess.DEVNULL, Go's os/exec, and what Rust's
/// runtime substitutes for a closed one) is a caller discarding the output: exit 0.
#[test]
fn broken_pipe_is_exit_2_and_discarded_output_is_not() {
    let binary = assert_cmd::cargo::cargo_bin("render-blueprint");
    let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n";
    let script = format!("printf '{}' | '{}' 1<>/dev/null", input.replace('\n', "\\n"), binary.display());
    let output = std::process::Command::new("sh").arg("-c").arg(&script).output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    // A reader that closes at once: the writer gets EPIPE (the output is large enough to block).
    let items: String =
        (0..20000).map(|i| format!("- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}}}\n")).collect();
    let dir = scratch("pipe");
    let _ = std::fs::write(dir.join("in.yaml"), input.replace("items: []\n", &format!("items:\n{items}")));
    let script = format!("'{}' < in.yaml | true; echo \"rc=${{PIPESTATUS:-}}\"", binary.display());
    let output = std::process::Command::new("bash")
        .current_dir(&dir)
        .arg("-c")
        .arg(format!("set -o pipefail; {script}"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot write output: Broken pipe"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ResourceList with a RenderBlueprint `spec` (YAML text indented four spaces) and `items`.
fn with_spec(spec: &str, items: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:{items}\nfunctionConfig:\n  \
         apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata:\n    name: p\n  spec:\n{spec}"
    )
}

/// Hostile input: `${v[5]}` 2 000 times on a 4 MB value took 14 s when each use copied the
/// string into a list of characters; indexing goes straight to the byte (as in expr, `v[5]` is
/// the byte's value, 120 for `x`).
#[test]
fn expression_string_index_on_a_large_value_finishes() {
    let value = "x".repeat(4 << 20);
    let uses = "${v[5]}".repeat(2_000);
    let spec = format!(
        "    values:\n      v: {value}\n    blueprint:\n      terraform:\n      - path: net\n        inputs:\n          \
         i: \"{uses}\"\n"
    );
    let dir = scratch("string-index");
    let (code, stdout, stderr) = krm_in(&dir, &[], with_spec(&spec, " []"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&"120".repeat(2_000)), "the indexed bytes are joined");
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

/// Found by fuzzing: the Handlebars compiler counts from the start of the text for every element,
/// so 32 000 tags in 386 KB took 20 s to compile. Such a template is refused before compiling,
/// naming its size and what to do.
#[test]
fn handlebars_templates_too_costly_to_compile_are_refused() {
    let group = format!("{}x{}", "{{#if values.on}}".repeat(10), "{{/if}}".repeat(10));
    let template = format!("resources: []\n{}", group.repeat(1600));
    let spec = format!(
        "    values: {{on: true}}\n    deployExecutions:\n    - name: main\n      type: Handlebars\n      \
         template: {}\n",
        serde_json::to_string(&template).unwrap_or_default()
    );
    let dir = scratch("compile-cost");
    let (code, stdout, stderr) = krm_in(&dir, &[], with_spec(&spec, " []"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.contains("the template has 32000 tags in 385614 bytes"), "{stderr}");
}

/// kpt runs an exec function from the directory kpt was started in, not the package's: a file
/// reference then failed with "No such file or directory" alone. The error names the directory
/// it looked in and the ways out.
#[test]
fn a_missing_file_names_the_root_and_the_ways_out() {
    let dir = scratch("missing-file");
    let _ = std::fs::write(dir.join("features/f.yaml"), "# the item's own file\n");
    // Simply missing: the root is right (it holds the item's file), so no advice to change it.
    let (code, _, stderr) = krm_in(&dir, &[], reading("absent.txt"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("no such file in the package root (the working directory)"), "{stderr}");
    assert!(!stderr.contains("pass --root"), "{stderr}");
    // There from the working directory, not from the root given: both ways out.
    let _ = std::fs::create_dir_all(dir.join("features"));
    let _ = std::fs::create_dir_all(dir.join("sub"));
    let _ = std::fs::write(dir.join("features/absent.txt"), "x");
    let (code, _, stderr) = krm_in(&dir, &["--root", "sub"], reading("absent.txt"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("(there is one in the working directory)"), "{stderr}");
    assert!(stderr.contains("pass --root with the package's directory"), "{stderr}");
    assert!(stderr.contains("mount the package at /package"), "{stderr}");
    // Run from outside the package (as `kpt fn eval DIR --exec` does, from kpt's working
    // directory): the root holds none of the items' files, so it is likely the wrong one.
    let outside = scratch("missing-file-outside");
    let _ = std::fs::remove_dir_all(outside.join("features"));
    let (code, _, stderr) = krm_in(&outside, &[], reading("absent.txt"));
    let _ = std::fs::remove_dir_all(&outside);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("which holds none of the package's files either"), "{stderr}");
    assert!(stderr.contains("pass --root with the package's directory"), "{stderr}");
    assert!(stderr.contains("--exec \"render-blueprint --root DIR\""), "{stderr}");
}

/// `explain` prints secret values as `<redacted>` everywhere, messages that quote a rejected
/// value included; `--show-secrets` prints them. (The exact report of each section is in the
/// golden cases `cli/explain-*`.)
#[test]
fn explain_redacts_secrets_unless_asked() {
    let dir = scratch("explain-secrets");
    let config = "apiVersion: fn.blueprint.dev/v1alpha1\nkind: RenderBlueprint\nmetadata:\n  name: s\nspec:\n  \
                  values:\n    password: short-pass\n  imports:\n  - name: password\n    schema:\n      type: string\n      \
                  format: password\n      minLength: 20\n";
    let _ = std::fs::write(dir.join("fn.yaml"), config);
    let (code, stdout, stderr) = bin_output(&["explain", "fn.yaml"], Some(&dir));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.contains("password = <redacted> (spec.values)"), "{stdout}");
    assert!(stdout.contains("<redacted> is shorter than 20 characters"), "{stdout}");
    assert!(!stdout.contains("short-pass"), "{stdout}");
    let (_, shown, _) = bin_output(&["explain", "--show-secrets", "fn.yaml"], Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(shown.contains("password = \"short-pass\" (spec.values)"), "{shown}");
    let help = stdout_of(bin().args(["explain", "--help"]));
    assert!(help.contains("--show-secrets"), "{help}");
}

/// Copies a directory tree (the example packages are small).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    let _ = std::fs::create_dir_all(to);
    for entry in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            let _ = std::fs::copy(entry.path(), &target);
        }
    }
}

/// The landscaper-backup example's deploy execution in GoTemplate (settings.tpl) renders what
/// its Handlebars one (settings.hbs) renders, with and without the optional url.
#[test]
fn landscaper_backup_renders_the_same_in_gotemplate_and_handlebars() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/landscaper-backup");
    let dir = scratch("gotemplate-backup");
    copy_tree(&example.join("package"), &dir.join("package"));
    let blueprint = dir.join("package/blueprint/blueprint.yaml");
    let text = std::fs::read_to_string(&blueprint).unwrap_or_default();
    let handlebars = "type: Handlebars\n    file: settings.hbs";
    assert!(text.contains(handlebars), "the example's settings execution moved: update this test");
    let _ = std::fs::write(&blueprint, text.replace(handlebars, "type: GoTemplate\n    file: settings.tpl"));
    for values in ["values-with-url.yaml", "values-without-url.yaml"] {
        let values = example.join(values);
        let values = values.to_string_lossy();
        let original = example.join("package");
        let (code, expected, stderr) = bin_output(&["render", &original.to_string_lossy(), "-f", &values], None);
        assert_eq!(code, Some(0), "{stderr}");
        let variant = dir.join("package");
        let (code, actual, stderr) = bin_output(&["render", &variant.to_string_lossy(), "-f", &values], None);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(expected.contains("backup-settings"), "{expected}");
        assert_eq!(actual, expected, "GoTemplate and Handlebars differ with {values}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `render` prints a document no step changed as it was written (without the comments before
/// its first line), and in a changed one only the changed nodes anew (the flow mapping stays
/// flow, `'1'` keeps its quotes).
#[test]
fn render_prints_unchanged_documents_as_written() {
    let dir = scratch("render-as-written");
    let first = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a   # kept\ndata: {x: \"1\", y: 'q'}\n";
    let second = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  mode: 0644\n  n: 1.50\n";
    let third = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: patched\ndata: {x: '1'}\n";
    // Patched to what it already is; its flow metadata and comment stay.
    let fourth =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same, labels: {app: web}}  # flow\ndata: {x: '1'}\n";
    std::fs::write(dir.join("a.yaml"), format!("# about the file\n{first}---\n{second}\n\n---\n{third}---\n{fourth}"))
        .unwrap_or_else(|err| panic!("{err}"));
    let config = "apiVersion: fn.blueprint.dev/v1alpha1\nkind: RenderBlueprint\nmetadata:\n  name: r\nspec:\n  \
                  patches:\n  - target: {name: patched}\n    patch: '[{\"op\": \"add\", \"path\": \"/data/z\", \"value\": \"2\"}]'\n  \
                  - target: {name: same}\n    patch: '[{\"op\": \"replace\", \"path\": \"/data/x\", \"value\": \"1\"}]'\n";
    std::fs::write(dir.join("render.yaml"), config).unwrap_or_else(|err| panic!("{err}"));
    let (code, stdout, stderr) = bin_output(&["render", "."], Some(&dir));
    assert_eq!(code, Some(0), "{stderr}");
    let patched = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: patched\ndata: {x: '1', z: \"2\"}\n";
    assert_eq!(stdout, format!("{first}---\n{second}---\n{patched}---\n{fourth}"));
}

/// Items nested as deep as the reader allows are read and written on the second thread too
/// (the list is long enough to be split) as they are on the main one.
#[test]
fn deep_items_read_and_write_on_either_thread() {
    let mut input = String::from("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n");
    for i in 0..1000 {
        input.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}, data: {{x: '${{v}}'}}}}\n"
        ));
    }
    let deep = format!("{}\"${{v}}\"{}", "[".repeat(250), "]".repeat(250));
    input.push_str(&format!("- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: deep}}\n  deep: {deep}\n"));
    input.push_str(
        "functionConfig:\n  apiVersion: fn.blueprint.dev/v1alpha1\n  kind: RenderBlueprint\n  metadata: {name: x}\n  \
         spec:\n    substitute: {v: reached}\n",
    );
    let output = bin().write_stdin(input).output().unwrap_or_else(|err| panic!("run: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.matches("reached").count(), 1001);
    // Quoted as written (`"${v}"`): an item written whole keeps a template's quotes.
    assert!(
        stdout.contains(&format!("{}\"reached\"", "- ".repeat(250))),
        "{}",
        &stdout[stdout.len().saturating_sub(800)..]
    );
}

/// The parent id, state and CPU time (user and system clock ticks) of a process, from
/// `/proc/PID/stat` (None once it is gone).
fn ppid_state_and_ticks(pid: u32) -> Option<(u32, char, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: the fields start after the last ')'.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    // After the name: state (3rd field of the file), ppid (4th), ..., utime (14th), stime (15th).
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((fields.get(1)?.parse().ok()?, fields.first()?.chars().next()?, ticks))
}

/// The Jsonnet workers (`render-blueprint __jsonnet-worker`) whose parent is `parent`.
fn jsonnet_workers_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| ppid_state_and_ticks(pid).is_some_and(|(ppid, _, _)| ppid == parent))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains("__jsonnet-worker"))
        })
        .collect()
}

/// A SIGKILL to the function (a CI timeout, Go's `exec.CommandContext`) left its Jsonnet worker
/// computing an endless loop, re-parented; it now dies with its parent.
#[cfg(target_os = "linux")]
#[test]
fn the_jsonnet_worker_dies_with_its_parent() {
    use std::io::Write;
    let dir = scratch("worker-parent");
    let _ = std::fs::write(
        dir.join("features/loop.jsonnet"),
        "std.foldl(function(s, x) s + x, std.range(1, 1000000000), 0)\n",
    );
    let exe = assert_cmd::cargo::cargo_bin("render-blueprint");
    let mut parent = std::process::Command::new(exe)
        .current_dir(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|err| panic!("{err}"));
    if let Some(mut stdin) = parent.stdin.take() {
        let _ = stdin.write_all(reading("loop.jsonnet").replace("file(", "jsonnet(").as_bytes());
    }
    // No clock: the parent starts its worker or ends (its worker's CPU-time limit bounds both).
    let mut workers = Vec::new();
    while workers.is_empty() && parent.try_wait().is_ok_and(|status| status.is_none()) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        workers = jsonnet_workers_of(parent.id());
    }
    let _ = parent.kill();
    let _ = parent.wait();
    let Some(&worker) = workers.first() else {
        let _ = std::fs::remove_dir_all(&dir);
        panic!("the function ended without starting a Jsonnet worker");
    };
    // Counted in the worker's own CPU time, not in seconds passed, so a busy machine cannot fail
    // this: after its parent died, the worker may not compute for another second (100 ticks). An
    // orphan that survived would compute until its own 10 s CPU-time limit.
    let at_kill = ppid_state_and_ticks(worker).map_or(0, |(_, _, ticks)| ticks);
    let mut computed_after = 0;
    // Gone, or a zombie its new parent has not reaped yet: either way no longer computing.
    while let Some((_, state, ticks)) = ppid_state_and_ticks(worker) {
        computed_after = ticks.saturating_sub(at_kill);
        if state == 'Z' || state == 'X' || computed_after > 100 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let still_running = computed_after > 100;
    if still_running {
        let _ = std::process::Command::new("kill").args(["-9", &worker.to_string()]).status();
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!still_running, "the Jsonnet worker {worker} computed for 1 s of CPU time after its parent died");
}

/// The worker has a CPU-time limit of its own (the request's `cpuSeconds`): the kernel stops it
/// even when its parent, alive but stopped, cannot. The test waits for it without a clock.
#[cfg(target_os = "linux")]
#[test]
fn the_jsonnet_worker_stops_at_its_cpu_time_limit() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch("worker-cpu");
    let _ = std::fs::write(dir.join("loop.jsonnet"), "std.foldl(function(s, x) s + x, std.range(1, 1000000000), 0)\n");
    let request =
        format!(r#"{{"root": {:?}, "cpuSeconds": 1, "path": "loop.jsonnet", "values": {{}}}}"#, dir.to_string_lossy());
    let output = bin().arg("__jsonnet-worker").write_stdin(request).output();
    let _ = std::fs::remove_dir_all(&dir);
    let output = output.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(output.status.signal(), Some(24), "SIGXCPU: {output:?}");
}

/// `diff --git REV PATH`: the package as of a commit against the working tree, read with git;
/// the working tree stays as it is. Skipped, visibly, where git is not installed.
#[test]
fn diff_against_a_git_revision_reads_the_revision_and_leaves_the_tree() {
    if !git_installed() {
        eprintln!("SKIP diff --git: git is not installed");
        return;
    }
    let dir = scratch("diff-git");
    let git = |args: &[&str]| {
        git_in(&dir, args, "");
    };
    let manifest = |replicas: u32| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n")
    };
    std::fs::create_dir_all(dir.join("package")).unwrap_or_else(|err| panic!("{err}"));
    std::fs::write(dir.join("package/web.yaml"), manifest(1)).unwrap_or_else(|err| panic!("{err}"));
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one replica"]);
    std::fs::write(dir.join("package/web.yaml"), manifest(2)).unwrap_or_else(|err| panic!("{err}"));
    let (code, stdout, stderr) = bin_output(&["diff", "--git", "HEAD", "package"], Some(&dir));
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stdout, "spec.replicas  (apps/v1/Deployment/web)\n  ± value change\n    - 1\n    + 2\n\n");
    let (code, _, stderr) = bin_output(&["diff", "--git", "no-such-rev", "package"], Some(&dir));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not a revision"), "{stderr}");
    let after = std::fs::read_to_string(dir.join("package/web.yaml")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(after, manifest(2), "the working tree is untouched");
}

/// `diff --git`: a symbolic link in the package is a link on the revision's side too (git stores
/// its target as a blob), so an unchanged package with a link compares equal; a crafted tree
/// that puts a file under a link is refused before anything is written.
#[test]
fn diff_git_keeps_symbolic_links_as_links() {
    if !git_installed() {
        eprintln!("SKIP diff --git: git is not installed");
        return;
    }
    let dir = scratch("diff-git-links");
    std::fs::create_dir_all(dir.join("package/other")).unwrap_or_else(|err| panic!("{err}"));
    std::fs::write(
        dir.join("package/other/b.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n",
    )
    .unwrap_or_else(|err| panic!("{err}"));
    std::os::unix::fs::symlink("other/b.yaml", dir.join("package/alias.yaml")).unwrap_or_else(|err| panic!("{err}"));
    git_in(&dir, &["init", "-q"], "");
    git_in(&dir, &["add", "."], "");
    git_in(&dir, &["commit", "-q", "-m", "a link"], "");
    let (code, stdout, stderr) = bin_output(&["diff", "--git", "HEAD", "package", "--root", "package"], Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.starts_with("no differences"), "{stdout}");
}

/// Runs git in `dir` for a test (author given, no signing), returning its stdout.
/// Whether git runs here (tests that need it say so and skip when it does not).
fn git_installed() -> bool {
    std::process::Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn git_in(dir: &std::path::Path, args: &[&str], stdin: &str) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .write_stdin(stdin.to_string())
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// `diff --git`: a commit whose tree holds entries named `..` (git stores them if given them)
/// wrote `package/../../pwned.yaml` outside the temporary directory and said "no differences";
/// the PATH `:/other` (git's from-the-root pathspec) passed the "inside the current directory"
/// check. Both are refused, and nothing is written outside.
#[test]
fn diff_git_refuses_tree_entries_and_paths_that_lead_out() {
    if !git_installed() {
        eprintln!("SKIP diff --git: git is not installed");
        return;
    }
    let dir = scratch("diff-git-escape");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(dir.join("repo/package")).unwrap_or_else(|err| panic!("{err}"));
    std::fs::create_dir_all(tmp.join("inner")).unwrap_or_else(|err| panic!("{err}"));
    let repo = dir.join("repo");
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n";
    std::fs::write(repo.join("package/cm.yaml"), manifest).unwrap_or_else(|err| panic!("{err}"));
    git_in(&repo, &["init", "-q"], "");
    let blob = git_in(&repo, &["hash-object", "-w", "--stdin"], manifest);
    let leaf = git_in(&repo, &["mktree"], &format!("100644 blob {blob}\tpwned.yaml\n"));
    let up = git_in(&repo, &["mktree"], &format!("040000 tree {leaf}\t..\n"));
    let package = git_in(&repo, &["mktree"], &format!("040000 tree {up}\t..\n100644 blob {blob}\tcm.yaml\n"));
    // Run from a/b, `package/../../pwned.yaml` is a/pwned.yaml to git, and $TMPDIR/pwned.yaml,
    // beside the temporary directory, to a writer that trusts it.
    let b = git_in(&repo, &["mktree"], &format!("040000 tree {package}\tpackage\n"));
    let a = git_in(&repo, &["mktree"], &format!("040000 tree {b}\tb\n100644 blob {blob}\tpwned.yaml\n"));
    let root = git_in(&repo, &["mktree"], &format!("040000 tree {a}\ta\n040000 tree {package}\tother\n"));
    let commit = git_in(&repo, &["commit-tree", &root, "-m", "hostile"], "");
    std::fs::create_dir_all(repo.join("a/b/package")).unwrap_or_else(|err| panic!("{err}"));
    std::fs::write(repo.join("a/b/package/cm.yaml"), manifest).unwrap_or_else(|err| panic!("{err}"));
    let run = |path: &str| {
        let output = bin()
            .current_dir(repo.join("a/b"))
            .env("TMPDIR", tmp.join("inner"))
            .args(["diff", "--git", &commit, path])
            .output()
            .unwrap_or_else(|err| panic!("{err}"));
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = run("package");
    let escaped = tmp.join("inner/pwned.yaml").exists();
    let (magic_code, magic_stderr) = run(":/other");
    let leftovers = std::fs::read_dir(tmp.join("inner")).map(|d| d.count()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!escaped, "a tree entry wrote outside the temporary directory");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not a plain relative path"), "{stderr}");
    assert_eq!(magic_code, Some(2), "{magic_stderr}");
    assert!(magic_stderr.contains("must be inside the current directory"), "{magic_stderr}");
    assert_eq!(leftovers, 0, "the temporary directory is removed");
}

/// SIGTERM or SIGINT during `flux-build` left the temporary copy of the source (Secrets
/// included) in `$TMPDIR`. A `kustomize` that waits stands in for a slow build: the signal
/// removes the copy, kills kustomize, and then ends the command.
#[cfg(target_os = "linux")]
#[test]
fn flux_build_removes_its_copy_on_sigterm_and_sigint() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::ExitStatusExt;
    for (signal, number) in [("TERM", 15), ("INT", 2)] {
        let dir = scratch(&format!("flux-signal-{signal}"));
        let (bin_dir, tmp, source) = (dir.join("bin"), dir.join("tmp"), dir.join("source/app"));
        for d in [&bin_dir, &tmp, &source] {
            std::fs::create_dir_all(d).unwrap_or_else(|err| panic!("{err}"));
        }
        let started = dir.join("started");
        // Busy, not sleeping: one that survived the command would be seen computing.
        let script = format!("#!/bin/sh\necho $$ > {}\nwhile :; do :; done\n", started.display());
        std::fs::write(bin_dir.join("kustomize"), script).unwrap_or_else(|err| panic!("{err}"));
        std::fs::set_permissions(bin_dir.join("kustomize"), std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|err| panic!("{err}"));
        let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: v\n";
        std::fs::write(source.join("secret.yaml"), secret).unwrap_or_else(|err| panic!("{err}"));
        let flux = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  \
                    namespace: flux-system\nspec:\n  sourceRef:\n    kind: GitRepository\n    name: platform\n  \
                    path: ./app\n";
        std::fs::write(dir.join("features/flux.yaml"), flux).unwrap_or_else(|err| panic!("{err}"));
        let args = ["flux-build", "features", "--source", "platform=source"];
        let run = signal_during(&args, &dir, &bin_dir, &tmp, &started, signal);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(run.killed, "kill -{signal}");
        assert_eq!(run.copies_before, 1, "the copy exists while kustomize runs");
        assert_eq!(run.copies_after, 0, "SIG{signal} left the copy in $TMPDIR");
        assert!(!run.stand_in_alive, "SIG{signal} left kustomize running");
        assert_eq!(run.status.signal(), Some(number), "SIG{signal} ends the command: {:?}", run.status);
    }
}

/// The same for `diff --git`: a `git` whose `show` waits stands in for a slow read of the
/// revision; SIGTERM removes the files read so far.
#[cfg(target_os = "linux")]
#[test]
fn diff_git_removes_its_copy_on_sigterm() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::ExitStatusExt;
    let real_git = std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).map(|dir| dir.join("git")).find(|git| git.is_file()));
    let Some(real_git) = real_git else {
        eprintln!("SKIP diff --git: git is not installed");
        return;
    };
    let dir = scratch("diff-git-signal");
    let (bin_dir, tmp, repo) = (dir.join("bin"), dir.join("tmp"), dir.join("repo"));
    for d in [&bin_dir, &tmp, &repo.join("package")] {
        std::fs::create_dir_all(d).unwrap_or_else(|err| panic!("{err}"));
    }
    // git show reads 200 files at a time: 201 files make two, and the second waits.
    let manifest = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: v\n";
    for i in 0..201 {
        std::fs::write(repo.join(format!("package/s{i:03}.yaml")), manifest.replace("name: s", &format!("name: s{i}")))
            .unwrap_or_else(|err| panic!("{err}"));
    }
    git_in(&repo, &["init", "-q"], "");
    git_in(&repo, &["add", "."], "");
    git_in(&repo, &["commit", "-q", "-m", "two"], "");
    let started = dir.join("started");
    // The first `show` runs; the second waits.
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = show ] && [ -e {s}.first ]; then echo $$ > {s}; while :; do :; done; fi\n\
         [ \"$1\" = show ] && touch {s}.first\nexec {git} \"$@\"\n",
        s = started.display(),
        git = real_git.display()
    );
    std::fs::write(bin_dir.join("git"), script).unwrap_or_else(|err| panic!("{err}"));
    std::fs::set_permissions(bin_dir.join("git"), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|err| panic!("{err}"));
    let run = signal_during(&["diff", "--git", "HEAD", "package"], &repo, &bin_dir, &tmp, &started, "TERM");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(run.killed, "kill -TERM");
    assert_eq!(run.copies_before, 1, "the copy exists while git runs");
    assert_eq!(run.copies_after, 0, "SIGTERM left the copy in $TMPDIR");
    assert!(!run.stand_in_alive, "SIGTERM left git running");
    assert_eq!(run.status.signal(), Some(15), "SIGTERM ends the command: {:?}", run.status);
}

/// What a signal during a command did: whether `kill` sent it, the temporary copies before and
/// after, whether the stand-in tool outlived the command, and how the command ended.
#[cfg(target_os = "linux")]
struct SignalRun {
    killed: bool,
    copies_before: usize,
    copies_after: usize,
    stand_in_alive: bool,
    status: std::process::ExitStatus,
}

/// Runs the binary with `args` in `dir`, the stand-ins of `bin_dir` first on PATH and `tmp` as
/// `$TMPDIR`; once a stand-in wrote its pid to `started`, sends SIG`signal` to the command.
#[cfg(target_os = "linux")]
fn signal_during(
    args: &[&str],
    dir: &std::path::Path,
    bin_dir: &std::path::Path,
    tmp: &std::path::Path,
    started: &std::path::Path,
    signal: &str,
) -> SignalRun {
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("render-blueprint"))
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("TMPDIR", tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|err| panic!("{err}"));
    wait_for_stand_in(started, &mut child);
    let copies = || std::fs::read_dir(tmp).map(|d| d.count()).unwrap_or(0);
    let copies_before = copies();
    let kill = std::process::Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
    let status = child.wait().unwrap_or_else(|err| panic!("{err}"));
    let stand_in = std::fs::read_to_string(started).unwrap_or_default();
    let stand_in_alive = stand_in.trim().parse().is_ok_and(computes_on);
    SignalRun { killed: kill.is_ok_and(|s| s.success()), copies_before, copies_after: copies(), stand_in_alive, status }
}

/// Waits, without a clock, until a stand-in tool wrote its process id to `started` or the
/// command ended without starting it (the assertions then say what went wrong).
#[cfg(target_os = "linux")]
fn wait_for_stand_in(started: &std::path::Path, child: &mut std::process::Child) {
    while !std::fs::read_to_string(started).is_ok_and(|pid| pid.ends_with('\n'))
        && child.try_wait().is_ok_and(|status| status.is_none())
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether a busy stand-in is still computing after the command that started it ended: it is
/// gone or a zombie, or it computes for another second of CPU time (counted in its own ticks,
/// so a busy machine cannot fail this; a survivor would compute forever). Killed by pid, it may
/// stay a zombie until whoever adopted it reaps it.
#[cfg(target_os = "linux")]
fn computes_on(pid: u32) -> bool {
    let Some((_, _, at_end)) = ppid_state_and_ticks(pid) else { return false };
    while let Some((_, state, ticks)) = ppid_state_and_ticks(pid) {
        if state == 'Z' || state == 'X' {
            return false;
        }
        if ticks.saturating_sub(at_end) > 100 {
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// A `kustomize` that logs the directory it builds and prints nothing, and a package of `n`
/// Flux Kustomizations of one source: `flux-build`'s work without real kustomize.
#[cfg(target_os = "linux")]
fn many_kustomizations(name: &str, n: usize) -> (std::path::PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch(name);
    let (bin_dir, tmp) = (dir.join("bin"), dir.join("tmp"));
    for d in [&bin_dir, &tmp, &dir.join("source/app")] {
        std::fs::create_dir_all(d).unwrap_or_else(|err| panic!("{err}"));
    }
    let script = format!("#!/bin/sh\necho \"$4\" >> {}\n", dir.join("built").display());
    std::fs::write(bin_dir.join("kustomize"), script).unwrap_or_else(|err| panic!("{err}"));
    std::fs::set_permissions(bin_dir.join("kustomize"), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|err| panic!("{err}"));
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";
    std::fs::write(dir.join("source/app/c.yaml"), configmap).unwrap_or_else(|err| panic!("{err}"));
    let flux: String = (0..n)
        .map(|i| {
            format!(
                "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: k{i}\n  \
                 namespace: flux-system\nspec:\n  sourceRef:\n    kind: GitRepository\n    name: platform\n  \
                 path: ./app\n"
            )
        })
        .collect();
    std::fs::write(dir.join("features/flux.yaml"), flux).unwrap_or_else(|err| panic!("{err}"));
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    (dir, path)
}

/// 800 bytes of package gave 300 Kustomizations and 300 kustomize runs with no budget: more
/// than `--max-builds` (default 200) are refused before any build, naming the setting.
#[cfg(target_os = "linux")]
#[test]
fn flux_build_refuses_more_kustomizations_than_max_builds() {
    let (dir, path) = many_kustomizations("flux-max-builds", 201);
    let run = |extra: &[&str]| {
        let output = bin()
            .current_dir(&dir)
            .env("PATH", &path)
            .env("TMPDIR", dir.join("tmp"))
            .args(["flux-build", "features", "--source", "platform=source"])
            .args(extra)
            .output()
            .unwrap_or_else(|err| panic!("{err}"));
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = run(&[]);
    let built_by_default = dir.join("built").exists();
    // diff --flux builds through the same code, with the same setting.
    let diff = bin()
        .current_dir(&dir)
        .env("PATH", &path)
        .env("TMPDIR", dir.join("tmp"))
        .args(["diff", "features", "features", "--flux", "--source", "platform=source"])
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    let diff_stderr = String::from_utf8_lossy(&diff.stderr).into_owned();
    let built_by_diff = dir.join("built").exists();
    let (raised_code, raised_stderr) = run(&["--max-builds", "201"]);
    let built = std::fs::read_to_string(dir.join("built")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("201 Kustomizations to build, more than --max-builds (200)"), "{stderr}");
    assert!(!built_by_default, "refused before any build");
    assert_eq!(diff.status.code(), Some(2), "{diff_stderr}");
    assert!(diff_stderr.contains("more than --max-builds (200)"), "{diff_stderr}");
    assert!(!built_by_diff, "diff --flux refused before any build");
    assert_eq!(raised_code, Some(0), "{raised_stderr}");
    assert_eq!(built.lines().count(), 201);
}

/// Every Kustomization made a copy of its source: a source is copied once per run, and each
/// build leaves the copy as it found it (the kustomization file it generated is removed).
#[cfg(target_os = "linux")]
#[test]
fn flux_build_copies_each_source_once() {
    let (dir, path) = many_kustomizations("flux-copy-once", 3);
    let output = bin()
        .current_dir(&dir)
        .env("PATH", &path)
        .env("TMPDIR", dir.join("tmp"))
        .args(["flux-build", "features", "--source", "platform=source"])
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    let built = std::fs::read_to_string(dir.join("built")).unwrap_or_default();
    let leftovers = std::fs::read_dir(dir.join("tmp")).map(|d| d.count()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let built: Vec<&str> = built.lines().collect();
    assert_eq!(built.len(), 3);
    assert!(built.iter().all(|d| *d == built[0]), "one copy for every build: {built:?}");
    assert_eq!(leftovers, 0, "the copy is removed");
}

/// `diff`'s line-diff cap was a constant: it is `--max-diff-lines`, and the note on a string
/// shown whole names it.
#[test]
fn diff_max_diff_lines_is_a_setting_the_note_names() {
    let dir = scratch("diff-max-lines");
    for (side, tag) in [("a", "old"), ("b", "new")] {
        let lines: String = (0..20).map(|i| format!("    {tag} {i}\n")).collect();
        let configmap = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  t: |\n{lines}");
        std::fs::create_dir_all(dir.join(side)).unwrap_or_else(|err| panic!("{err}"));
        std::fs::write(dir.join(side).join("c.yaml"), configmap).unwrap_or_else(|err| panic!("{err}"));
    }
    let (code, stdout, stderr) = bin_output(&["diff", "a", "b", "--max-diff-lines", "39"], Some(&dir));
    let (default_code, default_stdout, _) = bin_output(&["diff", "a", "b"], Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.contains("more than 39 lines together") && stdout.contains("raise --max-diff-lines"), "{stdout}");
    assert_eq!(default_code, Some(1));
    assert!(default_stdout.contains("(20 inserts, 20 deletions)"), "{default_stdout}");
}

/// The pinned kubectl's directory (scripts/install-kubectl), for tests that build with real
/// kustomize; none when it is not installed.
fn pinned_kubectl_dir() -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/kubectl/bin");
    dir.join("kubectl").is_file().then_some(dir)
}

/// A git repository whose `clusters/staging` holds a Flux Kustomization of `./apps/staging` in
/// the GitRepository `source`, committed with one replica in `apps/staging/podinfo.yaml`, which
/// the working tree then changes to two (uncommitted).
fn podinfo_repo(repo: &std::path::Path, source: &str) {
    let write = |path: &str, text: &str| {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(repo)).unwrap_or_else(|err| panic!("{err}"));
        std::fs::write(path, text).unwrap_or_else(|err| panic!("{err}"));
    };
    write(
        "clusters/staging/apps.yaml",
        &format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: \
             flux-system\nspec:\n  interval: 10m\n  sourceRef:\n    kind: GitRepository\n    name: {source}\n  path: \
             ./apps/staging\n  prune: true\n"
        ),
    );
    write(
        "apps/staging/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- podinfo.yaml\n",
    );
    let values = |replicas: u32| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: podinfo-values\n  namespace: podinfo\ndata:\n  replicas: \"{replicas}\"\n")
    };
    write("apps/staging/podinfo.yaml", &values(1));
    git_in(repo, &["init", "-q"], "");
    git_in(repo, &["add", "."], "");
    git_in(repo, &["commit", "-q", "-m", "one replica"], "");
    write("apps/staging/podinfo.yaml", &values(2));
}

/// The issue's reproducer: `diff --git REV PATH --flux --source apps=.` read the source from
/// the working tree on both sides, so a value changed in `apps/staging/` gave no output and
/// exit 0. The source is read at the revision too; a source outside the repository is read
/// from the working tree on both sides, with a warning that says so.
#[test]
fn diff_git_flux_reads_each_source_at_the_revision() {
    let Some(kubectl) = pinned_kubectl_dir().filter(|_| git_installed()) else {
        eprintln!("SKIP diff --git --flux: needs git and kustomize (scripts/install-kubectl)");
        return;
    };
    let dir = scratch("diff-git-flux");
    let repo = dir.join("repo");
    podinfo_repo(&repo, "apps");
    git_in(&repo, &["commit", "-q", "-a", "-m", "two replicas"], "");
    // The same files outside the repository: read from the working tree for both sides.
    let outside = dir.join("outside/apps/staging");
    std::fs::create_dir_all(&outside).unwrap_or_else(|err| panic!("{err}"));
    for file in ["kustomization.yaml", "podinfo.yaml"] {
        std::fs::copy(repo.join("apps/staging").join(file), outside.join(file)).unwrap_or_else(|err| panic!("{err}"));
    }
    let path = format!("{}:{}", kubectl.display(), std::env::var("PATH").unwrap_or_default());
    let run = |source: &str| {
        let output = bin()
            .current_dir(&repo)
            .env("PATH", &path)
            .args(["diff", "--git", "HEAD~1", "clusters/staging", "--flux", "--source", source])
            .output()
            .unwrap_or_else(|err| panic!("{err}"));
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        (output.status.code(), text(&output.stdout), text(&output.stderr))
    };
    let (code, stdout, stderr) = run("apps=.");
    let (outside_code, outside_stdout, outside_stderr) = run("apps=../outside");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert_eq!(stdout, "data.replicas  (v1/ConfigMap/podinfo/podinfo-values)\n  ± value change\n    - 1\n    + 2\n\n");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(outside_code, Some(0), "{outside_stdout}{outside_stderr}");
    assert!(outside_stdout.starts_with("no differences between clusters/staging as of HEAD~1 and clusters/staging"));
    assert!(
        outside_stderr.contains("--source apps=../outside: ../outside is outside the git repository")
            && outside_stderr.contains("read from the working tree for both sides"),
        "{outside_stderr}"
    );
}

/// `diff --git REV PATH --flux` with no --source: the Kustomization's source is the
/// repository flux bootstrap sets up (GitRepository flux-system/flux-system), which is the
/// checkout on each side, as flux-build's default: the work tree on B's side, the whole
/// repository as of REV on A's, so a change in `apps/` shows.
#[test]
fn diff_git_flux_reads_the_flux_system_source_at_the_revision() {
    let Some(kubectl) = pinned_kubectl_dir().filter(|_| git_installed()) else {
        eprintln!("SKIP diff --git --flux: needs git and kustomize (scripts/install-kubectl)");
        return;
    };
    let dir = scratch("diff-git-flux-system");
    let repo = dir.join("repo");
    podinfo_repo(&repo, "flux-system");
    let path = format!("{}:{}", kubectl.display(), std::env::var("PATH").unwrap_or_default());
    let output = bin()
        .current_dir(&repo)
        .env("PATH", &path)
        .args(["diff", "--git", "HEAD", "clusters/staging", "--flux"])
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    let _ = std::fs::remove_dir_all(&dir);
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(stdout, "data.replicas  (v1/ConfigMap/podinfo/podinfo-values)\n  ± value change\n    - 1\n    + 2\n\n");
    assert!(stderr.contains("as of HEAD (the checkout;"), "{stderr}");
    assert!(!stderr.contains("render-blueprint-diff-"), "the temporary copy is not named: {stderr}");
}

/// `diff --git` on a package whose kustomization.yaml files (no name) did not change: the two
/// sides name their files alike (the revision's side was read with a root of its own), so they
/// pair by file, with no repeated-identity warning, and the report says there is no difference.
#[test]
fn diff_git_pairs_unnamed_documents_by_file_and_says_so_when_nothing_differs() {
    if !git_installed() {
        eprintln!("SKIP diff --git: git is not installed");
        return;
    }
    let dir = scratch("diff-git-unnamed");
    for (sub, resource) in [("x", "web.yaml"), ("y", "api.yaml")] {
        std::fs::create_dir_all(dir.join("package").join(sub)).unwrap_or_else(|err| panic!("{err}"));
        let text =
            format!("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- {resource}\n");
        std::fs::write(dir.join("package").join(sub).join("kustomization.yaml"), text)
            .unwrap_or_else(|err| panic!("{err}"));
    }
    git_in(&dir, &["init", "-q"], "");
    git_in(&dir, &["add", "."], "");
    git_in(&dir, &["commit", "-q", "-m", "two kustomizations"], "");
    let (code, stdout, stderr) = bin_output(&["diff", "--git", "HEAD", "package"], Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(stdout, "no differences between package as of HEAD and package\n");
    assert_eq!(stderr, "");
}

/// `diff --help` names every flag the docs describe.
#[test]
fn diff_help_lists_its_flags() {
    let help = stdout_of(bin().args(["diff", "--help"]));
    for needle in [
        "--git",
        "--flux",
        "--keep-local-config",
        "--include",
        "--exclude",
        "--values-a",
        "--values-b",
        "--set-a",
        "--config-b",
        "brief",
        "github",
        "--max-diff-lines",
    ] {
        assert!(help.contains(needle), "diff --help lacks {needle:?}:\n{help}");
    }
}

/// A temporary directory on /dev/shm (tmpfs, the fast choice for TMPDIR) was refused as "a
/// system file": only /proc, /sys and device files are. The copy of the source is made there and
/// read, and removed after.
#[cfg(target_os = "linux")]
#[test]
fn flux_build_works_with_tmpdir_on_dev_shm() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let (dir, path) = many_kustomizations("flux-tmpdir-shm", 1);
    let tmp = shm.join(format!("render-blueprint-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap_or_else(|err| panic!("{err}"));
    let output = bin()
        .current_dir(&dir)
        .env("PATH", &path)
        .env("TMPDIR", &tmp)
        .args(["flux-build", "features", "--source", "platform=source"])
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    let built = std::fs::read_to_string(dir.join("built")).unwrap_or_default();
    let leftovers = std::fs::read_dir(&tmp).map(|d| d.count()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(built.starts_with(tmp.to_str().unwrap_or_default()), "built in TMPDIR: {built}");
    assert_eq!(leftovers, 0, "the copy is removed");
}

/// Runs `render-blueprint ARGS` in `dir` with a stand-in kustomize that logs the kustomization
/// file Flux generated (to `dir/built`), before and after `git init` makes `dir` a work tree:
/// outside, the flux-system source must be given (exit 2); inside, it is the checkout, said in an
/// info line. Returns what was built, or None, said on stderr, when git cannot run here.
#[cfg(target_os = "linux")]
fn outside_and_inside_a_work_tree(dir: &std::path::Path, args: &[&str]) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let script = format!("#!/bin/sh\ncat \"$4/kustomization.yaml\" >> {}\n", dir.join("built").display());
    let _ = std::fs::create_dir_all(dir.join("bin"));
    std::fs::write(dir.join("bin/kustomize"), script).unwrap_or_else(|err| panic!("{err}"));
    std::fs::set_permissions(dir.join("bin/kustomize"), std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|err| panic!("{err}"));
    let path = format!("{}:{}", dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let run = || bin().current_dir(dir).env("PATH", &path).args(args).output().unwrap_or_else(|err| panic!("{err}"));
    let outside = run();
    let git = std::process::Command::new("git").arg("init").arg("-q").current_dir(dir).status();
    let inside = run();
    let built = std::fs::read_to_string(dir.join("built")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(dir);
    if !git.is_ok_and(|status| status.success()) {
        eprintln!("skipped: git is needed to make a work tree (install git)");
        return None;
    }
    let outside_stderr = String::from_utf8_lossy(&outside.stderr);
    assert_eq!(outside.status.code(), Some(2), "{outside_stderr}");
    assert!(outside_stderr.contains("--source GitRepository/flux-system/flux-system=DIR"), "{outside_stderr}");
    let stderr = String::from_utf8_lossy(&inside.stderr);
    assert!(inside.status.success(), "{stderr}");
    assert!(stderr.starts_with("info: source GitRepository/flux-system/flux-system is the git work tree "), "{stderr}");
    Some(built)
}

/// Inside a git work tree, the `flux-system` GitRepository (what `flux bootstrap` makes of the
/// repository) is the checkout when no --source names it, with an info line saying so; the copy
/// holds what a clone holds (no files .gitignore names) and what the artifact holds (no
/// .github/, no links). Outside a work tree the source must be given.
#[cfg(target_os = "linux")]
#[test]
fn flux_build_takes_the_checkout_for_the_flux_system_source() {
    let dir = scratch("flux-checkout");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(&dir)).unwrap_or_else(|err| panic!("{err}"));
        std::fs::write(path, text).unwrap_or_else(|err| panic!("{err}"));
    };
    let kustomization = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  \
                         namespace: flux-system\nspec:\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  \
                         path: ./apps\n";
    write("clusters/prod/apps.yaml", kustomization);
    // An artifact unpacked into a directory git ignores is taken as it is.
    let unpacked =
        kustomization.replace("name: apps", "name: unpacked").replace("flux-system\n  path", "artifact\n  path");
    write("clusters/prod/unpacked.yaml", &unpacked);
    for name in ["apps/app.yaml", "apps/scratch.yaml", ".github/ci.yaml", "apps/.github/ci.yaml", "build/apps/c.yaml"] {
        write(name, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
    }
    write(".gitignore", "scratch.yaml\nbuild/\n");
    // The stand-in kustomize logs the kustomization file Flux generated for the build.
    let Some(built) =
        outside_and_inside_a_work_tree(&dir, &["flux-build", "clusters/prod", "--source", "artifact=build"])
    else {
        return;
    };
    assert!(built.contains("- ./app.yaml") && built.contains("- ./c.yaml"), "{built}");
    assert!(!built.contains("scratch.yaml") && !built.contains(".github"), "{built}");
}

/// An ExternalArtifact made by an ArtifactGenerator from the `flux-system` GitRepository (Flux
/// 2.7, as fluxcd/flux2-kustomize-helm-example lays out its clusters): inside a git work tree the
/// generator's source is the checkout, and the artifact is made from what a clone holds; outside
/// one, the generator's source is the missing one (exit 2, naming its flag).
#[cfg(target_os = "linux")]
#[test]
fn flux_build_makes_external_artifacts_from_the_checkout() {
    let dir = scratch("flux-external-artifact");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(&dir)).unwrap_or_else(|err| panic!("{err}"));
        std::fs::write(path, text).unwrap_or_else(|err| panic!("{err}"));
    };
    write(
        "clusters/prod/artifacts.yaml",
        "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata:\n  name: flux-system\n  \
         namespace: flux-system\nspec:\n  sources:\n  - alias: monorepo\n    kind: GitRepository\n    name: \
         flux-system\n  artifacts:\n  - name: apps\n    copy:\n    - from: \"@monorepo/apps/**\"\n      to: \
         \"@artifact/prod/\"\n",
    );
    write(
        "clusters/prod/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: \
         flux-system\nspec:\n  sourceRef:\n    kind: ExternalArtifact\n    name: apps\n  path: ./prod\n",
    );
    for name in ["apps/app.yaml", "apps/scratch.yaml"] {
        write(name, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n");
    }
    write(".gitignore", "scratch.yaml\n");
    let Some(built) = outside_and_inside_a_work_tree(&dir, &["flux-build", "clusters/prod"]) else { return };
    assert!(built.contains("- ./app.yaml"), "{built}");
    assert!(!built.contains("scratch.yaml"), "{built}");
}

/// Progress goes to stderr, one line per Kustomization, only when stderr is a terminal (run
/// here under `script`, which gives the command a pseudo-terminal); piped, stderr holds the
/// results alone.
#[cfg(target_os = "linux")]
#[test]
fn flux_build_shows_progress_on_a_terminal_only() {
    let (dir, path) = many_kustomizations("flux-progress", 2);
    let command = format!("{} flux-build features --source platform=source", env!("CARGO_BIN_EXE_render-blueprint"));
    let on_terminal = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&dir)
        .env("PATH", &path)
        .env("TMPDIR", dir.join("tmp"))
        .output();
    let piped = bin()
        .current_dir(&dir)
        .env("PATH", &path)
        .env("TMPDIR", dir.join("tmp"))
        .args(["flux-build", "features", "--source", "platform=source"])
        .output()
        .unwrap_or_else(|err| panic!("{err}"));
    let _ = std::fs::remove_dir_all(&dir);
    let piped_stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(piped.status.success() && !piped_stderr.contains("building"), "{piped_stderr}");
    // Without `script` (util-linux), there is no terminal to test with.
    let Ok(on_terminal) = on_terminal else { return };
    let shown = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(
        shown.contains(
            "[1/2] building Kustomization flux-system/k0 (source GitRepository/flux-system/platform, path \"./app\")"
        ),
        "{shown}"
    );
    assert!(shown.contains("[2/2] building Kustomization flux-system/k1"), "{shown}");
}
