//! The repeat step (compat: KOTS; ours where KOTS built nothing): KOTS `Config` and
//! `ConfigValues`, repeatable items (whole-resource clones and `yamlPath` list-element clones),
//! KOTS templates in every resource, `kots.io/exclude` and `kots.io/when`; and repeatable groups,
//! an extension from KOTS's variadic-config proposal.
//!
//! KOTS's order, followed here: the config context is resolved first (Config items in the order
//! their templated defaults depend on each other); then, for each resource, the repeat targets in
//! Config order (a `yamlPath` target changes the resource in place, a whole-resource target
//! replaces it with one copy per value), each copy's placeholders, then its templates, then the
//! exclusion annotations.
//!
//! An input item that is a repeat target, or holds KOTS templates or exclusion annotations, stays
//! in the package as a template (local-config, marked excluded so the next run takes it up again);
//! what is rendered from it is generated afresh every run. So a re-run never clones a clone, and
//! a changed value reaches every copy.

pub mod kots;

use crate::config::parse_section;
use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{FieldPath, Map, Value};
use crate::krm::{self, annotations as ann, is_local_config, remove_annotation, set_annotation, shape_of, type_of};
use crate::limits::Budget;
use crate::render::{is_configuration, Generated, Render, Source};
use kots::context::{text, CloneScope, Entry, Noticed};
use kots::{contains_template, has_template, Engine};
use regex::Regex;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

const KOTS_API_VERSION: &str = "kots.io/v1beta1";
const WHEN: &str = "kots.io/when";
const EXCLUDE: &str = "kots.io/exclude";

