//! The command line: the only place that reads stdin, writes stdout/stderr, touches files and
//! reads the environment. It turns arguments into a [`crate::pipeline::Input`] (built in one
//! place: `input::Package::input`), runs the pipeline and decides the exit code (0 clean, 1 error
//! results, 2 unusable input) in one place: [`Exit`]. This file holds the arguments, the exit
//! codes and the dispatch; each way of running the binary has a file of its own.

mod cleanup;
mod commands;
mod diff;
mod flux_build;
mod input;
mod jsonnet_worker;
mod krm_mode;
mod legacy_plugin;
mod manifests;
mod output;

use crate::diag::Diagnostic;
use crate::limits::Limits;
use crate::{config, explain, help};
use clap::{Args, Parser, Subcommand, ValueEnum};
use output::{eprint_line, write_stdout};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

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

/// The operator's limits (see docs/security.md): flags or environment variables, never package
/// content, set them. The variables reach the legacy exec plugin, which kustomize runs with no
/// flags of ours.
#[derive(Args, Clone)]
struct LimitArgs {
    /// Largest file a blueprint may read, and longest string in input or output (e.g. 8Mi)
    #[arg(long, global = true, value_name = "SIZE", default_value = "8Mi", value_parser = crate::limits::parse_size, env = "RENDER_BLUEPRINT_MAX_FILE_SIZE")]
    max_file_size: u64,
    /// Output that templates, expressions, substitution, Jsonnet, patches and clones may produce in one render
    #[arg(long, global = true, value_name = "SIZE", default_value = "256Mi", value_parser = crate::limits::parse_size, env = "RENDER_BLUEPRINT_MAX_OUTPUT_SIZE")]
    max_output_size: u64,
    /// Evaluation steps in one render (loop rounds, expression nodes, patch operations, ...)
    #[arg(long, global = true, value_name = "N", default_value_t = crate::limits::Limits::default().max_steps, env = "RENDER_BLUEPRINT_MAX_STEPS")]
    max_steps: u64,
    /// Bytes read from stdin in KRM mode and as a kustomize exec plugin (at most 256Mi)
    #[arg(long, global = true, value_name = "SIZE", default_value = "256Mi", value_parser = crate::limits::parse_input_size, env = "RENDER_BLUEPRINT_MAX_INPUT_SIZE")]
    max_input_size: u64,
    /// CPU time all jsonnet() evaluations of one render may spend together (e.g. 10s, 2m)
    #[arg(long, global = true, value_name = "TIME", default_value = "10s", value_parser = crate::limits::parse_cpu_time, env = "RENDER_BLUEPRINT_MAX_JSONNET_CPU")]
    max_jsonnet_cpu: std::time::Duration,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits {
            max_file_bytes: self.max_file_size,
            max_output_bytes: self.max_output_size,
            max_steps: self.max_steps,
            max_input_bytes: self.max_input_size,
            jsonnet_cpu: self.max_jsonnet_cpu,
        }
    }
}

/// The limits from the environment alone, for the legacy exec plugin (no flags of ours).
#[derive(Parser)]
#[command(name = "render-blueprint")]
struct EnvLimits {
    #[command(flatten)]
    limits: LimitArgs,
}

/// The limits `RENDER_BLUEPRINT_MAX_*` set, else the defaults; a variable that does not parse
/// is an error saying which.
fn limits_from_env() -> Result<Limits, String> {
    EnvLimits::try_parse_from(["render-blueprint"])
        .map(|parsed| parsed.limits.limits())
        .map_err(|err| err.to_string().trim().trim_start_matches("error: ").to_string())
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
    /// Render, then build every Flux Kustomization of the result as kustomize-controller would
    /// (real kustomize, post-build substitution, Flux's labels) and print the objects Flux would
    /// apply
    FluxBuild(FluxBuildArgs),
    /// Render two inputs (or one as of a git revision and now) and print what differs, resource by
    /// resource and field by field; exit 0 when nothing does, 1 when something does
    Diff(Box<DiffArgs>),
    /// Print the JSON Schema of the RenderBlueprint kind
    Schema,
}

/// What to render: the same for `render`, `explain` and `graph`.
#[derive(Args)]
struct InputArgs {
    /// Files and directories to read (directories recursively: *.yaml, *.yml)
    #[arg(value_name = "PATH", default_value = ".")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    layers: Layers,
}

