//! The subcommands that render files the user named (`render`, `explain`, `graph`) answer a
//! person rather than kpt or kustomize: nothing on stdout for a failed render, problems pointed at
//! the line of their file, and final manifests without the annotations that only a package in
//! flight carries.

use super::input::from_paths;
use super::output::{report_results, write_stdout, write_stream, write_with};
use super::{Exit, InputArgs, OutputFormat, RenderArgs};
use crate::doc::Value;
use crate::krm::{annotations as ann, is_local_config, Item};
use crate::limits::Limits;
use crate::pipeline;
use serde_json::json;
use std::path::PathBuf;

/// `render-blueprint render PATH…`: manifests from files, the final manifests on stdout.
pub(super) fn render(args: RenderArgs, root: Option<PathBuf>, limits: Limits) -> Exit {
    let (input, files) = match from_paths(&args.input, root, limits) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let output = pipeline::render(input, &files);
    report_results(&output.results, Some(&files));
    let Some(items) = output.items else {
        // The CLI prints nothing rather than a package that is missing its failed parts.
        return Exit::Errors;
    };
    let items = final_items(items, args.keep_local_config);
    match args.output {
        OutputFormat::Yaml => write_with(|out| write_stream(out, items)),
        OutputFormat::Json => {
            let items: Vec<Value> = items.map(Item::into_value).collect();
            let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
            write_stdout(&format!("{}\n", serde_json::to_string_pretty(&list).unwrap_or_default()))
        }
    }
}

/// The manifests a render prints: local-config items dropped (unless kept), and the annotations
/// of a package in flight removed. One item at a time; only its header is built for that.
pub(super) fn final_items(items: Vec<Item>, keep_local_config: bool) -> impl Iterator<Item = Item> {
    items.into_iter().filter(move |item| keep_local_config || !is_local_config(item.header())).map(|mut item| {
        let header = std::mem::take(item.header_mut());
        *item.header_mut() = strip_build_annotations(header);
        item
    })
}

/// `explain` and `graph`: a report of the render on stdout, even when the render failed (a
/// report of a dependency cycle is most useful then); problems on stderr as usual.
pub(super) fn report(
    args: &InputArgs,
    root: Option<PathBuf>,
    limits: Limits,
    format: impl Fn(&pipeline::Output) -> String,
) -> Exit {
    let (input, files) = match from_paths(args, root, limits) {
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

/// Removes the file-tracking annotations kpt and kustomize add while a package is in flight,
/// as `kpt fn sink` and kustomize's build do before writing manifests out, and our
/// `fn.blueprint.dev/applied` mark: printed manifests are never the next run's input, as kpt's
/// files are.
fn strip_build_annotations(mut item: Value) -> Value {
    let Some(metadata) = item.get_mut("metadata").and_then(Value::as_object_mut) else {
        return item;
    };
    if let Some(annotations) = metadata.get_mut("annotations").and_then(Value::as_object_mut) {
        annotations.retain(|key, _| {
            !key.starts_with("internal.config.kubernetes.io/")
                && ![ann::LEGACY_PATH, ann::LEGACY_INDEX, ann::APPLIED].contains(&key.as_str())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_annotations_are_stripped_from_final_manifests() {
        let item = json!({"metadata": {"name": "a", "annotations": {ann::PATH: "a.yaml", ann::LEGACY_INDEX: "0"}}});
        assert_eq!(strip_build_annotations(item), json!({"metadata": {"name": "a"}}));
    }
}
