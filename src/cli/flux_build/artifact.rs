//! Lays out an ExternalArtifact as source-watcher v2.2.1's builder makes it
//! (`internal/builder/builder.go`): each copy operation of the output artifact applied in order
//! from the generator's sources (each already laid out as its own artifact) into a staging
//! directory, cp-like, then the staging directory archived with the default excludes. The
//! decisions are in [`crate::fluxbuild::generator`]; here are the reads and writes, every path
//! from the input checked to stay inside its root (the source's or the artifact's), as Go's
//! `os.Root` keeps it.

use super::{copy_files, sorted_entries, Ignores};
use crate::doc::{read_yaml_documents, to_yaml, Value};
use crate::fluxbuild::generator::{self, CopyOperation, OutputArtifact, Strategy};
use crate::fluxbuild::ignore::Matcher;
use crate::limits::Limits;
use crate::package::read_regular_file;
use std::path::{Path, PathBuf};

/// Every directory below `root`, relative with `/`, in the order Go's `filepath.WalkDir` visits
/// them (lexical, each before what it holds): what a path pattern is matched against.
pub(super) fn directories(root: &Path) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, prefix: &str, found: &mut Vec<String>) -> Result<(), String> {
        for (name, path) in sorted_entries(dir)? {
            if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
                let relative = match prefix {
                    "" => name,
                    _ => format!("{prefix}/{name}"),
                };
                found.push(relative.clone());
                walk(&path, &relative, found)?;
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(root, "", &mut found)?;
    Ok(found)
}

/// Makes the artifact in `into`: the copy operations in a staging directory next to it, then
/// the archive's filter (the version-control files and the default excludes left out:
/// `SourceIgnoreFilter(nil, nil)`). `sources` are the generator's aliases and their artifacts.
pub(super) fn make(
    artifact: &OutputArtifact,
    sources: &[(String, PathBuf)],
    staging: &Path,
    into: &Path,
    limits: Limits,
) -> Result<(), String> {
    std::fs::create_dir_all(staging).map_err(|err| format!("cannot create the staging directory: {err}"))?;
    for op in &artifact.copy {
        apply(op, sources, staging, limits).map_err(|err| format!("copy operation {op}: {err}"))?;
    }
    std::fs::create_dir_all(into).map_err(|err| format!("cannot create the artifact: {err}"))?;
    let filter = Matcher::artifact(Vec::new());
    copy_files(staging, into, &mut Vec::new(), &Ignores::default(), Some(&filter))?;
    let _ = std::fs::remove_dir_all(staging);
    Ok(())
}

/// A path inside `root`, or an error when it leads out.
fn within(root: &Path, relative: &str, what: &str) -> Result<PathBuf, String> {
    let parts = generator::inside(relative).ok_or_else(|| {
        format!("{what} {relative:?} leads out of it (source-watcher's os.Root refuses it): keep the path inside")
    })?;
    Ok(parts.iter().fold(root.to_path_buf(), |path, part| path.join(part)))
}

fn apply(op: &CopyOperation, sources: &[(String, PathBuf)], staging: &Path, limits: Limits) -> Result<(), String> {
    let (alias, pattern) = generator::parse_from(&op.from).map_err(|err| format!("invalid from: {err}"))?;
    let dest = generator::parse_to(&op.to).map_err(|err| format!("invalid to: {err}"))?;
    let Some((_, root)) = sources.iter().find(|(a, _)| a == alias) else {
        let aliases: Vec<String> = sources.iter().map(|(a, _)| format!("@{a}")).collect();
        return Err(format!(
            "source alias '{alias}' not found: the generator's sources are {}; change from",
            aliases.join(", ")
        ));
    };
    if let Some(bad) = op.exclude.iter().find(|p| !generator::valid_exclude(p)) {
        return Err(format!(
            "invalid exclude pattern '{bad}': close its brackets and braces, and give at most 64 {{a,b}} alternatives"
        ));
    }
    let extract = op.strategy == Strategy::Extract;
    let dest_is_dir = op.to.ends_with('/');
    if !generator::has_glob(pattern) {
        let source = generator::clean(pattern);
        let path = within(root, &source, "from")?;
        let meta = std::fs::metadata(&path).map_err(|_| {
            format!("source '{source}' does not exist in @{alias}: change from, or add it to the source")
        })?;
        if meta.is_dir() {
            if extract {
                return Err(format!(
                    "extract strategy is not supported for directories, got '{source}': name the archives, e.g. '{source}/*.tgz'"
                ));
            }
            let name = source.rsplit('/').next().unwrap_or(&source);
            let target = generator::join(&[dest, name]);
            return copy_path(op, root, &source, staging, &target, &source, limits);
        }
        if generator::excluded(&source, ".", &op.exclude) {
            return Ok(());
        }
        if extract {
            if !is_tarball(&source) {
                return Err(format!(
                    "extract strategy requires tarball file (.tar.gz or .tgz), got '{source}': name an archive, or leave strategy Extract out"
                ));
            }
            return extract_tarball(&path, &source, staging, dest);
        }
        let name = source.rsplit('/').next().unwrap_or(&source);
        let existing_dir = within(staging, dest, "to").is_ok_and(|p| p.is_dir());
        let target = match dest_is_dir || existing_dir {
            true => generator::join(&[dest, name]),
            false => dest.to_string(),
        };
        return copy_path(op, root, &source, staging, &target, ".", limits);
    }
    let matches = match extract {
        true => doublestar_glob(root, pattern)?,
        false => glob(root, pattern)?,
    };
    if matches.is_empty() {
        return Err(format!("no files match pattern '{pattern}' in source '{alias}': change from"));
    }
    let base = generator::selection_root(pattern);
    let kept: Vec<&String> = matches
        .iter()
        .filter(|m| *m != "." && *m != "..")
        .filter(|m| !generator::excluded(m, &base, &op.exclude))
        .collect();
    if kept.is_empty() {
        return Err(format!(
            "all files matching pattern '{pattern}' in source '{alias}' were excluded: change from or exclude"
        ));
    }
    for matched in kept {
        if extract {
            // Files that are not tarballs, and directories, are passed over.
            let path = within(root, matched, "from")?;
            if is_tarball(matched) && !path.is_dir() {
                extract_tarball(&path, matched, staging, dest)
                    .map_err(|err| format!("failed to extract tarball '{matched}' to '{dest}': {err}"))?;
            }
            continue;
        }
        let target = generator::glob_destination(pattern, matched, dest);
        copy_path(op, root, matched, staging, &target, &base, limits)
            .map_err(|err| format!("failed to copy file '{matched}' to '{target}': {err}"))?;
    }
    Ok(())
}

/// Go's `fs.Glob` over the source: the pattern component by component, each directory's entries
/// in name order; paths that are not valid inside the root (`..`, absolute) match nothing.
fn glob(root: &Path, pattern: &str) -> Result<Vec<String>, String> {
    let bad = || format!("invalid glob pattern '{pattern}': syntax error in pattern: change from");
    let parts: Vec<&str> = pattern.split('/').collect();
    for part in &parts {
        generator::component_matches(part, "").ok_or_else(bad)?;
    }
    if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
        return Ok(Vec::new());
    }
    let mut found: Vec<String> = vec![String::new()];
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for prefix in &found {
            let dir = within(root, if prefix.is_empty() { "." } else { prefix }, "from")?;
            let joined = |name: &str| match prefix.is_empty() {
                true => name.to_string(),
                false => format!("{prefix}/{name}"),
            };
            if !part.contains(['*', '?', '[', '\\']) {
                let path = dir.join(part);
                let exists = match last {
                    true => path.exists(),
                    false => path.is_dir(),
                };
                if exists {
                    next.push(joined(part));
                }
                continue;
            }
            let Ok(entries) = sorted_entries(&dir) else { continue };
            for (name, path) in entries {
                if !last && !path.is_dir() {
                    continue;
                }
                if generator::component_matches(part, &name) == Some(true) {
                    next.push(joined(&name));
                }
            }
        }
        found = next;
    }
    Ok(found)
}