/// The functionConfig and the values given on the command line: the same for every input of a
/// command (`diff` renders two with them).
#[derive(Args, Clone)]
struct Layers {
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
struct FluxBuildArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Where a Kustomization's source is on this machine: a checkout of the repository or an
    /// unpacked artifact (repeatable; KIND and NAMESPACE narrow the match, the last match wins).
    /// Inside a git work tree, GitRepository/flux-system/flux-system defaults to the checkout
    #[arg(long = "source", value_name = "[KIND/][NAMESPACE/]NAME=DIR")]
    sources: Vec<String>,
    /// Build the Kustomizations whose source is given and warn about each other one
    #[arg(long)]
    skip_missing_sources: bool,
    /// Build this Kustomization only (one that a build gives: build all, print its objects only)
    #[arg(long, value_name = "[NAMESPACE/]NAME")]
    kustomization: Option<String>,
    /// Write one file per Kustomization (NAMESPACE_NAME.yaml) into DIR instead of stdout
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Print Secret values instead of <redacted>
    #[arg(long)]
    show_secrets: bool,
    /// A variable no source sets, used without a default, fails the build, as kustomize-controller
    /// v1.9.0 and later do (StrictPostBuildSubstitutions, on by default); =false for older controllers
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          require_equals = true, action = clap::ArgAction::Set)]
    strict_substitutions: bool,
    /// Most Kustomizations one run builds (each a kustomize run); more are refused before any build
    #[arg(long, value_name = "N", default_value_t = flux_build::DEFAULT_MAX_BUILDS)]
    max_builds: usize,
    /// How many rounds deep Kustomizations that builds give are built in turn (a build that gives
    /// a Kustomization that gives one is two)
    #[arg(long, value_name = "N", default_value_t = flux_build::DEFAULT_MAX_NESTING)]
    max_nesting: usize,
}

#[derive(Args)]
struct DiffArgs {
    /// The inputs to compare, A then B (packages, files or directories); one with --git
    #[arg(value_name = "PATH", required = true, num_args = 1..=2)]
    paths: Vec<PathBuf>,
    /// Compare PATH as of this git revision (read with git, and with --flux each --source
    /// directory inside the repository too; the working tree is not touched) with PATH as it is
    #[arg(long, value_name = "REV")]
    git: Option<String>,
    /// The functionConfig and values of both renders
    #[command(flatten)]
    layers: Layers,
    /// Compare what flux-build gives (with the --source flags) instead of what render gives
    #[arg(long)]
    flux: bool,
    /// With --flux: where a Kustomization's source is on this machine (as flux-build)
    #[arg(long = "source", value_name = "[KIND/][NAMESPACE/]NAME=DIR")]
    sources: Vec<String>,
    /// With --flux: build the Kustomizations whose source is given, warn about the others
    #[arg(long)]
    skip_missing_sources: bool,
    /// With --flux: a variable no source sets fails the build (as flux-build: on unless =false)
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1, default_missing_value = "true",
          require_equals = true, action = clap::ArgAction::Set)]
    strict_substitutions: bool,
    /// With --flux: most Kustomizations each side builds (each a kustomize run); more are refused
    /// before any build
    #[arg(long, value_name = "N", default_value_t = flux_build::DEFAULT_MAX_BUILDS)]
    max_builds: usize,
    /// Print Secret values instead of <redacted>
    #[arg(long)]
    show_secrets: bool,
    /// Most lines (both sides together) of a changed multi-line string diffed line by line; a
    /// longer one is shown whole, before and after
    #[arg(long, value_name = "N", default_value_t = crate::diff::MAX_LINE_DIFF_LINES)]
    max_diff_lines: usize,
    /// Output format: text (dyff's layout), brief (a line per resource), github (a GitHub
    /// Actions annotation per resource), json
    #[arg(short = 'o', long = "output", value_enum, default_value_t = DiffFormat::Text)]
    output: DiffFormat,
    #[command(flatten)]
    diff: diff::DiffOptions,
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    Text,
    Brief,
    Github,
    Json,
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
    if args.get(1).is_some_and(|arg| arg == jsonnet_worker::JSONNET_WORKER) {
        return jsonnet_worker::run(args.get(2).map(OsString::as_os_str)).code();
    }
    if let Some(config_file) = legacy_plugin::config_file(&args) {
        return legacy_plugin::run(&config_file).code();
    }
    let cli = Cli::parse();
    let limits = cli.limits.limits();
    let exit = match cli.command {
        None => krm_mode::run(cli.root, limits),
        Some(Command::Render(args)) => commands::render(args, cli.root, limits),
        Some(Command::Explain(args)) => {
            commands::report(&args.input, cli.root, limits, |output| explain::explain(output, args.show_secrets))
        }
        Some(Command::Graph(args)) => {
            let format = match args.format {
                GraphLanguage::Mermaid => explain::GraphFormat::Mermaid,
                GraphLanguage::Dot => explain::GraphFormat::Dot,
            };
            commands::report(&args.input, cli.root, limits, |output| explain::graph(output, format))
        }
        Some(Command::FluxBuild(args)) => flux_build::run(args, cli.root, limits),
        Some(Command::Diff(args)) => diff::run(*args, cli.root, limits),
        Some(Command::Schema) => {
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&config::json_schema()).unwrap_or_default()))
        }
    };
    exit.code()
}
