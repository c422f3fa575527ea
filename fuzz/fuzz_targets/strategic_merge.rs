//! A JSON array `[original, patch]` through the strategic merge patch, with the Deployment
//! schema and without one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::patch::strategic::{apply, schema_of};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(pair)) = serde_json::from_slice::<Value>(data) else { return };
    let [Value::Object(original), Value::Object(patch)] = pair.as_slice() else { return };
    for schema in [schema_of("apps/v1", "Deployment"), None] {
        let mut target = original.clone();
        let _ = apply(&mut target, patch, schema);
    }
});
