//! The values step: `spec.values`, then each `valuesFrom` source in order, then the
//! command line's `-f`/`--set` layers. Later layers win; maps are deep-merged and lists replaced.
//! A render that composes Windsor gets Windsor's own layers here too (schema defaults, and with
//! v0.9 the context's defaults and the derived values), before any other step reads the values.

use crate::config::{SourceKind, ValuesSource, WindsorVersion, WINDSOR_API_VERSION};
use crate::diag::{Diagnostic, Kind};
use crate::doc::{deep_merge, dotted, parse_scalar, read_yaml_documents, FieldPath, Map, Value};
use crate::krm::{self, item_location, Item};
use crate::package::{resolve, Files};
use crate::render::{Render, Source, Sources};
use base64::Engine;

pub fn run(render: &mut Render, files: &dyn Files) {
    // The config's own values are moved into the tree, not copied: nothing reads them from the
    // config after this step, and a copy of a large values tree costs more than its text.
    let (own, label) = match render.config.data_values.take() {
        Some(data) => (data, "functionConfig data"),
        None => (std::mem::take(&mut render.config.spec.values), "spec.values"),
    };
    let config = &render.config;
    let mut sources = Sources::default();
    let own = Value::Object(own);
    let config_path = item_location(&config.item).0;
    let mut values = Value::Object(Map::new());
    let with_defaults = config.spec.windsor.schema_defaults != Some(false);
    if let Some(schema) = config.spec.windsor.schema.as_ref().filter(|_| with_defaults) {
        match schema_defaults(schema, files, config_path.as_deref()) {
            Ok(defaults) => {
                let defaults = Value::Object(defaults);
                sources.record(
                    &values,
                    &defaults,
                    Source { label: format!("schema defaults {schema}"), secret: false },
                );
                values = defaults;
            }
            Err(message) => {
                let field = FieldPath::root().key("spec").key("windsor").key("schema");
                render.results.push(Diagnostic::error(Kind::Values, message).at(field).about(&config.item));
            }
        }
    }
    sources.record(&values, &own, Source { label: label.into(), secret: false });
    // With schema defaults, what the operator set is kept apart too (Windsor's `GetSetValues`).
    let mut set = (config.spec.windsor.schema.is_some() && with_defaults).then(|| own.clone());
    deep_merge(&mut values, own);
    for (i, source) in config.spec.values_from.iter().enumerate() {
        let field = FieldPath::root().key("spec").key("valuesFrom").index(i);
        let layer = match load(source, &render.items, files, config_path.as_deref()) {
            Ok(Some(layer)) => Value::Object(layer),
            Ok(None) => continue,
            Err(message) => {
                let diagnostic = Diagnostic::error(Kind::Values, message).at(field);
                render.results.push(diagnostic.about(&config.item));
                continue;
            }
        };
        sources.record(&values, &layer, describe(source));
        if let Some(set) = &mut set {
            deep_merge(set, layer.clone());
        }
        deep_merge(&mut values, layer);
    }
    for (label, layer) in render.overrides.drain(..) {
        sources.record(&values, &layer, Source { label, secret: false });
        if let Some(set) = &mut set {
            deep_merge(set, layer.clone());
        }
        deep_merge(&mut values, layer);
    }
    render.values = values;
    render.set_values = set;
    render.value_sources = sources;
    if !render.failed() {
        windsor(render, files);
    }
}

/// Windsor's own layers, for a render the features step composes: the defaults of the
/// `schema.yaml` next to the Blueprint item, then with v0.9 the context's defaults, the derived
/// values and the `context` key. They are applied here, before any step reads the values, so the
/// imports, the templates and the features step read one tree. The schema is kept for the
/// features step, which takes the paths it declares as known (and reports it unreadable).
fn windsor(render: &mut Render, files: &dyn Files) {
    if composes_windsor(render) {
        apply_windsor_layers(render, files);
    }
}

