//! Any text as a Handlebars template: compiled, then rendered against a small values tree with
//! a small budget (so the budget, not the machine, stops large output); errors are rendered too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::limits::{Budget, Limits};
use render_blueprint::template::{BackendLookup, Engine, ResourceLookup};
use serde_json::json;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let budget = Budget::shared(Limits { max_output_bytes: 1 << 20, max_steps: 100_000, ..Limits::default() });
    let resources: ResourceLookup = Arc::new(|kind, name, _namespace| {
        (kind == "ConfigMap" && name == "cluster-info").then(|| json!({"data": {"region": "eu", "zones": [1, 2]}}))
    });
    let backends: BackendLookup = Arc::new(|path, _revision| match path {
        "tf" => Ok(json!({"outputs": {"vpc": "vpc-1"}})),
        _ => Err("no such backend".into()),
    });
    let mut engine = Engine::new(resources, backends, budget);
    let _ = engine.compile("part", "{{#each items}}{{this}},{{/each}}");
    if let Err(err) = engine.compile("t", source) {
        let _ = err.render(source);
        return;
    }
    let values = json!({
        "values": {"name": "web", "replicas": 3, "enabled": true, "missing": null, "tags": ["a", "b"]},
        "imports": {"flag": true, "settings": {"name": "web", "note": "say \"hi\"", "ports": [80, 443]}},
        "items": [1, "two", {"three": 3}, [4]],
        "b64": "aGVsbG8=",
        "nested": {"a": {"b": {"c": "deep"}}},
        "big": 18446744073709551615u64,
        "neg": -1,
        "float": 2.5
    });
    if let Err(err) = engine.render("t", &values) {
        let _ = err.render(source);
    }
});
