//! A blueprint's filesystem, as Landscaper gives every blueprint one (pkg/utils/blueprints/
//! blueprint.go: `Blueprint.Fs`): the directory that holds its `blueprint.yaml`, or the in-memory
//! filesystem of an inline blueprint (`filesystem:`, Landscaper's yamlfs). Every file a blueprint
//! names (execution templates, subinstallation templates, `include`, `readFile`) is read through
//! it, so a child blueprint reads its own files and never its parent's, and a path starting with
//! `/` names the blueprint's own directory. A path may not climb out of that directory.

use crate::doc::Value;
use crate::package::{check_inside, FileError, Files};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The blueprint's file name inside its directory (Landscaper's `BlueprintFileName`).
pub const BLUEPRINT_FILE: &str = "blueprint.yaml";

/// Files an inline filesystem may hold at most, and directories it may nest: it is input.
const MAX_INLINE_FILES: usize = 10_000;
const MAX_INLINE_DEPTH: usize = 64;

/// An inline blueprint's files by path (Landscaper's yamlfs), read as the package's files are,
/// so a blueprint reads through one [`Files`] wherever its files are.
#[derive(Clone, Debug)]
pub struct InlineFiles(Arc<BTreeMap<String, String>>);

impl Files for InlineFiles {
    fn read(&self, path: &str) -> Result<String, FileError> {
        match self.0.get(path) {
            Some(text) => Ok(text.clone()),
            None if self.0.keys().any(|k| k.starts_with(&format!("{path}/"))) => {
                Err(FileError::NotRegular { directory: true })
            }
            None => Err(FileError::Io("no such file in the blueprint's inline filesystem".into())),
        }
    }
    /// Messages name an inline file as such.
    fn shown(&self, path: &str) -> String {
        format!("inline:{path}")
    }
    fn share(&self) -> Arc<dyn Files> {
        Arc::new(self.clone())
    }
}

/// Where one blueprint's files are.
#[derive(Clone, Debug)]
pub struct BlueprintFs {
    /// An inline blueprint's files, else `None`: the package's files.
    memory: Option<InlineFiles>,
    /// The blueprint's directory inside those files (`""`: their root).
    dir: String,
}

impl BlueprintFs {
    /// The package directory `dir` (`""` for the package root).
    pub fn package(dir: &str) -> Self {
        BlueprintFs { memory: None, dir: dir.to_string() }
    }

    /// The directory of the package file `file`, or the package root.
    pub fn of_file(file: Option<&str>) -> Self {
        BlueprintFs::package(file.map_or("", parent))
    }