/// doublestar's `Glob` over the source (what `strategy: Extract` matches with, so `**/*.tgz`
/// finds archives at any depth): every path below the root, each directory's entries in name
/// order, each directory before what it holds.
fn doublestar_glob(root: &Path, pattern: &str) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, prefix: &str, pattern: &str, found: &mut Vec<String>) -> Result<(), String> {
        for (name, path) in sorted_entries(dir)? {
            let relative = match prefix {
                "" => name,
                _ => format!("{prefix}/{name}"),
            };
            if generator::doublestar_match(pattern, &relative) == Some(true) {
                found.push(relative.clone());
            }
            if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
                walk(&path, &relative, pattern, found)?;
            }
        }
        Ok(())
    }
    if !generator::valid_exclude(pattern) {
        return Err(format!("invalid glob pattern '{pattern}': syntax error in pattern: change from"));
    }
    let mut found = Vec::new();
    walk(root, "", pattern, &mut found)?;
    Ok(found)
}

/// What `strategy: Extract` unpacks (source-watcher's `isTarball`; any case).
fn is_tarball(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.ends_with(".tar.gz") || lower.ends_with(".tgz")
}

/// The bytes of file data one archive may unpack to (fluxcd/pkg `tar.DefaultMaxUntarSize`).
const MAX_UNTAR_BYTES: u64 = 100 << 20;

