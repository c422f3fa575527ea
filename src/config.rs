//! The functionConfig: the `RenderBlueprint` kind or a `ConfigMap` whose `data` become
//! values. The Rust types here are the source of the published JSON Schema (`render-blueprint
//! schema`), so a field added here is documented and validated at once.
//!
//! The top-level field names are fixed here, so an unknown field is caught everywhere. Some
//! sections are any YAML here: the values, the JSON Schemas (`localTypes`) and the component
//! descriptors by nature, and `blueprint` and `features` (read by the features step), `config`
//! (repeat) and `subinstallations` (imports) because the step that reads them checks them with
//! its own types, as it checks the configuration items of the same kinds.

use crate::diag::{Diagnostic, Kind};
use crate::doc::{FieldPath, Map, Value};
use crate::krm::{self, type_of};
use crate::model::imports::{Execution, ExportDecl, ImportDecl};
use crate::model::policy::{InterfaceRef, PolicySettings};
use schemars::JsonSchema;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::{Deserialize, Serialize};
use serde_path_to_error::Segment;

pub const API_VERSION: &str = "fn.blueprint.dev/v1alpha1";
pub const KIND: &str = "RenderBlueprint";
/// The Windsor kinds' group (`Blueprint`, `Feature`, `Facet`): read by the values step (whether
/// a render composes Windsor) and the features step.
pub const WINDSOR_API_VERSION: &str = "blueprints.windsorcli.dev/v1alpha1";

/// Configuration of the `render-blueprint` KRM function.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "RenderBlueprint")]
pub struct RenderBlueprint {
    /// `fn.blueprint.dev/v1alpha1`
    pub api_version: String,
    /// `RenderBlueprint`
    pub kind: String,
    /// The config's name (required).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What to render.
    #[serde(default)]
    pub spec: Spec,
}

/// Standard Kubernetes object metadata; only `name` is used (it tags generated items).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct ObjectMeta {
    /// Required for a RenderBlueprint: generated items carry it in `fn.blueprint.dev/generated-by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Accepted; not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(flatten)]
    pub other: Map,
}

