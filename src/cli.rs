//! The command line: the only place that reads stdin, writes stdout/stderr, touches files and
//! reads the environment. It turns arguments into a [`pipeline::Input`], runs the pipeline and
//! decides the exit code (0 clean, 1 error results, 2 unusable input) in one place: [`Exit`].

use crate::diag::Diagnostic;
use crate::doc::{quoted_template_scalars, read_yaml_documents, Value};
use crate::krm::{annotations as ann, is_local_config, set_annotation, Item, ResourceList};
use crate::limits::Limits;
use crate::package::{read_regular_file, DiskFiles, Files};
use crate::pipeline::{self, Input, ScalarStyles};
use crate::{config, explain, help, jsonnet};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "render-blueprint", version, about = help::short(), long_about = help::long(), after_help = help::examples())]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Package root: relative paths in configuration resolve inside it and may not leave it
    /// [default: the current directory in KRM mode]
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

/// The operator's limits (see docs/security.md): flags, never package content, set them.
#[derive(Args, Clone)]
struct LimitArgs {
    /// Largest file a blueprint may read, and longest string in input or output (e.g. 8Mi)
    #[arg(long, global = true, value_name = "SIZE", default_value = "8Mi", value_parser = crate::limits::parse_size)]
    max_file_size: u64,
    /// Output that templates, expressions, substitution, Jsonnet, patches and clones may produce in one render
    #[arg(long, global = true, value_name = "SIZE", default_value = "256Mi", value_parser = crate::limits::parse_size)]
    max_output_size: u64,
    /// Evaluation steps in one render (loop rounds, expression nodes, patch operations, ...)
    #[arg(long, global = true, value_name = "N", default_value_t = crate::limits::Limits::default().max_steps)]
    max_steps: u64,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits { max_file_bytes: self.max_file_size, max_output_bytes: self.max_output_size, max_steps: self.max_steps }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Render manifests from files and directories and print the final manifests
    Render(RenderArgs),
    /// Explain every decision of a render: values and where they came from, features on and off
    /// and why, components, imports, patches, substitutions
    Explain(ExplainArgs),
    /// Print the kustomization dependency graph (Mermaid, or DOT with --format dot)
    Graph(GraphArgs),
    /// Print the JSON Schema of the RenderBlueprint kind
    Schema,
}

/// What to render: the same for `render`, `explain` and `graph`.
#[derive(Args)]
struct InputArgs {
    /// Files and directories to read (directories recursively: *.yaml, *.yml)
    #[arg(value_name = "PATH", default_value = ".")]
    paths: Vec<PathBuf>,
    /// The functionConfig (RenderBlueprint or ConfigMap) [default: the RenderBlueprint among the inputs]
    #[arg(short = 'c', long = "config", value_name = "CONFIG")]
    config: Option<PathBuf>,
    /// A YAML file of values, merged over the config's values (repeatable; later wins)
    #[arg(short = 'f', long = "values", value_name = "FILE")]
    values: Vec<PathBuf>,
    /// Set one value: a.b.c=value, parsed as a YAML scalar (repeatable; applied after -f)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

#[derive(Args)]
struct RenderArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Yaml)]
    output: OutputFormat,
    /// Keep items marked config.kubernetes.io/local-config in the output
    #[arg(long)]
    keep_local_config: bool,
}

#[derive(Args)]
struct ExplainArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print secret values (password imports and config items, values from Secrets) instead of <redacted>
    #[arg(long)]
    show_secrets: bool,
}

#[derive(Args)]
struct GraphArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Graph language
    #[arg(long, value_enum, default_value_t = GraphLanguage::Mermaid)]
    format: GraphLanguage,
}

#[derive(Clone, Copy, ValueEnum)]
enum GraphLanguage {
    Mermaid,
    Dot,
}

#[derive(Clone, Copy, ValueEnum)]
enum OutputFormat {
    Yaml,
    Json,
}

/// How a run ends. Every exit code is decided here.
enum Exit {
    Ok,
    /// Error results were reported (exit 1).
    Errors,
    /// The input could not be used at all (exit 2); the message is printed once.
    Unusable(String),
}

