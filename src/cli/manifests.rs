//! The command line's files arrive as paths the user named, not as a ResourceList, so they must
//! be walked, read and tagged with the package paths kpt would have given them, without letting
//! a symlink lead the walk out of the package or around in circles.

use crate::doc::{read_yaml_documents, Value};
use crate::krm::{annotations as ann, set_annotation, Item, StreamItems};
use crate::package::{read_regular_file, DiskFiles};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The directory walk of `PATH…`: symlinks may not lead out of `within` (the root, or a PATH
/// outside it), and each real directory is read once, so `loop -> .` neither repeats manifests
/// nor runs forever.
pub(super) struct Walk<'a> {
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

impl<'a> Walk<'a> {
    /// A walk of the package at `root`, reading files of at most `limit` bytes and noting each
    /// one read in `files`.
    pub(super) fn new(root: PathBuf, limit: u64, files: &'a DiskFiles) -> Self {
        Walk { root, limit, files, visited: HashSet::new(), within: PathBuf::new() }
    }

    /// Reads one PATH the user named: a file, or a directory tree of manifests.
    pub(super) fn read_path(&mut self, path: &Path, items: &mut Vec<Item>) -> Result<(), String> {
        self.within = containment(path, &self.root);
        self.read_manifests(path, 0, items)
    }

    /// Reads one file or a directory tree of manifests, tagging each item with its package path.
    fn read_manifests(&mut self, path: &Path, depth: usize, items: &mut Vec<Item>) -> Result<(), String> {
        let meta = std::fs::metadata(path).map_err(|err| format!("{}: {err}", path.display()))?;
        if !meta.is_dir() {
            return self.read_file(path, items);
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
        // A Landscaper blueprint's directory: blueprint.yaml is the blueprint, and the other
        // files (templates named *.yaml that are YAML only once rendered) and directories are
        // its filesystem, read by the blueprint through it, not manifests.
        let blueprint = path.join(crate::imports::files::BLUEPRINT_FILE);
        if blueprint.is_file() && self.is_landscaper_blueprint(&blueprint) {
            entries.retain(|entry| *entry == blueprint);
        }
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
                self.read_manifests(&entry, depth + 1, items)?;
            }
        }
        Ok(())
    }

    /// Whether a `blueprint.yaml` is Landscaper's (a Windsor blueprint has the same file name,
    /// and its directory holds manifests).
    fn is_landscaper_blueprint(&self, path: &Path) -> bool {
        let Ok(text) = read_regular_file(path, self.limit) else { return false };
        let Ok(documents) = read_yaml_documents(&text) else { return false };
        documents.iter().any(|document| {
            document
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|api| api.starts_with("landscaper.gardener.cloud/"))
        })
    }

    fn read_file(&mut self, path: &Path, items: &mut Vec<Item>) -> Result<(), String> {
        let text = read_regular_file(path, self.limit).map_err(|err| format!("{}: {err}", path.display()))?;
        let documents = crate::doc::read_yaml_documents_with_starts(&text).map_err(|err| yaml_error(path, &err))?;
        let package_path = package_path(path, &self.root);
        self.files.note(&package_path);
        let mut stream = StreamItems::new(&text);
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
            let mut item = stream.item(index, document, start);
            tag_location(item.header_mut(), &package_path, index);
            items.push(item);
        }
        Ok(())
    }
}

/// Reads a file that holds exactly one YAML mapping (`-c`, `-f`).
pub(super) fn read_single_document(path: &Path, limit: u64) -> Result<Value, String> {
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
pub(super) fn yaml_error_in(place: &str, err: &crate::doc::YamlError) -> String {
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

pub(super) fn tag_location(item: &mut Value, package_path: &str, index: usize) {
    if crate::krm::item_location(item).0.is_none() {
        set_annotation(item, ann::PATH, package_path);
        set_annotation(item, ann::LEGACY_PATH, package_path);
        set_annotation(item, ann::INDEX, &index.to_string());
        set_annotation(item, ann::LEGACY_INDEX, &index.to_string());
    }
}

/// The path of a file relative to the package root, with forward slashes; a file outside the
/// root is reached with `..` (never an absolute path, which would differ between machines).
pub(super) fn package_path(path: &Path, root: &Path) -> String {
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