    /// Landscaper's yamlfs: a mapping is a directory, a string a file's content.
    pub fn inline(filesystem: &Value) -> Result<Self, String> {
        let mut files = BTreeMap::new();
        let mut pending: Vec<(String, &Value, usize)> = vec![(String::new(), filesystem, 0)];
        while let Some((dir, value, depth)) = pending.pop() {
            let Value::Object(entries) = value else {
                let what = if dir.is_empty() { "filesystem".to_string() } else { format!("filesystem entry {dir:?}") };
                return Err(format!("{what}: a directory is a mapping of file names to contents"));
            };
            if depth > MAX_INLINE_DEPTH {
                return Err(format!("filesystem nests deeper than {MAX_INLINE_DEPTH} directories"));
            }
            for (name, entry) in entries {
                let path = if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") };
                if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
                    return Err(format!("filesystem entry {path:?}: a file name is one path component"));
                }
                match entry {
                    Value::String(text) => {
                        files.insert(path, text.clone());
                    }
                    Value::Object(_) => pending.push((path, entry, depth + 1)),
                    _ => return Err(format!("filesystem entry {path:?}: a file's content is text (write `|`)")),
                }
                if files.len() + pending.len() > MAX_INLINE_FILES {
                    return Err(format!("filesystem holds more than {MAX_INLINE_FILES} files"));
                }
            }
        }
        Ok(BlueprintFs { memory: Some(InlineFiles(Arc::new(files))), dir: String::new() })
    }

    /// The same files, the blueprint's directory being the one that holds `file`.
    pub fn at_file(&self, file: &str) -> Self {
        BlueprintFs { memory: self.memory.clone(), dir: parent(file).to_string() }
    }

    /// Whether these are an inline blueprint's files.
    pub fn is_inline(&self) -> bool {
        self.memory.is_some()
    }

    /// A key telling filesystems apart, for caches of what was read or compiled from them.
    pub fn key(&self) -> String {
        match &self.memory {
            Some(files) => format!("inline@{:p}:{}", Arc::as_ptr(&files.0), self.dir),
            None => self.dir.clone(),
        }
    }

    /// `path` as the blueprint names it: from its directory when it starts with `/` (Landscaper's
    /// blueprint filesystem), else from the directory of `from`, the file that names it. The
    /// result stays inside the blueprint's directory.
    pub fn resolve(&self, from: Option<&str>, path: &str) -> Result<String, String> {
        let base = match path.strip_prefix('/') {
            Some(_) => self.dir.as_str(),
            None => from.map_or(self.dir.as_str(), parent),
        };
        let resolved = normalise(base, path).map_err(|()| self.leaves(path))?;
        if !inside(&self.dir, &resolved) {
            return Err(self.leaves(path));
        }
        Ok(resolved)
    }

    /// `path` from the directory of `from` anywhere in these files (the package, or the
    /// inline filesystem): where another blueprint is (`blueprint: {file: …}`), which has a
    /// directory of its own. A leading `/` is still this blueprint's directory.
    pub fn resolve_blueprint(&self, from: Option<&str>, path: &str) -> Result<String, String> {
        let base = match path.strip_prefix('/') {
            Some(_) => self.dir.as_str(),
            None => from.map_or(self.dir.as_str(), parent),
        };
        normalise(base, path).map_err(|()| match &self.memory {
            Some(_) => format!("path {path:?} leaves the blueprint's inline filesystem"),
            None => format!("path {path:?} escapes the package root"),
        })
    }

    fn leaves(&self, path: &str) -> String {
        match (&self.memory, self.dir.as_str()) {
            (Some(_), "") => format!("path {path:?} leaves the blueprint's inline filesystem"),
            (None, "") => format!("path {path:?} escapes the package root"),
            (_, dir) => format!("path {path:?} leaves the blueprint's directory {dir}"),
        }
    }

    /// The files these are: the inline filesystem, or the package's `files`.
    pub fn files<'a>(&'a self, files: &'a dyn Files) -> &'a dyn Files {
        match &self.memory {
            Some(memory) => memory,
            None => files,
        }
    }

    /// Reads a path [`resolve`](Self::resolve) gave.
    pub fn read(&self, files: &dyn Files, resolved: &str) -> Result<String, FileError> {
        self.files(files).read(resolved)
    }

    /// How a resolved path is shown in messages ([`Files::shown`]: inline files as such, package
    /// files from the working directory).
    pub fn show(&self, files: &dyn Files, resolved: &str) -> String {
        self.files(files).shown(resolved)
    }
}

/// Schema files a blueprint may load through `blueprint://` at most (they may refer to more).
const MAX_SCHEMA_FILES: usize = 256;

/// Landscaper's `$ref: blueprint://path` (docs/usage/JSONSchema.md): a JSON Schema in a file of
/// the blueprint, the path from the blueprint's directory. Each file read becomes a local type
/// of its own, and each reference a `local://` one to it, so local types' resolution, cycle
/// checks and fragments serve both. `None` when the blueprint has no such reference.
pub fn load_schema_files(
    blueprint: &crate::model::imports::Blueprint,
    fs: &BlueprintFs,
    files: &dyn Files,
) -> Option<Result<crate::model::imports::Blueprint, String>> {
    let mut blueprint = blueprint.clone();
    let mut wanted: Vec<String> = Vec::new();
    fn imports(decls: &mut [crate::model::imports::ImportDecl], wanted: &mut Vec<String>) {
        for decl in decls {
            if let Some(schema) = &mut decl.schema {
                rewrite_references(schema, wanted, 0);
            }
            imports(&mut decl.imports, wanted);
        }
    }
    imports(&mut blueprint.imports, &mut wanted);
    for export in &mut blueprint.exports {
        if let Some(schema) = &mut export.schema {
            rewrite_references(schema, &mut wanted, 0);
        }
    }
    for schema in blueprint.local_types.values_mut() {
        rewrite_references(schema, &mut wanted, 0);
    }
    if wanted.is_empty() {
        return None;
    }
    let mut next = 0;
    while let Some(path) = wanted.get(next).cloned() {
        next += 1;
        if next > MAX_SCHEMA_FILES {
            return Some(Err(format!("the schemas refer to more than {MAX_SCHEMA_FILES} blueprint:// files")));
        }
        let name = schema_type_name(&path);
        if blueprint.local_types.contains_key(&name) {
            continue;
        }
        let reference = format!("blueprint://{path}");
        let loaded = fs
            .resolve(None, &format!("/{path}"))
            .and_then(|resolved| {
                let text = fs
                    .read(files, &resolved)
                    .map_err(|err| format!("cannot read {:?}: {err}", fs.show(files, &resolved)))?;
                let mut documents = crate::doc::read_yaml_documents(&text)
                    .map_err(|err| format!("{:?} is not a JSON Schema: {}", fs.show(files, &resolved), err.message))?;
                match documents.len() {
                    1 => Ok(documents.remove(0)),
                    n => Err(format!("{:?} holds {n} documents, not one JSON Schema", fs.show(files, &resolved))),
                }
            })
            .map_err(|err| format!("error resolving reference {reference:?}: {err}"));
        match loaded {
            Ok(mut schema) => {
                rewrite_references(&mut schema, &mut wanted, 0);
                blueprint.local_types.insert(name, schema);
            }
            Err(err) => return Some(Err(err)),
        }
    }
    Some(Ok(blueprint))
}