impl Exit {
    fn code(self) -> ExitCode {
        match self {
            Exit::Ok => ExitCode::SUCCESS,
            Exit::Errors => ExitCode::from(1),
            Exit::Unusable(message) => {
                eprint_line(&format!("error: {message}"));
                ExitCode::from(2)
            }
        }
    }

    fn from_results(results: &[Diagnostic]) -> Self {
        if results.iter().any(Diagnostic::is_error) {
            Exit::Errors
        } else {
            Exit::Ok
        }
    }
}

pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == JSONNET_WORKER) {
        return jsonnet_worker().code();
    }
    if let Some(config_file) = legacy_plugin_config(&args) {
        return legacy_plugin(&config_file).code();
    }
    let cli = Cli::parse();
    let limits = cli.limits.limits();
    let exit = match cli.command {
        None => krm(cli.root, limits),
        Some(Command::Render(args)) => render(args, cli.root, limits),
        Some(Command::Explain(args)) => {
            report(&args.input, cli.root, limits, |output| explain::explain(output, args.show_secrets))
        }
        Some(Command::Graph(args)) => {
            let format = match args.format {
                GraphLanguage::Mermaid => explain::GraphFormat::Mermaid,
                GraphLanguage::Dot => explain::GraphFormat::Dot,
            };
            report(&args.input, cli.root, limits, |output| explain::graph(output, format))
        }
        Some(Command::Schema) => {
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&config::json_schema()).unwrap_or_default()))
        }
    };
    exit.code()
}

// A standard output closed at start (`>&-`) is not detected: Rust's runtime puts /dev/null in its
// place, opened read-write, exactly as Python's `subprocess.DEVNULL` and Go's `os/exec` open it
// for a caller who discards the output on purpose, so the two cannot be told apart.

fn write_stdout(text: &str) -> Exit {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        Ok(()) => Exit::Ok,
        // Any failure, a closed pipe included: a truncated package is never a success.
        Err(err) => Exit::Unusable(format!("cannot write output: {err}")),
    }
}

/// Every line on stderr goes through here: text from the input may hold terminal escapes.
fn eprint_line(text: &str) {
    eprintln!("{}", crate::diag::escape_controls(text));
}

/// Prints warnings and errors on stderr. With package files (render, explain, graph) each one
/// about a file gets the line and column of its field, found by reading that file again; only
/// reported problems pay for it. Only files this run read are reopened: the path comes from the
/// item's own annotation, which the input controls.
fn report_results(results: &[Diagnostic], files: Option<&DiskFiles>) {
    let mut texts: HashMap<String, Option<String>> = HashMap::new();
    for diagnostic in results.iter().filter(|d| d.severity >= crate::diag::Severity::Warning) {
        let position = match (files, &diagnostic.location.path, diagnostic.location.line) {
            (Some(files), Some(path), None) if files.was_read(path) => {
                let text = texts.entry(path.clone()).or_insert_with(|| files.read(path).ok());
                let index = usize::try_from(diagnostic.location.index.unwrap_or(0)).unwrap_or(usize::MAX);
                let field = diagnostic.field.clone().unwrap_or_default();
                text.as_deref().and_then(|text| crate::doc::locate(text, index, &field))
            }
            _ => None,
        };
        match position {
            Some(at) => eprint_line(&diagnostic.clone().at_position(Some(at.line), Some(at.column)).to_string()),
            None => eprint_line(&diagnostic.to_string()),
        }
    }
}

/// The hidden first argument that makes the binary a Jsonnet worker (see [`jsonnet_isolate`]).
const JSONNET_WORKER: &str = "__jsonnet-worker";