/// One clone, for `explain`.
#[derive(Clone, Debug)]
pub struct CloneReport {
    /// `Kind/name` of the template resource.
    pub source: String,
    /// `Kind/name` of the clone, or the list it was appended to for list-element clones.
    pub clone: String,
    /// The repeatable item or group.
    pub from: String,
    /// The value name or group instance.
    pub value: String,
    /// Where the value came from: ConfigValues, valuesByGroup, padding.
    pub origin: String,
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
    /// `text`, `password`, `file`…: decides whether ConfigValues may set the item, and
    /// `explain` redacts passwords.
    #[serde(default, rename = "type")]
    kind: Value,
    #[serde(default)]
    default: Value,
    #[serde(default)]
    value: Value,
    #[serde(default)]
    readonly: bool,
    #[serde(default)]
    filename: Value,
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

impl Item {
    /// KOTS lets ConfigValues set only these types (and never a `readonly` item).
    fn editable(&self) -> bool {
        const EDITABLE: [&str; 11] = [
            "",
            "bool",
            "file",
            "password",
            "select",
            "select_many",
            "select_one",
            "radio",
            "dropdown",
            "text",
            "textarea",
        ];
        !self.readonly && EDITABLE.contains(&self.kind.as_str().unwrap_or_default())
    }
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

/// A repeatable item's value names, in clone order, each with where it came from.
type Values = Vec<(String, &'static str)>;

/// The KOTS config of a render, read once: its specs (each with where its groups are declared:
/// a Config item or the config), the engine holding the resolved config context, and each repeatable item's values.
pub struct Loaded {
    specs: Vec<(ConfigSpec, Origin)>,
    engine: Engine,
    /// The functions that answered from a default, to say once when the step is done.
    defaulted: kots::statics::Defaulted,
    /// Each repeatable item's value names.
    values: HashMap<ItemAt, Values>,
}

/// A ConfigValues entry as KOTS stores it.
#[derive(Default)]
struct Given {
    entry: Entry,
    repeatable_item: String,
    label: String,
}

/// Reads `Config`/`ConfigValues` items and `spec.config`, and resolves the config context.
pub fn load(render: &mut Render) -> Loaded {
    let mut specs: Vec<(ConfigSpec, Origin)> = Vec::new();
    let mut results = Vec::new();
    for item in render.items.iter().filter(|i| i.type_of() == (KOTS_API_VERSION, "Config")).map(|i| &**i) {
        let spec = item.get("spec").filter(|s| !s.is_null()).cloned().unwrap_or_else(|| Value::Object(Map::new()));
        match parse_section::<ConfigSpec>(&spec) {
            Ok(spec) => specs.push((spec, Origin::of(item).at(groups_field(item)))),
            Err((field, message)) => results.push(
                Diagnostic::error(Kind::Config, message).about(item).at(FieldPath::root().key("spec").join(&field)),
            ),
        }
    }
    // The Config items' specs come first; `spec.config` is ours, where numbers are fine.
    let kots_specs = specs.len();
    if !render.config.spec.config.is_empty() {
        match parse_section::<ConfigSpec>(&Value::Object(render.config.spec.config.clone())) {
            Ok(spec) => specs.push((spec, Origin::of(&render.config.item).at(groups_field(&render.config.item)))),
            Err((field, message)) => results.push(
                Diagnostic::error(Kind::Config, message)
                    .about(&render.config.item)
                    .at(FieldPath::root().key("spec").key("config").join(&field)),
            ),
        }
    }
    let kots = &render.config.spec.kots;
    let now = kots.now.as_deref().map(kots::statics::Instant::parse_rfc3339).transpose().unwrap_or_else(|message| {
        let field = FieldPath::root().key("spec").key("kots").key("now");
        results.push(Diagnostic::error(Kind::Config, message).about(&render.config.item).at(field));
        None
    });
    let statics = kots::statics::Statics {
        now,
        namespace: kots.namespace.clone(),
        is_kurl: kots.is_kurl,
        is_airgap: kots.is_airgap,
        channel_name: kots.channel_name.clone(),
        sequence: kots.sequence,
        local_registry: kots.local_registry.as_ref().map(|r| kots::statics::LocalRegistry {
            host: r.host.clone(),
            namespace: r.namespace.clone(),
            username: r.username.clone(),
            password: r.password.clone(),
        }),
        app_slug: kots.app_slug.clone().map(|slug| (slug, None)).or_else(|| {
            let application = render.items.iter().find(|i| i.type_of() == (KOTS_API_VERSION, "Application"))?;
            let name = application.header().get("metadata")?.get("name")?.as_str()?.to_string();
            Some((name.clone(), Some(name)))
        }),
        defaulted: kots::statics::Defaulted::default(),
    };
    let defaulted = statics.defaulted.clone();
    let mut engine = Engine::new(kots::statics::functions(&statics));
    let mut given: HashMap<String, Given> = HashMap::new();
    for item in render.items.iter().filter(|i| i.type_of() == (KOTS_API_VERSION, "ConfigValues")).map(|i| &**i) {
        if let Some((field, message)) = config_values_problem(item) {
            results.push(Diagnostic::error(Kind::Config, message).about(item).at(field));
            continue;
        }
        for (name, entry) in
            item.get("spec").and_then(|s| s.get("values")).and_then(Value::as_object).into_iter().flatten()
        {
            let field = |key: &str| entry.get(key).map(text).unwrap_or_default();
            let mut value = field("value");
            if value.is_empty() {
                value = field("valuePlaintext");
            }
            given.insert(
                name.clone(),
                Given {
                    entry: Entry { value, default: field("default"), filename: field("filename") },
                    repeatable_item: field("repeatableItem"),
                    label: format!("ConfigValues {}", krm::name_of(item)),
                },
            );
        }
    }
    render.results.append(&mut results);
    let mut sources: HashMap<String, Source> = HashMap::new();
    {
        let mut state = engine.shared.lock();
        for (name, g) in &given {
            state.entries.insert(name.clone(), g.entry.clone());
        }
    }
    // valuesByGroup: repeat values whose default is the vendor's value; a ConfigValues entry of
    // the same name keeps its value.
    for (spec, _) in &specs {
        for group in spec.groups.iter().filter(|g| !g.repeatable) {
            for item in group.items.iter().filter(|i| i.repeatable) {
                let mut state = engine.shared.lock();
                for (name, value) in item.values_by_group.get(&group.name).into_iter().flatten() {
                    state.entries.entry(name.clone()).or_default().default = text(value);
                }
            }
        }
    }
    resolve_items(render, &specs, kots_specs, &given, &mut engine, &mut sources);
    // What the Config's own templates read that nothing declares.
    let noticed = std::mem::take(&mut engine.shared.lock().noticed);
    if let Some((_, origin)) = specs.first() {
        for message in noticed.messages {
            render.results.push(Diagnostic::warning(Kind::Config, message).about_origin(origin));
        }
    }
    let values = repeat_values(render, &specs, &given, &engine);
    let mut config = Map::new();
    {
        let state = engine.shared.lock();
        for (spec, _) in &specs {
            for item in spec.groups.iter().flat_map(|g| &g.items) {
                let value = state.entries.get(&item.name).map(|e| e.resolved().to_string()).unwrap_or_default();
                config.insert(item.name.clone(), Value::String(value));
            }
        }
    }
    render.config_values = config;
    render.config_sources = sources;
    Loaded { specs, engine, values, defaulted }
}

/// A Config item's `default` or `value` as KOTS's config context holds it: its field is a
/// `BoolOrString` (kotskinds `multitype`), whose `String()` gives `"1"`/`"0"` for a boolean.
/// A number is not one of its types (KOTS refuses to decode that Config): its digits are kept,
/// with a warning from [`item_field_problems`].
fn item_text(value: &Value) -> String {
    match value {
        Value::Bool(true) => "1".to_string(),
        Value::Bool(false) => "0".to_string(),
        other => text(other),
    }
}

/// Warnings for a KOTS Config item's `default`/`value` fields KOTS cannot decode: numbers,
/// lists and mappings (its `BoolOrString` takes a string or a boolean only; KOTS refuses the
/// whole Config).
fn item_field_problems(item: &Item) -> impl Iterator<Item = String> + '_ {
    [("default", &item.default), ("value", &item.value)].into_iter().filter_map(|(field, value)| {
        let kind = match value {
            Value::Number(_) => "a number",
            Value::Array(_) => "a list",
            Value::Object(_) => "a mapping",
            _ => return None,
        };
        Some(format!(
            "config item {:?}: its {field} is {kind}, which KOTS refuses (its Config fails to decode: \
             a default or value is a string or a boolean); it is used as the text {:?} here: quote it",
            item.name,
            text(value)
        ))
    })
}

/// The names a templated default or value reads, for the order they are resolved in.
fn dependencies(text: &str) -> impl Iterator<Item = &str> {
    static CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r#"ConfigOption(?:Data|Filename|Equals|NotEquals|Index)?\s+["`]([^"`]+)["`]"#).ok()
    });
    CALL.iter().flat_map(move |re| re.captures_iter(text)).filter_map(|c| c.get(1)).map(|m| m.as_str())
}