/// Bytes of the unpacked stream beyond its files' data: headers, long names, pax records and
/// padding (Go's archive/tar caps one such header at 1 MiB).
const MAX_TAR_OVERHEAD: u64 = 16 << 20;

/// A reader that fails, rather than ends, once `left` bytes are read.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: std::io::Read> std::io::Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other(format!(
                "the archive unpacks to more than {} bytes",
                MAX_UNTAR_BYTES + MAX_TAR_OVERHEAD
            )));
        }
        let most = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..most])?;
        self.left -= read as u64;
        Ok(read)
    }
}

/// `extractTarball`: a gzip-compressed tar archive unpacked below `dest` in the staging directory
/// as fluxcd/pkg's `tar.Untar` unpacks it: names that are absolute, hold `\` or `../` refused,
/// symbolic links and devices refused, at most [`MAX_UNTAR_BYTES`] of file data.
fn extract_tarball(archive: &Path, name: &str, staging: &Path, dest: &str) -> Result<(), String> {
    use std::io::{Read, Seek};
    let into = within(staging, dest, "to")?;
    std::fs::create_dir_all(&into).map_err(|err| format!("failed to create destination directory: {err}"))?;
    let mut file = std::fs::File::open(archive).map_err(|err| format!("failed to open tarball {name:?}: {err}"))?;
    let mut magic = [0u8; 2];
    let gzip = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    if !gzip {
        return Err("requires gzip-compressed body: gzip: invalid header".to_string());
    }
    file.rewind().map_err(|err| format!("failed to open tarball {name:?}: {err}"))?;
    let tar_error = |err: std::io::Error| format!("tar error: {err}");
    // The tar reader holds long names and pax records in memory before an entry is seen, and
    // gzip packs a run of zeros a thousandfold: the unpacked stream itself is capped.
    let unpacked = Capped {
        inner: flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)),
        left: MAX_UNTAR_BYTES + MAX_TAR_OVERHEAD,
    };
    let mut tarball = tar::Archive::new(unpacked);
    let mut processed: u64 = 0;
    for entry in tarball.entries().map_err(tar_error)? {
        let mut entry = entry.map_err(tar_error)?;
        let entry_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        processed = processed.saturating_add(entry.size());
        if processed > MAX_UNTAR_BYTES {
            return Err(format!("tar {entry_name:?} is bigger than max archive size of {MAX_UNTAR_BYTES} bytes"));
        }
        if entry_name.is_empty()
            || entry_name.contains('\\')
            || entry_name.starts_with('/')
            || entry_name.contains("../")
        {
            return Err(format!("tar contained invalid name error {entry_name:?}"));
        }
        let target = within(&into, &generator::clean(&entry_name), "a tarball entry")?;
        match entry.header().entry_type() {
            tar::EntryType::Directory => std::fs::create_dir_all(&target)
                .map_err(|err| format!("cannot create {entry_name}: {err}"))?,
            tar::EntryType::Symlink => {
                return Err(format!(
                    "tar file entry {entry_name} is a symlink, which is not allowed in this context: make the archive without links"
                ))
            }
            kind @ (tar::EntryType::Char | tar::EntryType::Block | tar::EntryType::Fifo) => {
                return Err(format!("tar file entry {entry_name} contained unsupported file type {kind:?}"))
            }
            // Go reads every other type (hard links, pax global headers) as a regular file.
            _ => {
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(|err| format!("cannot create {entry_name}: {err}"))?;
                }
                let mut out = std::fs::File::create(&target)
                    .map_err(|err| format!("error writing to {entry_name}: {err}"))?;
                std::io::copy(&mut entry, &mut out).map_err(|err| format!("error writing to {entry_name}: {err}"))?;
            }
        }
    }
    Ok(())
}

