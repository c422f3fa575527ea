//! kustomize's legacy exec plugins speak a protocol of their own (plain YAML on stdin and stdout,
//! the config in the environment, recognised before any argument parsing), still used where
//! KRM functions are not; keeping it apart keeps its quirks out of the other commands.

use super::input::{root_or_cwd, Package};
use super::manifests::yaml_error_in;
use super::output::{report_results, write_stream, write_with};
use super::Exit;
use crate::doc::{read_yaml_documents, Value};
use crate::krm::{Item, Quoted};
use crate::package::read_regular_file;
use crate::pipeline;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Legacy kustomize exec plugin mode: `render-blueprint <config-file>` with
/// `KUSTOMIZE_PLUGIN_CONFIG_STRING` set (kustomize's execplugin.go). Returns the config file.
pub(super) fn config_file(args: &[OsString]) -> Option<PathBuf> {
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
pub(super) fn run(config_file: &Path) -> Exit {
    // kustomize passes no flags of ours: the limits come from RENDER_BLUEPRINT_MAX_*.
    let limits = match super::limits_from_env() {
        Ok(limits) => limits,
        Err(err) => return Exit::Unusable(err),
    };
    let config_text = std::env::var("KUSTOMIZE_PLUGIN_CONFIG_STRING")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(Ok)
        .unwrap_or_else(|| read_regular_file(config_file, limits.max_file_bytes));
    let config_text = match config_text {
        Ok(text) => text,
        Err(err) => return Exit::Unusable(format!("cannot read plugin config {}: {err}", config_file.display())),
    };
    let config = match read_yaml_documents(&config_text) {
        Ok(mut docs) if docs.len() == 1 && docs[0].is_object() => docs.remove(0),
        Ok(_) => return Exit::Unusable("plugin config must be one YAML mapping".into()),
        Err(err) => return Exit::Unusable(yaml_error_in("plugin config", &err)),
    };
    let text = match super::input::read_stdin(limits.max_input_bytes).map(String::from_utf8) {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => return Exit::Unusable("stdin is not UTF-8 text".into()),
        Err(err) => return Exit::Unusable(err),
    };
    let items = match read_yaml_documents(&text) {
        Ok(items) if items.iter().all(Value::is_object) => items,
        Ok(_) => return Exit::Unusable("stdin holds a document that is not a mapping".into()),
        Err(err) => return Exit::Unusable(yaml_error_in("stdin", &err)),
    };
    let root = std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT").map(PathBuf::from);
    let package = Package::new(root_or_cwd(root), limits);
    // Its items keep no source: which scalars were quoted is read from stdin now.
    let mut quoted = crate::doc::quoted_template_scalars(&text).into_iter();
    let items = items
        .into_iter()
        .map(|value| {
            let mut item = Item::from(value);
            if let Some(pointers) = quoted.next().filter(|pointers| !pointers.is_empty()) {
                item.set_quoted(Quoted::At(pointers));
            }
            item
        })
        .collect();
    let input = package.input(items, Some(config), vec![]);
    let output = pipeline::render(input, &package.files);
    report_results(&output.results, None);
    match output.items {
        Some(mut items) => {
            super::output::without_marks(&mut items);
            write_with(|out| write_stream(out, items.into_iter()))
        }
        None => Exit::Errors,
    }
}