/// Runs each `jsonnet()` evaluation in a child process of this binary, limited to
/// [`jsonnet::MEMORY_LIMIT`] of address space and killed when the render's time runs out:
/// jrsonnet cannot be interrupted or limited in memory from inside the process, and an abandoned
/// thread would go on allocating. The child reads the package through the same root and limits.
fn jsonnet_isolate(root: PathBuf, max_file_bytes: u64, max_output_bytes: u64) -> jsonnet::Isolate {
    use jsonnet::Stopped;
    Arc::new(move |path: &str, values: &Value, time_left: Duration| {
        // A root that is not UTF-8 cannot travel in JSON: evaluate here instead.
        let root = root.to_str().ok_or(Stopped::Unavailable)?;
        // Without the binary to start (a bare chroot has no /proc), the evaluation runs here.
        let exe = std::env::current_exe().map_err(|_| Stopped::Unavailable)?;
        let mut child = std::process::Command::new(exe)
            .arg(JSONNET_WORKER)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|_| Stopped::Unavailable)?;
        let request = json!({"root": root, "maxFileBytes": max_file_bytes, "path": path, "values": values});
        if let Some(mut stdin) = child.stdin.take() {
            // A worker that already died says why below.
            let _ = stdin.write_all(request.to_string().as_bytes());
        }
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Stopped::Failed(format!("jsonnet {path:?}: cannot talk to the evaluation")));
        };
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        std::thread::spawn(move || {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            // Output beyond the budget is refused anyway: read one byte more to know it was exceeded.
            let _ = stdout.take(max_output_bytes.saturating_add(1)).read_to_end(&mut out);
            let _ = stderr.take(1 << 16).read_to_end(&mut err);
            let _ = sender.send((out, err));
        });
        let Ok((out, err)) = receiver.recv_timeout(time_left) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Stopped::TimedOut);
        };
        let _ = child.wait();
        if String::from_utf8_lossy(&err).contains("memory allocation") {
            return Err(Stopped::OutOfMemory);
        }
        match crate::doc::from_own_json(&String::from_utf8_lossy(&out)) {
            Ok(Value::Object(mut answer)) => match (answer.remove("value"), answer.remove("error")) {
                (Some(value), None) => Ok(value),
                (_, Some(Value::String(message))) => Err(Stopped::Failed(message)),
                _ => Err(Stopped::Failed(format!("jsonnet {path:?}: the evaluation gave no answer"))),
            },
            _ if out.len() as u64 > max_output_bytes => Err(Stopped::Failed(format!(
                "jsonnet {path:?}: the result is larger than {} (--max-output-size)",
                crate::limits::human_bytes(max_output_bytes)
            ))),
            _ => Err(Stopped::Failed(format!("jsonnet {path:?}: the evaluation stopped abruptly"))),
        }
    })
}

/// The child side of [`jsonnet_isolate`]: one request on stdin, one answer on stdout.
fn jsonnet_worker() -> Exit {
    // Address space rather than resident memory: the kernel enforces it on every allocation.
    let limit = jsonnet::MEMORY_LIMIT;
    if let Err(err) = rlimit::setrlimit(rlimit::Resource::AS, limit, limit) {
        return Exit::Unusable(format!("cannot limit the Jsonnet worker's memory: {err}"));
    }
    let mut text = String::new();
    if let Err(err) = std::io::stdin().read_to_string(&mut text) {
        return Exit::Unusable(format!("cannot read the Jsonnet request: {err}"));
    }
    let request: Value = match serde_json::from_str(&text) {
        Ok(request) => request,
        Err(err) => return Exit::Unusable(format!("the Jsonnet request is not JSON: {err}")),
    };
    let root = PathBuf::from(request["root"].as_str().unwrap_or("."));
    let files = DiskFiles::new(&root, request["maxFileBytes"].as_u64().unwrap_or(Limits::default().max_file_bytes));
    let path = request["path"].as_str().unwrap_or_default();
    let answer = match jsonnet::evaluate_unbounded(&files, path, &request["values"]) {
        Ok(value) => json!({ "value": value }),
        Err(message) => json!({ "error": message }),
    };
    write_stdout(&answer.to_string())
}

fn root_or_cwd(root: Option<PathBuf>) -> PathBuf {
    root.unwrap_or_else(|| PathBuf::from("."))
}

