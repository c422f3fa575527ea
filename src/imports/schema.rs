//! JSON Schema for import and export values, with the `jsonschema` crate (no network features).
//! `$ref: local://T` (and `local://T#/a/b`, a place inside T) resolves to `localTypes.T` before
//! compiling, as Landscaper's reference resolver does (pkg/landscaper/jsonschema/reference.go),
//! with its error texts for unknown types, paths, fragments and cycles; each type is resolved
//! once, into the schema's definitions. The draft comes from `jsonSchemaVersion` (default
//! 2019-09).

use crate::doc::{Map, Value};
use crate::limits::MAX_DEPTH;
use jsonschema::{Draft, Validator};
use std::collections::HashMap;

pub const DEFAULT_VERSION: &str = "https://json-schema.org/draft/2019-09/schema";

/// The draft a `jsonSchemaVersion` names.
pub fn draft(version: Option<&str>) -> Result<Draft, SchemaError> {
    let version = version.unwrap_or(DEFAULT_VERSION);
    let drafts = [
        ("draft-04", Draft::Draft4),
        ("draft-06", Draft::Draft6),
        ("draft-07", Draft::Draft7),
        ("2019-09", Draft::Draft201909),
        ("2020-12", Draft::Draft202012),
    ];
    let found = drafts.iter().find(|(marker, _)| version.contains(marker)).map(|(_, d)| *d);
    found.ok_or_else(|| SchemaError::Version(version.to_string()))
}

/// Rewrites every `{$ref: local://T}` to a reference to `T` under the root's `$defs`
/// (`definitions` before 2019-09), each local type resolved once: types that refer to each other
/// twice per level stay linear instead of being inlined exponentially. A reference with sibling
/// keys keeps Landscaper's meaning (the siblings merged over the type), by merging over the
/// type's top level only; its nested references stay references.
pub fn resolve_local(schema: &Value, local_types: &Map, draft: Draft) -> Result<Value, SchemaError> {
    let defs_key = match draft {
        Draft::Draft4 | Draft::Draft6 | Draft::Draft7 => "definitions",
        _ => "$defs",
    };
    let mut resolver = Resolver { local_types, defs_key, resolved: HashMap::new(), order: Vec::new() };
    // The root is merged over rather than referred to: a root `$ref` could hide its siblings.
    let mut root = match local_reference(schema) {
        Some(_) => resolver.merged(schema, 0)?,
        None => resolver.rewrite(schema, 0)?,
    };
    if resolver.order.is_empty() {
        return Ok(root);
    }
    let Value::Object(map) = &mut root else { return Ok(root) };
    let defs = map.entry(defs_key.to_string()).or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(defs) = defs else {
        return Err(SchemaError::DefsNotMapping { defs_key });
    };
    for name in resolver.order {
        if defs.contains_key(&name) {
            return Err(SchemaError::Clash { name, defs_key });
        }
        let Some(Some(resolved)) = resolver.resolved.remove(&name) else { continue };
        defs.insert(name, resolved);
    }
    Ok(root)
}

/// `local://T` of a `{$ref: local://T, …}` mapping.
fn local_reference(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str().filter(|r| r.starts_with("local://"))
}

struct Resolver<'a> {
    local_types: &'a Map,
    defs_key: &'static str,
    /// Each local type reached: `None` while it is being resolved (a second visit is a cycle).
    resolved: HashMap<String, Option<Value>>,
    /// Local types in the order they were resolved.
    order: Vec<String>,
}