/// What to render. Every section is optional.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Spec {
    /// The values tree every expression and template reads.
    #[serde(default)]
    pub values: Map,
    /// Further values, merged in order over `values` (later wins; maps deep-merged, lists replaced).
    #[serde(default)]
    pub values_from: Vec<ValuesSource>,
    /// Declared inputs, Landscaper style.
    #[serde(default)]
    pub imports: Vec<ImportDecl>,
    /// The JSON Schema draft of import and export schemas (default 2019-09), as in Landscaper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema_version: Option<String>,
    /// Named JSON Schemas referenced as `local://<name>`.
    #[serde(default)]
    pub local_types: Map,
    /// GoTemplate or Handlebars templates that validate imports and add bindings.
    #[serde(default)]
    pub import_executions: Vec<Execution>,
    /// GoTemplate or Handlebars templates that produce resources.
    #[serde(default)]
    pub deploy_executions: Vec<Execution>,
    /// GoTemplate or Handlebars templates that produce exports.
    #[serde(default)]
    pub export_executions: Vec<Execution>,
    /// The blueprint's component descriptor (OCM, schema `v2` or `ocm.software/v3alpha1`), inline
    /// or `{file: path}`: GoTemplate executions see it as `.cd` and `getResource`, `getResources`,
    /// `getComponent` and `getResourceKey` search it (Landscaper fetches it from a registry; a
    /// render reads no registry).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub component_descriptor: Map,
    /// The descriptors of the components that `componentDescriptor` references, each inline or
    /// `{file: path}`, for `getComponent` and `.components`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub component_descriptors: Vec<Value>,
    /// What deployers would read back from the cluster for export executions' `deployitems`,
    /// by deploy item name (`<subinstallation>/…/<name>` for a subinstallation's), then export
    /// key: a render runs no deployer.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub deploy_item_exports: Map,
    /// Declared exports.
    #[serde(default)]
    pub exports: Vec<ExportDecl>,
    /// Nested blueprints wired by imports and exports.
    #[serde(default)]
    pub subinstallations: Vec<Value>,
    /// Dependencies resolved by policy, as Capact resolves interfaces.
    #[serde(default)]
    pub interfaces: Vec<InterfaceRef>,
    /// Policy layers and their order (Capact's global, action and workflow policies).
    #[serde(default)]
    pub policy: PolicySettings,
    /// A base Windsor Blueprint spec: terraform, kustomize.
    #[serde(default)]
    pub blueprint: Map,
    /// Inline Windsor Features.
    #[serde(default)]
    pub features: Vec<Value>,
    /// A KOTS Config spec: groups with items.
    #[serde(default)]
    pub config: Map,
    /// Settings for KOTS template functions that KOTS reads from the cluster or the clock.
    #[serde(default)]
    pub kots: KotsSettings,
    /// Flux output settings.
    #[serde(default)]
    pub flux: FluxSettings,
    /// Windsor settings.
    #[serde(default)]
    pub windsor: WindsorSettings,
    /// kustomize-style patches.
    #[serde(default)]
    pub patches: Vec<PatchEntry>,
    /// Flux post-build variables; they win over `substituteFrom`.
    #[serde(default)]
    pub substitute: Map,
    /// Flux post-build variable sources, read in order.
    #[serde(default)]
    pub substitute_from: Vec<SubstituteReference>,
    /// Strict substitution: an unset variable without default is an error (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Make every warning of the render an error (exit 1, the items written back unchanged):
    /// kustomize shows a function's stderr only when it fails, so under kustomize a warning,
    /// such as a patch whose target matches nothing, is otherwise never seen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warnings_as_errors: bool,
    /// Report unknown fields of the Windsor kinds (Feature, Facet, Blueprint, and
    /// `spec.features`/`spec.blueprint`) and condition paths that no value sets but a close one
    /// does (a likely typo) as warnings instead of errors. Errors by default: the same slip is
    /// refused wherever it is, and kustomize hides a succeeding function's warnings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_unknown: bool,
}

/// One patch, as in kustomize's `patches:`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(expecting = "a patch: a mapping with patch (inline text) or path, and an optional target")]
pub struct PatchEntry {
    /// Inline patch text: a list of JSON 6902 operations, or a strategic merge patch object
    /// (several YAML documents are several patches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// A file holding the patch, relative to the functionConfig's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Which resources to patch; without it a strategic merge patch patches the resource with
    /// its own apiVersion, kind, name and namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<PatchTarget>,
    /// What the patch may change besides content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<PatchOptions>,
}

/// kustomize's patch target: anchored regular expressions and Kubernetes selectors.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(
    expecting = "a target: a mapping of kind, name, namespace, group, version, labelSelector or annotationSelector"
)]
pub struct PatchTarget {
    /// API group, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `metadata.name`, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `metadata.namespace`, an anchored regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// A Kubernetes label selector (`a=b`, `a!=b`, `a in (b,c)`, `a notin (b)`, `a`, `!a`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// An annotation selector, in the label selector grammar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_selector: Option<String>,
}

/// kustomize's patch options.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchOptions {
    /// Allow the patch to change `metadata.name`.
    #[serde(default)]
    pub allow_name_change: bool,
    /// Allow the patch to change `kind`.
    #[serde(default)]
    pub allow_kind_change: bool,
}

/// A ConfigMap or Secret among the items whose data are substitution variables (Flux's
/// `postBuild.substituteFrom`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(expecting = "a mapping {kind: ConfigMap or Secret, name: …}")]
pub struct SubstituteReference {
    /// The kind of the source item.
    pub kind: SourceKind,
    /// Its `metadata.name`, in any namespace (an ambiguous match is an error).
    pub name: String,
    /// Tolerate a missing source.
    #[serde(default)]
    pub optional: bool,
}

