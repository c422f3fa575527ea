//! `render-blueprint diff A B`: renders two inputs (or one as of a git revision and as it is now)
//! and prints what differs, resource by resource ([`crate::diff`]). Exit codes as `diff(1)`: 0 the
//! same, 1 different, 2 unusable input (a render that fails included).

use super::commands::final_items;
use super::flux_build;
use super::input::from_paths;
use super::output::{eprint_line, report_results, write_stdout};
use super::{DiffArgs, DiffFormat, Exit, InputArgs, Layers};
use crate::diff::{self, Document, Filter};
use crate::fluxbuild::SourcePattern;
use crate::krm::{is_local_config, item_location, Item};
use crate::limits::Limits;
use crate::pipeline;
use clap::Args;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// `diff`'s own flags: what to compare and what to show.
#[derive(Args, Clone, Default)]
pub(super) struct DiffOptions {
    /// Compare the items marked config.kubernetes.io/local-config too (left out by default, as
    /// render leaves them out; the report says how many were)
    #[arg(long)]
    keep_local_config: bool,
    /// Show only resources and changes that match: kind=KIND, name=[NAMESPACE/]NAME (`*` matches
    /// any text) or path=FIELD.PATH (repeatable; a resource matching any kind/name rule, a change
    /// at or under any path)
    #[arg(long, value_name = "RULE")]
    include: Vec<String>,
    /// Leave out resources and changes that match: kind=KIND, name=[NAMESPACE/]NAME or
    /// path=FIELD.PATH (repeatable)
    #[arg(long, value_name = "RULE")]
    exclude: Vec<String>,
    /// The functionConfig of A (the revision's side with --git) only, in place of -c
    #[arg(long = "config-a", value_name = "CONFIG")]
    config_a: Option<PathBuf>,
    /// The functionConfig of B (the working tree with --git) only, in place of -c
    #[arg(long = "config-b", value_name = "CONFIG")]
    config_b: Option<PathBuf>,
    /// A YAML file of values for A only, merged over -f (repeatable; later wins)
    #[arg(long = "values-a", value_name = "FILE")]
    values_a: Vec<PathBuf>,
    /// A YAML file of values for B only, merged over -f (repeatable; later wins)
    #[arg(long = "values-b", value_name = "FILE")]
    values_b: Vec<PathBuf>,
    /// Set one value of A only: a.b.c=value, applied after --set (repeatable)
    #[arg(long = "set-a", value_name = "KEY=VALUE")]
    set_a: Vec<String>,
    /// Set one value of B only: a.b.c=value, applied after --set (repeatable)
    #[arg(long = "set-b", value_name = "KEY=VALUE")]
    set_b: Vec<String>,
    /// With --flux and two paths: a source of A only, after the --source flags (repeatable; the
    /// last match wins)
    #[arg(long = "source-a", value_name = "[KIND/][NAMESPACE/]NAME=DIR")]
    source_a: Vec<String>,
    /// With --flux and two paths: a source of B only, after the --source flags (repeatable)
    #[arg(long = "source-b", value_name = "[KIND/][NAMESPACE/]NAME=DIR")]
    source_b: Vec<String>,
}

impl DiffOptions {
    /// The functionConfig and values of one side: the shared flags, then the side's own.
    fn layers(&self, shared: &Layers, b: bool) -> Layers {
        let (config, values, set) = if b {
            (&self.config_b, &self.values_b, &self.set_b)
        } else {
            (&self.config_a, &self.values_a, &self.set_a)
        };
        let mut layers = shared.clone();
        if config.is_some() {
            layers.config.clone_from(config);
        }
        layers.values.extend(values.iter().cloned());
        layers.set.extend(set.iter().cloned());
        layers
    }
}

