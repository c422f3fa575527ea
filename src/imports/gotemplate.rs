//! Landscaper's `GoTemplate` executions (pkg/landscaper/installations/executions/template/
//! gotemplate): Go text/template ([`crate::template::go`]) with `missingkey=zero`, Sprig's
//! functions without `env` and `expandenv` (Landscaper deletes them), and Landscaper's own
//! functions (`funcs.go`) as far as they work offline:
//!
//! - `toYaml`, `fromYaml` (Landscaper's: sigs.k8s.io/yaml, `toYaml` without the final newline);
//!   `toJson`, `fromJson` are Sprig's, which Landscaper keeps;
//! - `include` and `readFile` read the blueprint's files through its filesystem
//!   ([`super::files`]: a leading `/` is the blueprint's directory, as in Landscaper);
//! - `parseOCIRef`, `ociRefRepo`, `ociRefVersion`;
//! - `getResource`, `getResources`, `getComponent` over the component descriptor the config
//!   provides (`spec.componentDescriptor`, `spec.componentDescriptors`), and `getResourceKey`,
//!   whose key is made of the descriptors alone (the deployer, not the template, reads the
//!   registry).
//!
//! Functions that need a cluster, the OCM registry or a directory listing are registered and
//! fail, naming themselves and what they need, so a template stops with a reason instead of
//! "function not defined".
//!
//! The data is what Landscaper's executors get, with numbers as `float64` as Landscaper decodes
//! imports from JSON (`typeOf` says `float64`; `eq .imports.n 3` compares a float with an int
//! and fails as in Go). Templates are compiled once per distinct text (and declaring file, which
//! `include` reads from).

use super::files::BlueprintFs;
use crate::doc::{read_yaml_documents, Map, Value};
use crate::limits::Budget;
use crate::package::Files;
use crate::template::go::{self, define, define_closure, Arity, Compiled, FuncMap, Functions, GoValue, TemplateError};
use crate::template::sprig;
use std::collections::HashMap;
use std::sync::Arc;

/// Landscaper's functions that read a cluster through a target.
const CLUSTER: &[&str] = &[
    "getShootAdminKubeconfig",
    "getShootAdminKubeconfigWithExpirationTimestamp",
    "getServiceAccountKubeconfig",
    "getServiceAccountKubeconfigWithExpirationTimestamp",
    "getOidcKubeconfig",
];

/// Landscaper's functions that read the OCM registry (resource contents, global identities,
/// repository contexts), and Spiff's `resolve`, which GoTemplate authors sometimes expect.
const REGISTRY: &[&str] = &["getResourceContent", "getRepositoryContext", "resolve"];

/// Includes nest at most this deep. Landscaper allows 100 nested includes of one name; each
/// level here is a whole template execution on the stack, so the bound is lower.
const MAX_INCLUDE_DEPTH: usize = 32;

/// The component descriptors a render may search.
#[derive(Clone, Debug, Default)]
pub struct Descriptors {
    /// The blueprint's own descriptor (`.cd`), `Null` when the config gives none.
    pub cd: Value,
    /// The referenced components' descriptors (`getComponent`).
    pub list: Vec<Value>,
    /// `.components`: `cd` and the descriptors it references, transitively, as Landscaper's
    /// GetTransitiveComponentReferences lists them; `Null` without descriptors.
    pub components: Value,
}

/// GoTemplate executions of one render: the function map, built once, and the compiled
/// templates by text.
pub struct GoTemplates {
    base: Functions,
    files: Arc<dyn Files>,
    budget: Arc<Budget>,
    compiled: HashMap<(String, String), Result<Compiled, go::Error>>,
}

impl GoTemplates {
    pub fn new(files: Arc<dyn Files>, descriptors: &Descriptors, budget: Arc<Budget>) -> Self {
        // Every call is charged a step and what it returns, as for KOTS templates.
        Self { base: functions(descriptors).into(), files, budget, compiled: HashMap::new() }
    }

    /// Renders `source` (declared in the file `from` of the blueprint whose files are `fs`,
    /// which `include` and `readFile` read) over `data`; an error has the template position when
    /// the parser gives one.
    pub fn render(
        &mut self,
        source: &str,
        fs: &BlueprintFs,
        from: Option<&str>,
        data: &GoValue,
    ) -> Result<String, go::Error> {
        let key = (format!("{}\0{}", fs.key(), from.unwrap_or_default()), source.to_string());
        if !self.compiled.contains_key(&key) {
            let scope = Arc::new(Scope {
                base: self.base.clone(),
                files: self.files.clone(),
                fs: fs.clone(),
                from: from.map(str::to_string),
            });
            let compiled = go::compile(source, ("{{", "}}"), &file_functions(&scope)).map(Compiled::missing_zero);
            self.compiled.insert(key.clone(), compiled);
        }
        match self.compiled.get(&key) {
            Some(Ok(compiled)) => compiled.execute(data, &self.budget),
            Some(Err(err)) => Err(err.clone()),
            None => Err(go::Error::from("the template was not compiled".to_string())),
        }
    }
}