impl Resolver<'_> {
    /// The schema with every local reference pointing into the definitions.
    fn rewrite(&mut self, schema: &Value, depth: usize) -> Result<Value, SchemaError> {
        if depth > MAX_DEPTH {
            return Err(SchemaError::TooDeep);
        }
        match schema {
            Value::Object(map) => {
                if local_reference(schema).is_some() {
                    if map.len() > 1 {
                        return self.merged(schema, depth);
                    }
                    let target = self.visit(schema, depth)?;
                    let pointer: String = std::iter::once(target.name.as_str())
                        .chain(target.inside.iter().map(String::as_str))
                        .map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1")))
                        .collect();
                    return Ok(serde_json::json!({"$ref": format!("#/{}{pointer}", self.defs_key)}));
                }
                let mut out = Map::new();
                for (key, value) in map {
                    out.insert(key.clone(), self.rewrite(value, depth + 1)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => {
                Ok(Value::Array(items.iter().map(|i| self.rewrite(i, depth + 1)).collect::<Result<_, _>>()?))
            }
            other => Ok(other.clone()),
        }
    }

    /// `{$ref: local://T, …siblings}` as T's resolved top level (or the place in T its fragment
    /// names) with the siblings merged over it.
    fn merged(&mut self, schema: &Value, depth: usize) -> Result<Value, SchemaError> {
        let target = self.visit(schema, depth)?;
        let mut resolved = self.resolved.get(&target.name).cloned().flatten().unwrap_or(Value::Null);
        for key in &target.inside {
            resolved = resolved.get(key.as_str()).cloned().unwrap_or(Value::Null);
        }
        if let (Value::Object(resolved_map), Value::Object(map)) = (&mut resolved, schema) {
            for (key, value) in map.iter().filter(|(k, _)| *k != "$ref") {
                resolved_map.insert(key.clone(), self.rewrite(value, depth + 1)?);
            }
        }
        Ok(resolved)
    }

    /// Resolves the local type `schema` refers to, once; returns where the reference points.
    /// Errors as Landscaper's.
    fn visit(&mut self, schema: &Value, depth: usize) -> Result<Target, SchemaError> {
        let reference = local_reference(schema).unwrap_or_default();
        let (name, fragment) = split_reference(reference);
        if name.contains('/') {
            return Err(SchemaError::reference(reference, SchemaError::PathNotSupported));
        }
        let name = name.to_string();
        match self.resolved.get(&name) {
            Some(Some(_)) => {}
            Some(None) => return Err(SchemaError::Cycle { reference: reference.to_string() }),
            None => {
                let Some(local) = self.local_types.get(&name) else {
                    return Err(SchemaError::reference(reference, SchemaError::Undefined { name }));
                };
                self.resolved.insert(name.clone(), None);
                // A type that is itself a reference with siblings is merged, as Landscaper inlines it.
                let resolved = match local_reference(local) {
                    Some(_) => self.merged(local, depth + 1)?,
                    None => self.rewrite(local, depth + 1)?,
                };
                self.resolved.insert(name.clone(), Some(resolved));
                self.order.push(name.clone());
            }
        }
        match fragment {
            None | Some("") => Ok(Target { name, inside: Vec::new() }),
            Some(fragment) => {
                self.follow(&name, fragment, depth).map_err(|problem| SchemaError::reference(reference, problem))
            }
        }
    }

    /// The place a fragment names inside local type `name`, walked as Landscaper walks the
    /// inlined type (resolveFragment): `/`-separated mapping keys, no escapes and no list
    /// indexes. A local reference met on the way is followed, since Landscaper has inlined it.
    fn follow(&mut self, name: &str, fragment: &str, depth: usize) -> Result<Target, SchemaError> {
        let mut target = Target { name: name.to_string(), inside: Vec::new() };
        let mut current = self.local_types.get(name).cloned().unwrap_or(Value::Null);
        let mut walked = String::from("[]");
        let mut hops = 0;
        for key in fragment.trim_start_matches('/').trim_end_matches('/').split('/') {
            // A reference without siblings is its target; with siblings, they are merged over it.
            while local_reference(&current).is_some() && (key == "$ref" || current.get(key).is_none()) {
                hops += 1;
                if hops > MAX_DEPTH {
                    return Err(SchemaError::FragmentTooDeep { fragment: fragment.to_string() });
                }
                target = self.visit(&current, depth + 1)?;
                current = self.local_types.get(&target.name).cloned().unwrap_or(Value::Null);
                for inside in &target.inside {
                    current = current.get(inside.as_str()).cloned().unwrap_or(Value::Null);
                }
            }
            let Value::Object(map) = &current else {
                return Err(SchemaError::NotAnObject { fragment: fragment.to_string(), walked });
            };
            let Some(next) = map.get(key) else {
                let (fragment, key) = (fragment.to_string(), key.to_string());
                return Err(SchemaError::NoField { fragment, walked, key });
            };
            current = next.clone();
            target.inside.push(key.to_string());
            walked = format!("{walked}.{key}");
        }
        Ok(target)
    }
}

/// Where a local reference points: a resolved local type, and the keys of a place inside it.
struct Target {
    name: String,
    inside: Vec<String>,
}

/// `local://T#/a/b` as (`T`, `Some("/a/b")`); a query (`?…`) is ignored, as Go's URL parser
/// sets it apart.
fn split_reference(reference: &str) -> (&str, Option<&str>) {
    let rest = reference.strip_prefix("local://").unwrap_or(reference);
    let (rest, fragment) = match rest.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (rest, None),
    };
    (rest.split('?').next().unwrap_or_default(), fragment)
}

const TYPES: &str = "string, number, integer, boolean, object, array or null";

/// At most this many secret places per schema; beyond, the whole value counts as secret.
const MAX_SECRET_PATHS: usize = 256;

/// The places in a value that its schema marks secret (`format: password` or `writeOnly: true`)
/// as key paths (an empty path: the whole value), so `explain` can redact them. `properties`,
/// `allOf`/`anyOf`/`oneOf` and `local://` types are followed; a secret under list items or
/// `additionalProperties`/`patternProperties` makes the whole value at that place secret, since
/// which keys hold it is not known. Each local type is walked once.
pub fn secret_paths(schema: &Value, local_types: &Map) -> Vec<Vec<String>> {
    Secrets { local_types, memo: HashMap::new(), expanding: Vec::new() }.paths(schema, 0)
}

struct Secrets<'a> {
    local_types: &'a Map,
    memo: HashMap<String, Vec<Vec<String>>>,
    /// Local types being walked, so a cycle (an error when compiling) ends here too.
    expanding: Vec<String>,
}

