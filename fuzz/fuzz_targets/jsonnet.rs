//! Any text as a Jsonnet file in an in-memory package (with a library and a data file to
//! import), evaluated with a small values tree. Each evaluation has its own session, bounded by
//! `jsonnet::TIME_LIMIT` (10 s, not adjustable), so scripts/fuzz gives this target a longer
//! libFuzzer -timeout: a timeout here means the limit did not stop the evaluation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::jsonnet::{evaluate, Session};
use render_blueprint::package::MemoryFiles;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let files = MemoryFiles(
        [
            ("f/main.jsonnet", text),
            ("f/lib.libsonnet", "{ suffix: '-1', inc(x):: x + 1 }"),
            ("f/data.json", "{\"a\": [1, 2], \"b\": \"c\"}"),
            ("g/other.jsonnet", "import '../f/lib.libsonnet'"),
        ]
        .into_iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect(),
    );
    let values = json!({"region": "eu", "n": 2, "cluster": {"name": "dev", "workers": {"count": 3}}, "list": [1, "a"]});
    let _ = evaluate(&Session::new(std::sync::Arc::default(), None), &files, "f/main.jsonnet", &values);
});
