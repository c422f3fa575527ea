//! Any text as an expression: compiled and evaluated against a small environment.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::expr::{Expression, NoFiles};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let Ok(expression) = Expression::compile(source) else { return };
    let env = serde_json::json!({"a": 1, "b": "two", "c": [1, 2, {"d": null}], "e": {"f": true, "g": 2.5}});
    let _ = expression.eval(&env, &NoFiles, &render_blueprint::limits::Budget::default());
});