/// What KOTS template functions read that KOTS takes from the cluster or the clock. A render
/// must give the same output every time, so these are set here or the functions are errors.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KotsSettings {
    /// The time `Now` and `NowFmt` return, in RFC 3339 (`2024-05-01T12:00:00Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// The namespace `Namespace` returns (KOTS: the namespace the application is installed in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What `IsKurl` returns: whether the cluster is a kURL cluster [default: false].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_kurl: Option<bool>,
    /// What `IsAirgap` returns: whether the install is air-gapped [default: false].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_airgap: Option<bool>,
    /// What `ChannelName` returns: the release channel [default: empty].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_name: Option<String>,
    /// What `Sequence` returns: the release's sequence number [default: -1, KOTS's "no release"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<i64>,
    /// The registry KOTS pushes the application's images to (an air-gapped install's, or one the
    /// user configured); `LocalImageName` then names images there. Absent: images stay where
    /// they are, as for an online install.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_registry: Option<LocalRegistrySettings>,
    /// The application's slug, which `ImagePullSecretName` gives as `<slug>-registry`
    /// [default: the name of the package's `kots.io/v1beta1` `Application`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_slug: Option<String>,
}

/// A registry for `spec.kots.localRegistry`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LocalRegistrySettings {
    /// The registry's host (`registry.example.com`, `10.0.0.5:5000`).
    pub host: String,
    /// The path images go under in it (`myapp`) [default: none].
    #[serde(default)]
    pub namespace: String,
    /// The user `LocalRegistryImagePullSecret` authenticates as.
    #[serde(default)]
    pub username: String,
    /// Its password, for the pull secret.
    #[serde(default)]
    pub password: String,
}

/// How kustomizations become Flux objects.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FluxSettings {
    /// Emit Flux Kustomizations and substitution ConfigMaps (default: whenever there are kustomizations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Namespace of the emitted objects [default: system-gitops].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Prefix of every Kustomization path [default: kustomize].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_prefix: Option<String>,
    /// Emit a GitRepository or OCIRepository for the blueprint's repository and each source, as Windsor applies them [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<bool>,
}

/// Settings for Windsor blueprints.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WindsorSettings {
    /// A Windsor `schema.yaml` (JSON Schema), relative to the functionConfig's file: its `default`s
    /// are the values' lowest layer, under `values` and `valuesFrom`, as Windsor applies them.
    /// Unset: the `schema.yaml` next to the package's Blueprint item, when there is one, as
    /// Windsor reads `_template/schema.yaml` (for the Windsor composition only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Apply the schema's defaults [default: true]; false reads the schema only for the paths it
    /// declares, as `windsor test` composes a case without `applySchemaDefaults`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_defaults: Option<bool>,
    /// The Windsor release whose composition and Flux output a render follows: "0.9" (Facets,
    /// and Features read as facets) or "0.8" (Features as v0.8.1 applies them) [default: 0.9].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<WindsorVersion>,
    /// The Windsor context's name (what `windsor context set` chose; Windsor reads it from its
    /// project, a render has none): `CONTEXT` in `values-common`, and with "0.9" `${context}` in
    /// expressions and the `windsorcli.dev/context` and `windsorcli.dev/context-id` labels on
    /// each Flux Kustomization and its `commonMetadata`. Unset: none of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The Windsor project's folder name (Windsor reads it from the project root): with "0.9" and a
    /// dev context, the blueprint without a repository gets Windsor's dev repository
    /// `http://git.<dns.domain>/git/<project>`. Unset: no dev repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Terraform outputs by component and key, for `terraform_output(component, key)`, as
    /// `windsor test` mocks them. Without them a `${…}` calling it is kept as written (Windsor
    /// evaluates it once terraform has run); with them it gives the output, or nil for a key not
    /// listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terraform_outputs: Option<std::collections::BTreeMap<String, std::collections::BTreeMap<String, Value>>>,
    /// The blueprint's `sources` entry (an `oci://` source) this package is the artifact of, as
    /// Windsor v0.9 loads an OCI source: the package's terraform components and kustomizations
    /// (the Blueprint item's and the facets'), and its facets' Flux systems, without a `source`
    /// get this one, and its facets' `crds` become the source's (its `crds-<name>` layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A Windsor CLI release line. Written as text (`"0.9"`); an unquoted `0.9` (a YAML number) is
