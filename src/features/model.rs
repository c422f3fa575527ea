//! The Windsor blueprint kinds (blueprints.windsorcli.dev/v1alpha1), as windsorcli/cli defines
//! them in api/v1alpha1/{blueprint,feature}_types.go (v0.8.1) and facet_types.go (v0.9.0): fields
//! sit at the top level (no `spec`). A v0.9 `Facet` reads into [`Feature`], as Windsor v0.9 reads a
//! Feature into its Facet type.
//!
//! Fields we do not model are kept (`extra`) and written back, and reported as a warning that
//! names the closest known field, so a typo is visible without breaking a newer Windsor field.

use crate::doc::{Map, Value};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

pub const API_VERSION: &str = crate::config::WINDSOR_API_VERSION;

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub extra: Map,
}

/// A Windsor `Blueprint`; also the shape of `spec.blueprint`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blueprint {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Source>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terraform: Vec<TerraformComponent>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kustomize: Vec<Kustomization>,
    /// v0.9: Flux systems, each compiled to `<name>-install` and `<name>-resources…` Kustomizations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flux: Vec<FluxSystem>,
    /// v0.9: the Terraform backend an included facet chose (the last one, in facet order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// v0.9: CRD references included facets list, deduplicated and sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crds: Vec<String>,
    /// v0.9: included facets' `substitutions`, the base of the `values-common` ConfigMap.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub substitutions: Map,
    #[serde(flatten)]
    pub extra: Map,
}

/// A Git or OCI source (`repository` has no name).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    #[serde(flatten)]
    pub extra: Map,
    /// v0.9: whether the source's own blueprint is composed in (a boolean, or text: `"true"`, or
    /// a `${…}` Windsor reads as not installed); unset, an `oci://` source is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<Value>,
    /// v0.9: the CRD references the source's facets list, installed by its `crds-<name>` layer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crds: Vec<String>,
}

impl Source {
    /// Windsor v0.9's `sourceInstalls`: `install` unset means an `oci://` source installs;
    /// otherwise only `true` (or the text `"true"`) does (`BoolExpression.IsInstalled`: an
    /// expression is not evaluated there and reads as false).
    pub fn installs(&self) -> bool {
        match &self.install {
            None | Some(Value::Null) => self.url.starts_with("oci://"),
            Some(value) => install_is_true(value),
        }
    }

    /// `install` explicitly true (`BoolExpression.IsInstalled`), as `validateSources` reads it.
    pub fn install_set_true(&self) -> bool {
        self.install.as_ref().is_some_and(install_is_true)
    }
}

