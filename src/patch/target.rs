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

/// A problem with one field of a target: the field's name and the message.
pub type TargetError = (&'static str, String);

fn anchored(field: &'static str, pattern: &Option<String>) -> Result<Option<Regex>, TargetError> {
    match pattern.as_deref().filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(pattern) => Regex::new(&format!("^(?:{pattern})$")).map(Some).map_err(|err| {
            // The crate's message spans lines with a caret under our anchored copy of the pattern;
            // its last line says what is wrong.
            let text = err.to_string();
            let reason = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
            let reason = reason.trim().trim_start_matches("error: ");
            let glob = pattern.starts_with(['*', '?']) || pattern.contains("**") || pattern.contains("/*");
            let hint = if glob {
                format!("; it is a regular expression, not a glob: write {:?}", glob_to_regex(pattern))
            } else {
                String::new()
            };
            (field, format!("{pattern:?} is not a valid regular expression ({reason}){hint}"))
        }),
    }
}

/// `*-web` as the regular expression `.*-web`, for the hint.
fn glob_to_regex(glob: &str) -> String {
    let mut out = String::new();
    for c in glob.chars() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            c if !c.is_alphanumeric() && !matches!(c, '-' | '_' | '/') => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

fn selector(field: &'static str, text: &Option<String>) -> Result<Option<Selector>, TargetError> {
    match text.as_deref().filter(|t| !t.trim().is_empty()) {
        None => Ok(None),
        Some(text) => Selector::parse(text).map(Some).map_err(|err| (field, err)),
    }
}

impl Target {
    /// Compiles a target; an error names the target field it concerns.
    pub fn compile(spec: &PatchTarget) -> Result<Self, TargetError> {
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

    /// Whether the item matches. Like kustomize, the name and namespace match when either the
    /// item's current ones or those it had before the patches (`first_name`, `first_namespace`) do.
    pub fn matches(&self, item: &Value, first_name: &str, first_namespace: &str) -> bool {
        let (api_version, kind) = krm::type_of(item);
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let test = |regex: &Option<Regex>, text: &str| regex.as_ref().is_none_or(|r| r.is_match(text));
        let metadata = item.get("metadata");
        let map = |field: &str| metadata.and_then(|m| m.get(field)).and_then(Value::as_object);
        // The first identity is tested only where it differs: a regex run per item is the cost here.
        let either =
            |regex: &Option<Regex>, now: &str, first: &str| test(regex, now) || (first != now && test(regex, first));
        test(&self.kind, kind)
            && either(&self.name, krm::name_of(item), first_name)
            && either(&self.namespace, krm::namespace_of(item), first_namespace)
            && test(&self.group, group)
            && test(&self.version, version)
            && self.labels.as_ref().is_none_or(|s| s.matches(map("labels")))
            && self.annotations.as_ref().is_none_or(|s| s.matches(map("annotations")))
    }
}
