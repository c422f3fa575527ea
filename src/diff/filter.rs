//! `--include` and `--exclude`: which resources and which fields the report shows. A rule is
//! `kind=KIND`, `name=[NAMESPACE/]NAME` (both with `*` matching any text) or `path=PATH` (a
//! field path as the report prints it, `spec.replicas`, the rule covering the path and
//! everything under it). A resource is shown when it matches one of the `--include` kind or
//! name rules (or there are none) and none of the `--exclude` ones; a renamed resource matches
//! by its new or its old identity. A change inside a resource is shown when its path is at or
//! under one of the `--include` paths, or holds one (or there are none), and is at or under none
//! of the `--exclude` paths; map entries (and list entries with a name) added or removed
//! together are filtered one by one. `--include path=...` shows changes inside resources that
//! both sides hold: added and removed resources are left out then.

use super::{join, names, Change, Id, Report};
use crate::doc::Value;

#[derive(Clone, Debug, PartialEq)]
enum Rule {
    Kind(String),
    Name { namespace: Option<String>, name: String },
    Path(String),
}

impl Rule {
    fn parse(flag: &str, text: &str) -> Result<Rule, String> {
        let bad = || {
            format!(
                "{flag} {text:?}: give kind=KIND, name=[NAMESPACE/]NAME or path=FIELD.PATH (e.g. kind=Secret, \
                 name=shop/web-*, path=metadata.annotations)"
            )
        };
        let (key, value) = text.split_once('=').ok_or_else(bad)?;
        if value.is_empty() {
            return Err(bad());
        }
        match key {
            "kind" => Ok(Rule::Kind(value.to_string())),
            "name" => Ok(match value.split_once('/') {
                Some((namespace, name)) => Rule::Name { namespace: Some(namespace.into()), name: name.into() },
                None => Rule::Name { namespace: None, name: value.into() },
            }),
            "path" => Ok(Rule::Path(value.trim_matches('.').to_string())),
            _ => Err(bad()),
        }
    }

    fn matches(&self, id: &Id) -> bool {
        match self {
            Rule::Kind(kind) => glob(kind, &id.kind),
            Rule::Name { namespace, name } => {
                glob(name, &id.name) && namespace.as_ref().is_none_or(|ns| glob(ns, &id.namespace))
            }
            Rule::Path(_) => false,
        }
    }
}

/// `*` matches any text (none included); every other character itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == text;
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// `path` is `base` or below it (`spec.replicas` is under `spec`, `specs` is not).
fn under(path: &str, base: &str) -> bool {
    base.is_empty() || path == base || path.strip_prefix(base).is_some_and(|rest| rest.starts_with('.'))
}

/// The parsed `--include` and `--exclude` rules.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    include: Vec<Rule>,
    exclude: Vec<Rule>,
}