impl Secrets<'_> {
    fn paths(&mut self, schema: &Value, depth: usize) -> Vec<Vec<String>> {
        let whole = || vec![Vec::new()];
        let Value::Object(map) = schema else { return Vec::new() };
        if depth > MAX_DEPTH {
            return whole();
        }
        if map.get("format").and_then(Value::as_str) == Some("password")
            || map.get("writeOnly").and_then(Value::as_bool) == Some(true)
        {
            return whole();
        }
        let mut out = Vec::new();
        if let Some(reference) = local_reference(schema) {
            // A place inside a type is not followed: the whole value is secret if the type has any.
            let (name, fragment) = split_reference(reference);
            let paths = self.local(name, depth);
            match fragment {
                Some(f) if !f.is_empty() && !paths.is_empty() => return whole(),
                _ => out.extend(paths),
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in map.get(key).and_then(Value::as_array).into_iter().flatten() {
                out.extend(self.paths(branch, depth + 1));
            }
        }
        for (key, property) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
            for mut path in self.paths(property, depth + 1) {
                path.insert(0, key.clone());
                out.push(path);
            }
        }
        let mut opaque: Vec<&Value> = Vec::new();
        for key in ["items", "additionalProperties"] {
            match map.get(key) {
                Some(Value::Array(list)) => opaque.extend(list),
                Some(schema) => opaque.push(schema),
                None => {}
            }
        }
        opaque.extend(map.get("prefixItems").and_then(Value::as_array).into_iter().flatten());
        opaque.extend(map.get("patternProperties").and_then(Value::as_object).into_iter().flat_map(|m| m.values()));
        if opaque.into_iter().any(|schema| !self.paths(schema, depth + 1).is_empty()) {
            return whole();
        }
        if out.iter().any(Vec::is_empty) || out.len() > MAX_SECRET_PATHS {
            return whole();
        }
        out.sort();
        out.dedup();
        out
    }

    fn local(&mut self, name: &str, depth: usize) -> Vec<Vec<String>> {
        if let Some(paths) = self.memo.get(name) {
            return paths.clone();
        }
        let Some(schema) = self.local_types.get(name) else { return Vec::new() };
        if self.expanding.iter().any(|n| n == name) {
            return Vec::new();
        }
        self.expanding.push(name.to_string());
        let paths = self.paths(schema, depth + 1);
        self.expanding.pop();
        self.memo.insert(name.to_string(), paths.clone());
        paths
    }
}