/// read the same, since that is how most people will type it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub enum WindsorVersion {
    // windsorcli/cli v0.8.1: Features applied in name order.
    #[serde(rename = "0.8")]
    V08,
    // windsorcli/cli v0.9.0: Facets ranked by ordinal, v0.9's Flux defaults and checks.
    #[default]
    #[serde(rename = "0.9")]
    V09,
}

impl<'de> Deserialize<'de> for WindsorVersion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Version;
        impl Visitor<'_> for Version {
            type Value = WindsorVersion;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"0.8\" or \"0.9\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<WindsorVersion, E> {
                match text {
                    "0.8" => Ok(WindsorVersion::V08),
                    "0.9" => Ok(WindsorVersion::V09),
                    other => Err(E::invalid_value(Unexpected::Str(other), &self)),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, number: f64) -> Result<WindsorVersion, E> {
                if number == 0.8 {
                    Ok(WindsorVersion::V08)
                } else if number == 0.9 {
                    Ok(WindsorVersion::V09)
                } else {
                    Err(E::invalid_value(Unexpected::Float(number), &self))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, number: u64) -> Result<WindsorVersion, E> {
                Err(E::invalid_value(Unexpected::Unsigned(number), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, number: i64) -> Result<WindsorVersion, E> {
                Err(E::invalid_value(Unexpected::Signed(number), &self))
            }
        }
        deserializer.deserialize_any(Version)
    }
}

/// One source of values: a ConfigMap or Secret among the input items, or a YAML file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(expecting = "a mapping {kind: ConfigMap or Secret, name: …} or {file: …}")]
pub struct ValuesSource {
    /// `ConfigMap` or `Secret` (with `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<SourceKind>,
    /// The ConfigMap's or Secret's `metadata.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Matches any namespace when omitted (an ambiguous match is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Read this data key as a YAML mapping of values; without it every data entry is a
    /// top-level string value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A YAML file of values, relative to the functionConfig's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Tolerate a missing source.
    #[serde(default)]
    pub optional: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum SourceKind {
    ConfigMap,
    Secret,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::ConfigMap => "ConfigMap",
            SourceKind::Secret => "Secret",
        }
    }
}

/// The functionConfig after validation.
#[derive(Clone, Debug)]
pub struct FunctionConfig {
    /// `metadata.name`: generated items are tagged with it.
    pub name: String,
    pub spec: Spec,
    /// For a ConfigMap functionConfig, its data as top-level string values.
    pub data_values: Option<Map>,
    /// The config object as given, for locating diagnostics, without its `spec.values` (null
    /// there): the values live in `spec.values` alone, as they can be most of the config.
    pub item: Value,
}

impl FunctionConfig {
    /// The config used when none is given: renders nothing, passes everything through.
    pub fn empty() -> Self {
        Self { name: "render-blueprint".into(), spec: Spec::default(), data_values: None, item: Value::Null }
    }

    /// Validates a functionConfig handed over whole. Its `spec.values` is moved into the typed
    /// spec, not copied: a values tree of small nodes takes some thirty times its text in
    /// memory, so every copy of it counts (BENCHMARKS.md, issue 39).
    pub fn from_value(mut item: Value) -> Result<Self, Diagnostic> {
        let values = values_of(&mut item).map(std::mem::take);
        Self::read(item, values)
    }