/// KRM mode: ResourceList in, ResourceList out.
fn krm(root: Option<PathBuf>, limits: Limits) -> Exit {
    let mut bytes = Vec::new();
    if let Err(err) = std::io::stdin().lock().read_to_end(&mut bytes) {
        return Exit::Unusable(format!("cannot read stdin: {err}"));
    }
    // Shared by the items no step changes, which are written back from it (no copy).
    if let Err(err) = crate::krm::utf8(&bytes) {
        return Exit::Unusable(err.to_string());
    }
    bytes.shrink_to_fit();
    let text = Arc::new(String::from_utf8(bytes).unwrap_or_default());
    let mut list = match ResourceList::parse_shared(&text, limits.max_file_bytes) {
        Ok(list) => list,
        Err(err) => return Exit::Unusable(err.to_string()),
    };
    let root = root_or_cwd(root);
    let files = DiskFiles::new(&root, limits.max_file_bytes);
    let styles = match list.format {
        // JSON strings are all quoted.
        crate::krm::Format::Json => SourceStyles::all_quoted(),
        crate::krm::Format::Yaml => SourceStyles {
            texts: vec![Source::Shared(text.clone())],
            items: vec![(0, 0); list.items.len()],
            resource_list: true,
            ..Default::default()
        },
    };
    let input = Input {
        items: std::mem::take(&mut list.items),
        function_config: list.function_config.take(),
        value_overrides: vec![],
        styles: Some(Box::new(styles)),
        jsonnet: Some(jsonnet_isolate(root, limits.max_file_bytes, limits.max_output_bytes)),
        limits,
    };
    let output = pipeline::render(input, &files);
    report_results(&output.results, None);
    let results: Vec<Value> = output.results.iter().map(Diagnostic::to_result).collect();
    let exit = Exit::from_results(&output.results);
    // A failed render writes the input items back unchanged. Parsing stdin again (only on this
    // path) is cheaper than keeping a copy of every item on the path that succeeds.
    let items = match output.items {
        Some(items) => items,
        None => match ResourceList::parse_shared(&text, limits.max_file_bytes) {
            Ok(original) => original.items,
            // The same bytes parsed a moment ago; never write an empty package instead.
            Err(err) => return Exit::Unusable(err.to_string()),
        },
    };
    match write_with(|out| list.write_to(out, items, results)) {
        Exit::Ok => exit,
        failure => failure,
    }
}

/// Writes through a buffered stdout, item by item, without building the whole text first.
fn write_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Exit {
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write(&mut stdout).and_then(|_| stdout.flush()) {
        Ok(()) => Exit::Ok,
        // Any failure, a closed pipe included: a truncated package is never a success.
        Err(err) => Exit::Unusable(format!("cannot write output: {err}")),
    }
}

/// A YAML stream, one document at a time.
/// A stream of documents: each item no step changed as it was written, the others emitted.
fn write_stream(out: &mut dyn Write, items: impl Iterator<Item = Item>) -> std::io::Result<()> {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.write_all(b"---\n")?;
        }
        match item.unchanged_source() {
            // A document is its own copy at column 0.
            Some((source, 0)) => out.write_all(source.as_bytes())?,
            _ => out.write_all(item.changed_yaml(None).as_bytes())?,
        }
    }
    Ok(())
}