/// What `include` and `readFile` need: the blueprint's files and the functions to run an
/// included template with.
struct Scope {
    base: Functions,
    files: Arc<dyn Files>,
    fs: BlueprintFs,
    from: Option<String>,
}

impl Scope {
    fn read(&self, name: &str) -> Result<String, String> {
        let path = self.fs.resolve(self.from.as_deref(), name)?;
        self.fs
            .read(self.files.as_ref(), &path)
            .map_err(|err| format!("{}: {err}", self.fs.show(self.files.as_ref(), &path)))
    }
}

/// The base functions plus `include` and `readFile` bound to `scope`.
fn file_functions(scope: &Arc<Scope>) -> Functions {
    let mut funcs = scope.base.clone();
    let for_include = scope.clone();
    let mut added = FuncMap::new();
    define_closure(&mut added, "include", Arity::Exact(2), move |args| {
        include(&for_include, args.string(0)?, args.any(1), args.context())
    });
    let for_read = scope.clone();
    define_closure(&mut added, "readFile", Arity::Exact(1), move |args| {
        for_read.read(args.string(0)?).map(go::string).map_err(|err| go::fail("readFile", err))
    });
    for (name, f) in added {
        funcs.insert(name, f);
    }
    funcs
}

/// Landscaper's `include NAME DATA`: the file NAME rendered over DATA, one execution deeper than
/// the one that calls it, on its budget.
fn include(scope: &Arc<Scope>, name: &str, data: &GoValue, context: go::Context<'_>) -> Result<GoValue, TemplateError> {
    let nesting = context.nesting + 1;
    if nesting > MAX_INCLUDE_DEPTH {
        return Err(go::fail(
            "include",
            format!(
                "includes nest deeper than {MAX_INCLUDE_DEPTH} levels at {name:?}: an included file includes itself"
            ),
        ));
    }
    let text =
        scope.read(name).map_err(|err| go::fail("include", format!("unable to read include file {name:?}: {err}")))?;
    let compiled = go::compile(&text, ("{{", "}}"), &file_functions(scope))
        .map(Compiled::missing_zero)
        .map_err(|err| go::fail("include", format!("{name}: {err}")))?;
    compiled
        .execute_in(data, go::Context { nesting, ..context })
        .map(go::string)
        .map_err(|err| go::fail("include", format!("{name}: {err}")))
}

/// A document value as Landscaper's templates see it: decoded from JSON, numbers are float64.
pub fn to_go_json(value: &Value) -> GoValue {
    match value {
        Value::Number(n) => n.as_f64().map_or(GoValue::Nil, GoValue::Float),
        Value::Array(items) => go::list(items.iter().map(to_go_json).collect()),
        Value::Object(map) => go::map(map.iter().map(|(k, v)| (Arc::<str>::from(k.as_str()), to_go_json(v))).collect()),
        other => go::to_go(other),
    }
}

/// Template data as JSON would encode it: whole floats become integers (`1e+06` is `1000000`
/// in Go's JSON and YAML output).
fn to_json_value(value: &GoValue) -> Value {
    to_json_value_at(value, 0)
}

/// [`to_json_value`] at `depth`: what nests deeper than values may be built (a map deepened in
/// place) is null there, as [`go::from_go`] has it, rather than exhaust the stack.
fn to_json_value_at(value: &GoValue, depth: usize) -> Value {
    if depth > go::value::MAX_VALUE_DEPTH {
        return Value::Null;
    }
    let inner = |v: &GoValue| to_json_value_at(v, depth + 1);
    match value {
        #[allow(clippy::cast_possible_truncation)]
        GoValue::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => Value::from(*f as i64),
        // Go's nil slice is `null` in JSON, which sigs.k8s.io/yaml writes as YAML.
        GoValue::List(items) if items.nil => Value::Null,
        GoValue::List(items) => Value::Array(items.iter().map(inner).collect()),
        GoValue::Map(map) => Value::Object(map.read().iter().map(|(k, v)| (k.to_string(), inner(v))).collect()),
        other => go::from_go(other),
    }
}