    /// Validates a RenderBlueprint item that stays among the items: it is copied without its
    /// `spec.values`, and the values once, into the typed spec.
    pub fn from_item(item: &Value) -> Result<Self, Diagnostic> {
        let values = item.get("spec").and_then(|spec| spec.get("values")).filter(|v| v.is_object());
        let Some(values) = values.filter(|_| type_of(item) == (API_VERSION, KIND)) else {
            return Self::read(item.clone(), None);
        };
        let copy = |map: &Map, leave_out: &str| -> Map {
            map.iter().map(|(k, v)| (k.clone(), if k == leave_out { Value::Null } else { v.clone() })).collect()
        };
        let mut copied = Map::new();
        for (key, value) in item.as_object().into_iter().flatten() {
            let value = match (key.as_str(), value) {
                ("spec", Value::Object(spec)) => Value::Object(copy(spec, "values")),
                _ => value.clone(),
            };
            copied.insert(key.clone(), value);
        }
        Self::read(Value::Object(copied), Some(values.clone()))
    }

    /// Validates `item`, whose `spec.values` mapping, when `values` holds it, was taken out (null
    /// in its place).
    fn read(item: Value, values: Option<Value>) -> Result<Self, Diagnostic> {
        let error = |message: String, field: FieldPath| Diagnostic::error(Kind::Config, message).about(&item).at(field);
        let name = krm::name_of(&item).to_string();
        match type_of(&item) {
            (API_VERSION, KIND) => {
                let config: RenderBlueprint = parse_section(&item).map_err(|(field, message)| error(message, field))?;
                if name.is_empty() {
                    return Err(error(
                        "metadata.name is required: generated items record it in fn.blueprint.dev/generated-by".into(),
                        FieldPath::root().key("metadata").key("name"),
                    ));
                }
                let mut spec = config.spec;
                if let Some(Value::Object(values)) = values {
                    spec.values = values;
                }
                Ok(Self { name, spec, data_values: None, item })
            }
            ("v1", "ConfigMap") => {
                let mut values = Map::new();
                if let Some(data) = item.get("data").and_then(Value::as_object) {
                    for (key, value) in data {
                        let text = match value {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            _ => {
                                return Err(error(
                                    "ConfigMap data values must be strings".into(),
                                    FieldPath::root().key("data").key(key.as_str()),
                                ))
                            }
                        };
                        values.insert(key.clone(), Value::String(text));
                    }
                }
                let name = if name.is_empty() { "render-blueprint".to_string() } else { name };
                Ok(Self { name, spec: Spec::default(), data_values: Some(values), item })
            }
            (api_version, kind) => Err(error(
                format!(
                    "functionConfig of kind {kind:?} (apiVersion {api_version:?}) is not supported: \
                     use kind RenderBlueprint with apiVersion {API_VERSION}, or a v1 ConfigMap"
                ),
                FieldPath::root().key("kind"),
            )),
        }
    }
}

/// A RenderBlueprint's `spec.values`, when it is a mapping (anything else stays in place for
/// the reader to refuse).
fn values_of(item: &mut Value) -> Option<&mut Value> {
    if type_of(item) != (API_VERSION, KIND) {
        return None;
    }
    item.get_mut("spec")?.get_mut("values").filter(|values| values.is_object())
}

/// Deserializes configuration (the functionConfig, or a section of a configuration item) into
/// its model type. The error names the field path and says what to write there.
pub fn parse_section<T: DeserializeOwned>(value: &Value) -> Result<T, (FieldPath, String)> {
    let err = match serde_path_to_error::deserialize::<_, T>(Strict(value)) {
        Ok(parsed) => return Ok(parsed),
        Err(err) => err,
    };
    let segments: Vec<&Segment> = err.path().iter().collect();
    let mut message = explain_serde_error(&err.inner().to_string());
    let last_key = segments.iter().rev().find_map(|s| match s {
        Segment::Map { key } => Some(key.as_str()),
        _ => None,
    });
    if message.starts_with("expected a string, got a mapping") {
        match last_key {
            Some("labelSelector" | "annotationSelector") => {
                message.push_str("; write the selector as text, e.g. app=web,tier in (a,b)")
            }
            Some("patch") => message.push_str("; write the patch as text, a block scalar under patch: |"),
            _ => {}
        }
    }
    Err((field_path(&segments), message))
}