/// The directory a PATH stands for: itself, or a file's directory (`.` for a bare file name).
fn directory_of(path: &Path) -> PathBuf {
    let dir = if path.is_dir() { Some(path) } else { path.parent() };
    match dir {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Reads `PATH…`, `-c`, `-f` and `--set` into a pipeline input, and the package's files. The
/// root is `--root`, else the directory of `-c`, else the first PATH's directory (the PATH itself
/// for a directory): never wider than a directory the user named.
fn load_inputs(args: &InputArgs, root: Option<PathBuf>, limits: Limits) -> Result<(Input, DiskFiles), Exit> {
    let root = root
        .or_else(|| args.config.as_deref().map(directory_of))
        .or_else(|| args.paths.first().map(|p| directory_of(p)))
        .unwrap_or_else(|| PathBuf::from("."));
    let root = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root };
    let files = DiskFiles::new(&root, limits.max_file_bytes);
    let limit = limits.max_file_bytes;
    let mut walk = Walk { root: root.clone(), limit, files: &files, visited: HashSet::new(), within: PathBuf::new() };
    let mut items = Vec::new();
    let mut styles = SourceStyles::default();
    for path in &args.paths {
        walk.within = containment(path, &root);
        walk.read_manifests(path, 0, &mut items, &mut styles).map_err(Exit::Unusable)?;
    }
    let function_config = match &args.config {
        None => None,
        Some(path) => {
            let mut config = read_single_document(path, limit).map_err(Exit::Unusable)?;
            // Relative paths in the config resolve from its own file.
            let package_path = package_path(path, &root);
            files.note(&package_path);
            tag_location(&mut config, &package_path, 0);
            Some(config)
        }
    };
    let mut value_overrides = Vec::new();
    for path in &args.values {
        match read_single_document(path, limit).map_err(Exit::Unusable)? {
            map @ Value::Object(_) => value_overrides.push((format!("-f {}", path.display()), map)),
            _ => return Err(Exit::Unusable(format!("{}: values must be a YAML mapping", path.display()))),
        }
    }
    for assignment in &args.set {
        value_overrides.push(("--set".to_string(), set_layer(assignment).map_err(Exit::Unusable)?));
    }
    let jsonnet = Some(jsonnet_isolate(root, limits.max_file_bytes, limits.max_output_bytes));
    Ok((Input { items, function_config, value_overrides, styles: Some(Box::new(styles)), limits, jsonnet }, files))
}

/// `render-blueprint render PATH…`: manifests from files, the final manifests on stdout.
fn render(args: RenderArgs, root: Option<PathBuf>, limits: Limits) -> Exit {
    let (input, files) = match load_inputs(&args.input, root, limits) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let output = pipeline::render(input, &files);
    report_results(&output.results, Some(&files));
    let Some(items) = output.items else {
        // The CLI prints nothing rather than a package that is missing its failed parts.
        return Exit::Errors;
    };
    // One item at a time is cleaned and written; only its header is built for that.
    let items =
        items.into_iter().filter(|item| args.keep_local_config || !is_local_config(item.header())).map(|mut item| {
            let header = std::mem::take(item.header_mut());
            *item.header_mut() = strip_build_annotations(header);
            item
        });
    match args.output {
        OutputFormat::Yaml => write_with(|out| write_stream(out, items)),
        OutputFormat::Json => {
            let items: Vec<Value> = items.map(Item::into_value).collect();
            let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&list).unwrap_or_default()))
        }
    }
}

/// `explain` and `graph`: a report of the render on stdout, even when the render failed (a
/// report of a dependency cycle is most useful then); problems on stderr as usual.
fn report(
    args: &InputArgs,
    root: Option<PathBuf>,
    limits: Limits,
    format: impl Fn(&pipeline::Output) -> String,
) -> Exit {
    let (input, files) = match load_inputs(args, root, limits) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let output = pipeline::render(input, &files);
    report_results(&output.results, Some(&files));
    match write_stdout(&format(&output)) {
        Exit::Ok => Exit::from_results(&output.results),
        failure => failure,
    }
}

/// `--set a.b=c` as a values layer `{a: {b: c}}`.
fn set_layer(assignment: &str) -> Result<Value, String> {
    let (key, value) = assignment
        .split_once('=')
        .ok_or_else(|| format!("--set {assignment:?}: expected KEY=VALUE, e.g. --set replicas=3"))?;
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(format!("--set {assignment:?}: the key must be a dotted path such as a.b.c"));
    }
    crate::values::assignment_layer(key, value).map_err(|err| format!("--set {:?}: {err}", truncate(key, 40)))
}

/// The first `max` characters of `text`, with `…` when cut: hostile keys are long.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Removes the file-tracking annotations kpt and kustomize add while a package is in flight,
/// as `kpt fn sink` and kustomize's build do before writing manifests out.
fn strip_build_annotations(mut item: Value) -> Value {
    let Some(metadata) = item.get_mut("metadata").and_then(Value::as_object_mut) else {
        return item;
    };
    if let Some(annotations) = metadata.get_mut("annotations").and_then(Value::as_object_mut) {
        annotations.retain(|key, _| {
            !key.starts_with("internal.config.kubernetes.io/") && key != ann::LEGACY_PATH && key != ann::LEGACY_INDEX
        });
        if annotations.is_empty() {
            metadata.shift_remove("annotations");
        }
    }
    if metadata.is_empty() {
        // The reader added metadata only to tag the file; a manifest without it stays so.
        if let Some(object) = item.as_object_mut() {
            object.shift_remove("metadata");
        }
    }
    item
}