pub(super) fn run(args: DiffArgs, root: Option<PathBuf>, limits: Limits) -> Exit {
    if args.git.is_some() || args.flux {
        super::cleanup::on_signals_remove_temporaries();
    }
    let filter = match Filter::new(&args.diff.include, &args.diff.exclude) {
        Ok(filter) => filter,
        Err(message) => return Exit::Unusable(message),
    };
    let flux = |sources: &[String]| -> Result<Option<flux_build::Options>, Exit> {
        if !args.flux {
            return Ok(None);
        }
        let mut options =
            flux_build::Options::new(sources, args.skip_missing_sources, None, args.strict_substitutions)?;
        options.show_secrets = args.show_secrets;
        options.max_builds = args.max_builds;
        Ok(Some(options))
    };
    let layers = |b: bool| args.diff.layers(&args.layers, b);
    let per_side = !args.diff.source_a.is_empty() || !args.diff.source_b.is_empty();
    if per_side && (!args.flux || args.git.is_some()) {
        return Exit::Unusable(
            "--source-a and --source-b are for --flux with two paths (with --git, each --source inside the \
             repository is read at the revision on A's side): add --flux, or use --source"
                .to_string(),
        );
    }
    let side_sources = |own: &[String]| -> Vec<String> { args.sources.iter().chain(own).cloned().collect() };
    let mut new_flux = match flux(&side_sources(&args.diff.source_b)) {
        Ok(options) => options,
        Err(exit) => return exit,
    };
    let mut old_flux = match flux(&side_sources(&args.diff.source_a)) {
        Ok(options) => options,
        Err(exit) => return exit,
    };
    let side = |shown: String, path: PathBuf, root: Option<PathBuf>, b: bool, files_root: PathBuf| Side {
        shown,
        path,
        root,
        layers: args.diff.layers(&args.layers, b),
        files_root,
        lines: true,
    };
    match (&args.git, args.paths.as_slice()) {
        (None, [old, new]) => {
            let old_side = side(
                old.display().to_string(),
                old.clone(),
                root.clone(),
                false,
                side_root(&root, &layers(false), old),
            );
            let new_side =
                side(new.display().to_string(), new.clone(), root.clone(), true, side_root(&root, &layers(true), new));
            // Each side's flux-system source defaults to the git work tree it is in, as flux-build's.
            if let Some(options) = old_flux.as_mut() {
                options.sources.checkout = flux_build::work_tree_of(old);
            }
            if let Some(options) = new_flux.as_mut() {
                options.sources.checkout = flux_build::work_tree_of(new);
            }
            compare(&args, &filter, (old_side, new_side), (old_flux.as_ref(), new_flux.as_ref()), limits)
        }
        (Some(revision), [path]) => {
            let checkout = match checkout(revision, path, &args) {
                Ok(checkout) => checkout,
                Err(message) => return Exit::Unusable(message),
            };
            for warning in &checkout.warnings {
                eprint_line(&format!("warning: {warning}"));
            }
            let mut old_flux = match flux(&checkout.sources) {
                Ok(options) => options,
                Err(exit) => return exit,
            };
            if let (Some(options), true) = (old_flux.as_mut(), checkout.whole) {
                options.sources.checkout = Some(checkout.copy.clone());
                options.checkout_shown = Some(format!("{} as of {revision}", checkout.top.display()));
            }
            if let (Some(options), true) = (new_flux.as_mut(), checkout.whole) {
                options.sources.checkout = Some(checkout.top.clone());
            }
            let files_root = side_root(&root, &layers(true), path);
            let mut old = side(
                format!("{} as of {revision}", path.display()),
                checkout.here.join(path),
                root.as_deref().map(|root| match inside(&checkout.top, root) {
                    Some(relative) => checkout.copy.join(relative),
                    None => checkout.here.clone(),
                }),
                false,
                files_root.clone(),
            );
            // The revision's lines are not the working tree's: its annotations name no line.
            old.lines = false;
            let new = side(path.display().to_string(), path.clone(), root, true, files_root);
            let result = compare(&args, &filter, (old, new), (old_flux.as_ref(), new_flux.as_ref()), limits);
            drop(checkout);
            result
        }
        (None, _) => Exit::Unusable("diff compares two inputs: give A and B, or one with --git REV".into()),
        (Some(_), _) => Exit::Unusable("diff --git REV compares one input with itself as of REV: give one".into()),
    }
}