/// Why a schema does not compile, with the place inside it and what to write.
fn explain_invalid_schema(err: &jsonschema::ValidationError) -> SchemaError {
    use jsonschema::error::ValidationErrorKind;
    let pointer = err.instance_path().to_string();
    let at = (!pointer.is_empty()).then(|| pointer.trim_start_matches('/').replace('/', "."));
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
    SchemaError::Invalid { at, detail }
}

/// Local types are resolved into definitions before compiling, so the place the crate names is
/// inside those. Finds the local type at fault: one the schema uses (directly or through other types)
/// that fails on its own, and not only through another failing type; with its own message.
fn faulty_local_type<'m>(
    schema: &Value,
    local_types: &'m Map,
    build: &dyn Fn(&Value) -> Result<Validator, SchemaError>,
) -> Option<(&'m str, SchemaError)> {
    let uses = |value: &Value, name: &str| {
        let text = value.to_string();
        ["\"", "#", "?"].iter().any(|end| text.contains(&format!("\"local://{name}{end}")))
    };
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
    let failing: Vec<(&str, SchemaError)> = used
        .iter()
        .filter_map(|name| {
            let local = local_types.get(*name)?;
            build(local).err().filter(|err| !matches!(err, SchemaError::Cycle { .. })).map(|err| (*name, err))
        })
        .collect();
    failing.iter().find_map(|(name, message)| {
        let local = local_types.get(*name)?;
        let through_other = failing.iter().any(|(other, _)| other != name && uses(local, other));
        (!through_other).then(|| (*name, message.clone()))
    })
}

/// Why a schema does not compile; its `Display` is the message, Landscaper's where Landscaper
/// has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaError {
    /// A `jsonSchemaVersion` that names no supported draft.
    Version(String),
    /// The schema's `definitions`/`$defs` is not a mapping, and local types go there.
    DefsNotMapping { defs_key: &'static str },
    /// A local type and a definition of the schema share a name.
    Clash { name: String, defs_key: &'static str },
    /// Nesting past the depth limit, local types counted.
    TooDeep,
    /// A `local://` reference that could not be resolved, and why.
    Reference { reference: String, problem: Box<SchemaError> },
    /// `local://T/path`: Landscaper takes no path there.
    PathNotSupported,
    /// `local://T` with no `T` in `localTypes`.
    Undefined { name: String },
    /// A reference reached again while it is being resolved.
    Cycle { reference: String },
    /// A fragment that passes through too many references.
    FragmentTooDeep { fragment: String },
    /// A fragment that walks into something that is not a mapping (`walked`: where, as
    /// Landscaper prints it).
    NotAnObject { fragment: String, walked: String },
    /// A fragment naming a key the mapping at `walked` lacks.
    NoField { fragment: String, walked: String, key: String },
    /// What the `jsonschema` crate refuses, at a place in the schema (`None`: the root).
    Invalid { at: Option<String>, detail: String },
    /// The fault lies in the local type `name`, which fails on its own.
    InLocalType { name: String, problem: Box<SchemaError> },
}

impl SchemaError {
    fn reference(reference: &str, problem: SchemaError) -> Self {
        SchemaError::Reference { reference: reference.to_string(), problem: Box::new(problem) }
    }
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::Version(version) => write!(
                f,
                "jsonSchemaVersion {version:?} is not supported: use draft-04, draft-06, draft-07, 2019-09 or 2020-12"
            ),
            SchemaError::DefsNotMapping { defs_key } => {
                write!(f, "{defs_key} must be a mapping of schemas, since the schema uses local types")
            }
            SchemaError::Clash { name, defs_key } => {
                write!(f, "local type {name:?} clashes with {defs_key}.{name} in the schema: rename one")
            }
            SchemaError::TooDeep => write!(
                f,
                "the schema nests deeper than {MAX_DEPTH} levels (counting the local types it uses): flatten it"
            ),
            SchemaError::Reference { reference, problem } => {
                write!(f, "error resolving reference {reference:?}: {problem}")
            }
            SchemaError::PathNotSupported => f.write_str("a path is not supported for local resources"),
            SchemaError::Undefined { name } => write!(f, "type {name} is not defined in local types"),
            SchemaError::Cycle { reference } => {
                write!(f, "cyclic references detected: reference {reference:?} is part of a cycle")
            }
            SchemaError::FragmentTooDeep { fragment } => {
                write!(f, "the fragment {fragment} passes through more than {MAX_DEPTH} references")
            }
            SchemaError::NotAnObject { fragment, walked } => {
                write!(f, "unable to resolve fragment {fragment}: element at {walked:?} is no object")
            }
            SchemaError::NoField { fragment, walked, key } => {
                write!(f, "error resolving fragment {fragment}: element at {walked:?} doesn't have a field {key:?}")
            }
            SchemaError::Invalid { at: None, detail } => write!(f, "invalid JSON schema: {detail}"),
            SchemaError::Invalid { at: Some(at), detail } => write!(f, "invalid JSON schema at {at}: {detail}"),
            SchemaError::InLocalType { name, problem } => write!(f, "local type {name:?}: {problem}"),
        }
    }
}

