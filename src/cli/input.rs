//! KRM mode, the file commands and the legacy plugin differ only in where a render's items,
//! config and value layers come from; what they share (the package root, the files it may read,
//! the operator's limits, where Jsonnet runs) is decided once, here, so a new command cannot get
//! one of them subtly different.

use super::jsonnet_worker;
use super::manifests::{package_path, read_single_document, tag_location, Walk};
use super::{Exit, InputArgs};
use crate::doc::Value;
use crate::krm::Item;
use crate::limits::Limits;
use crate::package::DiskFiles;
use crate::pipeline::Input;
use std::path::{Path, PathBuf};

/// The package a command renders: the root relative paths in its configuration resolve in, the
/// files it may read there, and the operator's limits.
pub(super) struct Package {
    root: PathBuf,
    pub(super) files: DiskFiles,
    limits: Limits,
}

impl Package {
    pub(super) fn new(root: PathBuf, limits: Limits) -> Self {
        let files = DiskFiles::new(&root, limits.max_file_bytes);
        Package { root, files, limits }
    }

    /// A render of this package from what the command read: the one place an [`Input`] is built.
    pub(super) fn input(
        &self,
        items: Vec<Item>,
        function_config: Option<Value>,
        value_overrides: Vec<(String, Value)>,
    ) -> Input {
        let limits = self.limits;
        Input {
            items,
            function_config,
            value_overrides,
            limits,
            jsonnet: Some(jsonnet_worker::isolate(self.root.clone(), limits.max_file_bytes, limits.max_output_bytes)),
            environment: std::sync::Arc::new(environment()),
        }
    }
}

/// The process environment, for Windsor's `env()`: the variables whose name and value are
/// UTF-8. Taken here, by the command line, so that nothing past it reads the environment.
fn environment() -> crate::render::Environment {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// `--root`, or the current directory (KRM mode, the legacy plugin).
pub(super) fn root_or_cwd(root: Option<PathBuf>) -> PathBuf {
    root.unwrap_or_else(|| PathBuf::from("."))
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
pub(super) fn from_paths(args: &InputArgs, root: Option<PathBuf>, limits: Limits) -> Result<(Input, DiskFiles), Exit> {
    let root = root
        .or_else(|| args.layers.config.as_deref().map(directory_of))
        .or_else(|| args.paths.first().map(|p| directory_of(p)))
        .unwrap_or_else(|| PathBuf::from("."));
    let root = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root };
    let package = Package::new(root.clone(), limits);
    let files = &package.files;
    let limit = limits.max_file_bytes;
    let mut walk = Walk::new(root.clone(), limit, files);
    let mut items = Vec::new();
    for path in &args.paths {
        walk.read_path(path, &mut items).map_err(Exit::Unusable)?;
    }
    let function_config = match &args.layers.config {
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
    for path in &args.layers.values {
        let Value::Object(map) = read_single_document(path, limit).map_err(Exit::Unusable)? else {
            return Err(Exit::Unusable(format!("{}: values must be a YAML mapping", path.display())));
        };
        // One layer per top-level key, labelled with its line, so that a message about a value
        // (an import's, say) names the line it is on: merged in order, the same values.
        let lines = crate::package::read_regular_file(path, limit).map(|text| top_level_key_lines(&text));
        for (key, value) in map {
            let label = match lines.as_ref().ok().and_then(|lines| lines.get(&key)) {
                Some(line) => format!("-f {}:{line}", path.display()),
                None => format!("-f {}", path.display()),
            };
            value_overrides.push((label, Value::Object(std::iter::once((key, value)).collect())));
        }
    }
    for assignment in &args.layers.set {
        value_overrides.push(("--set".to_string(), set_layer(assignment).map_err(Exit::Unusable)?));
    }
    let input = package.input(items, function_config, value_overrides);
    Ok((input, package.files))
}

/// The line of each top-level key of a block mapping written at column 0 (plain or simply quoted
/// keys; others, and flow mappings, are not found, and their messages name the file only).
fn top_level_key_lines(text: &str) -> std::collections::HashMap<String, usize> {
    let mut lines = std::collections::HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with([' ', '\t', '#', '-', '{', '[', '?', '%', '&', '*', '!', '|', '>'])
            || line.starts_with("...")
        {
            continue;
        }
        let Some((key, _)) = line.split_once(": ").or_else(|| line.strip_suffix(':').map(|key| (key, ""))) else {
            continue;
        };
        let key = key.trim_end();
        let key = match (
            key.strip_prefix('"').and_then(|k| k.strip_suffix('"')),
            key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')),
        ) {
            (Some(quoted), _) | (_, Some(quoted)) if !quoted.contains(['\\', '"', '\'']) => quoted,
            _ if key.contains(['"', '\'', '#']) => continue,
            _ => key,
        };
        lines.entry(key.to_string()).or_insert(n + 1);
    }
    lines
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

/// Reads stdin up to `limit` bytes (`--max-input-size`): the cap holds while reading, so an
/// endless or huge stream stops at the limit instead of filling memory first.
pub(super) fn read_stdin(limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let stdin = std::io::stdin().lock();
    if let Err(err) = stdin.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        return Err(format!("cannot read stdin: {err}"));
    }
    if bytes.len() as u64 > limit {
        let raise = if limit < crate::limits::MAX_INPUT_BYTES { ", or raise the limit" } else { "" };
        return Err(format!(
            "stdin is larger than {} (--max-input-size, or RENDER_BLUEPRINT_MAX_INPUT_SIZE): split the package{raise}",
            crate::limits::human_bytes(limit)
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_builds_nested_layers() {
        assert_eq!(set_layer("a.b=3"), Ok(json!({"a": {"b": 3}})));
        assert_eq!(set_layer("flag=on"), Ok(json!({"flag": "on"})));
        assert!(set_layer("novalue").is_err());
        assert!(set_layer("a..b=1").is_err());
    }
}