/// Sprig's functions without `env` and `expandenv`, and Landscaper's.
pub fn functions(descriptors: &Descriptors) -> FuncMap {
    let mut funcs = sprig::functions();
    funcs.remove("env");
    funcs.remove("expandenv");
    for &name in CLUSTER {
        define(&mut funcs, name, Arity::AtLeast(0), |args| {
            let name = args.name();
            Err(go::fail(
                name,
                format!(
                    "{name} needs a cluster (it asks the target's cluster for credentials), which a render does not \
                     reach: import the kubeconfig as a value instead"
                ),
            ))
        });
    }
    for &name in REGISTRY {
        define(&mut funcs, name, Arity::AtLeast(0), |args| {
            let name = args.name();
            Err(go::fail(
                name,
                format!(
                    "{name} needs the component's OCM registry, which a render does not read: pass the value as an \
                     import, or use getResource over spec.componentDescriptor"
                ),
            ))
        });
    }
    define(&mut funcs, "readDir", Arity::Exact(1), |args| {
        Err(go::fail(
            args.name(),
            "readDir needs a directory listing, which a render's file access does not give: name the files with \
             readFile or include",
        ))
    });
    define(&mut funcs, "generateImageOverwrite", Arity::AtLeast(0), |args| {
        Err(go::fail(
            args.name(),
            "generateImageOverwrite was removed from Landscaper with its image-vector support: build the images \
             with getResource or getResources",
        ))
    });
    define(&mut funcs, "toYaml", Arity::Exact(1).writes(go::args::TEXT), |args| {
        // sigs.k8s.io/yaml's text, as Landscaper's toYaml writes it (yaml.v2's choices).
        Ok(go::string(crate::doc::to_go_yaml(&to_json_value(args.any(0))).trim_end_matches('\n')))
    });
    define(&mut funcs, "fromYaml", Arity::Exact(1), |args| {
        let documents = read_yaml_documents(args.string(0)?).map_err(|err| go::fail(args.name(), err.message))?;
        Ok(documents.first().map_or(GoValue::Nil, to_go_json))
    });
    define(&mut funcs, "parseOCIRef", Arity::Exact(1), |args| {
        let (repository, version) = parse_oci_ref(args.string(0)?).map_err(|err| go::fail(args.name(), err))?;
        Ok(go::list(vec![go::string(repository), go::string(version)]))
    });
    define(&mut funcs, "ociRefRepo", Arity::Exact(1), |args| {
        parse_oci_ref(args.string(0)?)
            .map(|(repository, _)| go::string(repository))
            .map_err(|e| go::fail(args.name(), e))
    });
    define(&mut funcs, "ociRefVersion", Arity::Exact(1), |args| {
        parse_oci_ref(args.string(0)?).map(|(_, version)| go::string(version)).map_err(|e| go::fail(args.name(), e))
    });
    let descriptors = Arc::new(descriptors.clone());
    let keys = descriptors.clone();
    define_closure(&mut funcs, "getResourceKey", Arity::AtLeast(0), move |args| {
        let fail = |err: String| go::fail("getResourceKey", err);
        let values = args.all();
        match values {
            [] => Err(fail("unable to provide key for empty relative artifact reference".into())),
            [GoValue::String(reference)] => resource_key(&keys, reference).map(go::string).map_err(fail),
            [_] => Err(fail("unable to assert the first argument as string".into())),
            _ => Err(fail(format!("this function requires 1 argument, but {} were provided", values.len()))),
        }
    });
    let lookups: [(&'static str, Lookup); 3] =
        [("getResource", Lookup::Resource), ("getResources", Lookup::Resources), ("getComponent", Lookup::Component)];
    for (name, lookup) in lookups {
        let descriptors = descriptors.clone();
        define_closure(&mut funcs, name, Arity::AtLeast(0), move |args| {
            find(lookup, &descriptors, args.all()).map_err(|err| go::fail(name, err))
        });
    }
    funcs
}

#[derive(Clone, Copy)]
enum Lookup {
    Resource,
    Resources,
    Component,
}

/// `getResource [CD] KEY VALUE…` and its kin (Landscaper's ResolveResources and
/// ResolveComponents): the entries whose identity (`name` and `extraIdentity`) has every pair.
fn find(lookup: Lookup, descriptors: &Descriptors, values: &[GoValue]) -> Result<GoValue, String> {
    if descriptors.cd.is_null() {
        let what = if matches!(lookup, Lookup::Component) { "component" } else { "resource" };
        return Err(format!(
            "Unable to search for a {what} as no ComponentDescriptor is defined: set spec.componentDescriptor"
        ));
    }
    if values.len() < 2 {
        return Err(format!("at least 2 arguments are expected (got {})", values.len()));
    }
    let (cd, pairs) = match values.first() {
        Some(map @ GoValue::Map(_)) => (to_json_value(map), &values[1..]),
        _ => (descriptors.cd.clone(), values),
    };
    if pairs.len() % 2 != 0 {
        return Err("odd number of key value pairs".into());
    }
    let mut selector = Vec::new();
    for (i, pair) in pairs.chunks(2).enumerate() {
        match pair {
            [GoValue::String(key), GoValue::String(value)] => selector.push((key.to_string(), value.to_string())),
            [GoValue::String(_), _] => return Err(format!("expect argument {} to be a string", 2 * i + 1)),
            _ => return Err(format!("expect argument {} to be a string", 2 * i)),
        }
    }
    let component = component_name(&cd);
    let matching = |entries: Option<&Value>| -> Vec<Value> {
        let entries = entries.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        entries.iter().filter(|entry| matches_identity(entry, &selector)).cloned().collect()
    };
    let wanted = || selector.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
    match lookup {
        Lookup::Resource | Lookup::Resources => {
            let found = matching(spec_of(&cd).and_then(|spec| spec.get("resources")));
            if found.is_empty() {
                return Err(format!("NotFound: no resource of {component} has the identity {}", wanted()));
            }
            Ok(match lookup {
                Lookup::Resources => go::list(found.iter().map(to_go_json).collect()),
                _ => to_go_json(&found[0]),
            })
        }
        Lookup::Component => {
            let spec = spec_of(&cd);
            let references = spec.and_then(|s| s.get("componentReferences").or_else(|| s.get("references")));
            let found = matching(references);
            let Some(reference) = found.first() else {
                return Err(format!("NotFound: no component reference of {component} has the identity {}", wanted()));
            };
            let target = reference.get("componentName").or_else(|| reference.get("component")).and_then(Value::as_str);
            let version = reference.get("version").and_then(Value::as_str);
            let (target, version) = (target.unwrap_or_default(), version.unwrap_or_default());
            descriptors
                .list
                .iter()
                .find(|d| component_name(d) == target && component_version(d) == version)
                .map(to_go_json)
                .ok_or_else(|| {
                    format!(
                        "unable to resolve component {target}:{version}: add its descriptor to spec.componentDescriptors"
                    )
                })
        }
    }
}

/// The component part of a descriptor: `component` (schema v2) or `spec` (v3alpha1).
pub(super) fn spec_of(cd: &Value) -> Option<&Value> {
    cd.get("component").or_else(|| cd.get("spec"))
}

pub(super) fn component_name(cd: &Value) -> &str {
    cd.get("component").or_else(|| cd.get("metadata")).and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn component_version(cd: &Value) -> &str {
    cd.get("component")
        .or_else(|| cd.get("metadata"))
        .and_then(|m| m.get("version"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Whether an entry's identity (its `name` and `extraIdentity`) has every selected pair.
fn matches_identity(entry: &Value, selector: &[(String, String)]) -> bool {
    selector.iter().all(|(key, value)| {
        let actual = if key == "name" {
            entry.get("name")
        } else {
            entry.get("extraIdentity").and_then(|identity| identity.get(key))
        };
        actual.and_then(Value::as_str) == Some(value.as_str())
    })
}

/// Landscaper's ParseOCIReference: `[repository, tag or digest]`, Docker Hub's implicit
/// `index.docker.io/` and `library/` left off (a reference without a tag or digest is refused,
/// as Landscaper refuses one without `:`).
pub fn parse_oci_ref(reference: &str) -> Result<(String, String), String> {
    let text = reference.split_once("://").map_or(reference, |(_, rest)| rest);
    let invalid = || format!("invalid reference format: {reference:?}");
    let (name, digest) = match text.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (text, None),
    };
    let (name, tag) = match name.rfind(':').filter(|&i| !name[i..].contains('/')) {
        Some(i) => (&name[..i], Some(&name[i + 1..])),
        None => (name, None),
    };
    if !text.contains(':') {
        return Err("invalid reference".into());
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let has_domain =
        parts.len() > 1 && parts.first().is_some_and(|d| d.contains('.') || d.contains(':') || *d == "localhost");
    let domain = if has_domain { Some(parts.remove(0)) } else { None };
    let path_ok = |part: &&str| {
        !part.is_empty()
            && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
            && part.starts_with(|c: char| c.is_ascii_alphanumeric())
            && part.ends_with(|c: char| c.is_ascii_alphanumeric())
    };
    if parts.is_empty() || !parts.iter().all(path_ok) {
        return Err(invalid());
    }
    if let Some(tag) = tag {
        let ok = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !ok {
            return Err(invalid());
        }
    }
    if let Some(digest) = digest {
        let ok = digest.split_once(':').is_some_and(|(algorithm, hex)| {
            !algorithm.is_empty() && hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit())
        });
        if !ok {
            return Err(invalid());
        }
    }
    let path = parts.join("/");
    let repository = match domain {
        // Docker Hub's names are kept short, as Landscaper trims `index.docker.io/[library/]`.
        Some("docker.io" | "index.docker.io") | None => path.strip_prefix("library/").unwrap_or(&path).to_string(),
        Some(domain) => format!("{domain}/{path}"),
    };
    // A digest wins over a tag, as the Docker reference parser keeps only the digest.
    let version = digest.or(tag).unwrap_or("latest").to_string();
    Ok((repository, version))
}

/// The data of a template, as a map of its top-level keys.
pub fn binding(entries: Vec<(&str, GoValue)>) -> GoValue {
    go::map(entries.into_iter().map(|(k, v)| (Arc::<str>::from(k), v)).collect())
}

/// The descriptors in the config, as the render holds them.
pub fn descriptors(cd: &Map, list: &[Value]) -> Descriptors {
    let cd = if cd.is_empty() { Value::Null } else { Value::Object(cd.clone()) };
    let components = match (&cd, list) {
        (Value::Null, []) => Value::Null,
        (Value::Null, list) => serde_json::json!({"meta": {"schemaVersion": "v2"}, "components": list}),
        (cd, list) => {
            let meta = cd.get("meta").cloned().unwrap_or_else(|| serde_json::json!({"schemaVersion": "v2"}));
            serde_json::json!({"meta": meta, "components": transitive(cd, list)})
        }
    };
    Descriptors { cd, list: list.to_vec(), components }
}

/// `cd` and the descriptors of `list` it references, directly or through another, each once:
/// `cd` first, then depth-first in the order of the references (Landscaper's order is Go's map
/// order, which varies). A reference to a descriptor the config does not give is left out.
fn transitive(cd: &Value, list: &[Value]) -> Vec<Value> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    let mut pending = vec![cd];
    while let Some(descriptor) = pending.pop() {
        let id = (component_name(descriptor), component_version(descriptor));
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        out.push(descriptor.clone());
        let referenced: Vec<&Value> =
            references(descriptor).iter().filter_map(|reference| referenced(list, reference)).collect();
        pending.extend(referenced.into_iter().rev());
    }
    out
}

/// A descriptor's component references (`componentReferences` in v2, `references` in v3alpha1).
pub(super) fn references(cd: &Value) -> &[Value] {
    let spec = spec_of(cd);
    let list = spec.and_then(|s| s.get("componentReferences").or_else(|| s.get("references")));
    list.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The descriptor a component reference names, by component name and version.
pub(super) fn referenced<'l>(list: &'l [Value], reference: &Value) -> Option<&'l Value> {
    let target = reference.get("componentName").or_else(|| reference.get("component")).and_then(Value::as_str)?;
    let version = reference.get("version").and_then(Value::as_str).unwrap_or_default();
    list.iter().find(|d| component_name(d) == target && component_version(d) == version)
}

/// Landscaper's getResourceKey: the resource a relative reference names (`cd://componentReferences/
/// <ref>/…/resources/<name>`, or OCM's `{resource: {name: …}, referencePath: [{name: …}]}` as
/// YAML), and its global identity — the component's name and version and the resource's identity
/// — as YAML (sigs.k8s.io/yaml, keys sorted), base64-encoded. Deployers decode the key and
/// fetch the resource; the key itself needs only the descriptors.
fn resource_key(descriptors: &Descriptors, reference: &str) -> Result<String, String> {
    use base64::Engine as _;
    if descriptors.cd.is_null() {
        return Err("unable to use this function without ocm component version: set spec.componentDescriptor".into());
    }
    let (path, resource) = parse_resource_reference(reference)?;
    let mut component = &descriptors.cd;
    for step in &path {
        let found = references(component).iter().find(|r| matches_identity(r, step)).ok_or_else(|| {
            format!(
                "unable to resolve relative resource reference: component reference {} not found in {}:{}",
                show_identity(step),
                component_name(component),
                component_version(component)
            )
        })?;
        component = referenced(&descriptors.list, found).ok_or_else(|| {
            let name = found.get("componentName").or_else(|| found.get("component")).and_then(Value::as_str);
            let version = found.get("version").and_then(Value::as_str).unwrap_or_default();
            format!(
                "unable to resolve relative resource reference: component {}:{version} cannot be found: add its \
                 descriptor to spec.componentDescriptors",
                name.unwrap_or_default()
            )
        })?;
    }
    let resources = spec_of(component).and_then(|s| s.get("resources")).and_then(Value::as_array);
    let resources = resources.map(Vec::as_slice).unwrap_or_default();
    let wanted = |entry: &Value| {
        resource.iter().all(|(key, value)| {
            let actual = match key.as_str() {
                "name" => entry.get("name"),
                _ => entry
                    .get("extraIdentity")
                    .and_then(|i| i.get(key))
                    .or_else(|| (key == "version").then(|| entry.get("version")).flatten()),
            };
            actual.and_then(Value::as_str) == Some(value.as_str())
        })
    };
    let Some(found) = resources.iter().find(|r| wanted(r)) else {
        return Err(format!(
            "unable to resolve relative resource reference: resource {} not found in {}:{}",
            show_identity(&resource),
            component_name(component),
            component_version(component)
        ));
    };
    // sigs.k8s.io/yaml's output: maps in key order, two-space indentation, strings as yaml.v2
    // writes them (plain when they read back as the same string).
    let scalar = |text: &str| crate::repeat::kots::statics::yaml_v3_string(text).trim_end_matches('\n').to_string();
    let mut yaml = format!(
        "component:\n  name: {}\n  version: {}\nresource:\n",
        scalar(component_name(component)),
        scalar(component_version(component))
    );
    for (key, value) in identity(found, resources) {
        yaml.push_str(&format!("  {}: {}\n", scalar(&key), scalar(&value)));
    }
    Ok(base64::engine::general_purpose::STANDARD.encode(yaml))
}

/// OCM's ElementMeta.GetIdentity: `extraIdentity` and `name`, plus `version` when another
/// resource has the same name and extra identity; keys sorted, as Go marshals a map.
fn identity(resource: &Value, resources: &[Value]) -> std::collections::BTreeMap<String, String> {
    let extra = |r: &Value| -> std::collections::BTreeMap<String, String> {
        let map = r.get("extraIdentity").and_then(Value::as_object);
        let pairs = map.into_iter().flatten().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())));
        pairs.collect()
    };
    let name = resource.get("name").and_then(Value::as_str).unwrap_or_default();
    let own = extra(resource);
    let mut identity = own.clone();
    identity.insert("name".into(), name.into());
    if !identity.contains_key("version") {
        let same = resources
            .iter()
            .filter(|r| r.get("name").and_then(Value::as_str) == Some(name))
            .filter(|r| {
                let mut other = extra(r);
                other.remove("version");
                other == own
            })
            .count();
        if same > 1 {
            let version = resource.get("version").and_then(Value::as_str).unwrap_or_default();
            identity.insert("version".into(), version.into());
        }
    }
    identity
}

