//! `--set KEY=VALUE` assignments, one a line (NUL-separated when the input holds a NUL, so a
//! value may hold a newline), split and checked as the CLI's private `set_layer` does, each
//! turned into a layer by `values::assignment_layer` and deep-merged into a values tree, which
//! is then written out as YAML (a walk over the whole tree).
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::doc::{deep_merge, to_yaml};
use render_blueprint::values::assignment_layer;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let separator = if text.contains('\0') { '\0' } else { '\n' };
    let mut values = json!({"replicas": 2, "ingress": {"enabled": false, "hosts": ["a"]}, "cluster": {"name": "dev"}});
    for assignment in text.split(separator) {
        // As src/cli/input.rs `set_layer` splits and checks them.
        let Some((key, value)) = assignment.split_once('=') else { continue };
        if key.is_empty() || key.split('.').any(str::is_empty) {
            continue;
        }
        let Ok(layer) = assignment_layer(key, value) else { continue };
        deep_merge(&mut values, layer);
    }
    let _ = to_yaml(&values);
});
