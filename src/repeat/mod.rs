//! The repeat step (compat: KOTS config and its variadic-config proposal; ours where KOTS built
//! nothing): KOTS `Config` and `ConfigValues`, repeatable items (whole-resource clones and
//! `yamlPath` node clones), repeatable groups (from the variadic-config proposal), `minimumCount`,
//! the KOTS template syntax and `kots.io/when`.
//!
//! An input item that is a repeat template, or holds KOTS template syntax, stays in the package as
//! a template (local-config, marked excluded so the next run takes it up again); what is rendered
//! from it is generated afresh every run. So a re-run never clones a clone, and a changed value
//! reaches every copy.

pub mod kots;

use crate::config::parse_section;
use crate::diag::{Diagnostic, Kind};
use crate::doc::{FieldPath, Map, Value};
use crate::krm::{
    self, annotation, annotations as ann, is_local_config, remove_annotation, set_annotation, shape_of, type_of,
};
use crate::pipeline::{is_configuration, Generated, Render, Source};
use kots::{contains_template, has_template, render_value, Scope};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

const KOTS_API_VERSION: &str = "kots.io/v1beta1";
const WHEN: &str = "kots.io/when";

/// One clone, for `explain`.
#[derive(Clone, Debug)]
pub struct CloneReport {
    /// `Kind/name` of the template resource.
    pub source: String,
    /// `Kind/name` of the clone, or the list it was appended to for node clones.
    pub clone: String,
    /// The repeatable item or group.
    pub from: String,
    /// The value name or group instance.
    pub value: String,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub clones: Vec<CloneReport>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigSpec {
    #[serde(default)]
    groups: Vec<Group>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Group {
    #[serde(default)]
    name: String,
    #[serde(default)]
    repeatable: bool,
    #[serde(default)]
    minimum_count: Option<usize>,
    #[serde(default)]
    templates: Vec<Template>,
    /// Instance → item → value (the variadic-config proposal's shape).
    #[serde(default)]
    values_by_group: BTreeMap<String, Map>,
    #[serde(default)]
    instance_names: Vec<String>,
    #[serde(default)]
    items: Vec<Item>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    #[serde(default)]
    name: String,
    /// `text`, `password`, `file`…: only `password` matters here (`explain` redacts it).
    #[serde(default, rename = "type")]
    kind: Value,
    #[serde(default)]
    default: Value,
    #[serde(default)]
    value: Value,
    #[serde(default)]
    repeatable: bool,
    #[serde(default)]
    minimum_count: Option<usize>,
    #[serde(default)]
    templates: Vec<Template>,
    /// Group (or group instance) → value name → value.
    #[serde(default)]
    values_by_group: BTreeMap<String, Map>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(expecting = "a template: a mapping {apiVersion: …, kind: …, name: …}")]
struct Template {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    yaml_path: Option<String>,
    #[serde(default)]
    prefix: Option<String>,
}

impl Template {
    /// A resource matches when apiVersion, kind, name and namespace are equal (empty equals empty).
    fn matches(&self, item: &Value) -> bool {
        type_of(item) == (self.api_version.as_str(), self.kind.as_str())
            && krm::name_of(item) == self.name
            && krm::namespace_of(item) == self.namespace
    }
}

/// A repeatable item with its values (sorted by value name).
struct RepeatItem<'a> {
    item: &'a Item,
    values: Vec<(String, Value)>,
}

fn text(value: &Value) -> bool {
    !matches!(value, Value::Null) && value.as_str() != Some("")
}

/// The KOTS config of a render, read once: its specs (with the item or config that declared
/// them) and the resolved values.
pub struct Loaded {
    specs: Vec<(ConfigSpec, Value)>,
    values: Map,
    filenames: Map,
}

/// Reads `Config`/`ConfigValues` items and `spec.config`; the values become the `config` binding.
pub fn load(render: &mut Render) -> Option<Loaded> {
    let mut specs: Vec<(ConfigSpec, Value)> = Vec::new();
    let mut results = Vec::new();
    for item in render.items.iter().filter(|i| i.type_of() == (KOTS_API_VERSION, "Config")).map(|i| &**i) {
        let spec = item.get("spec").filter(|s| !s.is_null()).cloned().unwrap_or_else(|| Value::Object(Map::new()));
        match parse_section::<ConfigSpec>(&spec) {
            Ok(spec) => specs.push((spec, item.clone())),
            Err((field, message)) => results.push(
                Diagnostic::error(Kind::Config, message).about(item).at(FieldPath::root().key("spec").join(&field)),
            ),
        }
    }
    if !render.config.spec.config.is_empty() {
        match parse_section::<ConfigSpec>(&Value::Object(render.config.spec.config.clone())) {
            Ok(spec) => specs.push((spec, render.config.item.clone())),
            Err((field, message)) => results.push(
                Diagnostic::error(Kind::Config, message)
                    .about(&render.config.item)
                    .at(FieldPath::root().key("spec").key("config").join(&field)),
            ),
        }
    }
    render.results.append(&mut results);
    if specs.is_empty() {
        return None;
    }
    // Values: ConfigValues wins over an item's value, which wins over its default.
    let mut config_values = Map::new();
    // Which ConfigValues (and which of its fields) gave each value, for `explain`.
    let mut given: HashMap<String, String> = HashMap::new();
    let mut filenames = Map::new();
    for item in render.items.iter().filter(|i| i.type_of() == (KOTS_API_VERSION, "ConfigValues")).map(|i| &**i) {
        if let Some((field, message)) = config_values_problem(item) {
            render.results.push(Diagnostic::error(Kind::Config, message).about(item).at(field));
            continue;
        }
        for (name, entry) in
            item.get("spec").and_then(|s| s.get("values")).and_then(Value::as_object).into_iter().flatten()
        {
            let value = match (entry.get("value").filter(|v| text(v)), entry.get("default").filter(|v| text(v))) {
                (Some(value), _) => Some((value, "")),
                (None, Some(default)) => Some((default, " default")),
                (None, None) => None,
            };
            if let Some((value, field)) = value {
                config_values.insert(name.clone(), value.clone());
                given.insert(name.clone(), format!("ConfigValues {}{field}", krm::name_of(item)));
            }
            if let Some(filename) = entry.get("filename") {
                filenames.insert(name.clone(), filename.clone());
            }
        }
    }
    let mut values = Map::new();
    let mut sources = HashMap::new();
    for (spec, _) in &specs {
        for group in &spec.groups {
            for item in &group.items {
                let (value, label) = match config_values.get(&item.name) {
                    Some(value) => (value.clone(), given.get(&item.name).cloned().unwrap_or_default()),
                    None if text(&item.value) => (item.value.clone(), "item value".into()),
                    None if text(&item.default) => (item.default.clone(), "item default".into()),
                    None if item.repeatable || group.repeatable => {
                        (Value::String(String::new()), "repeatable: values per clone".into())
                    }
                    None => (Value::String(String::new()), "no value".into()),
                };
                values.insert(item.name.clone(), value);
                let secret = item.kind.as_str() == Some("password");
                sources.insert(item.name.clone(), Source { label, secret });
            }
        }
    }
    render.report.config = values.clone();
    render.report.config_sources = sources;
    Some(Loaded { specs, values, filenames })
}

/// A `ConfigValues` item whose values are not `name: {value: …}` entries (KOTS's shape) would
/// be silently ignored, and the defaults used instead: say where it is wrong.
fn config_values_problem(item: &Value) -> Option<(FieldPath, String)> {
    let field = FieldPath::root().key("spec").key("values");
    let values = match item.get("spec").and_then(|s| s.get("values")) {
        None | Some(Value::Null) => return None,
        Some(Value::Object(values)) => values,
        Some(other) => {
            let message = format!("expected a mapping of config item names to {{value: …}}, got {}", shape_of(other));
            return Some((field, message));
        }
    };
    values.iter().find(|(_, entry)| !entry.is_object()).map(|(name, entry)| {
        let message = format!(
            "config value {name:?} must be a mapping such as {{value: …}} (or default, filename), got {}; \
             write {name}: {{value: {}}}",
            shape_of(entry),
            serde_json::to_string(entry).unwrap_or_default()
        );
        (field.clone().key(name.as_str()), message)
    })
}

/// Expands repeatable items and groups and renders KOTS templates.
pub fn run(render: &mut Render, loaded: &Loaded) {
    let Loaded { specs, values, filenames } = loaded;
    let mut step = Step {
        budget: &render.budget,
        values,
        filenames,
        results: Vec::new(),
        generated: Vec::new(),
        report: Report::default(),
        current: None,
    };
    step.expand(specs, &mut render.items);
    render.results.append(&mut step.results);
    render.generated.extend(step.generated);
    render.report.repeat = step.report;
}

struct Step<'a> {
    /// The render's: every clone's bytes are output, every clone a step.
    budget: &'a crate::limits::Budget,
    values: &'a Map,
    filenames: &'a Map,
    results: Vec<Diagnostic>,
    generated: Vec<Generated>,
    report: Report,
    /// The kind of the template being rendered.
    current: Option<String>,
}