/// How Landscaper names the value's own place in a failure.
const ROOT: &str = "(root)";

/// A value's failure against its schema: where (`a.b`, or [`ROOT`]) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub path: String,
    pub message: String,
}

impl Failure {
    /// Whether it concerns the whole value (Landscaper's `(root)`).
    pub fn is_root(&self) -> bool {
        self.path == ROOT
    }
}

/// `<field path>: <what is wrong>`, as Landscaper prints it.
impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A compiled schema.
pub struct Schema(Validator);

impl Schema {
    pub fn compile(schema: &Value, local_types: &Map, version: Option<&str>) -> Result<Self, SchemaError> {
        let draft = draft(version)?;
        let build = |schema: &Value| -> Result<Validator, SchemaError> {
            let resolved = resolve_local(schema, local_types, draft)?;
            jsonschema::options().with_draft(draft).build(&resolved).map_err(|err| explain_invalid_schema(&err))
        };
        build(schema).map(Schema).map_err(|err| match faulty_local_type(schema, local_types, &build) {
            Some((name, own)) => SchemaError::InLocalType { name: name.to_string(), problem: Box::new(own) },
            None => err,
        })
    }

    /// Every failure as `<field path>: <what is wrong>`; the root is `(root)`, as Landscaper
    /// prints it.
    pub fn check(&self, value: &Value) -> Vec<String> {
        self.failures(value).iter().map(ToString::to_string).collect()
    }