/// The directory a side's files are named from, as `render` picks its root: `--root`, else the
/// directory of `-c`, else the PATH itself when a directory, else its directory.
fn side_root(root: &Option<PathBuf>, layers: &Layers, path: &Path) -> PathBuf {
    if let Some(root) = root {
        return root.clone();
    }
    let path = layers.config.as_deref().unwrap_or(path);
    let dir = if path.is_dir() { Some(path) } else { path.parent() };
    match dir {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

struct Side {
    /// How the warnings and the report name this side.
    shown: String,
    path: PathBuf,
    root: Option<PathBuf>,
    layers: Layers,
    /// The directory the render's file locations are relative to, as the user's shell names it
    /// (for a revision, the working tree's): `-o github` annotates files under it.
    files_root: PathBuf,
    /// Whether the files under `files_root` are the ones this side read, so `-o github` can
    /// name the line each object starts on (not for a revision's side).
    lines: bool,
}

fn compare(
    args: &DiffArgs,
    filter: &Filter,
    (old, new): (Side, Side),
    (old_flux, new_flux): (Option<&flux_build::Options>, Option<&flux_build::Options>),
    limits: Limits,
) -> Exit {
    let shown = [old.shown.clone(), new.shown.clone()];
    let (old, old_left_out) = match objects(args, old, old_flux, limits) {
        Ok(objects) => objects,
        Err(exit) => return exit,
    };
    let (new, new_left_out) = match objects(args, new, new_flux, limits) {
        Ok(objects) => objects,
        Err(exit) => return exit,
    };
    let mut report = diff::compare(&old, &new);
    report.max_diff_lines = args.max_diff_lines;
    report.sides = shown.clone();
    report.local_config_left_out = [old_left_out, new_left_out];
    // Repeated identities are not a difference, but which resource is compared with which is a
    // guess (by position), so the user is told.
    for (side, duplicates) in shown.iter().zip(&report.duplicates) {
        for (id, n) in duplicates {
            eprint_line(&format!(
                "warning: {side}: {n} resources are {}; they are compared by position with the other side's",
                id.label()
            ));
        }
    }
    filter.apply(&mut report);
    let text = match args.output {
        DiffFormat::Text => diff::text(&report, args.show_secrets),
        DiffFormat::Brief => diff::brief(&report),
        DiffFormat::Github => diff::github(&report, args.show_secrets),
        DiffFormat::Json => {
            format!("{}\n", serde_json::to_string_pretty(&diff::json(&report, args.show_secrets)).unwrap_or_default())
        }
    };
    match write_stdout(&text) {
        Exit::Ok if report.is_empty() => Exit::Ok,
        Exit::Ok => Exit::Errors,
        failure => failure,
    }
}

/// One side's objects (what `render` would print, or with `--flux` what `flux-build` would,
/// with the render's local-config items under `--keep-local-config`), each with where it was
/// read from; and how many local-config items were left out.
fn objects(
    args: &DiffArgs,
    side: Side,
    flux: Option<&flux_build::Options>,
    limits: Limits,
) -> Result<(Vec<Document>, usize), Exit> {
    let shown = side.path.display().to_string();
    let input_args = InputArgs { paths: vec![side.path], layers: side.layers };
    let (input, files) = from_paths(&input_args, side.root, limits)?;
    let output = pipeline::render(input, &files);
    report_results(&output.results, Some(&files));
    let unusable = || Exit::Unusable(format!("{shown} does not render: see the errors above"));
    let items = output.items.ok_or_else(unusable)?;
    let keep = args.diff.keep_local_config;
    let local = |item: &Item| is_local_config(item.header());
    let left_out = if keep { 0 } else { items.iter().filter(|item| local(item)).count() };
    // Each file read once for the lines of its objects.
    let mut texts: HashMap<PathBuf, Option<String>> = HashMap::new();
    let mut located = |items: Vec<Item>| -> Vec<Document> {
        let locations: Vec<Option<(String, u64)>> = items
            .iter()
            .map(|item| match item_location(item.header()) {
                (Some(path), index) => Some((path, index.unwrap_or(0))),
                (None, _) => None,
            })
            .collect();
        final_items(items, true)
            .zip(locations)
            .map(|(item, location)| {
                let file = location.as_ref().map(|(path, _)| {
                    // `./x.yaml` is `x.yaml` to a reader of annotations (GitHub's included).
                    let joined = side.files_root.join(path);
                    let joined = joined.strip_prefix(".").unwrap_or(&joined);
                    joined.display().to_string()
                });
                let line = match (&location, args.output, side.lines) {
                    (Some((path, index)), DiffFormat::Github, true) => {
                        start_line(&mut texts, &side.files_root.join(path), *index, limits)
                    }
                    _ => None,
                };
                Document { item, location, file, line }
            })
            .collect()
    };
    match flux {
        None => Ok((located(items.into_iter().filter(|item| keep || !local(item)).collect()), left_out)),
        Some(options) => {
            let mut documents = match keep {
                true => located(items.iter().filter(|item| local(item)).cloned().collect()),
                false => Vec::new(),
            };
            match flux_build::build_all(options, &items, &files, limits) {
                Ok(built) => documents.extend(located(built.into_iter().flat_map(|(_, objects)| objects).collect())),
                Err(Exit::Errors) => return Err(unusable()),
                Err(exit) => return Err(exit),
            }
            Ok((documents, left_out))
        }
    }
}

/// The line the `index`-th document of `file` starts on (from 1), for `-o github`.
fn start_line(texts: &mut HashMap<PathBuf, Option<String>>, file: &Path, index: u64, limits: Limits) -> Option<u64> {
    let text = texts
        .entry(file.to_path_buf())
        .or_insert_with(|| crate::package::read_regular_file(file, limits.max_file_bytes).ok())
        .as_deref()?;
    let index = usize::try_from(index).ok()?;
    crate::doc::locate(text, index, &crate::doc::FieldPath::root()).map(|at| at.line)
}

/// The revision's files, read with `git` (never touching the working tree) into a temporary
/// directory that stands for the repository's top directory: PATH's, and each `--source`
/// directory's inside the repository.
struct Checkout {
    _dir: tempfile::TempDir,
    _removed_on_signals: super::cleanup::Temporary,
    /// Where the current directory is in the copy.
    here: PathBuf,
    /// The repository's top directory, and the copy's.
    top: PathBuf,
    copy: PathBuf,
    /// The `--source` flags with each directory inside the repository replaced by its copy.
    sources: Vec<String>,
    /// Sources read from the working tree on both sides.
    warnings: Vec<String>,
    /// Whether the copy is the whole repository (with `--flux`, when no `--source` names the
    /// flux-system source, which is then the checkout on each side).
    whole: bool,
}

/// `path` made absolute from the current directory, with `.` and `..` taken away by their
/// meaning (a directory that does not exist has no symbolic links to follow).
fn absolute(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let mut out = std::env::current_dir().ok()?.canonicalize().ok()?;
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::RootDir => out = PathBuf::from("/"),
            other => out.push(other),
        }
    }
    Some(out)
}

