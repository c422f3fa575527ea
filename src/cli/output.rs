//! Every byte a command writes goes through here, so that a failed or cut-short write is never
//! reported as a success and text that came from the input cannot drive the terminal.

use super::Exit;
use crate::diag::Diagnostic;
use crate::krm::Item;
use crate::package::{DiskFiles, Files};
use std::collections::HashMap;
use std::io::Write;

// A standard output closed at start (`>&-`) is not detected: Rust's runtime puts /dev/null in its
// place, opened read-write, exactly as Python's `subprocess.DEVNULL` and Go's `os/exec` open it
// for a caller who discards the output on purpose, so the two cannot be told apart.

pub(super) fn write_stdout(text: &str) -> Exit {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        Ok(()) => Exit::Ok,
        // Any failure, a closed pipe included: a truncated package is never a success.
        Err(err) => Exit::Unusable(format!("cannot write output: {err}")),
    }
}

/// Every line on stderr goes through here: text from the input may hold terminal escapes.
pub(super) fn eprint_line(text: &str) {
    eprintln!("{}", crate::diag::escape_controls(text));
}

/// Prints warnings and errors on stderr. With package files (render, explain, graph) each one
/// about a file gets the line and column of its field, found by reading that file again; only
/// reported problems pay for it. Only files this run read are reopened: the path comes from the
/// item's own annotation, which the input controls. The file is named as every message names
/// one, from the working directory ([`crate::package::Files::shown`]), like the files the
/// command line reads; KRM mode keeps the package paths its client gave.
pub(super) fn report_results(results: &[Diagnostic], files: Option<&DiskFiles>) {
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
        let mut shown = diagnostic.clone();
        if let (Some(files), Some(path)) = (files, &diagnostic.location.path) {
            shown.location.path = Some(files.shown(path));
        }
        match position {
            Some(at) => eprint_line(&shown.at_position(Some(at.line), Some(at.column)).to_string()),
            None => eprint_line(&shown.to_string()),
        }
    }
}

/// Writes through a buffered stdout, item by item, without building the whole text first.
pub(super) fn write_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Exit {
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match write(&mut stdout).and_then(|_| stdout.flush()) {
        Ok(()) => Exit::Ok,
        // Any failure, a closed pipe included: a truncated package is never a success.
        Err(err) => Exit::Unusable(format!("cannot write output: {err}")),
    }
}

/// A YAML stream, one document at a time.
/// A stream of documents: each item no step changed as it was written, the others emitted.
pub(super) fn write_stream(out: &mut dyn Write, items: impl Iterator<Item = Item>) -> std::io::Result<()> {
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

/// The output cannot come back as the next render's input (kustomize builds from the files each
/// time; the legacy exec plugin runs only under it): the `fn.blueprint.dev/applied` marks, which
/// only guard kpt's in-place renders, are left out, so they never reach the cluster.
pub(super) fn without_marks(items: &mut [Item]) {
    use crate::krm::{annotations as ann, remove_annotation};
    for item in items.iter_mut().filter(|item| item.header_contains(ann::APPLIED)) {
        remove_annotation(item.header_mut(), ann::APPLIED);
        item.compact();
    }
}

/// Whether a functionConfig is kustomize's: kustomize finds its container functions by this
/// annotation (kpt ignores it), and builds from the files every time.
pub(super) fn is_kustomize_function_config(config: &crate::doc::Value) -> bool {
    ["config.kubernetes.io/function", "config.k8s.io/function"]
        .iter()
        .any(|key| crate::krm::annotation(config, key).is_some())
}