fn install_is_true(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::String(text) => !text.contains("${") && text == "true",
        _ => false,
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Feature {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    /// Facet: its rank (higher wins); unset, Windsor derives it from the file's base name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<i64>,
    /// Facet: values that must be set while the facet is included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    /// Facet: named values computed from the context's values and each other.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<ConfigBlock>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terraform: Vec<TerraformComponent>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kustomize: Vec<Kustomization>,
    /// Facet: Flux systems (an install tier and resources variants).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flux: Vec<FluxSystem>,
    /// Facet: the Terraform backend to use while the facet is included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Facet: CRD references (single path segments) the blueprint installs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crds: Vec<String>,
    /// Facet: blueprint-wide substitutions (`values-common`), `${…}` evaluated.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub substitutions: Map,
    /// Facet: notes for the operator, shown when the facet is included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    #[serde(flatten)]
    pub extra: Map,
}

/// A v0.9 Flux system (api/v1alpha1/blueprint_types.go `FluxSystem`): `install` compiles to
/// `<name>-install` at `<path>/install`, each `resources` variant to `<name>-resources[-<variant>]`
/// at `<path>/resources`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[serde(expecting = "a flux system: a mapping with name (and path, install, resources…)")]
pub struct FluxSystem {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Kept as written: Windsor v0.9 stores it on the system and its tiers and acts on it nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destroy: Option<bool>,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Strategy::is_merge")]
    pub strategy: Strategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<i64>,
    /// Every kustomization and system outside this system's own dependency closure waits for
    /// its last tier (Windsor's `applyGlobalDependencyBarrier`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global_dependency: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<Kustomization>,
    /// Each variant is a kustomization (its `name` names the variant) with its own `when`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Kustomization>,
    /// Kubernetes Secrets by name, each `data` key a `${…}` reference Windsor resolves when it
    /// places the Secret into the cluster, after applying; kept as written, never evaluated here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub secrets: BTreeMap<String, SecretEntry>,
    #[serde(flatten)]
    pub extra: Map,
}

/// A Flux system's Secret (api/v1alpha1 `SecretEntry`): the namespaces to place it into (empty:
/// the one namespace its kustomization creates) and its data, each value a `${…}` reference.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
#[serde(expecting = "a secret: a mapping with data (and namespaces)")]
pub struct SecretEntry {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
    #[serde(flatten)]
    pub extra: Map,
}

pub const SECRET_FIELDS: &[&str] = &["namespaces", "data"];

pub const FLUX_SYSTEM_FIELDS: &[&str] = &[
    "name",
    "path",
    "source",
    "destroy",
    "when",
    "dependsOn",
    "strategy",
    "ordinal",
    "globalDependency",
    "enabled",
    "secrets",
    "install",
    "resources",
];

/// A v0.9 config block: `value` (any YAML, `${…}` evaluated) becomes the scope key `name`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[serde(expecting = "a config block: a mapping with name and value (and when, strategy, ordinal, requires)")]
pub struct ConfigBlock {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    #[serde(default, skip_serializing_if = "Strategy::is_merge")]
    pub strategy: Strategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    /// Required, as Windsor requires it; `value: null` is an empty map.
    #[serde(default, deserialize_with = "present")]
    pub value: Option<Value>,
    #[serde(flatten)]
    pub extra: Map,
}

/// `Some` whenever the key is there, `null` included (a missing key stays `None`).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A v0.9 facet message: `text` (`${…}` evaluated) shown when `when` holds.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a message: a mapping with text (and when)")]
pub struct Message {
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    #[serde(default)]
    pub text: String,
}

/// Windsor reads `when` into a Go string, so `when: true` is the condition `true`.
fn when_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => Ok(text),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Null => Ok(String::new()),
        // Anything else is refused as a string field refuses it, with the same message.
        other => {
            use serde::de::Unexpected;
            let unexpected = match &other {
                Value::Number(n) if n.is_i64() => Unexpected::Signed(n.as_i64().unwrap_or_default()),
                Value::Number(n) if n.is_u64() => Unexpected::Unsigned(n.as_u64().unwrap_or_default()),
                Value::Number(n) => Unexpected::Float(n.as_f64().unwrap_or_default()),
                Value::Array(_) => Unexpected::Seq,
                _ => Unexpected::Map,
            };
            Err(serde::de::Error::invalid_type(unexpected, &"a string"))
        }
    }
}

/// A v0.9 `requires` block: `paths` that must hold a non-empty value when `when` holds.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a requirement: a mapping with paths (and when, message)")]
pub struct Requirement {
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    #[default]
    Merge,
    Replace,
    /// v0.9: delete from the matching entry only what this one lists.
    Remove,
}

