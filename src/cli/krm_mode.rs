//! Without a subcommand the binary is a KRM function, whose contract (docs/krm.md) differs from
//! the file commands': a ResourceList is written back even when the render fails, and stdin's
//! bytes are shared with the items that are written back unchanged.

use super::input::{read_stdin, root_or_cwd, Package};
use super::output::{report_results, write_with};
use super::Exit;
use crate::diag::Diagnostic;
use crate::doc::Value;
use crate::krm::ResourceList;
use crate::limits::Limits;
use crate::pipeline;
use std::path::PathBuf;
use std::sync::Arc;

/// KRM mode: ResourceList in, ResourceList out.
pub(super) fn run(root: Option<PathBuf>, limits: Limits) -> Exit {
    let mut bytes = match read_stdin(limits.max_input_bytes) {
        Ok(bytes) => bytes,
        Err(err) => return Exit::Unusable(err),
    };
    // Shared by the items no step changes, which are written back from it (no copy).
    if let Err(err) = crate::krm::utf8(&bytes) {
        return Exit::Unusable(err.to_string());
    }
    bytes.shrink_to_fit();
    let text = Arc::new(String::from_utf8(bytes).unwrap_or_default());
    let mut list = match ResourceList::parse_shared(&text, limits.max_file_bytes) {
        Ok(list) => list,
        Err(err) => return Exit::Unusable(err.to_string()),
    };
    let mut package = Package::new(root_or_cwd(root), limits);
    package
        .files
        .check_items_are_here(list.items.iter().take(16).filter_map(|item| item.identity().path.map(String::from)));
    let under_kustomize = list.function_config.as_ref().is_some_and(super::output::is_kustomize_function_config);
    let input = package.input(std::mem::take(&mut list.items), list.function_config.take(), vec![]);
    let output = pipeline::render(input, &package.files);
    report_results(&output.results, None);
    let results: Vec<Value> = output.results.iter().map(Diagnostic::to_result).collect();
    let exit = Exit::from_results(&output.results);
    // A failed render writes the input items back unchanged. Parsing stdin again (only on this
    // path) is cheaper than keeping a copy of every item on the path that succeeds.
    let items = match output.items {
        Some(mut items) => {
            if under_kustomize {
                super::output::without_marks(&mut items);
            }
            items
        }
        None => match ResourceList::parse_shared(&text, limits.max_file_bytes) {
            Ok(original) => original.items,
            // The same bytes parsed a moment ago; never write an empty package instead.
            Err(err) => return Exit::Unusable(err.to_string()),
        },
    };
    match write_with(|out| list.write_to(out, items, results)) {
        Exit::Ok => exit,
        failure => failure,
    }
}
