//! Landscaper checks a blueprint before it renders anything: its declarations (names, types,
//! schemas, execution engines), then each import's value against its schema or target type. Both
//! are kept together and apart from rendering, so every message follows Landscaper's text
//! (apis/core/validation/blueprint.go, pkg/landscaper/installations/imports/constructor.go).

use super::schema::{self, Schema};
use super::step::{Declared, ImportReport, ScopeReport, Step, Wire};
use crate::diag::{Diagnostic, Kind};
use crate::doc::{FieldPath, Map, Value};
use crate::model::imports::{self as model, import_type, Blueprint, ImportDecl};
use std::collections::{HashMap, HashSet};

/// Landscaper's blueprint validation: names, duplicates across nesting levels, conditional
/// imports only under optional imports, types and their schema/targetType, GoTemplate or
/// Handlebars executions.
pub(super) fn validate(step: &mut Step, blueprint: &Blueprint, origin: &Declared) {
    let mut names = HashSet::new();
    validate_imports(step, &blueprint.imports, "imports", "imports", &mut names, origin);
    let mut export_names = HashSet::new();
    for (i, export) in blueprint.exports.iter().enumerate() {
        let path = format!("exports[{i}][{}]", export.name);
        let field = format!("exports[{i}]");
        if export.name.is_empty() {
            step.results
                .push(origin.error(format!("exports[{i}].name: Required value: name must not be empty"), &field));
        } else if !export_names.insert(export.name.clone()) {
            step.results.push(origin.error(format!("{path}: Duplicate value: \"duplicated export name\""), &field));
        }
        match (export.kind.as_deref(), &export.schema, &export.target_type) {
            (Some("data") | None, Some(_), None) | (Some("target") | None, None, Some(_)) => {}
            (Some("data"), None, _) => step
                .results
                .push(origin.error(format!("{path}: Required value: Schema must not be empty for type data"), &field)),
            (Some("target"), _, None) => step.results.push(
                origin.error(format!("{path}: Required value: TargetType must not be empty for type target"), &field),
            ),
            (Some(other), _, _) if other != "data" && other != "target" => step.results.push(origin.error(
                format!("{path}.type: Unsupported value: {other:?}: supported values: \"data\", \"target\""),
                &field,
            )),
            _ => step.results.push(
                origin.error(format!("{path}: Invalid value: exactly one of [Schema, TargetType] must be set"), &field),
            ),
        }
    }
    for (list, executions) in [
        ("importExecutions", &blueprint.import_executions),
        ("deployExecutions", &blueprint.deploy_executions),
        ("exportExecutions", &blueprint.export_executions),
        ("subinstallationExecutions", &blueprint.subinstallation_executions),
    ] {
        for (i, execution) in executions.iter().enumerate() {
            let field = format!("{list}[{i}]");
            match execution.kind.as_str() {
                "GoTemplate" | "Handlebars" => {}
                "Spiff" => step.results.push(origin.error(
                    "type Spiff is not supported: GoTemplate and Handlebars are the supported engines (type: \
                     GoTemplate or type: Handlebars)",
                    &format!("{field}.type"),
                )),
                other => step.results.push(origin.error(
                    format!(
                        "type {other:?} is not supported: GoTemplate and Handlebars are the supported engines (type: \
                         GoTemplate or type: Handlebars)"
                    ),
                    &format!("{field}.type"),
                )),
            }
            if execution.template.is_some() == execution.file.is_some() {
                step.results.push(origin.error("set exactly one of template and file", &field));
            }
        }
    }
}

fn validate_imports(
    step: &mut Step,
    decls: &[ImportDecl],
    path: &str,
    field: &str,
    names: &mut HashSet<String>,
    origin: &Declared,
) {
    for (i, decl) in decls.iter().enumerate() {
        let def_path = format!("{path}[{i}][{}]", decl.name);
        let def_field = format!("{field}[{i}]");
        if decl.name.is_empty() {
            step.results
                .push(origin.error(format!("{path}[{i}].name: Required value: name must not be empty"), &def_field));
        } else if !names.insert(decl.name.clone()) {
            step.results
                .push(origin.error(format!("{def_path}: Duplicate value: \"duplicate import name\""), &def_field));
        }
        match (import_type(decl), &decl.schema, &decl.target_type) {
            ("", None, None) => step.results.push(origin.error(
                format!("{def_path}: Required value: either schema or targetType must not be empty"),
                &def_field,
            )),
            ("data", None, _) => step.results.push(origin.error(
                format!("{def_path}: Required value: Schema must not be empty for type data"),
                &def_field,
            )),
            ("target" | "targetList" | "targetMap", _, None) => step.results.push(origin.error(
                format!("{def_path}: Required value: TargetType must not be empty for type {}", import_type(decl)),
                &def_field,
            )),
            ("data" | "target" | "targetList" | "targetMap", _, _) => {}
            (other, _, _) => step.results.push(origin.error(
                format!(
                    "{def_path}.type: Unsupported value: {other:?}: supported values: \"data\", \"target\", \"targetList\", \"targetMap\""
                ),
                &def_field,
            )),
        }
        if !decl.imports.is_empty() {
            if decl.is_required() {
                step.results.push(origin.error(
                    format!("{def_path}: Invalid value: {:?}: conditional imports on required import", decl.name),
                    &def_field,
                ));
            }
            validate_imports(
                step,
                &decl.imports,
                &format!("{def_path}.conditionalImports"),
                &format!("{def_field}.imports"),
                names,
                origin,
            );
        }
    }
}