/// `dir` relative to the repository's top directory, with `/` between its parts (`""` for the
/// top itself), or nothing when it is outside.
fn inside(top: &Path, dir: &Path) -> Option<String> {
    let relative = absolute(dir)?.strip_prefix(top).ok()?.to_path_buf();
    let parts: Vec<String> = relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    Some(parts.join("/"))
}

fn checkout(revision: &str, path: &Path, args: &DiffArgs) -> Result<Checkout, String> {
    // `:` starts git's pathspec magic (`:/other` is "other" from the repository's root), which
    // the check of the path as a directory would not see; git is also told to take it literally.
    if path.is_absolute()
        || path.components().any(|c| matches!(c, Component::ParentDir))
        || path.to_string_lossy().starts_with(':')
    {
        return Err(format!("diff --git: {} must be inside the current directory", path.display()));
    }
    if revision.starts_with('-') {
        return Err(format!("diff --git {revision}: a revision cannot start with '-'"));
    }
    let git = |dir: Option<&Path>, args: &[&str]| -> Result<Vec<u8>, String> {
        let mut command = Command::new("git");
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        command.env("GIT_LITERAL_PATHSPECS", "1").args(args);
        let output = super::cleanup::output(&mut command).map_err(|err| {
            format!("diff --git runs git, which cannot be started ({err}): install git, or compare two paths")
        })?;
        if !output.status.success() {
            return Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()));
        }
        Ok(output.stdout)
    };
    let commit = format!("{revision}^{{commit}}");
    git(None, &["rev-parse", "--verify", "--quiet", &commit])
        .map_err(|_| format!("diff --git {revision}: not a revision of the git repository here"))?;
    let line = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim_end_matches('\n').to_string();
    let top = PathBuf::from(line(git(None, &["rev-parse", "--show-toplevel"])?));
    let top = top.canonicalize().map_err(|err| format!("{}: {err}", top.display()))?;
    let prefix = line(git(None, &["rev-parse", "--show-prefix"])?);
    let path_in_repo = format!("{prefix}{}", path.to_string_lossy().replace('\\', "/"));
    // What to read: PATH, and each source directory inside the repository.
    let mut wanted = vec![path_in_repo.trim_end_matches('/').to_string()];
    let mut sources = Vec::new();
    let mut warnings = Vec::new();
    for flag in &args.sources {
        // A flag that does not parse is passed on as given: flux-build's parser says what is wrong.
        let Ok((_, dir)) = SourcePattern::parse(flag) else {
            sources.push((flag.clone(), None));
            continue;
        };
        match inside(&top, Path::new(dir)) {
            Some(relative) => {
                wanted.push(relative.clone());
                sources.push((flag[..flag.len() - dir.len()].to_string(), Some(relative)));
            }
            None => {
                warnings.push(format!(
                    "--source {flag}: {dir} is outside the git repository, so it is read from the working tree for \
                     both sides: a change inside it does not show"
                ));
                sources.push((flag.clone(), None));
            }
        }
    }
    // With --flux, the flux-system source defaults to the checkout, as flux-build's does: the
    // revision's side needs the whole repository as of REV, unless a --source names it.
    let bootstrap = crate::fluxbuild::plan::bootstrap_source();
    let named = args.sources.iter().any(|flag| SourcePattern::parse(flag).is_ok_and(|(p, _)| p.matches(&bootstrap)));
    let whole = args.flux && !named;
    if whole {
        wanted.push(String::new());
    }
    // Each file's name, with its blob and size.
    let mut names: std::collections::BTreeMap<String, (String, usize)> = std::collections::BTreeMap::new();
    let mut links: std::collections::HashSet<String> = std::collections::HashSet::new();
    for relative in &wanted {
        let mut list_args = vec!["ls-tree", "-r", "-l", "-z", "--full-tree", revision];
        if !relative.is_empty() {
            list_args.extend(["--", relative.as_str()]);
        }
        let listing = git(Some(&top), &list_args)?;
        let before = names.len();
        for entry in listing.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            // `MODE TYPE OBJECT SIZE\tNAME`: blobs only (a submodule is a commit, not a file here).
            let entry = String::from_utf8_lossy(entry);
            let Some((meta, name)) = entry.split_once('\t') else { continue };
            if let [mode, "blob", object, size] = meta.split_whitespace().collect::<Vec<_>>().as_slice() {
                // A symbolic link (mode 120000) is a blob holding its target: made a link again,
                // so the revision's side reads it as the working tree's does (confined to the
                // root, and left out of a source's artifact).
                if *mode == "120000" {
                    links.insert(name.to_string());
                }
                let size = size.parse().map_err(|_| format!("git ls-tree: {entry:?} has no size"))?;
                names.insert(name.to_string(), (object.to_string(), size));
            }
        }
        if names.len() == before && relative == &wanted[0] {
            return Err(format!("diff --git {revision}: {} does not exist at that revision", path.display()));
        }
    }
    // A tree is data from whoever made the commit: git stores an entry named `..` or `.` if it is
    // given one, and writing it would leave the temporary directory. Every name is checked
    // before anything is written.
    if let Some(name) = names.keys().find(|name| !is_plain_relative(name)) {
        return Err(format!(
            "diff --git {revision}: the revision's tree holds {name:?}, which is not a plain relative path (an entry \
             named '..' or '.', or an empty one): it cannot be read safely; compare two directories instead"
        ));
    }
    // A link is written as a link: nothing may be written through it (a crafted tree can hold a
    // link and a directory of the same name).
    let under_link = names.keys().find_map(|name| {
        name.match_indices('/').map(|(at, _)| &name[..at]).find(|parent| links.contains(*parent)).map(|p| (name, p))
    });
    if let Some((name, link)) = under_link {
        return Err(format!(
            "diff --git {revision}: the revision's tree holds {name:?} under the symbolic link {link:?}: it cannot be \
             read safely; compare two directories instead"
        ));
    }
    let (dir, removed_on_signals) = super::cleanup::temp_dir("render-blueprint-diff-")?;
    // Read by blob, a batch per `git show` (which writes blobs one after the other, each as it
    // is, with no textconv for a bare object), cut by the sizes ls-tree gave: a source that is
    // the whole repository is thousands of files.
    let names: Vec<(String, (String, usize))> = names.into_iter().collect();
    for batch in names.chunks(SHOW_BATCH) {
        let mut show_args = vec!["show", "--no-textconv"];
        show_args.extend(batch.iter().map(|(_, (object, _))| object.as_str()));
        let content = git(Some(&top), &show_args)?;
        let expected = batch.iter().fold(0usize, |sum, (_, (_, size))| sum.saturating_add(*size));
        if content.len() != expected {
            return Err(format!(
                "git show gave {} bytes for {} files of {revision} whose sizes add up to {expected}",
                content.len(),
                batch.len()
            ));
        }
        let mut at = 0usize;
        for (name, (_, size)) in batch {
            let target = dir.path().join(name);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|err| format!("{}: {err}", parent.display()))?;
            }
            let bytes = content.get(at..at.saturating_add(*size)).unwrap_or_default();
            if links.contains(name) {
                let link = String::from_utf8_lossy(bytes).into_owned();
                std::os::unix::fs::symlink(&link, &target).map_err(|err| format!("{}: {err}", target.display()))?;
            } else {
                std::fs::write(&target, bytes).map_err(|err| format!("{}: {err}", target.display()))?;
            }
            at = at.saturating_add(*size);
        }
    }
    // Each source directory in the copy (an empty one where the revision has none).
    let mut copied = Vec::new();
    for (flag, relative) in sources {
        copied.push(match relative {
            Some(relative) => {
                let target = dir.path().join(&relative);
                std::fs::create_dir_all(&target).map_err(|err| format!("{}: {err}", target.display()))?;
                format!("{flag}{}", target.display())
            }
            None => flag,
        });
    }
    let here = dir.path().join(&prefix);
    let copy = dir.path().to_path_buf();
    Ok(Checkout {
        here,
        top,
        copy,
        sources: copied,
        warnings,
        whole,
        _dir: dir,
        _removed_on_signals: removed_on_signals,
    })
}

