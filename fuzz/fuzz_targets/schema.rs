//! A YAML (or JSON) mapping `{schema, localTypes, jsonSchemaVersion, value}`, read with the
//! project's YAML reader: the schema, its `local://` references resolved, compiled as an import's
//! schema is, and the value (when given) validated against it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use render_blueprint::doc::{read_yaml_documents, Value};
use render_blueprint::imports::schema::Schema;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(documents) = read_yaml_documents(text) else { return };
    let Some(Value::Object(document)) = documents.into_iter().next() else { return };
    let schema = document.get("schema").cloned().unwrap_or(Value::Bool(true));
    let local_types = document.get("localTypes").and_then(Value::as_object).cloned().unwrap_or_default();
    let version = document.get("jsonSchemaVersion").and_then(Value::as_str);
    let Ok(compiled) = Schema::compile(&schema, &local_types, version) else { return };
    if let Some(value) = document.get("value") {
        let _ = compiled.check(value);
    }
});