impl Filter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Filter, String> {
        Ok(Filter {
            include: include.iter().map(|text| Rule::parse("--include", text)).collect::<Result<_, _>>()?,
            exclude: exclude.iter().map(|text| Rule::parse("--exclude", text)).collect::<Result<_, _>>()?,
        })
    }

    fn paths(rules: &[Rule]) -> Vec<&str> {
        rules
            .iter()
            .filter_map(|rule| match rule {
                Rule::Path(path) => Some(path.as_str()),
                _ => None,
            })
            .collect()
    }

    fn shows_resource(&self, ids: &[&Id]) -> bool {
        let resource_rule = |rule: &&Rule| !matches!(rule, Rule::Path(_));
        let mut includes = self.include.iter().filter(resource_rule).peekable();
        let included = includes.peek().is_none() || includes.any(|rule| ids.iter().any(|id| rule.matches(id)));
        included && !self.exclude.iter().any(|rule| ids.iter().any(|id| rule.matches(id)))
    }

    fn shows_path(&self, path: &str, holding: bool) -> bool {
        let include = Self::paths(&self.include);
        let included =
            include.is_empty() || include.iter().any(|base| under(path, base) || (holding && under(base, path)));
        included && !Self::paths(&self.exclude).iter().any(|base| under(path, base))
    }

    /// A change as the rules show it, or nothing: entries added or removed together are kept
    /// one by one.
    fn shown(&self, path: &str, change: &Change) -> Option<Change> {
        let entries = |value: &Value| -> Option<Value> {
            match value {
                Value::Object(map) => {
                    let kept: serde_json::Map<String, Value> = map
                        .iter()
                        .filter(|(key, _)| self.shows_path(&join(path, key), true))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    (!kept.is_empty()).then_some(Value::Object(kept))
                }
                Value::Array(list) => match names(list) {
                    Some(list_names) => {
                        let kept: Vec<Value> = list
                            .iter()
                            .zip(list_names)
                            .filter(|(_, name)| self.shows_path(&join(path, name), true))
                            .map(|(v, _)| v.clone())
                            .collect();
                        (!kept.is_empty()).then_some(Value::Array(kept))
                    }
                    None => self.shows_path(path, true).then(|| value.clone()),
                },
                other => self.shows_path(path, true).then(|| other.clone()),
            }
        };
        match change {
            Change::Added(value) => entries(value).map(Change::Added),
            Change::Removed(value) => entries(value).map(Change::Removed),
            Change::Value { .. } => self.shows_path(path, true).then(|| change.clone()),
            Change::Order { .. } => self.shows_path(path, false).then(|| change.clone()),
        }
    }

    /// Leaves in `report` what the rules show, and counts the resources that differ and are no
    /// longer shown ([`Report::filtered_out`]).
    pub fn apply(&self, report: &mut Report) {
        if self.include.is_empty() && self.exclude.is_empty() {
            return;
        }
        let before = report.added.len() + report.removed.len() + report.changed.len();
        let whole_kept = Self::paths(&self.include).is_empty();
        report.added.retain(|whole| whole_kept && self.shows_resource(&[&whole.id]));
        report.removed.retain(|whole| whole_kept && self.shows_resource(&[&whole.id]));
        report.changed.retain_mut(|changed| {
            let mut ids = vec![&changed.id];
            if let Some((from, _)) = &changed.renamed_from {
                ids.push(from);
            }
            if !self.shows_resource(&ids) {
                return false;
            }
            changed.changes =
                changed.changes.iter().filter_map(|(path, c)| Some((path.clone(), self.shown(path, c)?))).collect();
            !changed.changes.is_empty() || (changed.renamed_from.is_some() && whole_kept)
        });
        report.filtered_out = before - (report.added.len() + report.removed.len() + report.changed.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_paths() {
        assert!(glob("web-*", "web-7f9c") && glob("*", "") && glob("a*c*e", "abcde") && !glob("a*c", "abcd"));
        assert!(glob("Secret", "Secret") && !glob("Secret", "Secrets"));
        assert!(under("spec.replicas", "spec") && !under("specs", "spec") && under("spec", "spec"));
        assert!(Filter::new(&["colour=red".into()], &[]).is_err());
        assert!(Filter::new(&[], &["kind=".into()]).is_err());
    }

    #[test]
    fn entries_added_together_are_filtered_one_by_one() {
        let filter = Filter::new(&[], &["path=metadata.annotations".into()]).unwrap_or_default();
        let added = serde_json::json!({"labels": {"a": "b"}, "annotations": {"c": "d"}});
        let shown = filter.shown("metadata", &Change::Added(added));
        assert_eq!(shown, Some(Change::Added(serde_json::json!({"labels": {"a": "b"}}))));
        let include = Filter::new(&["path=metadata.labels.a".into()], &[]).unwrap_or_default();
        let added = serde_json::json!({"labels": {"a": "b"}, "annotations": {"c": "d"}});
        let shown = include.shown("metadata", &Change::Added(added));
        assert_eq!(shown, Some(Change::Added(serde_json::json!({"labels": {"a": "b"}}))));
    }
}