/// Resolves every Config item in dependency rounds, as KOTS does: an item's default is rendered
/// once the items it reads are resolved; ConfigValues sets editable items, other items render
/// their own `value`. A cycle is an error naming what each item waits for.
fn resolve_items(
    render: &mut Render,
    specs: &[(ConfigSpec, Origin)],
    kots_specs: usize,
    given: &HashMap<String, Given>,
    engine: &mut Engine,
    sources: &mut HashMap<String, Source>,
) {
    // (spec, group, item index) of every declared item, in declaration order.
    let mut items: Vec<(usize, usize, &Item)> = Vec::new();
    for (s, (spec, _)) in specs.iter().enumerate() {
        for (g, group) in spec.groups.iter().enumerate() {
            items.extend(group.items.iter().map(|item| (s, g, item)));
        }
    }
    // Kahn's algorithm: an item is resolved once every item it reads is; the first ready ones in
    // declaration order.
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, (_, _, item)) in items.iter().enumerate() {
        index.entry(item.name.as_str()).or_insert(i);
    }
    let mut waiting_on: Vec<Vec<usize>> = items
        .iter()
        .map(|(_, _, item)| {
            let mut deps: Vec<usize> = dependencies(item.default.as_str().unwrap_or_default())
                .chain(dependencies(item.value.as_str().unwrap_or_default()))
                .filter_map(|d| index.get(d).copied())
                .collect();
            deps.sort_unstable();
            deps.dedup();
            deps
        })
        .collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    for (i, deps) in waiting_on.iter().enumerate() {
        for &d in deps {
            dependents[d].push(i);
        }
    }
    let mut remaining: Vec<usize> = waiting_on.iter().map(Vec::len).collect();
    let mut ready: std::collections::VecDeque<usize> = (0..items.len()).filter(|&i| remaining[i] == 0).collect();
    let mut resolved = vec![false; items.len()];
    let budget = render.budget.clone();
    while let Some(i) = ready.pop_front() {
        let (s, _, item) = items[i];
        for message in item_field_problems(item).filter(|_| s < kots_specs) {
            render.results.push(Diagnostic::warning(Kind::Config, message).about_origin(&specs[s].1));
        }
        let mut render_field = |field: &str, template: &Value| -> String {
            let source = item_text(template);
            if !has_template(&source) {
                return source;
            }
            engine.render_text(&source, &budget).unwrap_or_else(|message| {
                let message = format!(
                    "config item {:?}: its {field} could not be rendered, so it is empty, as in KOTS: {message}",
                    item.name
                );
                render.results.push(Diagnostic::warning(Kind::Config, message).about_origin(&specs[s].1));
                String::new()
            })
        };
        let default = render_field("default", &item.default);
        let provided = given.get(&item.name).filter(|_| item.editable());
        let (entry, label) = match provided {
            Some(g) => {
                (Entry { value: g.entry.value.clone(), default, filename: g.entry.filename.clone() }, g.label.clone())
            }
            None => {
                let value = render_field("value", &item.value);
                let label = if !value.is_empty() { "item value" } else { "item default" };
                let filename = render_field("filename", &item.filename);
                (Entry { value, default, filename }, label.to_string())
            }
        };
        let label = match (entry.resolved().is_empty(), item.repeatable) {
            (true, true) => "repeatable: values per clone".to_string(),
            (true, false) => "no value".to_string(),
            (false, _) => label,
        };
        sources.insert(item.name.clone(), Source { label, secret: item.kind.as_str() == Some("password") });
        engine.shared.lock().entries.insert(item.name.clone(), entry);
        resolved[i] = true;
        for &d in &dependents[i] {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                ready.push_back(d);
            }
        }
    }
    let waiting: Vec<usize> = (0..items.len()).filter(|&i| !resolved[i]).collect();
    if let Some(&first) = waiting.first() {
        let (s, g, _) = items[first];
        let cycle: Vec<String> = waiting
            .iter()
            .map(|&i| {
                waiting_on[i].retain(|&d| !resolved[d]);
                let deps: Vec<String> = waiting_on[i].iter().map(|&d| format!("{:?}", items[d].2.name)).collect();
                format!("{:?} depends on {}", items[i].2.name, deps.join(", "))
            })
            .collect();
        let message = format!("config items depend on each other in a cycle: {}", cycle.join("; "));
        let origin = &specs[s].1;
        render.results.push(
            Diagnostic::error(Kind::Config, message).about_origin(origin).at(origin
                .field
                .clone()
                .index(g)
                .key("items")),
        );
    }
}

/// Where a spec's groups are: a Config item's `spec.groups`, the functionConfig's
/// `spec.config.groups`.
fn groups_field(origin: &Value) -> FieldPath {
    match type_of(origin) {
        (KOTS_API_VERSION, "Config") => FieldPath::root().key("spec").key("groups"),
        _ => FieldPath::root().key("spec").key("config").key("groups"),
    }
}

/// A padded value's name: `<item>-<8 hex digits>` like KOTS's, from a hash of the item and the
/// pad index instead of a random UUID, so every run gives the same names.
fn padded_name(item: &str, index: usize, taken: &dyn Fn(&str) -> bool) -> String {
    (index..)
        .map(|i| {
            let mut hash: u32 = 0x811c_9dc5;
            for byte in item.bytes().chain([0]).chain(i.to_le_bytes()) {
                hash ^= u32::from(byte);
                hash = hash.wrapping_mul(0x0100_0193);
            }
            format!("{item}-{hash:08x}")
        })
        .find(|name| !taken(name))
        .unwrap_or_else(|| format!("{item}-{index}"))
}

/// The first few of `names`, and how many more (a message stays short however many were padded).
fn shown_names(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let first = names.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
    match names.len().checked_sub(SHOWN) {
        Some(more) if more > 0 => format!("{first} and {more} more"),
        _ => first,
    }
}

/// What one padded value costs besides its name: its entry (the item's default) and its place
/// among the values.
const PADDED_BYTES: usize = 128;

