//! JSON Schema for import and export values, with the `jsonschema` crate (no network features).
//! `$ref: local://T` is replaced by `localTypes.T` before compiling, as Landscaper's reference
//! resolver does (pkg/landscaper/jsonschema/reference.go), with its error texts for unknown
//! types and cycles. The draft comes from `jsonSchemaVersion` (default 2019-09).

use crate::doc::{Map, Value};
use jsonschema::{Draft, Validator};

pub const DEFAULT_VERSION: &str = "https://json-schema.org/draft/2019-09/schema";

/// The draft a `jsonSchemaVersion` names.
pub fn draft(version: Option<&str>) -> Result<Draft, String> {
    let version = version.unwrap_or(DEFAULT_VERSION);
    let drafts = [
        ("draft-04", Draft::Draft4),
        ("draft-06", Draft::Draft6),
        ("draft-07", Draft::Draft7),
        ("2019-09", Draft::Draft201909),
        ("2020-12", Draft::Draft202012),
    ];
    drafts.iter().find(|(marker, _)| version.contains(marker)).map(|(_, d)| *d).ok_or_else(|| {
        format!("jsonSchemaVersion {version:?} is not supported: use draft-04, draft-06, draft-07, 2019-09 or 2020-12")
    })
}

/// Replaces every `{$ref: local://T}` (siblings merged over the type) by `localTypes.T`.
pub fn resolve_local(schema: &Value, local_types: &Map) -> Result<Value, String> {
    resolve(schema, local_types, &mut Vec::new())
}

fn resolve(schema: &Value, local_types: &Map, stack: &mut Vec<String>) -> Result<Value, String> {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if let Some(name) = reference.strip_prefix("local://") {
                    if name.contains('/') {
                        return Err(format!(
                            "error resolving reference {reference:?}: a path is not supported for local resources"
                        ));
                    }
                    if stack.iter().any(|r| r == reference) {
                        return Err(format!("cyclic references detected: reference {reference:?} is part of a cycle"));
                    }
                    let Some(local) = local_types.get(name) else {
                        return Err(format!(
                            "error resolving reference {reference:?}: type {name} is not defined in local types"
                        ));
                    };
                    stack.push(reference.clone());
                    let mut resolved = resolve(local, local_types, stack)?;
                    stack.pop();
                    if let Value::Object(resolved_map) = &mut resolved {
                        for (key, value) in map.iter().filter(|(k, _)| *k != "$ref") {
                            resolved_map.insert(key.clone(), resolve(value, local_types, stack)?);
                        }
                    }
                    return Ok(resolved);
                }
            }
            let mut out = Map::new();
            for (key, value) in map {
                out.insert(key.clone(), resolve(value, local_types, stack)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => {
            Ok(Value::Array(items.iter().map(|i| resolve(i, local_types, stack)).collect::<Result<_, _>>()?))
        }
        other => Ok(other.clone()),
    }
}

const TYPES: &str = "string, number, integer, boolean, object, array or null";

/// Why a schema does not compile, with the place inside it and what to write.
fn explain_invalid_schema(err: &jsonschema::ValidationError) -> String {
    use jsonschema::error::ValidationErrorKind;
    let pointer = err.instance_path().to_string();
    let place = if pointer.is_empty() {
        String::new()
    } else {
        format!(" at {}", pointer.trim_start_matches('/').replace('/', "."))
    };
    let detail = match err.kind() {
        ValidationErrorKind::Referencing(jsonschema::ReferencingError::Unretrievable { uri, .. }) => format!(
            "$ref {uri:?} is not fetched (no network): copy that schema into localTypes and refer to it \
             as local://<name>"
        ),
        ValidationErrorKind::Referencing(jsonschema::ReferencingError::PointerToNowhere { pointer }) => {
            format!("$ref \"#{pointer}\" points to nothing: no {pointer:?} in this schema")
        }
        _ if pointer.is_empty() && !err.instance().is_object() && !err.instance().is_boolean() => {
            format!("a schema is a mapping such as {{type: string}}, got {}", err.instance())
        }
        _ if pointer.ends_with("/type") => {
            format!("type {} is not a JSON Schema type: use {TYPES} (or a list of them)", err.instance())
        }
        _ => err.to_string(),
    };
    format!("invalid JSON schema{place}: {detail}")
}