/// Fields Kubernetes requires to be strings, whatever a whole template renders to: everything
/// under `metadata`, ConfigMap/Secret data, and a container's `env[].value`, `args`, `command`
/// and `image`. (KOTS renders templates in the text before YAML parsing, so `{{repl … }}`, which
/// YAML forces us to quote, still takes its type; quoting cannot carry the intent here.)
fn must_stay_string(kind: &str, pointer: &str) -> bool {
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    let in_container = segments.windows(2).any(|w| {
        matches!(w[0], "containers" | "initContainers" | "ephemeralContainers") && w[1].parse::<usize>().is_ok()
    });
    let tail = |field: &str| segments.iter().rev().take(3).any(|s| *s == field);
    pointer.starts_with("/metadata/")
        || (matches!(kind, "ConfigMap" | "Secret")
            && (pointer.starts_with("/data/")
                || pointer.starts_with("/stringData/")
                || pointer.starts_with("/binaryData/")))
        || (in_container && tail("env") && segments.last() == Some(&"value"))
        || (in_container && (tail("args") || tail("command")))
        || (in_container && segments.last() == Some(&"image"))
}

fn describe(item: &Value) -> String {
    format!("{}/{}", type_of(item).1, krm::name_of(item))
}

/// A copy of a template ready to be generated: no file of its own, not marked.
fn fresh_copy(template: &Value) -> Value {
    let mut copy = template.clone();
    for key in [ann::PATH, ann::LEGACY_PATH, ann::INDEX, ann::LEGACY_INDEX, ann::EXCLUDED, ann::LOCAL_CONFIG] {
        remove_annotation(&mut copy, key);
    }
    copy
}

