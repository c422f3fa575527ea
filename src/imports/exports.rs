//! A scope's exports are what its parent and siblings see of it, so they are checked against
//! their declarations before anything reads them, and written where Flux and `explain` find them
//! (the `<scope>-exports` ConfigMap).

use super::executions::{execute, Phase};
use super::schema::Schema;
use super::step::{Declared, Step};
use crate::diag::Severity;
use crate::doc::{deep_merge, Map, Value};
use crate::krm::{annotations as ann, set_annotation};
use crate::model::imports::{self as model, Blueprint, ExportDecl};
use crate::render::Generated;
use serde_json::json;
use std::collections::HashMap;

/// Export executions, deep-merged in order; undeclared exports dropped; declared ones checked
/// against their schema; written to the ConfigMap `<scope>-exports`.
pub(super) fn render(
    step: &mut Step,
    blueprint: &Blueprint,
    scope: &str,
    origin: &Declared,
    imports: &Map,
    dataobjects: &Map,
) -> Option<Map> {
    if blueprint.export_executions.is_empty() && blueprint.exports.is_empty() {
        return Some(Map::new());
    }
    let mut merged = Value::Object(Map::new());
    for (i, execution) in blueprint.export_executions.iter().enumerate() {
        let field = format!("exportExecutions[{i}]");
        let rendered = execute(step, execution, scope, &field, origin, Phase::Export, imports, Some(dataobjects))?;
        if let Some(exports) = rendered.get("exports") {
            deep_merge(&mut merged, exports.clone());
        }
    }
    let Value::Object(mut merged) = merged else { return None };
    let declared: HashMap<&str, &ExportDecl> = blueprint.exports.iter().map(|e| (e.name.as_str(), e)).collect();
    let undeclared: Vec<String> = merged.keys().filter(|k| !declared.contains_key(k.as_str())).cloned().collect();
    for key in undeclared {
        merged.shift_remove(&key);
        let message = format!("export {key:?} is not declared by the blueprint and is dropped");
        step.results.push(origin.diagnostic(Severity::Warning, message, "exportExecutions"));
    }
    let mut failed = false;
    for (i, export) in blueprint.exports.iter().enumerate() {
        let field = format!("exports[{i}]");
        let Some(value) = merged.get(&export.name) else {
            step.results.push(
                origin
                    .error(format!("export {:?} is declared but no export execution produced it", export.name), &field),
            );
            failed = true;
            continue;
        };
        if let (Some(expected), None | Some("target")) = (&export.target_type, export.kind.as_deref()) {
            // Landscaper reads the exported target template's `type` (exports/constructor.go).
            let expected = model::full_target_type(expected);
            let problem = match value.get("type").and_then(Value::as_str) {
                None => {
                    Some("exported target does not match the expected target template schema: type is not found".into())
                }
                Some(actual) if actual != expected => {
                    Some(format!("exported target type is {actual} but expected {expected}"))
                }
                Some(_) => None,
            };
            if let Some(problem) = problem {
                step.results.push(origin.error(format!("export {:?}: {problem}", export.name), &field));
                failed = true;
            }
        }
        if let Some(schema) = &export.schema {
            match Schema::compile(schema, &blueprint.local_types, blueprint.json_schema_version.as_deref()) {
                Err(message) => {
                    step.results
                        .push(origin.error(format!("export {:?}: {message}", export.name), &format!("{field}.schema")));
                    failed = true;
                }
                Ok(schema) => {
                    let failures = schema.check(value);
                    if !failures.is_empty() {
                        let message = format!(
                            "export {:?}: exported data does not satisfy the configured schema: {}",
                            export.name,
                            failures.join("; ")
                        );
                        step.results.push(origin.error(message, &field));
                        failed = true;
                    }
                }
            }
        }
    }
    if failed {
        return None;
    }
    let data: Map = merged
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Value::String(v.as_str().map_or_else(|| serde_json::to_string(v).unwrap_or_default(), str::to_string)),
            )
        })
        .collect();
    let name = format!("{}-exports", scope.replace('/', "-"));
    let mut config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data});
    set_annotation(&mut config_map, ann::LOCAL_CONFIG, "true");
    step.generated.push(Generated { item: config_map, substitute: false });
    Some(merged)
}