fn show_identity(identity: &[(String, String)]) -> String {
    let pairs: Vec<String> = identity.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(", ")
}

/// An identity as selector pairs (`name` first).
type Identity = Vec<(String, String)>;

/// Landscaper's ParseResourceReference: the reference path (component references' identities)
/// and the resource's identity.
fn parse_resource_reference(reference: &str) -> Result<(Vec<Identity>, Identity), String> {
    if let Some(rest) = reference.strip_prefix("cd://") {
        let rest = rest.split(['#', '?']).next().unwrap_or_default();
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        if !parts.len().is_multiple_of(2) {
            return Err("failed to parse argument into URI: even number of path arguments expected".into());
        }
        let mut path = Vec::new();
        let pairs: Vec<&[&str]> = parts.chunks(2).collect();
        for (i, pair) in pairs.iter().enumerate() {
            let last = i + 1 == pairs.len();
            let id = vec![("name".to_string(), pair[1].to_string())];
            match pair[0] {
                "componentReferences" if last => {
                    return Err("the selector seems to target a component but a resource is requested".into())
                }
                "componentReferences" => path.push(id),
                "resources" if last => return Ok((path, id)),
                "resources" => return Err("the selector seems to contain more path segments after a resource".into()),
                other => return Err(format!("unknown keyword {other}")),
            }
        }
        return Err(format!("unable to find resource {reference:?}"));
    }
    let parsed = read_yaml_documents(reference)
        .ok()
        .and_then(|mut documents| (documents.len() == 1).then(|| documents.remove(0)))
        .filter(Value::is_object)
        .ok_or(
            "failed to unmarshal argument into a relative resource reference: write cd://resources/<name> or \
                {resource: {name: …}, referencePath: [{name: …}]}",
        )?;
    let as_identity = |value: &Value| -> Option<Identity> {
        let map = value.as_object()?;
        let mut pairs: Identity = map.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect();
        pairs.sort_by_key(|(k, _)| k != "name");
        Some(pairs)
    };
    let resource = parsed.get("resource").and_then(as_identity).unwrap_or_default();
    if resource.is_empty() {
        return Err("failed to unmarshal argument into a relative resource reference: resource is empty".into());
    }
    let path = parsed.get("referencePath").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok((path.iter().filter_map(as_identity).collect(), resource))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::MemoryFiles;

    fn render(source: &str, data: &Value, descriptors: &Descriptors, files: &[(&str, &str)]) -> Result<String, String> {
        let files = MemoryFiles(files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        let mut templates = GoTemplates::new(files.share(), descriptors, Arc::new(Budget::default()));
        let fs = BlueprintFs::package("blueprint");
        templates.render(source, &fs, Some("blueprint/blueprint.yaml"), &to_go_json(data)).map_err(String::from)
    }

    /// Keys computed by real Go: the identity marshalled with encoding/json, then gopkg.in/yaml.v2
    /// as sigs.k8s.io/yaml does, base64-encoded (Landscaper's getResourceKeyGoFunc).
    #[test]
    fn resource_keys_are_landscapers() {
        let cd = serde_json::json!({
            "meta": {"schemaVersion": "v2"},
            "component": {
                "name": "github.com/gardener/landscaper-examples/guided-tour/echo-server", "version": "2.2.0",
                "resources": [{"name": "echo-server-chart", "version": "1.0.0", "type": "helmChart"}],
                "componentReferences": [{"name": "leaf", "componentName": "example.com/x", "version": "1.0"}]
            }
        });
        let leaf = serde_json::json!({"meta": {"schemaVersion": "v2"}, "component": {
            "name": "example.com/x", "version": "1.0",
            "resources": [
                {"name": "01", "version": "1.0", "extraIdentity": {"class": "yes"}},
                {"name": "01", "version": "2.0", "extraIdentity": {"class": "yes"}}
            ]
        }});
        let descriptors = descriptors(cd.as_object().cloned().as_ref().unwrap_or(&Map::new()), &[leaf]);
        assert_eq!(
            resource_key(&descriptors, "cd://resources/echo-server-chart"),
            Ok("Y29tcG9uZW50OgogIG5hbWU6IGdpdGh1Yi5jb20vZ2FyZGVuZXIvbGFuZHNjYXBlci1leGFtcGxlcy9ndWlkZWQtdG91ci9lY2hvLXNlcnZlcgogIHZlcnNpb246IDIuMi4wCnJlc291cmNlOgogIG5hbWU6IGVjaG8tc2VydmVyLWNoYXJ0Cg==".into())
        );
        let expected = "Y29tcG9uZW50OgogIG5hbWU6IGV4YW1wbGUuY29tL3gKICB2ZXJzaW9uOiAiMS4wIgpyZXNvdXJjZToKICBjbGFzczogInllcyIKICBuYW1lOiAiMDEiCiAgdmVyc2lvbjogIjEuMCIK";
        let yaml_reference =
            "resource: {name: \"01\", class: \"yes\", version: \"1.0\"}\nreferencePath: [{name: leaf}]";
        assert_eq!(resource_key(&descriptors, yaml_reference), Ok(expected.into()));
        assert!(resource_key(&descriptors, "cd://componentReferences/leaf/resources/01").is_ok());
        let missing = resource_key(&descriptors, "cd://componentReferences/other/resources/x");
        assert!(missing.is_err_and(|e| e.contains("component reference name=other not found")));
        assert!(resource_key(&descriptors, "cd://resources/a/resources/b").is_err());
    }

    #[test]
    fn components_are_transitive_and_start_with_cd() {
        let descriptor = |name: &str, refs: &[&str]| {
            let refs: Vec<Value> =
                refs.iter().map(|r| serde_json::json!({"name": r, "componentName": r, "version": "1"})).collect();
            serde_json::json!({"meta": {"schemaVersion": "v2"},
                "component": {"name": name, "version": "1", "componentReferences": refs}})
        };
        let root = descriptor("root", &["a", "b"]);
        let list = vec![descriptor("b", &["c"]), descriptor("a", &["b"]), descriptor("c", &[]), descriptor("x", &[])];
        let descriptors = descriptors(root.as_object().cloned().as_ref().unwrap_or(&Map::new()), &list);
        let names: Vec<&str> = descriptors.components["components"]
            .as_array()
            .map(|l| l.iter().map(component_name).collect())
            .unwrap_or_default();
        assert_eq!(names, ["root", "a", "b", "c"]);
    }

    #[test]
    fn oci_references() {
        let parse = |r: &str| parse_oci_ref(r).unwrap_or_else(|e| (e, String::new()));
        assert_eq!(parse("myimage:0.0.0"), ("myimage".into(), "0.0.0".into()));
        assert_eq!(parse("host:5000/myrepo/myimage:1.0.0"), ("host:5000/myrepo/myimage".into(), "1.0.0".into()));
        assert_eq!(parse("docker.io/library/nginx:1"), ("nginx".into(), "1".into()));
        assert_eq!(parse("docker.io/foo/bar:1"), ("foo/bar".into(), "1".into()));
        let digest = "sha256:66371f17cc61bbbed2667b0285a10981deba5eb969df9bfd4cf273706044ddcb";
        assert_eq!(parse(&format!("myimage@{digest}")), ("myimage".into(), digest.into()));
        assert_eq!(parse("quay.io/example/myimage:1.0.0"), ("quay.io/example/myimage".into(), "1.0.0".into()));
        assert!(parse_oci_ref("myimage").is_err());
        assert!(parse_oci_ref("My/Image:1").is_err());
    }

    #[test]
    fn includes_and_their_depth() {
        let data = serde_json::json!({"imports": {"name": "x"}});
        let files = [
            ("blueprint/part.tpl", "name: {{ .imports.name }}"),
            ("blueprint/self.tpl", r#"{{ include "self.tpl" . }}"#),
        ];
        let out = render(r#"{{ include "/part.tpl" . }}"#, &data, &Descriptors::default(), &files);
        assert_eq!(out, Ok("name: x".into()));
        let err =
            render(r#"{{ include "self.tpl" . }}"#, &data, &Descriptors::default(), &files).err().unwrap_or_default();
        assert!(err.contains("includes nest deeper than"), "{err}");
        let err = render(r#"{{ readDir "/" }}"#, &data, &Descriptors::default(), &files).err().unwrap_or_default();
        assert!(err.contains("readDir needs a directory listing"), "{err}");
        let err = render(r#"{{ env "HOME" }}"#, &data, &Descriptors::default(), &files).err().unwrap_or_default();
        assert!(err.contains("env"), "{err}");
    }

    #[test]
    /// Issue 35, causes 3, 4, 7, 10, 11 and Go's parse-time checks: each expectation is real Go
    /// 1.19 + Sprig 3.2.3's output for the same template (tests/gotemplate/runner.go).
    fn printf_escapers_and_checks_as_go() {
        let data = serde_json::json!({"imports": {}});
        let run = |source: &str| render(source, &data, &Descriptors::default(), &[]);
        assert_eq!(
            run(
                r#"{{ html "<a>" 1 2 }}|{{ js "a\u00ad'" }}|{{ urlquery "a b" 2 }}|{{ html .nil 1 }}|{{ js 1 "x" 2 }}"#
            ),
            Ok(r#"&lt;a&gt;1 2|a\u00AD\'|a+b2|&lt;no value&gt;1|1x2"#.into())
        );
        assert_eq!(
            run(r#"{{ printf "%d|%s|%q|%x" 3.0 (list "a" 1) (list "a" "b") 1.5 }}"#),
            Ok(r#"%!d(float64=3)|[a %!s(int=1)]|["a" "b"]|0x1.8p+00"#.into())
        );
        for (source, expected) in [
            (r#"{{ regexMatch "a" (list "a") }}"#, "expected string"),
            ("{{ if false }}{{ nope }}{{ end }}", "nope"),
            ("{{ if true }}{{ $x := 1 }}{{ end }}{{ $x }}", "$x"),
        ] {
            let err = run(source).err().unwrap_or_default();
            assert!(err.contains(expected), "{source}: {err}");
        }
    }

    #[test]
    fn numbers_are_float64_as_in_landscaper() {
        let data = serde_json::json!({"imports": {"big": 1_000_000, "small": 3}});
        let out = render(
            "{{ .imports.big }} {{ .imports.small }} {{ .imports | toYaml }}",
            &data,
            &Descriptors::default(),
            &[],
        );
        // Go prints the float64 1000000 as 1e+06 (and so do we); JSON and YAML as 1000000.
        assert_eq!(out, Ok("1e+06 3 big: 1000000\nsmall: 3".into()));
        let out =
            render("{{ typeOf .imports.small }} {{ eq .imports.small 3.0 }}", &data, &Descriptors::default(), &[]);
        assert_eq!(out, Ok("float64 true".into()));
    }

    #[test]
    fn resources_without_a_descriptor_name_the_setting() {
        let data = serde_json::json!({});
        let err =
            render(r#"{{ getResource "name" "x" }}"#, &data, &Descriptors::default(), &[]).err().unwrap_or_default();
        assert!(err.contains("set spec.componentDescriptor"), "{err}");
    }
}