fn set_name(item: &mut Value, name: &str) {
    if let Some(metadata) = item.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("name".into(), Value::String(name.to_string()));
    }
}

impl Step<'_> {
    fn error(&mut self, message: String, item: &Value) {
        self.results.push(Diagnostic::error(Kind::Render, message).about(item));
    }

    /// Charges one more clone of `size` bytes before it is made; `false` (and an error naming
    /// the limit) once the budget is spent, so a 1 MiB value cloned 3 000 times never is.
    fn charge_clone(&mut self, size: u64, source: &Value) -> bool {
        let charged = self
            .budget
            .charge_steps(1)
            .and_then(|()| self.budget.charge_output(usize::try_from(size).unwrap_or(usize::MAX)));
        match charged {
            Ok(()) => true,
            Err(err) => {
                // One error per template resource, not one per clone.
                if self.results.last().is_none_or(|d| d.message != err.to_string()) {
                    self.error(err.to_string(), source);
                }
                false
            }
        }
    }

    /// The values of a repeatable item for one group (or instance), ordered by value name.
    fn item_values(item: &Item, group: &str) -> Vec<(String, Value)> {
        let map = item.values_by_group.get(group).cloned().unwrap_or_default();
        let mut values: Vec<(String, Value)> = map.into_iter().collect();
        values.sort_by(|a, b| a.0.cmp(&b.0));
        values
    }

    fn check_minimum(
        &mut self,
        (name, what, field): (&str, &str, FieldPath),
        count: usize,
        minimum: Option<usize>,
        origin: &Value,
    ) {
        if let Some(minimum) = minimum.filter(|m| count < *m) {
            let message = format!("{what} {name:?} has {count} values, fewer than its minimumCount of {minimum}");
            self.results.push(Diagnostic::error(Kind::Config, message).about(origin).at(field.key("minimumCount")));
        }
    }

    fn expand(&mut self, specs: &[(ConfigSpec, Value)], items: &mut [crate::krm::Item]) {
        // Repeatable items outside repeatable groups, and repeatable groups.
        let mut plain_items: Vec<RepeatItem> = Vec::new();
        let mut groups: Vec<(&Group, Vec<String>)> = Vec::new();
        for (spec, origin) in specs {
            // A Config item declares `spec.groups`; the functionConfig `spec.config.groups`.
            let groups_field = match type_of(origin) {
                (KOTS_API_VERSION, "Config") => FieldPath::root().key("spec").key("groups"),
                _ => FieldPath::root().key("spec").key("config").key("groups"),
            };
            for (g, group) in spec.groups.iter().enumerate() {
                let group_field = groups_field.clone().index(g);
                let item_field = |i: usize| group_field.clone().key("items").index(i);
                if group.repeatable {
                    let mut instances: Vec<String> = group.values_by_group.keys().cloned().collect();
                    for name in &group.instance_names {
                        if !instances.contains(name) {
                            instances.push(name.clone());
                        }
                    }
                    instances.sort();
                    let what = (group.name.as_str(), "repeatable group", group_field.clone());
                    self.check_minimum(what, instances.len(), group.minimum_count, origin);
                    for (i, item) in group.items.iter().enumerate().filter(|(_, i)| i.repeatable) {
                        for instance in &instances {
                            let count = Self::item_values(item, instance).len();
                            let what = (item.name.as_str(), "config item", item_field(i));
                            self.check_minimum(what, count, item.minimum_count, origin);
                        }
                    }
                    groups.push((group, instances));
                    continue;
                }
                for (i, item) in group.items.iter().enumerate().filter(|(_, i)| i.repeatable) {
                    if item.templates.is_empty() {
                        let message = format!(
                            "config item {:?} is repeatable but has no templates: add templates: [{{apiVersion, \
                             kind, name}}] naming the resources to clone for each value",
                            item.name
                        );
                        let field = item_field(i).key("templates");
                        self.results.push(Diagnostic::error(Kind::Config, message).about(origin).at(field));
                        continue;
                    }
                    let values = Self::item_values(item, &group.name);
                    self.check_minimum(
                        (item.name.as_str(), "config item", item_field(i)),
                        values.len(),
                        item.minimum_count,
                        origin,
                    );
                    plain_items.push(RepeatItem { item, values });
                }
            }
        }
        for source in items.iter_mut() {
            // Decide from the header and a text scan first, so untouched items stay compact.
            let item: &Value = source.header();
            self.current = Some(type_of(item).1.to_string());
            if is_configuration(item) || is_local_config(item) {
                continue;
            }
            let group_templates: Vec<(&Group, &Vec<String>, &Template)> = groups
                .iter()
                .flat_map(|(group, instances)| {
                    group.templates.iter().filter(|t| t.matches(item)).map(move |t| (*group, instances, t))
                })
                .collect();
            let item_clones: Vec<(&RepeatItem, &Template)> = plain_items
                .iter()
                .flat_map(|r| {
                    r.item.templates.iter().filter(|t| t.yaml_path.is_none() && t.matches(item)).map(move |t| (r, t))
                })
                .collect();
            let group_item_clones: Vec<(&Group, &Vec<String>, &Item, &Template)> = groups
                .iter()
                .flat_map(|(group, instances)| {
                    group.items.iter().filter(|i| i.repeatable).flat_map(move |i| {
                        i.templates
                            .iter()
                            .filter(|t| t.yaml_path.is_none() && t.matches(item))
                            .map(move |t| (*group, instances, i, t))
                    })
                })
                .collect();
            let is_template = !group_templates.is_empty() || !item_clones.is_empty() || !group_item_clones.is_empty();
            let has_node_clones =
                plain_items.iter().any(|r| r.item.templates.iter().any(|t| t.yaml_path.is_some() && t.matches(item)));
            let has_syntax =
                annotation(item, WHEN).is_some() || (source.scan_text(has_template) && contains_template(source));
            if !is_template && !has_syntax && !has_node_clones {
                continue;
            }
            let item: &Value = source;
            let template = fresh_copy(item);
            let size = kots::output_size(&template);
            for (group, instances, t) in group_templates {
                for instance in instances {
                    if !self.charge_clone(size, item) {
                        break;
                    }
                    let prefix = t.prefix.clone().unwrap_or_else(|| format!("{}-", t.name));
                    let group_values = self.instance_values(group, instance);
                    let mut clone = template.clone();
                    set_name(&mut clone, &format!("{prefix}{instance}"));
                    // Repeatable items of the group clone nodes inside each instance's copy.
                    for repeat in group.items.iter().filter(|i| i.repeatable) {
                        let values = Self::item_values(repeat, instance);
                        for t in repeat.templates.iter().filter(|t| t.matches(&template)) {
                            if let Some(path) = &t.yaml_path {
                                self.node_clones(
                                    &mut clone,
                                    path,
                                    repeat,
                                    &values,
                                    Some((instance, &group_values)),
                                    item,
                                );
                            }
                        }
                    }
                    self.report.clones.push(CloneReport {
                        source: describe(item),
                        clone: describe(&clone),
                        from: format!("group {}", group.name),
                        value: instance.clone(),
                    });
                    self.emit(clone, None, Some((instance, &group_values)), item);
                }
            }
            for (repeat, t) in item_clones {
                for (value_name, value) in &repeat.values {
                    if !self.charge_clone(size, item) {
                        break;
                    }
                    let mut clone = template.clone();
                    set_name(&mut clone, &format!("{}{value_name}", t.prefix.clone().unwrap_or_default()));
                    self.report.clones.push(CloneReport {
                        source: describe(item),
                        clone: describe(&clone),
                        from: format!("item {}", repeat.item.name),
                        value: value_name.clone(),
                    });
                    self.emit(clone, Some((&repeat.item.name, value_name, value)), None, item);
                }
            }
            for (group, instances, repeat, t) in group_item_clones {
                for instance in instances {
                    let group_values = self.instance_values(group, instance);
                    for (value_name, value) in Self::item_values(repeat, instance) {
                        if !self.charge_clone(size, item) {
                            break;
                        }
                        let mut clone = template.clone();
                        set_name(&mut clone, &format!("{}{value_name}", t.prefix.clone().unwrap_or_default()));
                        self.report.clones.push(CloneReport {
                            source: describe(item),
                            clone: describe(&clone),
                            from: format!("item {} of group {}", repeat.name, group.name),
                            value: format!("{instance}/{value_name}"),
                        });
                        self.emit(
                            clone,
                            Some((&repeat.name, &value_name, &value)),
                            Some((instance, &group_values)),
                            item,
                        );
                    }
                }
            }
            if !is_template && self.charge_clone(size, item) {
                // Node clones and templates render into one copy of the resource.
                let mut copy = template.clone();
                let mut cloned = true;
                for repeat in &plain_items {
                    for t in repeat.item.templates.iter().filter(|t| t.matches(item)) {
                        if let Some(path) = &t.yaml_path {
                            cloned &= self.node_clones(&mut copy, path, repeat.item, &repeat.values, None, item);
                        }
                    }
                }
                if cloned {
                    self.emit(copy, None, None, item);
                }
            }
            // The source stays as the template: local-config now, taken up again next run.
            set_annotation(source.header_mut(), ann::LOCAL_CONFIG, "true");
            set_annotation(source.header_mut(), ann::EXCLUDED, "true");
        }
    }

    /// An instance's item values: the group's `valuesByGroup[instance]`, then each item's own
    /// `valuesByGroup[instance]` (the proposal's form: its first value), then the item's value.
    fn instance_values(&self, group: &Group, instance: &str) -> Map {
        let mut out = Map::new();
        for item in group.items.iter().filter(|i| !i.repeatable) {
            let own = item.values_by_group.get(instance).and_then(|m| m.values().next().cloned());
            if let Some(value) = own.or_else(|| self.values.get(&item.name).cloned()) {
                out.insert(item.name.clone(), value);
            }
        }
        if let Some(values) = group.values_by_group.get(instance) {
            out.extend(values.clone());
        }
        out
    }

    /// Whether a whole template at `pointer` (of the current template item) may take a type.
    fn typed(current: &Option<String>, pointer: &str) -> bool {
        current.as_deref().is_none_or(|kind| !must_stay_string(kind, pointer))
    }

    /// Renders a copy's templates and `kots.io/when`, then generates it unless excluded.
    fn emit(
        &mut self,
        mut copy: Value,
        item: Option<(&str, &str, &Value)>,
        group: Option<(&str, &Map)>,
        source: &Value,
    ) {
        let scope = Scope { budget: self.budget, values: self.values, filenames: self.filenames, item, group };
        let current = &self.current;
        let mut typed = |pointer: &str| Self::typed(current, pointer);
        if let Err(message) = render_value(&mut copy, &scope, &mut String::new(), &mut typed) {
            self.error(message, source);
            return;
        }
        match annotation(&copy, WHEN) {
            Some("false") => return,
            Some("true") | None => {}
            Some(other) => {
                let message = format!("annotation {WHEN} must render to true or false, got {other:?}");
                self.error(message, source);
                return;
            }
        }
        self.generated.push(Generated { item: copy, substitute: true });
    }

    /// `yamlPath` node clones: the indexed list element is the template; it is removed and one
    /// clone per value (in value-name order) is appended to that list. `false` after an error.
    fn node_clones(
        &mut self,
        resource: &mut Value,
        path: &str,
        repeat: &Item,
        values: &[(String, Value)],
        group: Option<(&str, &Map)>,
        source: &Value,
    ) -> bool {
        let name = describe(resource);
        let (list, index) = match locate(resource, path) {
            Ok(found) => found,
            Err(message) => {
                let message = format!("config item {:?}: yamlPath {path:?}: {message}", repeat.name);
                self.error(message, source);
                return false;
            }
        };
        if index >= list.len() {
            let message = format!(
                "config item {:?}: yamlPath {path:?}: index {index} is out of range (the list has {})",
                repeat.name,
                list.len()
            );
            self.error(message, source);
            return false;
        }
        let template = list.remove(index);
        let mut clones = Vec::with_capacity(values.len());
        // The template element's own pointer in the source, for its scalar styles.
        let base = yaml_path_pointer(path);
        let size = kots::output_size(&template);
        for (value_name, value) in values {
            if !self.charge_clone(size, source) {
                return false;
            }
            let mut clone = template.clone();
            let scope = Scope {
                budget: self.budget,
                values: self.values,
                filenames: self.filenames,
                item: Some((&repeat.name, value_name, value)),
                group,
            };
            let current = &self.current;
            let mut typed = |pointer: &str| Self::typed(current, pointer);
            if let Err(message) = render_value(&mut clone, &scope, &mut base.clone(), &mut typed) {
                self.error(message, source);
                return false;
            }
            clones.push(clone);
            self.report.clones.push(CloneReport {
                source: describe(source),
                clone: format!("{name} {path}"),
                from: format!("item {}", repeat.name),
                value: value_name.clone(),
            });
        }
        list.extend(clones);
        true
    }
}