/// [`windsor`]'s layers, once: also called by the features step for a render that composes only
/// through Implementations policy chose (unknown when the values step runs).
pub fn apply_windsor_layers(render: &mut Render, files: &dyn Files) {
    if std::mem::replace(&mut render.windsor_layers, true) {
        return;
    }
    let spec = &render.config.spec;
    let blueprint = render.items.iter().find(|item| item.type_of() == (WINDSOR_API_VERSION, "Blueprint"));
    let schema = windsor_schema(&render.config.item, spec, blueprint.map(|item| item.header()), files);
    // The schema next to the blueprint, as Windsor reads `_template/schema.yaml`: its defaults
    // under the values (a schema the RenderBlueprint names is applied already).
    if let (Some((Ok(schema), true)), true) = (&schema, spec.windsor.schema_defaults != Some(false)) {
        let defaults = Value::Object(defaults_of(schema));
        let missing = not_set(&defaults, &render.values);
        if missing.as_object().is_some_and(|m| !m.is_empty()) {
            if render.set_values.is_none() {
                render.set_values = Some(render.values.clone());
            }
            let label = "schema defaults (schema.yaml next to the Blueprint item)".to_string();
            render.value_sources.record(&render.values, &missing, Source { label, secret: false });
            deep_merge(&mut render.values, missing);
        }
    }
    render.windsor_schema = schema.map(|(schema, _)| schema);
    if render.config.spec.windsor.version.unwrap_or_default() != WindsorVersion::V09 {
        return;
    }
    // The facets' overlay is what was set (`GetSetValues`), never what is derived: without a
    // schema that is the values as they are before deriving.
    if render.set_values.is_none() {
        render.set_values = Some(render.values.clone());
    }
    if let Some(name) = render.config.spec.windsor.context.clone() {
        apply_context_defaults(&mut render.values, &mut render.set_values, &mut render.value_sources, &name);
    }
    apply_windsor_derived(&mut render.values, &mut render.value_sources);
    if let Some(name) = &render.config.spec.windsor.context {
        apply_windsor_context(&mut render.values, &mut render.value_sources, name);
    }
}

/// Whether the features step composes whatever policy chooses: a Windsor Blueprint, Feature or
/// Facet item, `spec.blueprint` or `spec.features`. (Features of an Implementation count only
/// once policy has chosen it: the features step applies the layers then.)
fn composes_windsor(render: &Render) -> bool {
    let spec = &render.config.spec;
    let windsor = |(api_version, kind): (&str, &str)| {
        api_version == WINDSOR_API_VERSION && matches!(kind, "Blueprint" | "Feature" | "Facet")
    };
    !spec.blueprint.is_empty() || !spec.features.is_empty() || render.items.iter().any(|item| windsor(item.type_of()))
}

/// The Windsor schema of the render: the file `spec.windsor.schema` names (`false`: its defaults
/// are applied by [`run`] already), else `schema.yaml` next to the Blueprint item when there is
/// one (`true`). `None` when there is neither.
fn windsor_schema(
    config: &Value,
    spec: &crate::config::Spec,
    blueprint: Option<&Value>,
    files: &dyn Files,
) -> Option<(Result<Map, String>, bool)> {
    let (path, discovered) = match &spec.windsor.schema {
        Some(named) => (resolve(krm::item_location(config).0.as_deref(), named).ok()?, false),
        None => {
            let blueprint = krm::item_location(blueprint?).0?;
            (resolve(Some(&blueprint), "schema.yaml").ok()?, true)
        }
    };
    // A missing file next to the blueprint is no schema; a named one was reported by the values step.
    let text = files.read(&path).ok()?;
    let parsed = parse_schema(&text).map_err(|err| format!("schema file {:?}: {err}", files.shown(&path)));
    Some((parsed, discovered))
}

/// What `defaults` holds that `values` does not set: the defaults as a layer under the values.
fn not_set(defaults: &Value, values: &Value) -> Value {
    let (Value::Object(defaults), Some(values)) = (defaults, values.as_object()) else {
        return Value::Object(Map::new());
    };
    let mut layer = Map::new();
    for (key, default) in defaults {
        match values.get(key) {
            None => {
                layer.insert(key.clone(), default.clone());
            }
            Some(set @ Value::Object(_)) if default.is_object() => {
                let inner = not_set(default, set);
                if inner.as_object().is_some_and(|m| !m.is_empty()) {
                    layer.insert(key.clone(), inner);
                }
            }
            Some(_) => {}
        }
    }
    Value::Object(layer)
}

