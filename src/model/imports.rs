//! The Landscaper blueprint (landscaper.gardener.cloud/v1alpha1, apis/core/v1alpha1) as far as
//! this function renders it: import and export declarations, local types, executions and
//! subinstallation templates. The same fields are accepted inline in `RenderBlueprint.spec`.

use crate::doc::{Map, Value};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const API_VERSION: &str = "landscaper.gardener.cloud/v1alpha1";

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Blueprint {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map,
    /// Landscaper's blueprint `annotations` (a string map, for tools): accepted and not read.
    #[serde(default, skip_serializing)]
    pub annotations: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema_version: Option<String>,
    /// Accepted and ignored: Landscaper's guided tour sets `jsonSchema`, which Landscaper's
    /// lenient decoding drops.
    #[serde(default, rename = "jsonSchema", skip_serializing)]
    pub json_schema: Option<Value>,
    #[serde(default)]
    pub local_types: Map,
    #[serde(default)]
    pub imports: Vec<ImportDecl>,
    #[serde(default)]
    pub exports: Vec<ExportDecl>,
    #[serde(default)]
    pub import_executions: Vec<Execution>,
    #[serde(default)]
    pub deploy_executions: Vec<Execution>,
    #[serde(default)]
    pub export_executions: Vec<Execution>,
    #[serde(default)]
    pub subinstallations: Vec<Value>,
    /// Landscaper's `subinstallationExecutions`: templates whose `subinstallations` list adds
    /// installation templates to the static `subinstallations`.
    #[serde(default)]
    pub subinstallation_executions: Vec<Execution>,
}

impl Blueprint {
    pub fn is_empty(&self) -> bool {
        self.imports.is_empty()
            && self.exports.is_empty()
            && self.import_executions.is_empty()
            && self.deploy_executions.is_empty()
            && self.export_executions.is_empty()
            && self.subinstallations.is_empty()
            && self.subinstallation_executions.is_empty()
            && self.local_types.is_empty()
    }

    /// Adds another blueprint's declarations after this one's (item, then inline fields).
    pub fn extend(&mut self, other: Blueprint) {
        self.json_schema_version = self.json_schema_version.take().or(other.json_schema_version);
        self.local_types.extend(other.local_types);
        self.imports.extend(other.imports);
        self.exports.extend(other.exports);
        self.import_executions.extend(other.import_executions);
        self.deploy_executions.extend(other.deploy_executions);
        self.export_executions.extend(other.export_executions);
        self.subinstallations.extend(other.subinstallations);
        self.subinstallation_executions.extend(other.subinstallation_executions);
    }
}

/// A declared import, as in a Landscaper blueprint.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[serde(expecting = "an import: a mapping with name and schema (or targetType)")]
pub struct ImportDecl {
    /// The import's name, unique across all nesting levels; its value is `values.<name>`.
    #[serde(default)]
    pub name: String,
    /// `data`, `target`, `targetList` or `targetMap` [default: `data` with a `schema`, `target` with
    /// a `targetType`].
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Defaults to true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// The value of an optional import that is not given (never used for a required import).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<DefaultValue>,
    /// The JSON Schema of a `data` import's value; `$ref: local://<name>` refers to `localTypes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// The target type of a target import, prefixed with `landscaper.gardener.cloud/` when it has
    /// no `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<String>,
    /// Conditional imports: only evaluated when this (optional) import is satisfied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportDecl>,
}

impl ImportDecl {
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(true)
    }
}

/// An import's default: `{value: …}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "a mapping {value: …}")]
pub struct DefaultValue {
    /// The default value; it is validated against the import's schema like a given value.
    #[serde(default)]
    pub value: Value,
}

/// A declared export, as in a Landscaper blueprint: produced by the export executions, written to
/// `<name>-exports`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[serde(expecting = "an export: a mapping with name and schema (or targetType)")]
pub struct ExportDecl {
    /// The export's name: its key under `exports` in an export execution's result.
    #[serde(default)]
    pub name: String,
    /// `data` or `target`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The JSON Schema the exported value is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// The target type of a target export, prefixed with `landscaper.gardener.cloud/` when it has
    /// no `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_type: Option<String>,
}

/// A template execution: Handlebars text inline (`template`) or in a file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[serde(expecting = "an execution: a mapping with name, type: Handlebars and template or file")]
pub struct Execution {
    /// The execution's name, used in messages.
    #[serde(default)]
    pub name: String,
    /// `GoTemplate` (Go text/template with Sprig, as in Landscaper) or `Handlebars`; `Spiff` is refused.
    #[serde(default, rename = "type")]
    pub kind: String,
    /// The template text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Value>,
    /// A file holding the template, relative to the declaring file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `landscaper.gardener.cloud/<t>` when `t` has no `/` (Landscaper's defaulting).
pub fn full_target_type(target_type: &str) -> String {
    if target_type.contains('/') {
        target_type.to_string()
    } else {
        format!("landscaper.gardener.cloud/{target_type}")
    }
}

/// The import's type after Landscaper's defaulting: `data` with a schema, else `target` with
/// a targetType.
pub fn import_type(decl: &ImportDecl) -> &str {
    match decl.kind.as_deref() {
        Some(kind) => kind,
        None if decl.schema.is_some() => "data",
        None if decl.target_type.is_some() => "target",
        None => "",
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstallationTemplate {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub blueprint: Option<Value>,
    #[serde(default)]
    pub imports: Wiring,
    #[serde(default)]
    pub exports: Wiring,
    /// Landscaper's `importDataMappings`: child import name → a value whose Spiff references
    /// `(( name ))` name the template's imports.
    #[serde(default)]
    pub import_data_mappings: crate::doc::Map,
    /// Landscaper's `exportDataMappings`: data export name → a value whose Spiff references
    /// `(( name ))` name the child's exports (and `exports`, all of them).
    #[serde(default)]
    pub export_data_mappings: crate::doc::Map,
    /// Landscaper's `optimization` hints for its controller: accepted and not read (a render
    /// has no controller to tune).
    #[serde(default)]
    pub optimization: Option<Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wiring {
    #[serde(default)]
    pub data: Vec<DataRef>,
    #[serde(default)]
    pub targets: Vec<TargetRef>,
}

/// A subinstallation's target import (Landscaper's TargetImport: exactly one of `target`,
/// `targets`, `targetMap`, `targetMapRef`, `targetListRef`) or target export (`name`, `target`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TargetRef {
    #[serde(default)]
    pub name: String,
    /// A target of the parent's scope: a parent import, an element of one (`list[0]`,
    /// `map[key]`), or a sibling's target export.
    #[serde(default)]
    pub target: Option<String>,
    /// A list of such targets.
    #[serde(default)]
    pub targets: Option<Vec<String>>,
    /// A map of such targets.
    #[serde(default)]
    pub target_map: Option<BTreeMap<String, String>>,
    /// A targetMap import of the parent.
    #[serde(default)]
    pub target_map_ref: Option<String>,
    /// A targetList import of the parent.
    #[serde(default)]
    pub target_list_ref: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DataRef {
    pub name: String,
    pub data_ref: String,
}
