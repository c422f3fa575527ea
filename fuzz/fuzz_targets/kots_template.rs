//! Any text through the KOTS template preprocessor, plain and inside a repeatable clone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::repeat::kots::{render_text, Scope};
use serde_json::{json, Map, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let to_map = |v: Value| v.as_object().cloned().unwrap_or_default();
    let values: Map<String, Value> = to_map(json!({"port": "80", "n": "3", "flag": "1", "cert": "aGVsbG8="}));
    let filenames = to_map(json!({"cert": "tls.crt"}));
    let instance = to_map(json!({"port": "81"}));
    let value = json!("v1");
    let budget = render_blueprint::limits::Budget::default();
    let _ = render_text(text, &Scope { budget: &budget, values: &values, filenames: &filenames, item: None, group: None });
    let scope = Scope {
        budget: &budget,
        values: &values,
        filenames: &filenames,
        item: Some(("port", "port-1", &value)),
        group: Some(("east", &instance)),
    };
    let _ = render_text(text, &scope);
});
