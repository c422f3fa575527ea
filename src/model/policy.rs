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
    /// A path such as `cap.type.helm.storage`; in rules, `cap.*` or `<prefix>.*` match by prefix.
    pub path: String,
    /// A revision such as `0.1.0`; any revision when omitted.
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
    /// The interface path, such as `cap.interface.database.postgresql.install`.
    pub path: String,
    /// The interface revision; without it, rules with a revision do not apply.
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
    /// The global policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global: Option<PolicyLayer>,
    /// The action policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<PolicyLayer>,
    /// Workflow step policies, outermost step first; merged in order, the earlier winning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workflow: Vec<PolicyLayer>,
}

/// One policy (Capact's shape).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyLayer {
    /// Which implementation each interface gets, and what is injected into it.
    #[serde(default)]
    pub interface: InterfacePolicy,
    /// Storage backends of TypeInstances by type.
    #[serde(default, rename = "typeInstance")]
    pub type_instance: TypeInstancePolicy,
}

/// A policy's `interface` section.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterfacePolicy {
    /// Rules per interface; rules for the same interface are merged, the earlier winning.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Injections for every rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Defaults>,
}

/// `interface.default`: injections for every rule.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Injected wherever a rule is used; the rule wins on the same typeRef.
    #[serde(default)]
    pub inject: Inject,
}

/// The implementations allowed for one interface, in order of preference.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a rule: a mapping {interface: {path: …}, oneOf: […]}")]
pub struct Rule {
    /// The interface (`cap.*` for any); looked up by path and revision, then path, then `cap.*`.
    pub interface: TypeRef,
    /// Tried in order; `[]` denies every implementation.
    #[serde(rename = "oneOf")]
    pub one_of: Vec<Choice>,
}

/// One entry of a rule's `oneOf`: which implementations qualify, and what they get.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Choice {
    /// Which implementations qualify (`{}`: any).
    #[serde(default)]
    pub implementation_constraints: Constraints,
    /// What the chosen implementation gets.
    #[serde(default)]
    pub inject: Inject,
}

/// Implementation constraints; every one given must hold (`{}`: any implementation).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Constraints {
    /// A Go (RE2) regular expression found anywhere in the implementation's path, as in Capact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Attributes the implementation must all have (revision checked when given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<TypeRef>,
    /// Types that must all be among the implementation's `requires`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<TypeRef>,
}

/// What is injected into the chosen implementation.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Inject {
    /// TypeInstances for the implementation's aliased `requires`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_type_instances: Vec<RequiredTypeInstance>,
    /// Parameters by name, as `implementation.parameters.<name>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_parameters: Vec<AdditionalParameter>,
    /// TypeInstances by name, as `implementation.typeInstances.<name>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_type_instances: Vec<AdditionalTypeInstance>,
}

/// A TypeInstance to inject where an implementation requires its type with an alias. Capact
/// learns the type from its Hub; with no Hub here, the `typeRef` is given alongside the id (ours).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequiredTypeInstance {
    /// The TypeInstance's id.
    pub id: String,
    /// Its type: injected where the implementation requires this type with an alias.
    #[serde(rename = "typeRef")]
    pub type_ref: TypeRef,
    /// A note for readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An additional parameter for the chosen implementation.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdditionalParameter {
    /// Must be declared in the implementation's `additionalInput.parameters`.
    pub name: String,
    /// The value; merged entries deep-merge it by name, the higher layer winning.
    #[serde(default)]
    pub value: Value,
}

/// An additional TypeInstance for the chosen implementation.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AdditionalTypeInstance {
    /// Must match a name in the implementation's `additionalInput.typeInstances`.
    pub name: String,
    /// The TypeInstance's id.
    pub id: String,
    /// Must match that entry's typeRef when given.
    #[serde(default, rename = "typeRef", skip_serializing_if = "Option::is_none")]
    pub type_ref: Option<TypeRef>,
}

/// A policy's `typeInstance` section.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeInstancePolicy {
    /// Backends by type: exact path and revision, then path, then `<prefix>.*` up to `cap.*`.
    #[serde(default)]
    pub rules: Vec<BackendRule>,
}

/// The storage backend of one type's TypeInstances.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BackendRule {
    /// The type (`path` may end in `.*`).
    #[serde(rename = "typeRef")]
    pub type_ref: TypeRef,
    /// The backend (for example `{id, description}`), returned by the `backend` template helper.
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
    /// Handlebars deploy executions with `implementation` in the binding.
    #[serde(default)]
    pub deploy_executions: Vec<super::imports::Execution>,
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