/// `a.b[0].c[1]` as the JSON pointer `/a/b/0/c/1`.
fn yaml_path_pointer(path: &str) -> String {
    path.split('.')
        .flat_map(|segment| segment.split(['[', ']']).filter(|s| !s.is_empty()))
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// The list a `yamlPath` (`a.b[0].c[1]`) ends in and the index of its last segment.
fn locate<'v>(resource: &'v mut Value, path: &str) -> Result<(&'v mut Vec<Value>, usize), String> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut node = resource;
    for (position, segment) in segments.iter().enumerate() {
        let last = position + 1 == segments.len();
        let (key, index) = match segment.split_once('[') {
            Some((key, rest)) => {
                let index =
                    rest.trim_end_matches(']').parse::<usize>().map_err(|_| format!("bad index in {segment:?}"))?;
                (key, Some(index))
            }
            None => (*segment, None),
        };
        if !key.is_empty() {
            node = match node {
                Value::Object(map) => map.get_mut(key).ok_or_else(|| format!("{key:?} not found"))?,
                _ => return Err("neither map nor array".into()),
            };
        }
        match (index, last) {
            (None, true) => return Err("yamlPath does not end with an array".into()),
            (None, false) => {}
            (Some(index), true) => {
                return match node {
                    Value::Array(list) => Ok((list, index)),
                    _ => Err("neither map nor array".into()),
                }
            }
            (Some(index), false) => {
                node = match node {
                    Value::Array(list) => {
                        list.get_mut(index).ok_or_else(|| format!("index {index} is out of range"))?
                    }
                    _ => return Err("neither map nor array".into()),
                };
            }
        }
    }
    Err("yamlPath does not end with an array".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_fields_stay_strings() {
        assert!(must_stay_string("Deployment", "/metadata/labels/a"));
        assert!(must_stay_string("ConfigMap", "/data/port"));
        assert!(must_stay_string("Deployment", "/spec/template/spec/containers/0/env/1/value"));
        assert!(must_stay_string("Deployment", "/spec/template/spec/containers/0/args/0"));
        assert!(!must_stay_string("Deployment", "/spec/replicas"));
        assert!(!must_stay_string("Service", "/spec/ports/0/targetPort"));
        assert!(!must_stay_string("Deployment", "/spec/template/spec/containers/0/ports/0/containerPort"));
    }

    #[test]
    fn yaml_paths() {
        let mut resource =
            json!({"spec": {"volumes": [{"projected": {"sources": [{"a": 1}, {"b": 2}]}}], "name": "x"}});
        let found = locate(&mut resource, "spec.volumes[0].projected.sources[1]").map(|(list, i)| (list.len(), i));
        assert_eq!(found, Ok((2, 1)));
        assert_eq!(
            locate(&mut resource, "spec.volumes").map(|_| ()).err(),
            Some("yamlPath does not end with an array".into())
        );
        assert_eq!(locate(&mut resource, "spec.name.x[0]").map(|_| ()).err(), Some("neither map nor array".into()));
        assert_eq!(locate(&mut resource, "spec.name[0]").map(|_| ()).err(), Some("neither map nor array".into()));
    }
}