/// Each repeatable item's value names: its group's `valuesByGroup` and the ConfigValues entries
/// whose `repeatableItem` names it, by name; then padding up to `minimumCount` (at least one), as
/// KOTS pads. A padded value is the item's default.
fn repeat_values(
    render: &mut Render,
    specs: &[(ConfigSpec, Origin)],
    given: &HashMap<String, Given>,
    engine: &Engine,
) -> HashMap<ItemAt, Values> {
    let mut out = HashMap::new();
    for (s, (spec, origin)) in specs.iter().enumerate() {
        for (g, group) in spec.groups.iter().enumerate().filter(|(_, g)| !g.repeatable) {
            for (i, item) in group.items.iter().enumerate().filter(|(_, i)| i.repeatable) {
                let mut names: BTreeMap<&str, &'static str> = BTreeMap::new();
                for name in item.values_by_group.get(&group.name).into_iter().flat_map(|m| m.keys()) {
                    names.insert(name, "valuesByGroup");
                }
                for (name, g) in given.iter().filter(|(_, g)| g.repeatable_item == item.name) {
                    names.insert(name, if g.entry.value.is_empty() { "ConfigValues default" } else { "ConfigValues" });
                }
                let mut values: Values = names.into_iter().map(|(n, o)| (n.to_string(), o)).collect();
                let target = item.minimum_count.unwrap_or(0).max(1);
                let field = origin.field.clone().index(g).key("items").index(i);
                // Each padded value is an entry and, later, a copy of every target: charged
                // before any is made, so `minimumCount: 1000000000` stops at a limit.
                let missing = target.saturating_sub(values.len());
                let default_len = engine.shared.lock().entries.get(&item.name).map_or(0, |e| e.default.len());
                let each = PADDED_BYTES.saturating_add(item.name.len()).saturating_add(default_len);
                let charged = render
                    .budget
                    .charge_steps(missing as u64)
                    .and_then(|()| render.budget.charge_output(missing.saturating_mul(each)));
                if let Err(err) = charged {
                    let message = format!(
                        "config item {:?} would be padded to {target} values (its minimumCount): {err}",
                        item.name
                    );
                    render.results.push(
                        Diagnostic::error(Kind::Config, message).about_origin(origin).at(field.key("minimumCount")),
                    );
                    out.insert(ItemAt { spec: s, group: g, item: i }, values);
                    continue;
                }
                if values.len() < target {
                    let mut state = engine.shared.lock();
                    let default = state.entries.get(&item.name).map(|e| e.default.clone()).unwrap_or_default();
                    let mut padded = Vec::new();
                    for index in values.len()..target {
                        let name = padded_name(&item.name, index, &|n| state.entries.contains_key(n));
                        state.entries.insert(name.clone(), Entry { default: default.clone(), ..Entry::default() });
                        padded.push(name.clone());
                        values.push((name, "padding"));
                    }
                    let message = format!(
                        "config item {:?} has {} value(s), fewer than {}{}: padded with {} (the item's default), as \
                         KOTS pads",
                        item.name,
                        target - padded.len(),
                        target,
                        if item.minimum_count.is_some_and(|m| m > 1) { " (its minimumCount)" } else { "" },
                        shown_names(&padded)
                    );
                    render
                        .results
                        .push(Diagnostic::new(Severity::Info, Kind::Config, message).about_origin(origin).at(field));
                }
                out.insert(ItemAt { spec: s, group: g, item: i }, values);
            }
        }
    }
    out
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

/// Clones repeat targets and renders KOTS templates and exclusion annotations.
pub fn run(render: &mut Render, loaded: Loaded) -> Report {
    let Loaded { specs, mut engine, values, defaulted } = loaded;
    let budget = render.budget.clone();
    let mut step = Step {
        budget: &budget,
        engine: &mut engine,
        results: Vec::new(),
        spent: None,
        generated: Vec::new(),
        report: Report::default(),
    };
    step.expand(&specs, &values, &mut render.items);
    render.results.append(&mut step.results);
    let config = Origin::of(&render.config.item);
    for (warning, message) in defaulted.take() {
        let severity = if warning { Severity::Warning } else { Severity::Info };
        render.results.push(Diagnostic::new(severity, Kind::Render, message).about_origin(&config));
    }
    render.generated.extend(step.generated);
    step.report
}

struct Step<'a> {
    /// The render's: every clone's bytes are output, every clone a step.
    budget: &'a Budget,
    engine: &'a mut Engine,
    results: Vec<Diagnostic>,
    /// The spent budget last reported for a clone, and how many results there were then: while
    /// nothing else is reported, the same one is not reported again.
    spent: Option<(crate::limits::Exhausted, usize)>,
    generated: Vec<Generated>,
    report: Report,
}

/// Fields Kubernetes requires to be strings, whatever a template renders to: names, labels and
/// annotations of any `metadata` (a pod template's too), ConfigMap/Secret data, and a container's `env[].value`, `args`, `command` and
/// `image`. (KOTS would write `80` there as a number and the API server would refuse it.)
fn must_stay_string(kind: &str, pointer: &str) -> bool {
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    let in_container = segments.windows(2).any(|w| {
        matches!(w[0], "containers" | "initContainers" | "ephemeralContainers") && w[1].parse::<usize>().is_ok()
    });
    let tail = |field: &str| segments.iter().rev().take(3).any(|s| *s == field);
    let in_metadata = segments.windows(2).any(|w| {
        w[0] == "metadata" && matches!(w[1], "name" | "namespace" | "generateName" | "labels" | "annotations")
    });
    in_metadata
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
    forget_location(&mut copy);
    copy
}

/// Takes off what places a resource in the package (its file, and this function's marks): a
/// copy is generated, and gets a file of its own.
fn forget_location(resource: &mut Value) {
    for key in [ann::PATH, ann::LEGACY_PATH, ann::INDEX, ann::LEGACY_INDEX, ann::EXCLUDED, ann::LOCAL_CONFIG] {
        remove_annotation(resource, key);
    }
}

/// Gives back their text to the fields Kubernetes requires to be strings ([`must_stay_string`])
/// where a template rendered a number, boolean or null: `template` is the copy before
/// rendering, `rendered` the resource its text rendered to.
fn keep_strings(template: &Value, rendered: &mut Value, kind: &str) {
    for (pointer, _) in kots::template_strings(template) {
        if must_stay_string(kind, &pointer) {
            if let Some(field) = crate::doc::pointer_mut(rendered, &pointer) {
                stay_string(field);
            }
        }
    }
}

/// A number, boolean or null a template rendered, as the text it was rendered from.
fn stay_string(field: &mut Value) {
    let text = match field {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        _ => return,
    };
    *field = Value::String(text);
}

fn set_name(item: &mut Value, name: &str) {
    if let Some(metadata) = item.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("name".into(), Value::String(name.to_string()));
    }
}

