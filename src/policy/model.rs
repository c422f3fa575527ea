//! Capact's policy and implementation shapes (pkg/engine/k8s/policy, Hub manifests) mapped to
//! KRM kinds of our own: `Implementation` and `Policy` (fn.blueprint.dev/v1alpha1), and the
//! `spec.interfaces` / `spec.policy` sections of RenderBlueprint.

use crate::doc::{Map, Value};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A type, attribute or interface reference: a path and an optional revision.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping {path: …, revision: …}")]
pub struct TypeRef {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

impl TypeRef {
    pub fn describe(&self) -> String {
        match &self.revision {
            Some(revision) => format!("{}:{revision}", self.path),
            None => self.path.clone(),
        }
    }
}

/// A dependency the blueprint needs: an interface to resolve by policy.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "an interface: a mapping {name: …, path: …, revision: …}")]
pub struct InterfaceRef {
    /// The name the chosen implementation is known by in `explain` and results.
    pub name: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// `spec.policy`: layer order and the layers.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicySettings {
    /// Highest priority first [default: action, global, workflow].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global: Option<PolicyLayer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<PolicyLayer>,
    /// Workflow step policies, merged in order (later wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workflow: Vec<PolicyLayer>,
}

/// One policy (Capact's shape).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyLayer {
    #[serde(default)]
    pub interface: InterfacePolicy,
    #[serde(default, rename = "typeInstance")]
    pub type_instance: TypeInstancePolicy,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterfacePolicy {
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Defaults>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    #[serde(default)]
    pub inject: Inject,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a rule: a mapping {interface: {path: …}, oneOf: […]}")]
pub struct Rule {
    pub interface: TypeRef,
    /// Tried in order; `[]` denies every implementation.
    #[serde(rename = "oneOf")]
    pub one_of: Vec<Choice>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Choice {
    #[serde(default)]
    pub implementation_constraints: Constraints,
    #[serde(default)]
    pub inject: Inject,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Constraints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<TypeRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<TypeRef>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Inject {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_type_instances: Vec<RequiredTypeInstance>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_parameters: Vec<AdditionalParameter>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_type_instances: Vec<AdditionalTypeInstance>,
}

/// A TypeInstance to inject where an implementation requires its type with an alias. Capact
/// learns the type from its Hub; with no Hub here, the `typeRef` is given alongside the id (ours).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequiredTypeInstance {
    pub id: String,
    #[serde(rename = "typeRef")]
    pub type_ref: TypeRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdditionalParameter {
    pub name: String,
    #[serde(default)]
    pub value: Value,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdditionalTypeInstance {
    pub name: String,
    pub id: String,
    #[serde(default, rename = "typeRef", skip_serializing_if = "Option::is_none")]
    pub type_ref: Option<TypeRef>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeInstancePolicy {
    #[serde(default)]
    pub rules: Vec<BackendRule>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BackendRule {
    #[serde(rename = "typeRef")]
    pub type_ref: TypeRef,
    pub backend: Value,
}

/// `Policy` item spec: a policy for one layer.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyItemSpec {
    pub layer: String,
    #[serde(default)]
    pub interface: InterfacePolicy,
    #[serde(default, rename = "typeInstance")]
    pub type_instance: TypeInstancePolicy,
}

/// `Implementation` item spec.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImplementationSpec {
    pub path: String,
    #[serde(default)]
    pub revision: String,
    #[serde(default)]
    pub implements: Vec<TypeRef>,
    #[serde(default)]
    pub attributes: Vec<TypeRef>,
    #[serde(default)]
    pub requires: Vec<Requirement>,
    #[serde(default)]
    pub additional_input: AdditionalInput,
    /// KRM objects to emit, with `${…}` evaluated in the implementation's scope.
    #[serde(default)]
    pub resources: Vec<Value>,
    /// Windsor features applied when this implementation is chosen.
    #[serde(default)]
    pub features: Vec<Value>,
    /// Handlebars deploy executions (SPEC §9) with `implementation` in the binding.
    #[serde(default)]
    pub deploy_executions: Vec<crate::imports::model::Execution>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub path: String,
    #[serde(default)]
    pub revision: Option<String>,
    #[serde(default)]
    pub alias: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdditionalInput {
    #[serde(default)]
    pub parameters: Map,
    #[serde(default)]
    pub type_instances: Map,
}