/// What Windsor v0.9's `ApplyConfigDefaults` and `ResolveConfig` give a context before and after
/// loading its files, as values under (before) and over unset keys of (after) what the operator
/// set: for a context named `local` or `local-*`, `dev: true`, `platform: docker` and
/// `workstation.runtime: docker` (Windsor's choice on Linux; `docker-desktop` on macOS and
/// Windows); for any other, `platform: none`. Then `dns.domain: test` when a workstation runs and
/// DNS is not off, `workstation.dns.address: 127.0.0.1` on Docker Desktop, and `platform: incus`
/// for a dev context on colima with `vm.runtime: incus`. Schema defaults stay under all of it.
fn apply_context_defaults(
    values: &mut Value,
    set_values: &mut Option<Value>,
    sources: &mut crate::render::Sources,
    name: &str,
) {
    let set = set_values.clone().unwrap_or_else(|| values.clone());
    let dev_by_name = name == "local" || name.starts_with("local-");
    let mut before = serde_json::json!({"platform": "none"});
    if dev_by_name {
        before = serde_json::json!({"dev": true, "platform": "docker", "workstation": {"runtime": "docker"}});
    }
    let mut layer = not_set(&before, &set);
    let mut merged = values.clone();
    deep_merge(&mut merged, layer.clone());
    let text = |path: &str| dotted(&merged, path).and_then(Value::as_str).unwrap_or_default().to_string();
    let mut after = Map::new();
    let runtime = text("workstation.runtime");
    let dns_on = matches!(dotted(&merged, "dns.enabled"), None | Some(Value::Null) | Some(Value::Bool(true)));
    if dns_on && !runtime.is_empty() && text("dns.domain").is_empty() {
        after.insert("dns".into(), serde_json::json!({"domain": "test"}));
    }
    if runtime == "docker-desktop" && text("workstation.dns.address").is_empty() {
        after.insert("workstation".into(), serde_json::json!({"dns": {"address": "127.0.0.1"}}));
    }
    let dev = match dotted(&merged, "dev") {
        Some(Value::Bool(dev)) => *dev,
        _ => dev_by_name,
    };
    let vm = match text("vm.runtime") {
        vm if vm.is_empty() => "docker".to_string(),
        vm => vm,
    };
    let platform = text("platform");
    if dev && (platform.is_empty() || platform == "docker") && runtime == "colima" && vm == "incus" {
        after.insert("platform".into(), Value::from("incus"));
    }
    deep_merge(&mut layer, Value::Object(after));
    if layer.as_object().is_none_or(|m| m.is_empty()) {
        return;
    }
    let source = crate::render::Source { label: format!("Windsor's defaults for context {name:?}"), secret: false };
    sources.record(values, &layer, source);
    deep_merge(values, layer.clone());
    if let Some(set) = set_values {
        deep_merge(set, layer);
    }
}

/// Merges [`windsor_derived`] into a render's values (recording it in their sources, which
/// `explain` shows), for a package composed as Windsor v0.9.
fn apply_windsor_derived(values: &mut Value, sources: &mut Sources) {
    let derived = windsor_derived(values);
    if derived.as_object().is_some_and(|layer| !layer.is_empty()) {
        let source = Source { label: "Windsor v0.9's derived values".into(), secret: false };
        sources.record(values, &derived, source);
        deep_merge(values, derived);
    }
}

/// Windsor's runtime key `context` (`injectRuntimeKeys`): the context's name over whatever the
/// values hold there, as every expression sees it.
fn apply_windsor_context(values: &mut Value, sources: &mut Sources, name: &str) {
    let mut layer = Map::new();
    layer.insert("context".into(), Value::from(name));
    let layer = Value::Object(layer);
    sources.record(values, &layer, Source { label: "spec.windsor.context".into(), secret: false });
    if let Value::Object(map) = values {
        map.insert("context".into(), Value::from(name));
    }
}

