//! What kustomize-controller does to the objects kustomize built, before it applies them:
//! post-build substitution (fluxcd/pkg `kustomize/kustomize_varsub.go`: on each object's YAML
//! text, [`subst::substitute_object`]), then its owner labels and the Kustomization's
//! `commonMetadata`.

use super::{owner_labels, Kustomization};
use crate::config::SourceKind;
use crate::diag::Diagnostic;
use crate::doc::Value;
use crate::krm::{name_of, namespace_of, Item};
use crate::limits::Budget;
use crate::subst;
use crate::values::data_of;
use std::collections::BTreeMap;

/// A Kustomization's post-build variables; `None` in [`variables`] when Flux would substitute
/// nothing (no `postBuild`, or no variables and the strategy is not `Always`).
pub struct Variables(subst::Variables);

/// The variables of `kustomization`: its `substituteFrom` ConfigMaps and Secrets, in order, found
/// among `objects` in the Kustomization's namespace (what the render gives and what Kustomizations
/// built before this one apply), then `substitute`. `strict` is the controller's
/// `StrictPostBuildSubstitutions` feature gate.
pub fn variables<'a>(
    kustomization: &Kustomization,
    objects: impl Iterator<Item = &'a Value> + Clone,
    strict: bool,
) -> Result<Option<Variables>, String> {
    let Some(post_build) = kustomization.object.get("spec").and_then(|spec| spec.get("postBuild")) else {
        return Ok(None);
    };
    let mut values = BTreeMap::new();
    let references = post_build.get("substituteFrom").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for reference in references {
        let text = |key: &str| reference.get(key).and_then(Value::as_str).unwrap_or_default();
        let (kind, name) = match text("kind") {
            "ConfigMap" => (SourceKind::ConfigMap, text("name")),
            "Secret" => (SourceKind::Secret, text("name")),
            // Flux skips a kind it does not know.
            _ => continue,
        };
        let optional = reference.get("optional").and_then(Value::as_bool).unwrap_or(false);
        let what = format!("{}/{name}", kind.as_str());
        let found = objects.clone().find(|object| {
            object.get("apiVersion").and_then(Value::as_str) == Some("v1")
                && object.get("kind").and_then(Value::as_str) == Some(kind.as_str())
                && name_of(object) == name
                && object_namespace(object) == kustomization.id.namespace
        });
        let Some(object) = found else {
            if optional {
                continue;
            }
            let plural = format!("{}s", kind.as_str().to_lowercase());
            return Err(format!(
                "substitute from '{what}' error: {plural} {name:?} not found in namespace {:?}: add it to the inputs, \
                 or set optional: true",
                kustomization.id.namespace
            ));
        };
        let data = data_of(object, kind, None).map_err(|err| format!("substitute from '{what}' error: {err}"))?;
        values.extend(data);
    }
    if let Some(map) = post_build.get("substitute").and_then(Value::as_object) {
        for (name, value) in map {
            let text = match value {
                Value::String(text) => text.clone(),
                other => return Err(format!("spec.postBuild.substitute.{name} is {other}, expected a string")),
            };
            values.insert(name.clone(), text);
        }
    }
    let always = post_build.get("substituteStrategy").and_then(Value::as_str) == Some("Always");
    if values.is_empty() && !always {
        return Ok(None);
    }
    subst::Variables::given(values, strict).map(|variables| Some(Variables(variables)))
}

fn object_namespace(object: &Value) -> &str {
    match namespace_of(object) {
        "" => super::DEFAULT_NAMESPACE,
        namespace => namespace,
    }
}

/// Substitutes, labels and annotates the objects one Kustomization built, as the controller does
/// before applying them. An error names the object, as Flux's `post build failed for …` does.
pub fn post_build(
    kustomization: &Kustomization,
    objects: &mut [Item],
    variables: Option<&Variables>,
    budget: &Budget,
) -> Vec<Diagnostic> {
    let mut results = Vec::new();
    if let Some(Variables(variables)) = variables {
        for item in objects.iter_mut() {
            match subst::substitute_object(variables, budget, item) {
                Ok(Some(substituted)) => item.change(|value| *value = substituted),
                Ok(None) => {}
                Err(message) => {
                    let message = format!("post build failed for '{}/{}': {message}", item.type_of().1, name_of(item));
                    results.push(kustomization.error(message));
                }
            }
        }
    }
    let metadata = kustomization.object.get("spec").and_then(|spec| spec.get("commonMetadata"));
    let common = |field: &str| -> Vec<(String, String)> {
        let map = metadata.and_then(|m| m.get(field)).and_then(Value::as_object);
        map.into_iter()
            .flatten()
            .filter_map(|(key, value)| value.as_str().map(|value| (key.clone(), value.to_string())))
            .collect()
    };
    let mut labels: Vec<(String, String)> = owner_labels(&kustomization.id).into();
    labels.extend(common("labels"));
    let annotations = common("annotations");
    for item in objects.iter_mut() {
        item.change(|value| {
            set_all(value, "labels", &labels);
            set_all(value, "annotations", &annotations);
        });
    }
    results
}

fn set_all(object: &mut Value, field: &str, entries: &[(String, String)]) {
    if entries.is_empty() {
        return;
    }
    let Some(object) = object.as_object_mut() else { return };
    let metadata = object.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
    let Some(metadata) = metadata.as_object_mut() else { return };
    let map = metadata.entry(field).or_insert_with(|| Value::Object(Default::default()));
    if !map.is_object() {
        *map = Value::Object(Default::default());
    }
    if let Some(map) = map.as_object_mut() {
        for (key, value) in entries {
            map.insert(key.clone(), Value::String(value.clone()));
        }
    }
}

/// Replaces every value of each Secret's `data` and `stringData` with `<redacted>`.
pub fn redact_secrets(objects: &mut [Item]) {
    for item in objects.iter_mut().filter(|item| item.type_of() == ("v1", "Secret")) {
        item.change(crate::krm::redact_secret_values);
    }
}