/// Resolves declared imports from `source` (recursively for conditional imports).
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve_imports(
    step: &mut Step,
    blueprint: &Blueprint,
    decls: &[ImportDecl],
    field: &str,
    source: (&Map, &HashMap<String, Wire>),
    origin: &Declared,
    imports: &mut Map,
    report: &mut ScopeReport,
) {
    let (values, wiring) = source;
    for (i, decl) in decls.iter().enumerate() {
        let decl_field = format!("{field}[{i}]");
        let kind = import_type(decl);
        let (value, from) = match (values.get(&decl.name), decl.is_required(), &decl.default) {
            (Some(value), _, _) => (value.clone(), "value"),
            (None, false, Some(default)) if !default.value.is_null() => (default.value.clone(), "default"),
            (None, false, _) => {
                report.imports.push(ImportReport::absent(&decl.name, "not evaluated"));
                skip_nested(&decl.imports, report);
                continue;
            }
            (None, true, _) => {
                let message =
                    format!("blueprint defines import {:?} of type {kind}, which is not satisfied", decl.name);
                step.results.push(origin.error(message, &decl_field));
                report.imports.push(ImportReport::absent(&decl.name, "not satisfied"));
                continue;
            }
        };
        let wire = wiring.get(&decl.name).filter(|_| from == "value");
        // Where a value that fails its check came from: the values layers (top level) or the
        // wiring (a subinstallation).
        let came_from = wire.map(|w| if w.from.is_empty() { w.label.clone() } else { w.from.join(" and ") });
        let verdict = match kind {
            "data" => check_data(step, blueprint, decl, (&value, from, came_from.as_deref()), origin, &decl_field),
            _ => check_target(step, decl, &value, origin, &decl_field),
        };
        let mut secret =
            decl.schema.as_ref().map(|s| schema::secret_paths(s, &blueprint.local_types)).unwrap_or_default();
        secret.extend(wire.into_iter().flat_map(|w| w.secret.iter().cloned()));
        report.imports.push(ImportReport {
            name: decl.name.clone(),
            source: from,
            verdict,
            value: Some(value.clone()),
            wired: wire.map(|w| w.label.clone()).unwrap_or_default(),
            secret,
        });
        imports.insert(decl.name.clone(), value);
        if !decl.imports.is_empty() {
            resolve_imports(
                step,
                blueprint,
                &decl.imports,
                &format!("{decl_field}.imports"),
                source,
                origin,
                imports,
                report,
            );
        }
    }
}

fn skip_nested(decls: &[ImportDecl], report: &mut ScopeReport) {
    for decl in decls {
        report.imports.push(ImportReport::absent(&decl.name, "parent import absent"));
        skip_nested(&decl.imports, report);
    }
}

fn check_data(
    step: &mut Step,
    blueprint: &Blueprint,
    decl: &ImportDecl,
    (value, from, came_from): (&Value, &str, Option<&str>),
    origin: &Declared,
    field: &str,
) -> String {
    let Some(schema) = &decl.schema else { return "no schema".into() };
    // A default that fails its own schema is the declaration's mistake: point at it; a value
    // given is the user's: say where it was given.
    let (failure_field, whose) = match (from, came_from) {
        ("default", _) => (format!("{field}.default.value"), " (the value is the import's default)".to_string()),
        (_, Some(layers)) => (field.to_string(), format!(" (the value is from {layers})")),
        _ => (field.to_string(), String::new()),
    };
    match Schema::compile(schema, &blueprint.local_types, blueprint.json_schema_version.as_deref()) {
        Err(message) => {
            step.results.push(origin.error(format!("import {:?}: {message}", decl.name), &format!("{field}.schema")));
            "schema error".into()
        }
        Ok(schema) => match schema.failures(value).as_slice() {
            [] => "valid".into(),
            failures => {
                // The value's own place is the import's name, not Landscaper's `(root)`.
                let failures: Vec<String> = failures
                    .iter()
                    .map(|failure| match failure.is_root() {
                        true => format!("{}: {}", decl.name, failure.message),
                        false => format!("{}.{failure}", decl.name),
                    })
                    .collect();
                let message = format!(
                    "import {:?}: imported datatype does not have the expected schema: {}{whose}",
                    decl.name,
                    failures.join("; ")
                );
                let at_value = FieldPath::root().key("spec").key("values").key(&decl.name);
                step.results.push(match (came_from, &step.config) {
                    // In the functionConfig's file: at the value's own line (a functionConfig
                    // without a file leaves the declaration's place the better one).
                    (Some("spec.values"), Some(config)) if config.file().is_some() => {
                        Diagnostic::error(Kind::Render, format!("{}{message}", origin.prefix))
                            .at(at_value)
                            .about_origin(config)
                    }
                    _ => origin.error(&message, &failure_field),
                });
                message
            }
        },
    }
}

/// A target value's type is `spec.type` (a Target object) or `type`; a targetMap holds targets.
fn check_target(step: &mut Step, decl: &ImportDecl, value: &Value, origin: &Declared, field: &str) -> String {
    let expected = model::full_target_type(decl.target_type.as_deref().unwrap_or_default());
    let type_of_target = |v: &Value| {
        v.get("spec").and_then(|s| s.get("type")).or_else(|| v.get("type")).and_then(Value::as_str).map(str::to_string)
    };
    let targets: Vec<(String, &Value)> = match (import_type(decl), value) {
        ("targetMap", Value::Object(map)) => map.iter().map(|(k, v)| (format!("[{k}]"), v)).collect(),
        ("targetList", Value::Array(list)) => list.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect(),
        _ => vec![(String::new(), value)],
    };
    for (at, target) in targets {
        match type_of_target(target) {
            Some(actual) if actual == expected => {}
            actual => {
                let actual = actual.unwrap_or_else(|| "missing".into());
                let message =
                    format!("import {:?}{at}: imported target type is {actual} but expected {expected}", decl.name);
                step.results.push(origin.error(&message, field));
                return message;
            }
        }
    }
    "valid".into()
}