/// What Windsor v0.9's `GetContextValues` derives over the schema defaults and what is set
/// (resolve.go: `applyPlatformDerivedDefaults`, `ensureClusterStructure`), as a layer to merge
/// over `values`: `cluster.driver`, when no key is there (even a null one), from `platform`
/// (else `provider`); `cluster.controlplanes.nodes` and `cluster.workers.nodes` as empty maps
/// when absent, a tier that is not a mapping replaced by one. Facets read these without a guard.
/// `workstation.arch` (the machine Windsor runs on) is not derived: a render does not depend on
/// the machine that runs it.
fn windsor_derived(values: &Value) -> Value {
    let text = |key: &str| values.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let driver = match text("platform").or_else(|| text("provider")) {
        Some("docker" | "incus" | "metal" | "hetzner" | "omni" | "hyperv" | "vsphere") => Some("talos"),
        Some("aws") => Some("eks"),
        Some("azure") => Some("aks"),
        Some("gcp") => Some("gke"),
        _ => None,
    };
    let cluster = values.get("cluster");
    let mut layer = Map::new();
    // `setValueInMap` replaces a `cluster` that is not a mapping.
    let driver = driver.filter(|_| !cluster.and_then(Value::as_object).is_some_and(|c| c.contains_key("driver")));
    if let Some(driver) = driver {
        layer.insert("driver".into(), Value::from(driver));
    }
    let tiers: Option<&Map> = match cluster {
        Some(Value::Object(map)) => Some(map),
        _ if driver.is_some() => None,
        None | Some(Value::Null) => None,
        // A `cluster` that is text or a list is left as it is.
        Some(_) => return Value::Object(Map::new()),
    };
    for tier in ["controlplanes", "workers"] {
        match tiers.and_then(|map| map.get(tier)) {
            Some(Value::Object(map)) if map.contains_key("nodes") => {}
            // Merged into a mapping; anything else (or nothing) is replaced by one.
            _ => {
                layer.insert(tier.into(), serde_json::json!({ "nodes": {} }));
            }
        }
    }
    if layer.is_empty() {
        return Value::Object(Map::new());
    }
    Value::Object(Map::from_iter([("cluster".to_string(), Value::Object(layer))]))
}

/// The `default`s of a Windsor schema file, as Windsor's `extractDefaults` collects them: each
/// property's `default`, and under a property of type `object` the defaults of its properties
/// (which, when there are any, take the place of the object's own `default`).
fn schema_defaults(path: &str, files: &dyn Files, config_path: Option<&str>) -> Result<Map, String> {
    let resolved = resolve(config_path, path)?;
    let text =
        files.read(&resolved).map_err(|err| format!("cannot read schema file {:?}: {err}", files.shown(&resolved)))?;
    let schema = parse_schema(&text).map_err(|err| format!("schema file {:?}: {err}", files.shown(&resolved)))?;
    Ok(defaults_of(&schema))
}

/// A Windsor schema file's text as a mapping.
fn parse_schema(text: &str) -> Result<Map, String> {
    parse_mapping(text)
}

/// The `default`s a Windsor schema declares (see [`schema_defaults`]).
fn defaults_of(schema: &Map) -> Map {
    fn extract(schema: &Map, depth: usize) -> Map {
        let mut defaults = Map::new();
        let Some(Value::Object(properties)) = schema.get("properties") else { return defaults };
        for (name, property) in properties {
            let Value::Object(property) = property else { continue };
            if let Some(default) = property.get("default") {
                defaults.insert(name.clone(), default.clone());
            }
            if depth < crate::limits::MAX_DEPTH && property.get("type").and_then(Value::as_str) == Some("object") {
                let nested = extract(property, depth + 1);
                if !nested.is_empty() {
                    defaults.insert(name.clone(), Value::Object(nested));
                }
            }
        }
        defaults
    }
    extract(schema, 0)
}

/// `valuesFrom file v.yaml`, `valuesFrom ConfigMap cm key k`; a Secret's values are secret.
fn describe(source: &ValuesSource) -> Source {
    let mut label = String::from("valuesFrom");
    match (&source.file, source.kind, &source.name) {
        (Some(file), _, _) => label.push_str(&format!(" file {file}")),
        (None, Some(kind), Some(name)) => label.push_str(&format!(" {} {name}", kind.as_str())),
        _ => {}
    }
    if let Some(key) = &source.key {
        label.push_str(&format!(" key {key}"));
    }
    Source { label, secret: source.file.is_none() && source.kind == Some(SourceKind::Secret) }
}