/// The source texts items were read from, scanned for scalar styles only when substitution asks,
/// and then once per text.
#[derive(Default)]
struct SourceStyles {
    texts: Vec<Source>,
    /// Per input item: its text and its document in that text.
    items: Vec<(usize, usize)>,
    /// KRM mode: one ResourceList document, items under `/items/<i>`.
    resource_list: bool,
    all_quoted: bool,
    scanned: HashMap<usize, Vec<HashSet<String>>>,
}

/// Where a source text is, read again only if substitution asks about a style: render mode
/// re-reads the file, KRM mode shares stdin's bytes, so no copy is kept alive.
enum Source {
    Shared(Arc<String>),
    /// A file the command line read, and the file-size limit it was read with.
    File(PathBuf, u64),
    Text(String),
}

impl Source {
    fn scan(&self) -> Vec<HashSet<String>> {
        match self {
            Source::Shared(text) => quoted_template_scalars(text),
            Source::File(path, limit) => {
                read_regular_file(path, *limit).map(|t| quoted_template_scalars(&t)).unwrap_or_default()
            }
            Source::Text(text) => quoted_template_scalars(text),
        }
    }
}

impl SourceStyles {
    fn all_quoted() -> Self {
        Self { all_quoted: true, ..Default::default() }
    }
}

impl ScalarStyles for SourceStyles {
    fn is_quoted(&mut self, item: usize, pointer: &str) -> bool {
        if self.all_quoted {
            return true;
        }
        let Some(&(text, document)) = self.items.get(item) else { return false };
        let texts = &self.texts;
        let documents =
            self.scanned.entry(text).or_insert_with(|| texts.get(text).map(Source::scan).unwrap_or_default());
        if self.resource_list {
            documents.first().is_some_and(|d| d.contains(&format!("/items/{item}{pointer}")))
        } else {
            documents.get(document).is_some_and(|d| d.contains(pointer))
        }
    }
}

/// The directory walk of `PATH…`: symlinks may not lead out of `within` (the root, or a PATH
/// outside it), and each real directory is read once, so `loop -> .` neither repeats manifests
/// nor runs forever.
struct Walk<'a> {
    root: PathBuf,
    limit: u64,
    files: &'a DiskFiles,
    /// Canonical directories already read.
    visited: HashSet<PathBuf>,
    /// The canonical directory symlinks found by the walk must stay in.
    within: PathBuf,
}

/// The boundary for a named PATH: the root when the PATH is inside it, else the PATH itself.
fn containment(path: &Path, root: &Path) -> PathBuf {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    match path.canonicalize() {
        Ok(real) if real.starts_with(&root) => root,
        Ok(real) if real.is_dir() => real,
        Ok(real) => real.parent().map_or(root, Path::to_path_buf),
        Err(_) => root,
    }
}