fn field_path(segments: &[&Segment]) -> FieldPath {
    segments.iter().fold(FieldPath::root(), |path, segment| match segment {
        Segment::Seq { index } => path.index(*index),
        Segment::Map { key } => path.key(key.as_str()),
        Segment::Enum { .. } | Segment::Unknown => path,
    })
}

/// A value read as configuration. serde's derived structs also read a list (their fields in
/// order), so `flux: [true]` would quietly mean `enabled: true` and `spec.policy: [1]` would fail
/// inside the list with its first field's message. This deserializer refuses a list wherever a
/// struct is expected, naming what the struct expects; everything else is serde_json's own.
struct Strict<'a>(&'a Value);

impl<'de> serde::Deserializer<'de> for Strict<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(StrictSeq(items.iter())),
            Value::Object(map) => visitor.visit_map(StrictMap { entries: map.iter(), value: None }),
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(_) => Err(serde::de::Error::invalid_type(Unexpected::Seq, &visitor)),
            Value::Object(_) => self.deserialize_any(visitor),
            Value::Null => visitor.visit_map(StrictMap { entries: EMPTY.iter(), value: None }),
            Value::Number(number) => Err(serde::de::Error::invalid_type(unexpected_number(number), &visitor)),
            scalar => scalar.deserialize_struct(name, fields, visitor),
        }
    }

    // `key:` with nothing after it is null; Go readers (Kubernetes, Windsor, Landscaper, KOTS)
    // take a null list, mapping or object as an empty one, and so do we.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_seq(StrictSeq([].iter())),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_map(StrictMap { entries: EMPTY.iter(), value: None }),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        // Our enums are unit variants written as strings: serde_json's reading is the one wanted.
        match self.0 {
            Value::Number(number) => Err(serde::de::Error::invalid_type(unexpected_number(number), &visitor)),
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct tuple tuple_struct identifier ignored_any
    }
}

/// What serde_json would call a number it found where something else was expected. It keeps
/// a number's digits (`doc::integers`) and then calls every number just "number"; the messages
/// this module rewrites name the value.
fn unexpected_number(number: &serde_json::Number) -> Unexpected<'_> {
    match (number.as_u64(), number.as_i64(), number.as_f64()) {
        (Some(n), ..) => Unexpected::Unsigned(n),
        (_, Some(n), _) => Unexpected::Signed(n),
        (.., Some(n)) => Unexpected::Float(n),
        _ => Unexpected::Other("number"),
    }
}

static EMPTY: std::sync::LazyLock<Map> = std::sync::LazyLock::new(Map::new);

struct StrictSeq<'a>(std::slice::Iter<'a, Value>);

impl<'de> SeqAccess<'de> for StrictSeq<'de> {
    type Error = serde_json::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, Self::Error> {
        self.0.next().map(|value| seed.deserialize(Strict(value))).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct StrictMap<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'de> MapAccess<'de> for StrictMap<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        self.value = Some(value);
        seed.deserialize(BorrowedStrDeserializer::new(key.as_str())).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Self::Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Strict(value)),
            None => Err(serde::de::Error::custom("a mapping value was asked for before its key")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// Rewrites serde's messages into ones that say what to change, in YAML's words (list, mapping).
/// An unknown field names the closest known field (by edit distance), so a typo says what was meant.
pub fn explain_serde_error(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        return explain_unknown_field(rest);
    }
    let mismatch = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "));
    if let Some((got, expected)) = mismatch.and_then(|rest| rest.rsplit_once(", expected ")) {
        return explain_mismatch(got, expected);
    }
    message.to_string()
}