/// `a.b=c` as a values layer `{a: {b: c}}`, the value read as a YAML scalar (`3` a number, `on`
/// a string): `--set` on the command line and kpt's `-- key=value` arguments.
///
/// A key nests as deep as it has segments, so keys deeper than the YAML reader's limit are
/// refused: 20 000 segments overflowed the stack of every walk that followed.
pub fn assignment_layer(key: &str, value: &str) -> Result<Value, String> {
    let depth = key.split('.').count();
    if depth > crate::limits::MAX_DEPTH {
        return Err(format!(
            "the key has {depth} dotted segments, so the value would nest {depth} levels deep; the limit is {}: \
             use a shorter key",
            crate::limits::MAX_DEPTH
        ));
    }
    Ok(key.rsplit('.').fold(parse_scalar(value), |inner, segment| {
        let mut map = Map::new();
        map.insert(segment.to_string(), inner);
        Value::Object(map)
    }))
}

/// One source's values; `Ok(None)` when an optional source is absent.
fn load(
    source: &ValuesSource,
    items: &[Item],
    files: &dyn Files,
    config_path: Option<&str>,
) -> Result<Option<Map>, String> {
    match (&source.file, source.kind, &source.name) {
        (Some(file), None, None) => {
            let path = resolve(config_path, file)?;
            let text = match files.read(&path) {
                Ok(text) => text,
                Err(_) if source.optional => return Ok(None),
                Err(err) => {
                    let path = files.shown(&path);
                    return Err(format!("cannot read values file {path:?}: {err}; fix the path or set optional: true"));
                }
            };
            parse_mapping(&text).map(Some).map_err(|err| format!("values file {:?}: {err}", files.shown(&path)))
        }
        (None, Some(kind), Some(name)) => {
            let Some(object) = find(items, kind, name, source.namespace.as_deref())? else {
                if source.optional {
                    return Ok(None);
                }
                return Err(format!(
                    "{} {name:?} not found among the input items; add it to the package or set optional: true",
                    kind.as_str()
                ));
            };
            let data = data_of(object, kind, source.key.as_deref())?;
            match &source.key {
                None => Ok(Some(data.into_iter().map(|(k, v)| (k, Value::String(v))).collect())),
                Some(key) => match data.into_iter().find(|(k, _)| k == key) {
                    Some((_, text)) => parse_mapping(&text)
                        .map(Some)
                        .map_err(|err| format!("{} {name:?} key {key:?}: {err}", kind.as_str())),
                    None if source.optional => Ok(None),
                    None => Err(format!("{} {name:?} has no key {key:?}; add it or set optional: true", kind.as_str())),
                },
            }
        }
        _ => Err("a values source is either {kind: ConfigMap|Secret, name} or {file}".to_string()),
    }
}

/// Finds the ConfigMap or Secret by name (and namespace, when given).
pub(crate) fn find<'a>(
    items: &'a [Item],
    kind: SourceKind,
    name: &str,
    namespace: Option<&str>,
) -> Result<Option<&'a Value>, String> {
    let mut matches = items
        .iter()
        .filter(|item| {
            if item.type_of() != ("v1", kind.as_str()) {
                return false;
            }
            let header = item.header();
            krm::name_of(header) == name && namespace.is_none_or(|ns| krm::namespace_of(header) == ns)
        })
        .map(|item| &**item);
    let first = matches.next();
    if let (Some(a), Some(b)) = (first, matches.next()) {
        return Err(format!(
            "{} {name:?} is ambiguous: it exists in namespaces {:?} and {:?}; set namespace",
            kind.as_str(),
            krm::namespace_of(a),
            krm::namespace_of(b)
        ));
    }
    Ok(first)
}

/// A ConfigMap's `data`, or a Secret's `data` (base64-decoded) overlaid with `stringData`;
/// only the entry `only` when a key is asked for, so an unrelated bad entry does not fail the run.
pub(crate) fn data_of(object: &Value, kind: SourceKind, only: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let entries = |field: &str| {
        object
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(key, _)| only.is_none_or(|only| only == key.as_str()))
    };
    let mut data = Vec::new();
    for (key, value) in entries("data") {
        let text = value.as_str().ok_or_else(|| format!("{} data {key:?} is not a string", kind.as_str()))?;
        let text = match kind {
            SourceKind::ConfigMap => text.to_string(),
            SourceKind::Secret => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .map_err(|err| format!("Secret data {key:?} is not valid base64: {err}"))?;
                String::from_utf8(bytes).map_err(|_| format!("Secret data {key:?} is not UTF-8 text"))?
            }
        };
        data.push((key.clone(), text));
    }
    if kind == SourceKind::Secret {
        for (key, value) in entries("stringData") {
            let text = value.as_str().unwrap_or_default().to_string();
            match data.iter_mut().find(|(k, _)| k == key) {
                Some(entry) => entry.1 = text,
                None => data.push((key.clone(), text)),
            }
        }
    }
    Ok(data)
}