impl Walk<'_> {
    /// Reads one file or a directory tree of manifests, tagging each item with its package path.
    fn read_manifests(
        &mut self,
        path: &Path,
        depth: usize,
        items: &mut Vec<Item>,
        styles: &mut SourceStyles,
    ) -> Result<(), String> {
        let meta = std::fs::metadata(path).map_err(|err| format!("{}: {err}", path.display()))?;
        if !meta.is_dir() {
            return self.read_file(path, items, styles);
        }
        if depth > crate::limits::MAX_DEPTH {
            return Err(format!(
                "{}: directories nest deeper than {} levels: pass a directory nearer the manifests",
                path.display(),
                crate::limits::MAX_DEPTH
            ));
        }
        let real = path.canonicalize().map_err(|err| format!("{}: {err}", path.display()))?;
        if !self.visited.insert(real) {
            // A second way into a directory already read (a `loop -> .` symlink).
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|err| format!("{}: {err}", path.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        entries.sort();
        for entry in entries {
            let is_manifest = entry.extension().is_some_and(|ext| ext == "yaml" || ext == "yml");
            let is_link = std::fs::symlink_metadata(&entry).is_ok_and(|m| m.file_type().is_symlink());
            if is_link {
                match entry.canonicalize() {
                    Ok(target) if target.starts_with(&self.within) => {}
                    // A dangling link names nothing to read.
                    Err(_) if !is_manifest => continue,
                    _ => {
                        return Err(format!(
                            "{}: a symbolic link that leads out of the package: remove it, or pass --root with a \
                             directory that holds its target",
                            entry.display()
                        ))
                    }
                }
            }
            if entry.is_dir() || is_manifest {
                self.read_manifests(&entry, depth + 1, items, styles)?;
            }
        }
        Ok(())
    }

    fn read_file(&mut self, path: &Path, items: &mut Vec<Item>, styles: &mut SourceStyles) -> Result<(), String> {
        let text = read_regular_file(path, self.limit).map_err(|err| format!("{}: {err}", path.display()))?;
        let documents = crate::doc::read_yaml_documents_with_starts(&text).map_err(|err| yaml_error(path, &err))?;
        let package_path = package_path(path, &self.root);
        self.files.note(&package_path);
        styles.texts.push(Source::File(path.to_path_buf(), self.limit));
        let text_index = styles.texts.len() - 1;
        let copyable = !crate::doc::declares_tag_handles(&text);
        for (index, (document, start)) in documents.into_iter().enumerate() {
            if !document.is_object() {
                let place = document_place(path, &text, index);
                return Err(format!("{place}: document {} is not a mapping (a Kubernetes object)", index + 1));
            }
            // A mapping with neither apiVersion nor kind is not a manifest: most often a values
            // file kept in the package for `valuesFrom`. It is read by the step that names it.
            if document.get("kind").is_none() && document.get("apiVersion").is_none() {
                continue;
            }
            let mut item = Item::from(document);
            // The document as written, for printing it unchanged (see `Item::set_source`).
            if let Some((start, 1)) = start.filter(|_| copyable) {
                let rest = text.get(start..).unwrap_or_default();
                let body = &rest[..crate::krm::document_marker(rest).unwrap_or(rest.len())];
                if let Some(source) = crate::krm::standalone_source(body, 0) {
                    item.set_source(source.into_boxed_str());
                }
            }
            tag_location(item.header_mut(), &package_path, index);
            items.push(item);
            styles.items.push((text_index, index));
        }
        Ok(())
    }
}

/// Reads a file that holds exactly one YAML mapping (`-c`, `-f`).
fn read_single_document(path: &Path, limit: u64) -> Result<Value, String> {
    let text = read_regular_file(path, limit).map_err(|err| format!("{}: {err}", path.display()))?;
    let mut documents = read_yaml_documents(&text).map_err(|err| yaml_error(path, &err))?;
    match (documents.len(), documents.first()) {
        (1, Some(Value::Object(_))) => Ok(documents.remove(0)),
        (1, _) => Err(format!("{}: expected a YAML mapping", document_place(path, &text, 0))),
        (n, _) => Err(format!("{}: expected one YAML document, found {n}", path.display())),
    }
}

fn yaml_error(path: &Path, err: &crate::doc::YamlError) -> String {
    yaml_error_in(&path.display().to_string(), err)
}

/// `place:line:column: not valid YAML: …`, the way compilers name a position.
fn yaml_error_in(place: &str, err: &crate::doc::YamlError) -> String {
    let position = err.line.map(|l| format!(":{l}:{}", err.column.unwrap_or(1))).unwrap_or_default();
    format!("{place}{position}: not valid YAML: {}", err.message)
}

/// `path:line:column` of a document's start, for problems with a whole document.
fn document_place(path: &Path, text: &str, index: usize) -> String {
    match crate::doc::locate(text, index, &crate::doc::FieldPath::root()) {
        Some(at) => format!("{}:{}:{}", path.display(), at.line, at.column),
        None => path.display().to_string(),
    }
}

fn tag_location(item: &mut Value, package_path: &str, index: usize) {
    if crate::krm::item_location(item).0.is_none() {
        set_annotation(item, ann::PATH, package_path);
        set_annotation(item, ann::LEGACY_PATH, package_path);
        set_annotation(item, ann::INDEX, &index.to_string());
        set_annotation(item, ann::LEGACY_INDEX, &index.to_string());
    }
}

/// The path of a file relative to the package root, with forward slashes; a file outside the
/// root is reached with `..` (never an absolute path, which would differ between machines).
fn package_path(path: &Path, root: &Path) -> String {
    let relative = match (path.canonicalize(), root.canonicalize()) {
        (Ok(path), Ok(root)) => {
            let common = path.components().zip(root.components()).take_while(|(a, b)| a == b).count();
            let up = root.components().count() - common;
            let mut relative = PathBuf::new();
            for _ in 0..up {
                relative.push("..");
            }
            relative.extend(path.components().skip(common));
            relative
        }
        _ => path.to_path_buf(),
    };
    relative.to_string_lossy().replace('\\', "/")
}

/// Legacy kustomize exec plugin mode: `render-blueprint <config-file>` with
/// `KUSTOMIZE_PLUGIN_CONFIG_STRING` set (kustomize's execplugin.go). Returns the config file.
fn legacy_plugin_config(args: &[OsString]) -> Option<PathBuf> {
    std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_STRING")?;
    match args {
        [_, file, ..]
            if !file.to_string_lossy().starts_with('-')
                && !["render", "explain", "graph", "schema", "help"].contains(&file.to_string_lossy().as_ref()) =>
        {
            Some(PathBuf::from(file))
        }
        _ => None,
    }
}

/// Plain YAML items on stdin (empty for a generator), plain YAML items on stdout; errors on
/// stderr with a non-zero exit, which kustomize reports with our stderr.
fn legacy_plugin(config_file: &Path) -> Exit {
    let config_text = std::env::var("KUSTOMIZE_PLUGIN_CONFIG_STRING")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(Ok)
        .unwrap_or_else(|| read_regular_file(config_file, Limits::default().max_file_bytes));
    let config_text = match config_text {
        Ok(text) => text,
        Err(err) => return Exit::Unusable(format!("cannot read plugin config {}: {err}", config_file.display())),
    };
    let config = match read_yaml_documents(&config_text) {
        Ok(mut docs) if docs.len() == 1 && docs[0].is_object() => docs.remove(0),
        Ok(_) => return Exit::Unusable("plugin config must be one YAML mapping".into()),
        Err(err) => return Exit::Unusable(yaml_error_in("plugin config", &err)),
    };
    let mut text = String::new();
    if let Err(err) = std::io::stdin().lock().read_to_string(&mut text) {
        return Exit::Unusable(format!("cannot read stdin: {err}"));
    }
    let items = match read_yaml_documents(&text) {
        Ok(items) if items.iter().all(Value::is_object) => items,
        Ok(_) => return Exit::Unusable("stdin holds a document that is not a mapping".into()),
        Err(err) => return Exit::Unusable(yaml_error_in("stdin", &err)),
    };
    let root = std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT").map(PathBuf::from);
    let root = root_or_cwd(root);
    let files = DiskFiles::new(&root, Limits::default().max_file_bytes);
    let styles = SourceStyles {
        items: (0..items.len()).map(|i| (0, i)).collect(),
        texts: vec![Source::Text(text)],
        ..Default::default()
    };
    let items = items.into_iter().map(Item::from).collect();
    let input = Input {
        items,
        function_config: Some(config),
        value_overrides: vec![],
        styles: Some(Box::new(styles)),
        limits: Limits::default(),
        jsonnet: Some(jsonnet_isolate(root, Limits::default().max_file_bytes, Limits::default().max_output_bytes)),
    };
    let output = pipeline::render(input, &files);
    report_results(&output.results, None);
    match output.items {
        Some(items) => write_with(|out| write_stream(out, items.into_iter())),
        None => Exit::Errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_builds_nested_layers() {
        assert_eq!(set_layer("a.b=3"), Ok(json!({"a": {"b": 3}})));
        assert_eq!(set_layer("flag=on"), Ok(json!({"flag": "on"})));
        assert!(set_layer("novalue").is_err());
        assert!(set_layer("a..b=1").is_err());
    }

    #[test]
    fn build_annotations_are_stripped_from_final_manifests() {
        let item = json!({"metadata": {"name": "a", "annotations": {ann::PATH: "a.yaml", ann::LEGACY_INDEX: "0"}}});
        assert_eq!(strip_build_annotations(item), json!({"metadata": {"name": "a"}}));
    }
}