    /// Every failure, each at the field path Landscaper prints.
    pub fn failures(&self, value: &Value) -> Vec<Failure> {
        self.0
            .iter_errors(value)
            .map(|err| {
                let pointer = err.instance_path().to_string();
                let path = if pointer.is_empty() {
                    ROOT.to_string()
                } else {
                    pointer.trim_start_matches('/').replace('/', ".")
                };
                Failure { path, message: err.to_string() }
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
        let unknown = Schema::compile(&json!({"$ref": "local://nope"}), &types(), None).err().map(|e| e.to_string());
        assert_eq!(
            unknown,
            Some("error resolving reference \"local://nope\": type nope is not defined in local types".into())
        );
        let cycle = Schema::compile(&json!({"$ref": "local://a"}), &types(), None).err().map(|e| e.to_string());
        let cycle = cycle.unwrap_or_default();
        assert!(cycle.starts_with("cyclic references detected"), "{cycle}");
    }

    #[test]
    fn fragments_point_inside_local_types() {
        let types = json!({"mycustom": {"definitions": {"myschema": {"type": "string"}}},
                           "wrapper": {"properties": {"inner": {"$ref": "local://mycustom"}}},
                           "self": {"definitions": {"a": {"type": "string"}, "b": {"$ref": "local://self#/definitions/a"}}}});
        let types = types.as_object().cloned().unwrap_or_default();
        let compile = |schema: Value| Schema::compile(&schema, &types, None).map_err(|e| e.to_string());
        let schema = compile(json!({"$ref": "local://mycustom#/definitions/myschema"}));
        let schema = schema.unwrap_or_else(|e| panic!("{e}"));
        assert!(schema.check(&json!("abc")).is_empty());
        assert_eq!(schema.check(&json!(7)).len(), 1);
        // Through a reference met on the way, which Landscaper has inlined.
        let through = compile(json!({"$ref": "local://wrapper#/properties/inner/definitions/myschema"}));
        let through = through.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(through.check(&json!(7)).len(), 1);
        // Below the root the reference points into the definitions.
        let nested = compile(json!({"properties": {"n": {"$ref": "local://mycustom#/definitions/myschema"}}}));
        let nested = nested.unwrap_or_else(|e| panic!("{e}"));
        assert!(nested.check(&json!({"n": "abc"})).is_empty());
        assert!(nested.check(&json!({"n": 7}))[0].starts_with("n: "));
        let missing = compile(json!({"$ref": "local://mycustom#/definitions/other"})).err();
        assert_eq!(
            missing.as_deref(),
            Some(
                "error resolving reference \"local://mycustom#/definitions/other\": error resolving fragment \
                 /definitions/other: element at \"[].definitions\" doesn't have a field \"other\""
            )
        );
        let not_object = compile(json!({"$ref": "local://mycustom#/definitions/myschema/type/x"})).err();
        assert!(not_object.unwrap_or_default().ends_with("element at \"[].definitions.myschema.type\" is no object"));
        let path = compile(json!({"$ref": "local://mycustom/definitions"})).err();
        assert_eq!(
            path.as_deref(),
            Some("error resolving reference \"local://mycustom/definitions\": a path is not supported for local resources")
        );
        let cycle = compile(json!({"$ref": "local://self#/definitions/b"})).err().unwrap_or_default();
        assert!(cycle.starts_with("cyclic references detected"), "{cycle}");
    }

    #[test]
    fn invalid_schemas_say_where_and_what_to_write() {
        let compile = |schema: Value, types: Value| {
            let compiled = Schema::compile(&schema, types.as_object().unwrap_or(&Map::new()), None);
            compiled.err().map(|e| e.to_string()).unwrap_or_default()
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
        assert!(draft(Some("draft-99")).is_err_and(|e| e.to_string().starts_with("jsonSchemaVersion \"draft-99\"")));
    }

    #[test]
    fn secret_places_are_found_through_properties_and_local_types() {
        let local = json!({"credentials": {"type": "object", "properties": {"user": {"type": "string"},
            "password": {"type": "string", "format": "password"}}}});
        let local = local.as_object().cloned().unwrap_or_default();
        assert_eq!(secret_paths(&json!({"type": "string", "writeOnly": true}), &local), vec![Vec::<String>::new()]);
        assert_eq!(secret_paths(&json!({"type": "string"}), &local), Vec::<Vec<String>>::new());
        let schema = json!({"type": "object", "properties": {"db": {"$ref": "local://credentials"}, "host": {}}});
        assert_eq!(secret_paths(&schema, &local), vec![vec!["db".to_string(), "password".to_string()]]);
        let list = json!({"type": "array", "items": {"$ref": "local://credentials"}});
        assert_eq!(secret_paths(&list, &local), vec![Vec::<String>::new()]);
    }
}
