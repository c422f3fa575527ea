//! Any bytes on stdin: parsed as a ResourceList, rendered, written back; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::krm::ResourceList;
use render_blueprint::package::MemoryFiles;
use render_blueprint::pipeline::{render, Input};

fuzz_target!(|data: &[u8]| {
    let Ok(mut list) = ResourceList::parse(data) else { return };
    let input = Input {
        items: std::mem::take(&mut list.items),
        function_config: list.function_config.take(),
        ..Default::default()
    };
    let output = render(input, &MemoryFiles(Default::default()));
    let results = output.results.iter().map(|d| d.to_result()).collect();
    let mut out = Vec::new();
    let _ = list.write_to(&mut out, output.items.unwrap_or_default(), results);
});