/// The local type a `blueprint://` file becomes: a name that `local://` takes whole and a JSON
/// pointer and URI carry as it is (`definitions/x.json` is `blueprint_definitions_2fx.json`).
fn schema_type_name(path: &str) -> String {
    let mut name = String::from("blueprint_");
    for c in path.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' => name.push(c),
            c => name.extend(format!("_{:02x}", u32::from(c)).chars()),
        }
    }
    name
}

/// Rewrites `{$ref: blueprint://p#f}` to `{$ref: local://<p's type>#f}`, noting `p`.
fn rewrite_references(schema: &mut Value, wanted: &mut Vec<String>, depth: usize) {
    if depth > crate::limits::MAX_DEPTH {
        return;
    }
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref") {
                if let Some(rest) = reference.strip_prefix("blueprint://") {
                    let (path, fragment) = rest.split_once('#').map_or((rest, ""), |(p, f)| (p, f));
                    let path = path.trim_start_matches('/').to_string();
                    let fragment = if fragment.is_empty() { String::new() } else { format!("#{fragment}") };
                    *reference = format!("local://{}{fragment}", schema_type_name(&path));
                    if !wanted.contains(&path) {
                        wanted.push(path);
                    }
                }
            }
            for value in map.values_mut() {
                rewrite_references(value, wanted, depth + 1);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_references(item, wanted, depth + 1)),
        _ => {}
    }
}

/// The directory part of a slash-separated path (`""` for a file at the root).
fn parent(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Whether `path` lies in `dir` (`""` holds everything).
fn inside(dir: &str, path: &str) -> bool {
    dir.is_empty() || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// `relative` joined to `base` and normalised; `Err` when it climbs above the root, is absolute
/// in another way (`\`, a drive) or names the root itself.
fn normalise(base: &str, relative: &str) -> Result<String, ()> {
    if relative.starts_with('\\') || relative.contains(":\\") || relative.contains('\0') {
        return Err(());
    }
    if !base.is_empty() && check_inside(base).is_err() {
        return Err(());
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or(())?;
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(());
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_leading_slash_is_the_blueprints_directory() {
        let fs = BlueprintFs::package("bp");
        assert_eq!(fs.resolve(Some("bp/sub/t.yaml"), "/deploy.yaml"), Ok("bp/deploy.yaml".into()));
        assert_eq!(fs.resolve(Some("bp/sub/t.yaml"), "deploy.yaml"), Ok("bp/sub/deploy.yaml".into()));
        assert_eq!(fs.resolve(None, "x/./y"), Ok("bp/x/y".into()));
    }

    #[test]
    fn a_path_may_not_leave_the_blueprints_directory() {
        let fs = BlueprintFs::package("bp");
        let leaves = Err("path \"/../x\" leaves the blueprint's directory bp".to_string());
        assert_eq!(fs.resolve(Some("bp/blueprint.yaml"), "/../x"), leaves);
        assert!(fs.resolve(Some("bp/blueprint.yaml"), "../x").is_err());
        assert!(BlueprintFs::package("").resolve(None, "../x").is_err());
        assert_eq!(fs.resolve_blueprint(Some("bp/blueprint.yaml"), "../sub"), Ok("sub".into()));
        assert!(fs.resolve_blueprint(Some("bp/blueprint.yaml"), "../../sub").is_err());
    }

    #[test]
    fn inline_filesystems_are_mappings_of_text() {
        let fs = BlueprintFs::inline(&json!({"blueprint.yaml": "a", "t": {"x.yaml": "b"}}));
        let fs = fs.unwrap_or_else(|_| BlueprintFs::package(""));
        let files = crate::package::MemoryFiles::default();
        assert_eq!(fs.read(&files, "t/x.yaml"), Ok("b".into()));
        assert_eq!(fs.read(&files, "t"), Err(FileError::NotRegular { directory: true }));
        assert!(BlueprintFs::inline(&json!({"a": 1})).is_err());
        assert!(BlueprintFs::inline(&json!({"../a": "x"})).is_err());
    }
}
