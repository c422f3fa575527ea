//! `render-blueprint diff A B`: renders two inputs (or one as of a git revision and as it is now)
//! and prints what differs, resource by resource ([`crate::diff`]). Exit codes as `diff(1)`: 0 the
//! same, 1 different, 2 unusable input (a render that fails included).

use super::commands::final_items;
use super::flux_build;
use super::input::from_paths;
use super::output::{eprint_line, report_results, write_stdout};
use super::{DiffArgs, DiffFormat, Exit, InputArgs};
use crate::krm::Item;
use crate::limits::Limits;
use crate::{diff, pipeline};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

pub(super) fn run(args: DiffArgs, root: Option<PathBuf>, limits: Limits) -> Exit {
    if args.git.is_some() || args.flux {
        super::cleanup::on_signals_remove_temporaries();
    }
    let flux = match args.flux {
        false => None,
        true => {
            match flux_build::Options::new(&args.sources, args.skip_missing_sources, None, args.strict_substitutions) {
                Ok(mut options) => {
                    options.show_secrets = args.show_secrets;
                    options.max_builds = args.max_builds;
                    Some(options)
                }
                Err(exit) => return exit,
            }
        }
    };
    let sides = match (&args.git, args.paths.as_slice()) {
        (None, [old, new]) => (
            Side { shown: old.display().to_string(), path: old.clone(), root: root.clone() },
            Side { shown: new.display().to_string(), path: new.clone(), root },
        ),
        (Some(revision), [path]) => {
            let (checkout, removed_on_signals) = match checkout(revision, path) {
                Ok(checkout) => checkout,
                Err(message) => return Exit::Unusable(message),
            };
            let old = Side {
                shown: format!("{} as of {revision}", path.display()),
                path: checkout.path().join(path),
                root: Some(checkout.path().to_path_buf()),
            };
            let new = Side { shown: path.display().to_string(), path: path.clone(), root };
            let result = compare(&args, (old, new), flux.as_ref(), limits);
            drop((checkout, removed_on_signals));
            return result;
        }
        (None, _) => return Exit::Unusable("diff compares two inputs: give A and B, or one with --git REV".into()),
        (Some(_), _) => {
            return Exit::Unusable("diff --git REV compares one input with itself as of REV: give one".into())
        }
    };
    compare(&args, sides, flux.as_ref(), limits)
}

struct Side {
    /// How the warnings name this side.
    shown: String,
    path: PathBuf,
    root: Option<PathBuf>,
}

fn compare(args: &DiffArgs, (old, new): (Side, Side), flux: Option<&flux_build::Options>, limits: Limits) -> Exit {
    let shown = [old.shown.clone(), new.shown.clone()];
    let old = match objects(args, old, flux, limits) {
        Ok(items) => items,
        Err(exit) => return exit,
    };
    let new = match objects(args, new, flux, limits) {
        Ok(items) => items,
        Err(exit) => return exit,
    };
    let mut report = diff::compare(&old, &new);
    report.max_diff_lines = args.max_diff_lines;
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
    let text = match args.output {
        DiffFormat::Text => diff::text(&report, args.show_secrets),
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

/// One side's objects: what `render` would print, or with `--flux` what `flux-build` would.
fn objects(args: &DiffArgs, side: Side, flux: Option<&flux_build::Options>, limits: Limits) -> Result<Vec<Item>, Exit> {
    let shown = side.path.display().to_string();
    let input_args = InputArgs { paths: vec![side.path], layers: args.layers.clone() };
    let (input, files) = from_paths(&input_args, side.root, limits)?;
    let output = pipeline::render(input, &files);
    report_results(&output.results, Some(&files));
    let unusable = || Exit::Unusable(format!("{shown} does not render: see the errors above"));
    let items = output.items.ok_or_else(unusable)?;
    match flux {
        None => Ok(final_items(items, false).collect()),
        Some(options) => match flux_build::build_all(options, &items, &files, limits) {
            Ok(built) => Ok(built.into_iter().flat_map(|(_, objects)| objects).collect()),
            Err(Exit::Errors) => Err(unusable()),
            Err(exit) => Err(exit),
        },
    }
}

/// The files under `path` as of `revision`, read with `git` (never touching the working tree)
/// into a temporary directory that stands for the current directory.
fn checkout(revision: &str, path: &Path) -> Result<(tempfile::TempDir, super::cleanup::Temporary), String> {
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
    let git = |args: &[&str]| -> Result<Vec<u8>, String> {
        let mut command = Command::new("git");
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
    git(&["rev-parse", "--verify", "--quiet", &commit])
        .map_err(|_| format!("diff --git {revision}: not a revision of the git repository here"))?;
    let shown = path.to_string_lossy();
    let listing = git(&["ls-tree", "-r", "-z", "--name-only", revision, "--", &shown])?;
    let names: Vec<String> =
        listing.split(|b| *b == 0).filter(|n| !n.is_empty()).map(|n| String::from_utf8_lossy(n).into_owned()).collect();
    // A tree is data from whoever made the commit: git stores an entry named `..` or `.` if it is
    // given one, and writing it would leave the temporary directory. Every name is checked
    // before anything is written.
    if let Some(name) = names.iter().find(|name| !is_plain_relative(name)) {
        return Err(format!(
            "diff --git {revision}: the revision's tree holds {name:?}, which is not a plain relative path (an entry \
             named '..' or '.', or an empty one): it cannot be read safely; compare two directories instead"
        ));
    }
    if names.is_empty() {
        return Err(format!("diff --git {revision}: {shown} does not exist at that revision"));
    }
    let (dir, removed_on_signals) = super::cleanup::temp_dir("render-blueprint-diff-")?;
    for name in names {
        let content = git(&["show", &format!("{revision}:./{name}")])?;
        let target = dir.path().join(&name);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|err| format!("{}: {err}", parent.display()))?;
        }
        std::fs::write(&target, content).map_err(|err| format!("{}: {err}", target.display()))?;
    }
    Ok((dir, removed_on_signals))
}

/// A path `git ls-tree` may list and we may write under a directory: relative, each part a
/// plain name (not empty, `.` or `..`).
fn is_plain_relative(name: &str) -> bool {
    !name.is_empty() && name.split('/').all(|part| !matches!(part, "" | "." | ".."))
}
