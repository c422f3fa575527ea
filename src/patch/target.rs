//! Patch targets as kustomize reads them: `group`, `version`, `kind`, `name`, `namespace` are
//! regular expressions anchored at both ends; `labelSelector` and `annotationSelector` use the
//! Kubernetes selector grammar. Compiled once per patch.

use crate::config::PatchTarget;
use crate::doc::Value;
use crate::krm;
use crate::selector::Selector;
use regex::Regex;

pub struct Target {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: Option<Selector>,
    annotations: Option<Selector>,
}

fn anchored(field: &str, pattern: &Option<String>) -> Result<Option<Regex>, String> {
    match pattern.as_deref().filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(pattern) => Regex::new(&format!("^(?:{pattern})$"))
            .map(Some)
            .map_err(|err| format!("target.{field} {pattern:?} is not a valid regular expression: {err}")),
    }
}

fn selector(field: &str, text: &Option<String>) -> Result<Option<Selector>, String> {
    match text.as_deref().filter(|t| !t.trim().is_empty()) {
        None => Ok(None),
        Some(text) => Selector::parse(text).map(Some).map_err(|err| format!("target.{field}: {err}")),
    }
}

impl Target {
    pub fn compile(spec: &PatchTarget) -> Result<Self, String> {
        Ok(Self {
            group: anchored("group", &spec.group)?,
            version: anchored("version", &spec.version)?,
            kind: anchored("kind", &spec.kind)?,
            name: anchored("name", &spec.name)?,
            namespace: anchored("namespace", &spec.namespace)?,
            labels: selector("labelSelector", &spec.label_selector)?,
            annotations: selector("annotationSelector", &spec.annotation_selector)?,
        })
    }

    pub fn matches(&self, item: &Value) -> bool {
        let (api_version, kind) = krm::type_of(item);
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let test = |regex: &Option<Regex>, text: &str| regex.as_ref().is_none_or(|r| r.is_match(text));
        let metadata = item.get("metadata");
        let map = |field: &str| metadata.and_then(|m| m.get(field)).and_then(Value::as_object);
        test(&self.kind, kind)
            && test(&self.name, krm::name_of(item))
            && test(&self.namespace, krm::namespace_of(item))
            && test(&self.group, group)
            && test(&self.version, version)
            && self.labels.as_ref().is_none_or(|s| s.matches(map("labels")))
            && self.annotations.as_ref().is_none_or(|s| s.matches(map("annotations")))
    }
}