fn explain_unknown_field(rest: &str) -> String {
    let (field, expected) = rest.split_once('`').unwrap_or((rest, ""));
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    // Names from neighbouring Kubernetes shapes mean a field the edit distance would not find.
    let meant = [
        ("matchLabels", "labelSelector"),
        ("matchExpressions", "labelSelector"),
        ("selector", "labelSelector"),
        ("labels", "labelSelector"),
        ("annotations", "annotationSelector"),
    ]
    .into_iter()
    .find(|(alias, field_meant)| *alias == field && known.contains(field_meant))
    .map(|(_, field_meant)| (0, field_meant));
    let closest = meant.or_else(|| {
        known
            .iter()
            .map(|candidate| {
                (strsim::damerau_levenshtein(&field.to_lowercase(), &candidate.to_lowercase()), *candidate)
            })
            .min()
    });
    match closest {
        // A short list is worth reading whole: the field may belong one level up or down.
        Some((_, candidate)) if known.len() <= 4 => format!(
            "unknown field {field:?}: the closest known field is {candidate:?} (this object takes {})",
            known.join(", ")
        ),
        Some((_, candidate)) => format!("unknown field {field:?}: the closest known field is {candidate:?}"),
        None => format!("unknown field {field:?}: this object takes no fields"),
    }
}

/// `got`/`expected` as serde writes them (`integer `3``, `a sequence`, `struct X`), in YAML's
/// words, plus what to write when it is a common slip.
fn explain_mismatch(got: &str, expected: &str) -> String {
    let (got_kind, literal) = match got.split_once(' ') {
        Some((kind, literal)) => (kind, literal.trim_start_matches("point ").trim_matches('`')),
        None => (got, ""),
    };
    let got_text = match got_kind {
        "map" => "a mapping".to_string(),
        "sequence" => "a list".to_string(),
        "null" | "unit" => "nothing (null)".to_string(),
        "integer" | "floating" => format!("the number {literal}"),
        "boolean" => format!("the boolean {literal}"),
        "string" => format!("the string {literal}"),
        _ => got.to_string(),
    };
    let expected_text = match expected {
        "a sequence" => "a list".to_string(),
        "a map" => "a mapping".to_string(),
        "a boolean" => "a boolean (true or false)".to_string(),
        "usize" | "u8" | "u16" | "u32" | "u64" => "a whole number (0 or more)".to_string(),
        "isize" | "i8" | "i16" | "i32" | "i64" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        struct_name if struct_name.starts_with("struct ") => "a mapping".to_string(),
        other => other.to_string(),
    };
    let word = literal.trim_matches('"');
    let hint = match (expected_text.as_str(), got_kind) {
        ("a list", "map") => "; start each entry with \"- \"".to_string(),
        ("a list", "string" | "integer" | "floating" | "boolean") => format!("; write a list, e.g. [{literal}]"),
        ("a boolean (true or false)", "string")
            if ["yes", "no", "on", "off", "y", "n"].contains(&word.to_lowercase().as_str()) =>
        {
            format!("; {literal} is a string in YAML 1.2, write true or false")
        }
        ("a string", "integer" | "floating" | "boolean") => format!("; quote it (\"{literal}\") if it is text"),
        _ => String::new(),
    };
    format!("expected {expected_text}, got {got_text}{hint}")
}