/// `copyFileWithRoots`: a directory copied whole (what `exclude` names left out), a file copied,
/// or merged into the one already there with `strategy: Merge`.
fn copy_path(
    op: &CopyOperation,
    root: &Path,
    source: &str,
    staging: &Path,
    target: &str,
    base: &str,
    limits: Limits,
) -> Result<(), String> {
    let from = within(root, source, "from")?;
    let to = within(staging, target, "to")?;
    if from.is_dir() {
        return copy_dir(op, &from, source, &to, base);
    }
    if op.strategy == Strategy::Merge && to.exists() {
        return merge_file(&from, &to, limits).map_err(|err| format!("{err}: make both files YAML mappings"));
    }
    copy_file(&from, &to)
}

fn copy_dir(op: &CopyOperation, from: &Path, source: &str, to: &Path, base: &str) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|err| format!("failed to create destination directory: {err}"))?;
    for (name, path) in sorted_entries(from)? {
        let relative = format!("{source}/{name}");
        let relative = generator::clean(&relative);
        if generator::excluded(&relative, base, &op.exclude) {
            continue;
        }
        let target = to.join(&name);
        if path.is_dir() {
            copy_dir(op, &path, &relative, &target, base)?;
        } else {
            copy_file(&path, &target)?;
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|err| format!("failed to create destination directory: {err}"))?;
    }
    if to.is_dir() {
        return Err("the destination is a directory: end to with '/' to copy into it".to_string());
    }
    std::fs::copy(from, to).map(|_| ()).map_err(|err| format!("cannot copy: {err}"))
}

/// `mergeFileWithRoots`: both files' documents merged into one map each, the source's over the
/// destination's, written back as Go writes a map (keys sorted). A file of several documents is
/// read as YAML 1.2.
fn merge_file(from: &Path, to: &Path, limits: Limits) -> Result<(), String> {
    let load = |path: &Path| -> Result<Value, String> {
        let text = read_regular_file(path, limits.max_file_bytes).map_err(|err| err.to_string())?;
        let mut documents =
            read_yaml_documents(&text).map_err(|err| format!("error reading YAML document: {}", err.message))?;
        // One document (a values file) is typed as source-watcher's YAML 1.1 reader types it
        // (`yes` is true); it read without error above.
        if documents.len() == 1 {
            documents = vec![crate::subst::read_as_yaml_v2(&text)?];
        }
        let mut merged = Value::Object(Default::default());
        for document in documents {
            if !document.is_object() {
                return Err("cannot unmarshal YAML document: it is not a mapping".to_string());
            }
            merged = generator::merge(merged, document);
        }
        Ok(merged)
    };
    let merged = generator::merge(load(to)?, load(from)?);
    std::fs::write(to, to_yaml(&generator::sorted(merged)))
        .map_err(|err| format!("cannot write the merged file: {err}"))
}