impl Strategy {
    fn is_merge(&self) -> bool {
        *self == Strategy::Merge
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[serde(expecting = "a terraform component: a mapping with path (and source, inputs…)")]
pub struct TerraformComponent {
    /// v0.9: the component's identity when set (else `path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default)]
    pub path: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub inputs: Map,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destroy: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i64>,
    /// Feature-only: a condition for this component.
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    /// Feature-only: how it combines with a matching component.
    #[serde(default, skip_serializing_if = "Strategy::is_merge")]
    pub strategy: Strategy,
    /// Facet-only: this entry's rank, else its facet's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<i64>,
    /// Facet-only: values this entry needs when its own `when` holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    #[serde(flatten)]
    pub extra: Map,
}

impl TerraformComponent {
    /// Windsor v0.9's `GetID`: the name when set, else the path.
    pub fn id(&self) -> &str {
        self.name.as_deref().filter(|n| !n.is_empty()).unwrap_or(&self.path)
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
#[serde(expecting = "a kustomization: a mapping with name and path")]
pub struct Kustomization {
    /// Empty only on a Flux system's install tier and unnamed variant, where it is not written.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<BlueprintPatch>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub substitutions: Map,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destroy: Option<bool>,
    /// Paths under `<path>/cleanup/` Windsor applies when tearing the kustomization down (its
    /// `down`); kept in the merged blueprint, not merged (as Windsor's merge leaves it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleanup: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "when_text")]
    pub when: String,
    #[serde(default, skip_serializing_if = "Strategy::is_merge")]
    pub strategy: Strategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinal: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Requirement>,
    #[serde(flatten)]
    pub extra: Map,
}

/// A kustomization patch: inline (`patch`, optional `target`) or from a file (`path`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct BlueprintPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Map>,
    #[serde(flatten)]
    pub extra: Map,
}

/// Fields each type knows, for the "closest known field" warning on `extra` keys.
pub const BLUEPRINT_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "repository",
    "sources",
    "terraform",
    "kustomize",
    "flux",
    "backend",
    "crds",
    "substitutions",
];
pub const FEATURE_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "when",
    "ordinal",
    "requires",
    "config",
    "terraform",
    "kustomize",
    "flux",
    "backend",
    "crds",
    "substitutions",
    "messages",
];
pub const CONFIG_BLOCK_FIELDS: &[&str] = &["name", "when", "strategy", "ordinal", "requires", "value"];
pub const TERRAFORM_FIELDS: &[&str] = &[
    "name",
    "source",
    "path",
    "inputs",
    "dependsOn",
    "destroy",
    "parallelism",
    "when",
    "strategy",
    "ordinal",
    "requires",
];
pub const KUSTOMIZATION_FIELDS: &[&str] = &[
    "name",
    "path",
    "source",
    "dependsOn",
    "components",
    "patches",
    "substitutions",
    "interval",
    "retryInterval",
    "timeout",
    "wait",
    "force",
    "prune",
    "destroy",
    "cleanup",
    "when",
    "strategy",
    "ordinal",
    "requires",
];
pub const PATCH_FIELDS: &[&str] = &["path", "patch", "target"];

/// The known field closest to `unknown` (by edit distance), for warnings and errors.
pub fn closest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(&unknown.to_lowercase(), &k.to_lowercase()), *k))
        .min()
        .map(|(_, k)| k)
}

/// Kustomization fields Windsor v0.9 added: read with version "0.9" (kept in `extra`, as a v0.8.1
/// render keeps them unread, with the unknown-field warning). `enabled` is kept as written and
/// merged (the overlay's wins when set): v0.9 acts on it for no kustomization. `healthCheckExprs`
/// (Flux's CEL health checks, which windsorcli/core's facets write) is kept in the merged Blueprint
/// as written; Windsor v0.9.0 has no such field and writes none on the Flux Kustomization, nor
/// does the render.
pub const V09_KUSTOMIZATION_FIELDS: &[&str] =
    &["namespace", "targetNamespace", "decryption", "destroyOnly", "substitute", "enabled", "healthCheckExprs"];

/// Terraform component fields Windsor v0.9 added, read with version "0.9" as above: `enabled` is
/// kept and merged; v0.9 skips a disabled component only when running terraform, which a render
/// does not do.
pub const V09_TERRAFORM_FIELDS: &[&str] = &["enabled"];

/// `(field path, unknown key, closest known)` for every unmodelled field of a feature or blueprint.
pub fn unknown_fields(
    top: &Map,
    top_known: &'static [&'static str],
    terraform: &[TerraformComponent],
    kustomize: &[Kustomization],
) -> Vec<(String, String, Option<&'static str>)> {
    let mut found = Vec::new();
    let mut note = |path: String, extra: &Map, known: &'static [&'static str]| {
        for key in extra.keys() {
            found.push((path.clone(), key.clone(), closest(key, known)));
        }
    };
    note(String::new(), top, top_known);
    for (i, component) in terraform.iter().enumerate() {
        note(format!("terraform[{i}]"), &component.extra, TERRAFORM_FIELDS);
    }
    for (i, kustomization) in kustomize.iter().enumerate() {
        note(format!("kustomize[{i}]"), &kustomization.extra, KUSTOMIZATION_FIELDS);
        for (j, patch) in kustomization.patches.iter().enumerate() {
            note(format!("kustomize[{i}].patches[{j}]"), &patch.extra, PATCH_FIELDS);
        }
    }
    found
}