/// The JSON Schema of `RenderBlueprint`, generated from the types above.
pub fn json_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(RenderBlueprint)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(spec: Value) -> Value {
        json!({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "p"}, "spec": spec})
    }

    #[test]
    fn unknown_field_names_the_closest_known_one() {
        let err = FunctionConfig::from_item(&config(json!({"valueFrom": []}))).err();
        let err = err.map(|e| (e.message.clone(), e.field.as_ref().map(|f| f.to_string())));
        assert_eq!(
            err,
            Some((
                "unknown field \"valueFrom\": the closest known field is \"valuesFrom\"".into(),
                Some("spec.valueFrom".into())
            ))
        );
    }

    #[test]
    fn nested_unknown_field_has_its_path() {
        let err = FunctionConfig::from_item(&config(json!({"valuesFrom": [{"kind": "ConfigMap", "nmae": "x"}]}))).err();
        assert_eq!(err.and_then(|e| e.field.clone()).map(|f| f.to_string()), Some("spec.valuesFrom[0].nmae".into()));
    }

    #[test]
    fn a_list_where_a_mapping_belongs_is_reported_there() {
        // serde's structs also read lists, so without the probe this fails at spec.policy[0].
        let err = FunctionConfig::from_item(&config(json!({"policy": [1]}))).err();
        let err = err.map(|e| (e.message.clone(), e.field.as_ref().map(|f| f.to_string())));
        assert_eq!(err, Some(("expected a mapping, got a list".into(), Some("spec.policy".into()))));
        let err = FunctionConfig::from_item(&config(json!({"patches": [[{"op": "add"}]]}))).err();
        let message = err.map(|e| e.message.clone()).unwrap_or_default();
        assert!(message.starts_with("expected a patch: a mapping with patch"), "{message}");
        // serde alone would read these as {enabled: true} and {kind: ConfigMap, name: x}.
        for spec in [json!({"flux": [true]}), json!({"substituteFrom": [["ConfigMap", "x"]]})] {
            let err = FunctionConfig::from_item(&config(spec.clone())).err().map(|e| e.message.clone());
            assert!(err.is_some_and(|m| m.ends_with("got a list")), "{spec}");
        }
    }

    #[test]
    fn an_empty_key_is_an_empty_section() {
        let spec = json!({"values": null, "patches": null, "policy": null, "flux": null, "imports": [{"name": "x", "imports": null}]});
        let config = FunctionConfig::from_item(&config(spec));
        assert!(config.as_ref().is_ok_and(|c| c.spec.patches.is_empty() && c.spec.values.is_empty()), "{config:?}");
    }

    #[test]
    fn type_errors_read_in_yaml_words_with_a_hint() {
        for (serde, ours) in [
            ("invalid type: map, expected a sequence", "expected a list, got a mapping; start each entry with \"- \""),
            (
                "invalid type: string \"x\", expected a sequence",
                "expected a list, got the string \"x\"; write a list, e.g. [\"x\"]",
            ),
            (
                "invalid type: string \"no\", expected a boolean",
                "expected a boolean (true or false), got the string \"no\"; \"no\" is a string in YAML 1.2, write true or false",
            ),
            ("invalid type: integer `42`, expected a string", "expected a string, got the number 42; quote it (\"42\") if it is text"),
            ("invalid type: floating point `1.5`, expected usize", "expected a whole number (0 or more), got the number 1.5"),
            ("invalid type: null, expected struct Foo", "expected a mapping, got nothing (null)"),
            ("missing field `name`", "missing field `name`"),
        ] {
            assert_eq!(explain_serde_error(serde), ours);
        }
    }

    #[test]
    fn unknown_fields_from_kubernetes_shapes_name_the_field_meant() {
        let err =
            FunctionConfig::from_item(&config(json!({"patches": [{"patch": "{}", "target": {"matchLabels": {}}}]})));
        let message = err.err().map(|e| e.message.clone()).unwrap_or_default();
        assert_eq!(message, "unknown field \"matchLabels\": the closest known field is \"labelSelector\"");
    }

    #[test]
    fn config_map_data_become_values() {
        let item =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": 2}});
        let config = FunctionConfig::from_item(&item).ok().and_then(|c| c.data_values);
        assert_eq!(config.map(Value::Object), Some(json!({"a": "1", "b": "2"})));
    }

    #[test]
    fn schema_lists_every_section() {
        let schema = json_schema();
        let spec = &schema["$defs"]["Spec"]["properties"];
        for field in [
            "values",
            "valuesFrom",
            "imports",
            "features",
            "patches",
            "substituteFrom",
            "strict",
            "warningsAsErrors",
            "allowUnknown",
        ] {
            assert!(spec.get(field).is_some(), "{field} missing from {spec}");
        }
    }
}