/// Go's `strconv.ParseBool`, which KOTS reads `kots.io/exclude` and `kots.io/when` with.
fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Where a repeatable item is declared: its spec (a Config item, or the functionConfig's
/// `spec.config`), the group in that spec and the item in that group, each by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ItemAt {
    spec: usize,
    group: usize,
    item: usize,
}

/// What a render's Config repeats, collected once.
struct Targets<'c> {
    /// Repeatable items outside repeatable groups, in Config order, each with its values.
    items: Vec<(&'c Item, &'c Values)>,
    /// Repeatable groups, each with its instances (sorted).
    groups: Vec<(&'c Group, Vec<String>)>,
}

impl Targets<'_> {
    fn is_empty(&self) -> bool {
        self.items.is_empty() && self.groups.is_empty()
    }

    /// The targets whose templates name the resource with this header.
    fn matching(&self, header: &Value) -> Matches<'_> {
        let items = self
            .items
            .iter()
            .flat_map(|(item, values)| item.templates.iter().filter(|t| t.matches(header)).map(|t| (*item, *values, t)))
            .collect();
        let groups = self
            .groups
            .iter()
            .flat_map(|(group, instances)| {
                group.templates.iter().filter(|t| t.matches(header)).map(move |t| (*group, instances, t))
            })
            .collect();
        let group_items = self
            .groups
            .iter()
            .flat_map(|(group, instances)| {
                group.items.iter().filter(|i| i.repeatable).flat_map(move |i| {
                    i.templates
                        .iter()
                        .filter(|t| t.yaml_path.is_none() && t.matches(header))
                        .map(move |t| (*group, instances, i, t))
                })
            })
            .collect();
        Matches { items, groups, group_items }
    }
}

/// The targets whose templates name one resource.
struct Matches<'t> {
    /// Templates of repeatable items outside repeatable groups (whole-resource and `yamlPath`),
    /// in Config order.
    items: Vec<(&'t Item, &'t Values, &'t Template)>,
    /// Templates of repeatable groups: a copy per instance.
    groups: Vec<(&'t Group, &'t Vec<String>, &'t Template)>,
    /// Whole-resource templates of repeatable items in repeatable groups: a clone per instance
    /// and value.
    group_items: Vec<(&'t Group, &'t Vec<String>, &'t Item, &'t Template)>,
}

impl Matches<'_> {
    fn is_empty(&self) -> bool {
        self.items.is_empty() && self.groups.is_empty() && self.group_items.is_empty()
    }
}

/// A resource being repeated: as read, and the fresh copy its copies start from, with that
/// copy's output size (what each copy is charged).
struct Resource<'v> {
    item: &'v Value,
    template: Value,
    size: u64,
}

impl<'v> Resource<'v> {
    fn of(item: &'v Value) -> Self {
        let template = fresh_copy(item);
        let size = crate::doc::output_size(&template);
        Resource { item, template, size }
    }
}

/// A copy to render: the resource, the clone it is (for the extensions' functions), its list
/// moves, and its report line.
struct Copy {
    value: Value,
    scope: CloneScope,
    /// The resource as read, no target applied: rendered from its own text, as KOTS renders a
    /// file no repeat item changes. Any other copy is rendered from its YAML as written now, as
    /// KOTS marshals a document its repeat items changed before rendering it.
    as_read: bool,
}

/// A `kots.io/exclude` or `kots.io/when` annotation that decides nothing: reported at the
/// annotation `key`.
enum NotABoolean {
    /// Text that KOTS's `strconv.ParseBool` refuses.
    Text { key: &'static str, text: String },
    /// Neither text nor a boolean: what it is.
    Shape { key: &'static str, shape: &'static str },
}

impl NotABoolean {
    fn key(&self) -> &'static str {
        match self {
            NotABoolean::Text { key, .. } | NotABoolean::Shape { key, .. } => key,
        }
    }
}