fn parse_mapping(text: &str) -> Result<Map, String> {
    let documents = read_yaml_documents(text).map_err(|err| match (err.line, err.column) {
        (Some(line), Some(column)) => format!("not valid YAML at line {line} column {column}: {}", err.message),
        _ => format!("not valid YAML: {}", err.message),
    })?;
    match documents.as_slice() {
        [] => Ok(Map::new()),
        [Value::Object(map)] => Ok(map.clone()),
        [_] => Err("values must be a YAML mapping".to_string()),
        _ => Err("values must be a single YAML document".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FunctionConfig;
    use crate::package::MemoryFiles;
    use serde_json::json;

    /// windsorcli/cli v0.9.0 pkg/runtime/config/resolve.go: applyPlatformDerivedDefaults,
    /// setDerivedValueIfMissing (hasValueAtPath, setValueInMap), ensureClusterStructure.
    #[test]
    fn windsor_derived_values_follow_get_context_values() {
        let derive = |values: Value| {
            let mut values = values;
            let mut sources = Sources::default();
            apply_windsor_derived(&mut values, &mut sources);
            values
        };
        let nodes = json!({"nodes": {}});
        assert_eq!(
            derive(json!({"provider": "hetzner"})),
            json!({"provider": "hetzner", "cluster": {"driver": "talos", "controlplanes": nodes, "workers": nodes}})
        );
        // platform before provider; an empty platform falls back to the provider.
        assert_eq!(derive(json!({"platform": "aws", "provider": "azure"}))["cluster"]["driver"], json!("eks"));
        assert_eq!(derive(json!({"platform": "", "provider": "gcp"}))["cluster"]["driver"], json!("gke"));
        // A driver key that is there, even null, is kept; an unknown platform derives none.
        assert_eq!(
            derive(json!({"platform": "docker", "cluster": {"driver": null}}))["cluster"]["driver"],
            json!(null)
        );
        assert_eq!(
            derive(json!({"platform": "local"})),
            json!({"platform": "local", "cluster": {"controlplanes": nodes, "workers": nodes}})
        );
        // Given nodes are kept; a tier that is not a mapping becomes one; other keys stay.
        assert_eq!(
            derive(json!({"cluster": {"controlplanes": {"count": 1, "nodes": null}, "workers": "x"}})),
            json!({"cluster": {"controlplanes": {"count": 1, "nodes": null}, "workers": nodes}})
        );
        // A cluster that is text is replaced only to set a driver.
        assert_eq!(derive(json!({"cluster": "x"})), json!({"cluster": "x"}));
        assert_eq!(
            derive(json!({"provider": "azure", "cluster": "x"})),
            json!({"provider": "azure", "cluster": {"driver": "aks", "controlplanes": nodes, "workers": nodes}})
        );
    }

    fn render_values(spec: Value, items: Vec<Value>, files: &[(&str, &str)]) -> (Value, Vec<String>) {
        let item = json!({"apiVersion": "fn.blueprint.dev/v1alpha1", "kind": "RenderBlueprint",
            "metadata": {"name": "p", "annotations": {"internal.config.kubernetes.io/path": "cfg/fn.yaml"}}, "spec": spec});
        let config = FunctionConfig::from_item(&item).unwrap_or_else(|_| FunctionConfig::empty());
        let overrides = vec![("--set".to_string(), json!({"cli": {"set": true}}))];
        let mut render = Render::new(config, items.into_iter().map(Item::from).collect(), overrides);
        let files = MemoryFiles(files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect());
        run(&mut render, &files);
        (render.values, render.results.iter().map(|d| d.message.clone()).collect())
    }

    /// Windsor's layers are the values step's, so every later step reads them; a render that
    /// composes no Windsor gets none, and v0.8 gets the schema's defaults but nothing derived.
    #[test]
    fn windsor_layers_are_applied_with_the_values() {
        let blueprint = json!({"apiVersion": WINDSOR_API_VERSION, "kind": "Blueprint", "metadata": {"name": "b",
            "annotations": {"internal.config.kubernetes.io/path": "tpl/blueprint.yaml"}}});
        let schema = ("tpl/schema.yaml", "properties:\n  platform:\n    default: docker\n");
        let (values, results) = render_values(json!({}), vec![blueprint.clone()], &[schema]);
        assert!(results.is_empty(), "{results:?}");
        assert_eq!((&values["platform"], &values["cluster"]["driver"]), (&json!("docker"), &json!("talos")));
        // A context's defaults go over the schema's, under what is set.
        let context = json!({"windsor": {"context": "prod"}});
        let (values, _) = render_values(context, vec![blueprint.clone()], &[schema]);
        assert_eq!((&values["platform"], &values["context"]), (&json!("none"), &json!("prod")));
        let (values, _) = render_values(json!({"windsor": {"version": "0.8"}}), vec![blueprint], &[schema]);
        assert_eq!((&values["platform"], values.get("cluster")), (&json!("docker"), None));
        let (values, _) = render_values(json!({}), Vec::new(), &[schema]);
        assert_eq!((values.get("platform"), values.get("cluster")), (None, None));
    }

    #[test]
    fn layers_merge_in_order() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"region": "eu", "size": "3"}});
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
            "data": {"values.yaml": "ZGI6CiAgcGFzc3dvcmQ6IGh1bnRlcjI="}});
        let (values, errors) = render_values(
            json!({"values": {"region": "us", "db": {"host": "h", "ports": [1, 2]}},
                   "valuesFrom": [{"kind": "ConfigMap", "name": "cm"}, {"file": "v.yaml"},
                                  {"kind": "Secret", "name": "s", "key": "values.yaml"}]}),
            vec![cm, secret],
            &[("cfg/v.yaml", "db:\n  ports: [3]\n")],
        );
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(
            values,
            json!({"region": "eu", "db": {"host": "h", "ports": [3], "password": "hunter2"}, "size": "3", "cli": {"set": true}})
        );
    }

    #[test]
    fn sources_name_the_layer_that_set_each_path_last() {
        let item = json!({"apiVersion": "fn.blueprint.dev/v1alpha1", "kind": "RenderBlueprint", "metadata": {"name": "p"},
            "spec": {"values": {"region": "us", "db": {"host": "h", "ports": [1]}, "cli": {"set": false, "x": 1}},
                     "valuesFrom": [{"kind": "Secret", "name": "s"}, {"file": "v.yaml"}]}});
        let config = FunctionConfig::from_item(&item).unwrap_or_else(|_| FunctionConfig::empty());
        let secret =
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"token": "t"}});
        let overrides =
            vec![("--set".to_string(), json!({"cli": {"set": true}})), ("-f x".to_string(), json!({"cli": 3}))];
        let mut render = Render::new(config, vec![Item::from(secret)], overrides);
        let files = MemoryFiles([("v.yaml".to_string(), "db:\n  ports: [3]\n".to_string())].into_iter().collect());
        run(&mut render, &files);
        let sources = &render.value_sources;
        let of = |key: &str| -> Vec<(String, String, bool)> {
            sources.under(key).map(|(path, source)| (path.join("."), source.label.clone(), source.secret)).collect()
        };
        assert_eq!(of("region"), vec![("region".into(), "spec.values".into(), false)]);
        assert_eq!(
            of("db"),
            vec![
                ("db".into(), "spec.values".into(), false),
                ("db.ports".into(), "valuesFrom file v.yaml".into(), false)
            ]
        );
        assert_eq!(of("token"), vec![("token".into(), "valuesFrom Secret s".into(), true)]);
        // A later layer that replaces a map forgets what set its parts.
        assert_eq!(of("cli"), vec![("cli".into(), "-f x".into(), false)]);
    }

    #[test]
    fn missing_sources_fail_unless_optional() {
        let (_, errors) = render_values(
            json!({"valuesFrom": [{"kind": "ConfigMap", "name": "nope"}, {"kind": "Secret", "name": "nope", "optional": true},
                                  {"file": "missing.yaml", "optional": true}]}),
            vec![],
            &[],
        );
        assert_eq!(
            errors,
            vec!["ConfigMap \"nope\" not found among the input items; add it to the package or set optional: true"]
        );
    }
}
