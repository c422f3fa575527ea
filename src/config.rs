//! The functionConfig: the `RenderBlueprint` kind (SPEC §2) or a `ConfigMap` whose `data` become
//! values. The Rust types here are the source of the published JSON Schema (`render-blueprint
//! schema`), so a field added here is documented and validated at once.
//!
//! Sections owned by later stages are typed loosely (any YAML) until their stage lands; the
//! top-level field names are fixed now so unknown fields are caught everywhere.

use crate::diag::{Diagnostic, Kind};
use crate::doc::{FieldPath, Map, Value};
use crate::imports::model::{Execution, ExportDecl, ImportDecl};
use crate::krm::{self, type_of};
use crate::policy::model::{InterfaceRef, PolicySettings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const API_VERSION: &str = "fn.blueprint.dev/v1alpha1";
pub const KIND: &str = "RenderBlueprint";

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
    /// The values tree every expression and template reads (SPEC §4).
    #[serde(default)]
    pub values: Map,
    /// Further values, merged in order over `values` (later wins; maps deep-merged, lists replaced).
    #[serde(default)]
    pub values_from: Vec<ValuesSource>,
    /// Declared inputs, Landscaper style (SPEC §5).
    #[serde(default)]
    pub imports: Vec<ImportDecl>,
    /// The JSON Schema draft of import and export schemas (default 2019-09), as in Landscaper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema_version: Option<String>,
    /// Named JSON Schemas referenced as `local://<name>`.
    #[serde(default)]
    pub local_types: Map,
    /// Handlebars templates that validate imports and add bindings.
    #[serde(default)]
    pub import_executions: Vec<Execution>,
    /// Handlebars templates that produce resources (SPEC §9).
    #[serde(default)]
    pub deploy_executions: Vec<Execution>,
    /// Handlebars templates that produce exports.
    #[serde(default)]
    pub export_executions: Vec<Execution>,
    /// Declared exports.
    #[serde(default)]
    pub exports: Vec<ExportDecl>,
    /// Nested blueprints wired by imports and exports.
    #[serde(default)]
    pub subinstallations: Vec<Value>,
    /// Dependencies resolved by policy (SPEC §6).
    #[serde(default)]
    pub interfaces: Vec<InterfaceRef>,
    /// Policy layers and their order (SPEC §6).
    #[serde(default)]
    pub policy: PolicySettings,
    /// A base Windsor Blueprint spec: terraform, kustomize (SPEC §7).
    #[serde(default)]
    pub blueprint: Map,
    /// Inline Windsor Features (SPEC §7).
    #[serde(default)]
    pub features: Vec<Value>,
    /// A KOTS Config spec: groups with items (SPEC §8).
    #[serde(default)]
    pub config: Map,
    /// Flux output settings (SPEC §7.4).
    #[serde(default)]
    pub flux: FluxSettings,
    /// kustomize-style patches (SPEC §10).
    #[serde(default)]
    pub patches: Vec<PatchEntry>,
    /// Flux post-build variables (SPEC §11); they win over `substituteFrom`.
    #[serde(default)]
    pub substitute: Map,
    /// Flux post-build variable sources, read in order (SPEC §11).
    #[serde(default)]
    pub substitute_from: Vec<SubstituteReference>,
    /// Strict substitution: an unset variable without default is an error (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// One patch, as in kustomize's `patches:` (SPEC §10).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
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
pub struct SubstituteReference {
    /// The kind of the source item.
    pub kind: SourceKind,
    /// Its `metadata.name`, in any namespace (an ambiguous match is an error).
    pub name: String,
    /// Tolerate a missing source.
    #[serde(default)]
    pub optional: bool,
}

/// How kustomizations become Flux objects (SPEC §7.4).
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
}

/// One source of values: a ConfigMap or Secret among the input items, or a YAML file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
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
    /// The config object as given, for locating diagnostics.
    pub item: Value,
}

impl FunctionConfig {
    /// The config used when none is given: renders nothing, passes everything through.
    pub fn empty() -> Self {
        Self { name: "render-blueprint".into(), spec: Spec::default(), data_values: None, item: Value::Null }
    }

    /// Validates a functionConfig (or a RenderBlueprint item).
    pub fn from_item(item: &Value) -> Result<Self, Diagnostic> {
        let error = |message: String, field: FieldPath| Diagnostic::error(Kind::Config, message).about(item).at(field);
        let name = krm::name_of(item).to_string();
        match type_of(item) {
            (API_VERSION, KIND) => {
                let config: RenderBlueprint = serde_path_to_error::deserialize(item).map_err(|err| {
                    let field = FieldPath::parse(&err.path().to_string());
                    error(explain_serde_error(&err.inner().to_string()), field)
                })?;
                if name.is_empty() {
                    return Err(error(
                        "metadata.name is required: generated items record it in fn.blueprint.dev/generated-by".into(),
                        FieldPath::root().key("metadata").key("name"),
                    ));
                }
                Ok(Self { name, spec: config.spec, data_values: None, item: item.clone() })
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
                Ok(Self { name, spec: Spec::default(), data_values: Some(values), item: item.clone() })
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

/// Rewrites serde's messages into ones that say what to change. An unknown field names the
/// closest known field (by edit distance), as SPEC §2 asks.
fn explain_serde_error(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let (field, expected) = rest.split_once('`').unwrap_or((rest, ""));
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let closest = known
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(&field.to_lowercase(), &candidate.to_lowercase()), *candidate))
        .min();
    match closest {
        Some((_, candidate)) => {
            format!("unknown field {field:?}: the closest known field is {candidate:?}")
        }
        None => format!("unknown field {field:?}: this object takes no fields"),
    }
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
        for field in ["values", "valuesFrom", "imports", "features", "patches", "substituteFrom", "strict"] {
            assert!(spec.get(field).is_some(), "{field} missing from {spec}");
        }
    }
}