/// Local types are inlined before compiling, so the place the crate names is inside the inlined
/// copy. Finds the local type at fault: one the schema uses (directly or through other types)
/// that fails on its own, and not only through another failing type; with its own message.
fn faulty_local_type<'m>(
    schema: &Value,
    local_types: &'m Map,
    build: &dyn Fn(&Value) -> Result<Validator, String>,
) -> Option<(&'m str, String)> {
    let uses = |value: &Value, name: &str| value.to_string().contains(&format!("\"local://{name}\""));
    let mut used: Vec<&str> = Vec::new();
    let mut frontier = vec![schema];
    while let Some(value) = frontier.pop() {
        for (name, local) in local_types {
            if !used.contains(&name.as_str()) && uses(value, name) {
                used.push(name);
                frontier.push(local);
            }
        }
    }
    let failing: Vec<(&str, String)> = used
        .iter()
        .filter_map(|name| {
            let local = local_types.get(*name)?;
            build(local).err().filter(|m| !m.starts_with("cyclic")).map(|m| (*name, m))
        })
        .collect();
    failing.iter().find_map(|(name, message)| {
        let local = local_types.get(*name)?;
        let through_other = failing.iter().any(|(other, _)| other != name && uses(local, other));
        (!through_other).then(|| (*name, message.clone()))
    })
}

/// A compiled schema.
pub struct Schema(Validator);

impl Schema {
    pub fn compile(schema: &Value, local_types: &Map, version: Option<&str>) -> Result<Self, String> {
        let draft = draft(version)?;
        let build = |schema: &Value| -> Result<Validator, String> {
            let resolved = resolve_local(schema, local_types)?;
            jsonschema::options().with_draft(draft).build(&resolved).map_err(|err| explain_invalid_schema(&err))
        };
        build(schema).map(Schema).map_err(|message| match faulty_local_type(schema, local_types, &build) {
            Some((name, own)) => format!("local type {name:?}: {own}"),
            None => message,
        })
    }

    /// Every failure as `<field path>: <what is wrong>`; the root is `(root)`, as Landscaper
    /// prints it.
    pub fn check(&self, value: &Value) -> Vec<String> {
        self.0
            .iter_errors(value)
            .map(|err| {
                let pointer = err.instance_path().to_string();
                let path = if pointer.is_empty() {
                    "(root)".to_string()
                } else {
                    pointer.trim_start_matches('/').replace('/', ".")
                };
                format!("{path}: {err}")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn types() -> Map {
        json!({"port": {"type": "integer", "minimum": 1},
               "endpoint": {"type": "object", "properties": {"port": {"$ref": "local://port"}}, "required": ["port"]},
               "a": {"$ref": "local://b"}, "b": {"$ref": "local://a"}})
        .as_object()
        .cloned()
        .unwrap_or_default()
    }

    #[test]
    fn local_types_resolve_and_validate() {
        let schema = Schema::compile(&json!({"$ref": "local://endpoint"}), &types(), None);
        let schema = schema.unwrap_or_else(|e| panic!("{e}"));
        assert!(schema.check(&json!({"port": 8080})).is_empty());
        let errors = schema.check(&json!({"port": 0}));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("port: "), "{errors:?}");
        assert!(schema.check(&json!({}))[0].starts_with("(root): "));
    }

    #[test]
    fn unknown_types_and_cycles_are_errors() {
        let unknown = Schema::compile(&json!({"$ref": "local://nope"}), &types(), None).err();
        assert_eq!(
            unknown,
            Some("error resolving reference \"local://nope\": type nope is not defined in local types".into())
        );
        let cycle = Schema::compile(&json!({"$ref": "local://a"}), &types(), None).err().unwrap_or_default();
        assert!(cycle.starts_with("cyclic references detected"), "{cycle}");
    }

    #[test]
    fn invalid_schemas_say_where_and_what_to_write() {
        let compile = |schema: Value, types: Value| {
            Schema::compile(&schema, types.as_object().unwrap_or(&Map::new()), None).err().unwrap_or_default()
        };
        let err = compile(json!({"type": 12}), json!({}));
        assert!(err.starts_with("invalid JSON schema at type: type 12 is not a JSON Schema type"), "{err}");
        let err = compile(json!("string"), json!({}));
        assert_eq!(err, "invalid JSON schema: a schema is a mapping such as {type: string}, got \"string\"");
        let err = compile(json!({"$ref": "https://example.com/s.json"}), json!({}));
        assert!(err.contains("is not fetched (no network)"), "{err}");
        // The fault is in b, reached through a: b is named.
        let types = json!({"a": {"properties": {"x": {"$ref": "local://b"}}}, "b": {"type": "map"}, "c": {"type": 1}});
        let err = compile(json!({"$ref": "local://a"}), types);
        assert!(err.starts_with("local type \"b\": invalid JSON schema at type"), "{err}");
    }

    #[test]
    fn drafts_by_version() {
        assert_eq!(draft(Some("http://json-schema.org/draft-07/schema#")), Ok(Draft::Draft7));
        assert_eq!(draft(None), Ok(Draft::Draft201909));
        assert!(draft(Some("draft-99")).is_err());
    }
}