/// How many files one `git show` reads.
const SHOW_BATCH: usize = 200;

/// A path `git ls-tree` may list and we may write under a directory: relative, each part a
/// plain name (not empty, `.` or `..`).
fn is_plain_relative(name: &str) -> bool {
    !name.is_empty() && name.split('/').all(|part| !matches!(part, "" | "." | ".."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_side_gets_the_shared_layers_then_its_own() {
        let shared =
            Layers { config: Some("fn.yaml".into()), values: vec!["common.yaml".into()], set: vec!["a=1".into()] };
        let options = DiffOptions {
            config_b: Some("fn-b.yaml".into()),
            values_a: vec!["staging.yaml".into()],
            values_b: vec!["prod.yaml".into()],
            set_a: vec!["a=2".into()],
            ..DiffOptions::default()
        };
        let a = options.layers(&shared, false);
        let b = options.layers(&shared, true);
        assert_eq!(a.config, Some(PathBuf::from("fn.yaml")));
        assert_eq!(a.values, [PathBuf::from("common.yaml"), PathBuf::from("staging.yaml")]);
        assert_eq!(a.set, ["a=1", "a=2"]);
        assert_eq!(b.config, Some(PathBuf::from("fn-b.yaml")));
        assert_eq!(b.values, [PathBuf::from("common.yaml"), PathBuf::from("prod.yaml")]);
        assert_eq!(b.set, ["a=1"]);
    }
}