impl std::fmt::Display for NotABoolean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotABoolean::Text { key, text } => write!(
                f,
                "annotation {key} must render to a boolean as KOTS reads it (true, false, 1, 0, t, f, TRUE, FALSE, \
                 True, False), got {text:?}"
            ),
            NotABoolean::Shape { key, shape } => write!(f, "annotation {key} must render to a boolean, got {shape}"),
        }
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
                if self.spent.as_ref() != Some(&(err.clone(), self.results.len())) {
                    self.error(err.to_string(), source);
                    self.spent = Some((err, self.results.len()));
                }
                false
            }
        }
    }

    /// The values of a repeatable item of a repeatable group for one instance, by value name.
    fn instance_item_values(item: &Item, instance: &str) -> Values {
        let mut names: Vec<String> =
            item.values_by_group.get(instance).map(|m| m.keys().cloned().collect()).unwrap_or_default();
        names.sort();
        names.into_iter().map(|n| (n, "valuesByGroup")).collect()
    }

    fn check_minimum(
        &mut self,
        (name, what, field): (&str, &str, FieldPath),
        count: usize,
        minimum: Option<usize>,
        origin: &Origin,
    ) {
        if let Some(minimum) = minimum.filter(|m| count < *m) {
            let message = format!("{what} {name:?} has {count} values, fewer than its minimumCount of {minimum}");
            self.results
                .push(Diagnostic::error(Kind::Config, message).about_origin(origin).at(field.key("minimumCount")));
        }
    }

    /// Clones the repeat targets among `items` and renders KOTS templates and exclusion
    /// annotations, in KOTS's order (see the module's documentation).
    fn expand(
        &mut self,
        specs: &[(ConfigSpec, Origin)],
        values: &HashMap<ItemAt, Values>,
        items: &mut [crate::krm::Item],
    ) {
        let targets = self.collect_targets(specs, values);
        for source in items.iter_mut() {
            self.expand_item(&targets, source);
        }
    }

    /// The repeatable items outside repeatable groups, in Config order, and the repeatable groups
    /// with their instances; checks each one's `minimumCount` and warns of repeatable items
    /// without templates on the way.
    fn collect_targets<'c>(
        &mut self,
        specs: &'c [(ConfigSpec, Origin)],
        values: &'c HashMap<ItemAt, Values>,
    ) -> Targets<'c> {
        let mut targets = Targets { items: Vec::new(), groups: Vec::new() };
        for (s, (spec, origin)) in specs.iter().enumerate() {
            for (g, group) in spec.groups.iter().enumerate() {
                let group_field = origin.field.clone().index(g);
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
                            let count = Self::instance_item_values(item, instance).len();
                            let what = (item.name.as_str(), "config item", item_field(i));
                            self.check_minimum(what, count, item.minimum_count, origin);
                        }
                    }
                    targets.groups.push((group, instances));
                    continue;
                }
                for (i, item) in group.items.iter().enumerate().filter(|(_, i)| i.repeatable) {
                    if item.templates.is_empty() {
                        let message = format!(
                            "config item {:?} is repeatable but has no templates, so nothing is cloned: add \
                             templates: [{{apiVersion, kind, name}}] naming the resources to clone for each value",
                            item.name
                        );
                        let field = item_field(i).key("templates");
                        self.results.push(Diagnostic::warning(Kind::Config, message).about_origin(origin).at(field));
                    }
                    if let Some(values) = values.get(&ItemAt { spec: s, group: g, item: i }) {
                        targets.items.push((item, values));
                    }
                }
            }
        }
        targets
    }

    /// One resource: left as it is, or kept as a template and the copies rendered from it
    /// generated.
    fn expand_item(&mut self, targets: &Targets, source: &mut crate::krm::Item) {
        // Decide from a text scan and the header first, so untouched items stay compact.
        let has_syntax = source.header_contains(WHEN)
            || source.header_contains(EXCLUDE)
            || (source.scan_text(has_template) && contains_template(source));
        // Without templates only an item's own syntax makes it a target: its header is not
        // built (and kept) for nothing.
        if targets.is_empty() && !has_syntax {
            return;
        }
        let header: &Value = source.header();
        if is_configuration(header) || is_local_config(header) {
            return;
        }
        let matches = targets.matching(header);
        let is_target = !matches.is_empty();
        if !is_target && !has_syntax {
            return;
        }
        let item: &Value = source;
        let quotes = source.quoted_scalars();
        // The source stays as the template: local-config now, taken up again next run, its
        // quoted templates written back quoted so the next run types them as this one did.
        let quoted = quoted_templates(item, &|p| quotes.is_quoted(p));
        if let Some(copies) = self.copies(&matches, item, is_target) {
            // An item read as JSON has no text KOTS could have rendered (it renders YAML files):
            // its as-read copy is rendered from its YAML form, as every other copy is.
            let text = (source.has_source() && copies.iter().any(|copy| copy.as_read))
                .then(|| source.yaml_text(Some(&quoted)));
            self.emit_copies(copies, item, text.as_deref(), !source.has_source());
        }
        source.set_keep_quoted(quoted);
        set_annotation(source.header_mut(), ann::LOCAL_CONFIG, "true");
        set_annotation(source.header_mut(), ann::EXCLUDED, "true");
    }

    /// The copies the matching targets make of `item`: repeatable groups' copies first, then
    /// their items' clones; only when there are none, the repeatable items' targets (or the item
    /// itself, for its own templates). `None` when making them failed (the error is reported).
    fn copies(&mut self, matches: &Matches, item: &Value, is_target: bool) -> Option<Vec<Copy>> {
        let resource = Resource::of(item);
        let mut copies: Vec<Copy> = Vec::new();
        let mut failed = false;
        // Repeatable groups (the extension): whole copies per instance.
        for &target in &matches.groups {
            failed |= !self.group_copies(&resource, target, &mut copies);
        }
        for &target in &matches.group_items {
            failed |= !self.group_item_clones(&resource, target, &mut copies);
        }
        if copies.is_empty() && !failed {
            let (made, ok) = self.item_clones(&resource, &matches.items);
            copies = made;
            failed |= !ok;
            if copies.len() == 1 && !is_target && !self.charge_clone(resource.size, item) {
                failed = true;
            }
        }
        (!failed).then_some(copies)
    }

    /// A repeatable group's copies of a resource, one per instance, each with its yamlPath clones
    /// of the group's repeatable items. `false` after an error.
    fn group_copies(
        &mut self,
        resource: &Resource,
        (group, instances, t): (&Group, &Vec<String>, &Template),
        copies: &mut Vec<Copy>,
    ) -> bool {
        let Resource { item, template, size } = resource;
        let mut ok = true;
        for instance in instances {
            if !self.charge_clone(*size, item) {
                ok = false;
                break;
            }
            let prefix = t.prefix.clone().unwrap_or_else(|| format!("{}-", t.name));
            let group_values = self.instance_values(group, instance);
            let mut clone = template.clone();
            set_name(&mut clone, &format!("{prefix}{instance}"));
            for repeat in group.items.iter().filter(|i| i.repeatable) {
                let values = Self::instance_item_values(repeat, instance);
                for t in repeat.templates.iter().filter(|t| t.matches(template)) {
                    if let Some(path) = &t.yaml_path {
                        ok &= self.node_clones(&mut clone, path, repeat, &values, item);
                    }
                }
            }
            self.report.clones.push(CloneReport {
                source: describe(item),
                clone: describe(&clone),
                from: format!("group {}", group.name),
                value: instance.clone(),
                origin: "valuesByGroup".into(),
            });
            let scope = CloneScope { item: None, group: Some((instance.clone(), group_values)) };
            copies.push(Copy { value: clone, scope, as_read: false });
        }
        ok
    }

    /// Whole-resource clones by a repeatable item of a repeatable group: one per instance and
    /// value. `false` after an error.
    fn group_item_clones(
        &mut self,
        resource: &Resource,
        (group, instances, repeat, t): (&Group, &Vec<String>, &Item, &Template),
        copies: &mut Vec<Copy>,
    ) -> bool {
        let Resource { item, template, size } = resource;
        let mut ok = true;
        for instance in instances {
            let group_values = self.instance_values(group, instance);
            for (value_name, origin) in Self::instance_item_values(repeat, instance) {
                if !self.charge_clone(*size, item) {
                    ok = false;
                    break;
                }
                let mut clone = template.clone();
                set_name(&mut clone, &format!("{}{value_name}", t.prefix.clone().unwrap_or_default()));
                self.report.clones.push(CloneReport {
                    source: describe(item),
                    clone: describe(&clone),
                    from: format!("item {} of group {}", repeat.name, group.name),
                    value: format!("{instance}/{value_name}"),
                    origin: origin.into(),
                });
                if let Err(message) = self.placeholders(&mut clone, &repeat.name, &value_name) {
                    self.error(message, item);
                    ok = false;
                }
                let scope = CloneScope {
                    item: Some((repeat.name.clone(), value_name.clone())),
                    group: Some((instance.clone(), group_values.clone())),
                };
                copies.push(Copy { value: clone, scope, as_read: false });
            }
        }
        ok
    }

    /// KOTS's repeat targets, in Config order: a yamlPath target changes the resource in place; a
    /// whole-resource target replaces it with a copy per value (the last such target's copies
    /// are what remains). Without a whole-resource target, the one copy is the resource as
    /// changed in place. The copies, and `false` after an error.
    fn item_clones(&mut self, resource: &Resource, targets: &[(&Item, &Values, &Template)]) -> (Vec<Copy>, bool) {
        let Resource { item, template, size } = resource;
        let mut ok = true;
        let mut working = template.clone();
        let mut whole: Option<Vec<Copy>> = None;
        for (i, &(repeat, values, t)) in targets.iter().enumerate() {
            if let Some(path) = &t.yaml_path {
                ok &= self.node_clones(&mut working, path, repeat, values, item);
                // KOTS: the resource changed in place is then what remains.
                whole = None;
                continue;
            }
            // A whole-resource target's copies remain only when no target follows it (the next
            // one replaces them), so only the last target's are made: the same resource listed
            // a thousand times costs one target's copies, not a thousand.
            if i + 1 < targets.len() {
                continue;
            }
            let mut clones = Vec::new();
            for (value_name, origin) in values {
                if !self.charge_clone(*size, item) {
                    ok = false;
                    break;
                }
                let mut clone = working.clone();
                set_name(&mut clone, &format!("{}{value_name}", t.prefix.clone().unwrap_or_default()));
                if let Err(message) = self.placeholders(&mut clone, &repeat.name, value_name) {
                    self.error(message, item);
                    ok = false;
                }
                self.report.clones.push(CloneReport {
                    source: describe(item),
                    clone: describe(&clone),
                    from: format!("item {}", repeat.name),
                    value: value_name.clone(),
                    origin: (*origin).into(),
                });
                let scope = CloneScope { item: Some((repeat.name.clone(), value_name.clone())), group: None };
                clones.push(Copy { value: clone, scope, as_read: false });
            }
            whole = Some(clones);
        }
        let as_read = targets.is_empty();
        let copies = whole.unwrap_or_else(|| vec![Copy { value: working, scope: CloneScope::default(), as_read }]);
        (copies, ok)
    }

    /// Renders and generates each copy of `item` until one fails, then reports the warnings
    /// their templates gave.
    fn emit_copies(&mut self, copies: Vec<Copy>, item: &Value, text: Option<&str>, json: bool) {
        let kind = type_of(item).1.to_string();
        let mut noticed = Noticed::default();
        for copy in copies {
            if !self.emit(copy, &kind, (text, json), item, &mut noticed) {
                break;
            }
        }
        for message in noticed.messages {
            self.results.push(Diagnostic::warning(Kind::Render, message).about(item));
        }
        if noticed.more > 0 {
            let message = format!("and {} more warnings like these for this resource", noticed.more);
            self.results.push(Diagnostic::warning(Kind::Render, message).about(item));
        }
    }

    /// Runs a clone's placeholders (`repl[[ .item ]]`) on the strings that mention the item.
    fn placeholders(&mut self, value: &mut Value, item: &str, value_name: &str) -> Result<(), String> {
        let data = kots::placeholder_data(item, value_name);
        kots::replace_placeholders(value, item, &data, kots::Keys::All, self.engine, self.budget)
    }

    /// An instance's item values: the group's `valuesByGroup[instance]`, then each item's own
    /// `valuesByGroup[instance]` (the proposal's form: its first value), then the item's value.
    fn instance_values(&self, group: &Group, instance: &str) -> Map {
        let mut out = Map::new();
        let state = self.engine.shared.lock();
        for item in group.items.iter().filter(|i| !i.repeatable) {
            let own = item.values_by_group.get(instance).and_then(|m| m.values().next().cloned());
            let value = own.or_else(|| state.entries.get(&item.name).map(|e| Value::String(e.resolved().to_string())));
            if let Some(value) = value {
                out.insert(item.name.clone(), value);
            }
        }
        if let Some(values) = group.values_by_group.get(instance) {
            out.extend(values.clone());
        }
        out
    }

    /// Renders a copy's templates, then `kots.io/exclude` / `kots.io/when`, and generates it
    /// unless excluded; `source`'s `text` (its YAML as written now) is what an as-read copy
    /// renders, or, for an item read as `json`, its YAML with every template single-quoted.
    /// `false` after an error.
    fn emit(
        &mut self,
        copy: Copy,
        kind: &str,
        (text, json): (Option<&str>, bool),
        source: &Value,
        noticed: &mut Noticed,
    ) -> bool {
        let Copy { mut value, scope, as_read } = copy;
        // A JSON string is a quoted string (kyaml reads it double-quoted): a JSON item's
        // as-read copy is rendered as the same item in YAML with every template single-quoted,
        // so what a template renders to reads as it would inside quotes in a YAML file.
        let quoting = json && as_read;
        self.engine.shared.lock().clone = scope;
        let written;
        let mut keys = Ok(());
        let mut strings = None;
        let text = match text.filter(|_| as_read) {
            Some(text) => text,
            None => {
                keys = kots::render_keys(&mut value, self.engine, self.budget);
                if keys.is_ok() && !quoting {
                    strings = kots::render_strings(&value, self.engine, self.budget);
                }
                written = match strings {
                    Some(_) => String::new(),
                    None if quoting => crate::doc::to_yaml_quoting_templates(&value, &has_template),
                    None => crate::doc::to_yaml_single_quoting(&value, &has_template),
                };
                written.as_str()
            }
        };
        let rendered = match (keys, strings) {
            (Err(found), _) => Ok(Err(found)),
            // Equal to rendering the written text, without writing and reading it.
            (Ok(()), Some(strings)) => {
                for (pointer, mut read) in strings {
                    if must_stay_string(kind, &pointer) {
                        stay_string(&mut read);
                    }
                    if let Some(field) = crate::doc::pointer_mut(&mut value, &pointer) {
                        *field = read;
                    }
                }
                // No template is left in `value` for `keep_strings` below to look at.
                Ok(Ok(vec![std::mem::take(&mut value)]))
            }
            (Ok(()), None) => kots::render_resource(text, self.engine, self.budget).map(Ok),
        };
        let failure = match rendered {
            Ok(documents) => documents,
            // The field is found by rendering the copy's strings one by one, only now: a
            // template that fails in the text fails in its string too, unless it spans fields.
            Err(kots::TextFailure::Template(message)) => Err(kots::first_failure(&value, self.engine, self.budget)
                .unwrap_or_else(|| (FieldPath::root(), format!("template: {message}")))),
            Err(kots::TextFailure::Yaml(message) | kots::TextFailure::Budget(message)) => {
                Err((FieldPath::root(), message))
            }
        };
        {
            let mut state = self.engine.shared.lock();
            state.clone = CloneScope::default();
            noticed.absorb(std::mem::take(&mut state.noticed));
        }
        let documents = match failure {
            Ok(documents) => documents,
            Err((field, message)) => {
                self.results.push(Diagnostic::error(Kind::Render, message).about(source).at(field));
                return false;
            }
        };
        let single = documents.len() == 1;
        for mut document in documents {
            forget_location(&mut document);
            if single {
                keep_strings(&value, &mut document, kind);
            }
            if !self.decide_and_generate(document, source) {
                return false;
            }
        }
        true
    }

    /// `kots.io/exclude` / `kots.io/when` of a rendered resource, which is generated unless
    /// excluded. `false` after an error.
    fn decide_and_generate(&mut self, value: Value, source: &Value) -> bool {
        let decide = |key: &'static str, value: &Value| -> Option<Result<bool, NotABoolean>> {
            let raw = value.get("metadata")?.get("annotations")?.get(key)?;
            Some(match raw {
                Value::Bool(b) => Ok(*b),
                Value::String(s) => parse_bool(s).ok_or_else(|| NotABoolean::Text { key, text: s.clone() }),
                other => Err(NotABoolean::Shape { key, shape: shape_of(other) }),
            })
        };
        // kots.io/exclude alone decides when present; kots.io/when is then not read.
        let keep = match (decide(EXCLUDE, &value), decide(WHEN, &value)) {
            (Some(exclude), _) => exclude.map(|e| !e),
            (None, Some(when)) => when,
            (None, None) => Ok(true),
        };
        match keep {
            Ok(true) => self.generated.push(Generated { item: value, substitute: true }),
            Ok(false) => {}
            Err(err) => {
                let field = FieldPath::root().key("metadata").key("annotations").key(err.key());
                self.results.push(Diagnostic::error(Kind::Render, err.to_string()).about(source).at(field));
                return false;
            }
        }
        true
    }

    /// `yamlPath` list-element clones: the indexed element is the template; it is removed and one
    /// clone per value (in value order) is appended to that list, each with its placeholders
    /// replaced. `false` after an error.
    fn node_clones(
        &mut self,
        resource: &mut Value,
        path: &str,
        repeat: &Item,
        values: &Values,
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
        let size = crate::doc::output_size(&template);
        for (value_name, origin) in values {
            if !self.charge_clone(size, source) {
                return false;
            }
            let mut clone = template.clone();
            let data = kots::placeholder_data(&repeat.name, value_name);
            if let Err(message) = kots::replace_placeholders(
                &mut clone,
                &repeat.name,
                &data,
                kots::Keys::BelowTop,
                self.engine,
                self.budget,
            ) {
                self.error(message, source);
                return false;
            }
            clones.push(clone);
            self.report.clones.push(CloneReport {
                source: describe(source),
                clone: format!("{name} {path}"),
                from: format!("item {}", repeat.name),
                value: value_name.clone(),
                origin: (*origin).into(),
            });
        }
        list.extend(clones);
        true
    }
}

/// The JSON pointers of the single-line strings holding a KOTS template that were quoted in
/// the source.
fn quoted_templates(item: &Value, quoted: &dyn Fn(&str) -> bool) -> Vec<String> {
    kots::template_strings(item)
        .into_iter()
        .filter(|(pointer, s)| !s.contains('\n') && quoted(pointer))
        .map(|(pointer, _)| pointer)
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

    #[test]
    fn padded_names_are_stable_and_free() {
        let first = padded_name("files", 1, &|_| false);
        assert_eq!(first, padded_name("files", 1, &|_| false));
        assert!(first.starts_with("files-") && first.len() == "files-".len() + 8, "{first}");
        assert_ne!(padded_name("files", 1, &|n| n == first), first);
    }

    #[test]
    fn go_parse_bool() {
        assert_eq!(parse_bool("True"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("yes"), None);
    }
}
