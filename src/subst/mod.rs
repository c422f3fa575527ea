//! The substitution step (compat: Flux kustomize-controller post-build,
//! fluxcd/pkg/kustomize/kustomize_varsub.go): variables from `substituteFrom` in order, then
//! `substitute`; names validated, newlines removed; every resource not opted out is substituted.
//!
//! Flux substitutes a resource's YAML text and parses it again. We substitute string values in
//! place and give a changed *plain* scalar the type its new text reads as (YAML 1.1, as
//! sigs.k8s.io/yaml reads it), while quoted and block scalars stay strings: the same result
//! without printing and re-reading every resource. Which scalars were quoted comes from the source
//! text ([`crate::doc::quoted_template_scalars`]).

pub mod envsubst;
mod text;
mod variables;

pub use text::{as_go_json, read_as_yaml_v2, substitute_object};
use variables::{contains_candidate, disabled, valid_name, NAME_PATTERN};
pub use variables::{Report, Variables};

use crate::config::Spec;
use crate::diag::{Diagnostic, Kind};
use crate::doc::{plainly_text, read_yaml_documents, FieldPath, Map, Value};
use crate::limits::Budget;
use crate::render::Source;
use crate::values::{data_of, find};
use envsubst::{clean_value, may_substitute, substitute};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Gathers the variables; `Ok(None)` when the config asks for no substitution.
pub fn prepare(
    spec: &Spec,
    config_item: &Value,
    items: &[crate::krm::Item],
) -> Result<Option<Variables>, Vec<Diagnostic>> {
    if spec.substitute.is_empty() && spec.substitute_from.is_empty() {
        return Ok(None);
    }
    let error =
        |message: String, field: FieldPath| Diagnostic::error(Kind::Config, message).at(field).about(config_item);
    let mut errors = Vec::new();
    let mut values = BTreeMap::new();
    let mut sources = BTreeMap::new();
    for (i, reference) in spec.substitute_from.iter().enumerate() {
        let field = FieldPath::root().key("spec").key("substituteFrom").index(i);
        let what = format!("{}/{}", reference.kind.as_str(), reference.name);
        match find(items, reference.kind, &reference.name, None) {
            Ok(Some(object)) => match data_of(object, reference.kind, None) {
                Ok(data) => {
                    let source = Source {
                        label: format!("substituteFrom {} {}", reference.kind.as_str(), reference.name),
                        secret: reference.kind == crate::config::SourceKind::Secret,
                    };
                    for (name, value) in data {
                        sources.insert(name.clone(), source.clone());
                        values.insert(name, value);
                    }
                }
                Err(message) => errors.push(error(format!("substitute from '{what}' error: {message}"), field)),
            },
            Ok(None) if reference.optional => {}
            Ok(None) => {
                let plural = format!("{}s", reference.kind.as_str().to_lowercase());
                let message = format!(
                    "substitute from '{what}' error: {plural} {:?} not found; add it to the package or set optional: true",
                    reference.name
                );
                errors.push(error(message, field));
            }
            Err(message) => errors.push(error(format!("substitute from '{what}' error: {message}"), field)),
        }
    }
    for (name, value) in &spec.substitute {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            _ => {
                let field = FieldPath::root().key("spec").key("substitute").key(name.as_str());
                errors.push(error(format!("variable {name:?} must be a string"), field));
                continue;
            }
        };
        values.insert(name.clone(), text);
        sources.insert(name.clone(), Source { label: "substitute".into(), secret: false });
    }
    for name in values.keys().filter(|name| !valid_name(name)) {
        let field = FieldPath::root().key("spec").key("substitute");
        errors.push(error(format!("'{name}' var name is invalid, must match '{NAME_PATTERN}'"), field));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let values: BTreeMap<String, String> = values.into_iter().map(|(k, v)| (k, clean_value(&v).into_owned())).collect();
    let strict = spec.strict.unwrap_or(true);
    let fingerprint = format!("{strict}{}", serde_json::to_string(&values).unwrap_or_default());
    Ok(Some(Variables { values, strict, fingerprint, sources, ..Default::default() }))
}

/// The value a plain scalar's new text reads as: YAML 1.1 booleans (as sigs.k8s.io/yaml reads
/// them), then anything our YAML reader makes of it; text that is not one YAML value is an error
/// (Flux would fail to parse the resource back).
fn retype(text: &str) -> Result<Value, String> {
    const TRUE: [&str; 8] = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON"];
    const FALSE: [&str; 8] = ["n", "N", "no", "No", "NO", "off", "Off", "OFF"];
    if TRUE.contains(&text) {
        return Ok(Value::Bool(true));
    }
    if FALSE.contains(&text) {
        return Ok(Value::Bool(false));
    }
    if plainly_text(text) {
        return Ok(Value::String(text.to_string()));
    }
    match read_yaml_documents(text) {
        Ok(mut documents) if documents.len() <= 1 => Ok(documents.pop().unwrap_or(Value::Null)),
        Ok(_) => Err(format!("substituted text {text:?} is several YAML documents")),
        Err(err) => Err(format!("substituted text {text:?} is not valid YAML: {}", err.message)),
    }
}

struct Walk<'a> {
    variables: &'a Variables,
    budget: &'a Budget,
    /// Whether the scalar at a pointer was quoted in the source; asked only when it matters.
    quoted: &'a mut dyn FnMut(&str) -> bool,
}

impl Walk<'_> {
    fn text(&mut self, text: &str) -> Result<String, String> {
        let variables = self.variables;
        let lookup = move |name: &str| {
            let found = variables.values.get(name).map(String::as_str);
            variables.note(name, found.is_some());
            found
        };
        substitute(text, &lookup, self.variables.strict, self.budget)
            .map_err(|err| format!("variable substitution failed: {err}"))
    }

    /// Substitutes inside `value` (at JSON pointer `pointer`; an item of a list when
    /// `in_list`); `Err((message, pointer))`.
    fn value(&mut self, value: &mut Value, pointer: &mut String, in_list: bool) -> Result<(), (String, String)> {
        match value {
            Value::String(text) if may_substitute(text) => {
                let new = self.text(text).map_err(|m| (m, pointer.clone()))?;
                if new != *text {
                    // The style matters only when the new text reads as something other than a
                    // string; most substitutions never ask.
                    *value = match retype(&new) {
                        Ok(Value::String(read)) if read == new => Value::String(new),
                        _ if (self.quoted)(pointer) => Value::String(new),
                        // In Flux's text, `key: k: v` or `key: - a` does not parse; as a list
                        // item (`- k: v`) it is a mapping. Flow collections (`[a]`, `{k: v}`)
                        // parse anywhere.
                        Ok(Value::Object(_) | Value::Array(_))
                            if !in_list && !new.trim_start().starts_with(['[', '{']) =>
                        {
                            let message = format!(
                                "substituted text {new:?} breaks the YAML structure: Flux substitutes the resource's \
                                 text, where `key: {new}` does not parse (mapping values are not allowed in this \
                                 context); quote the field (\"${{…}}\") or the variable's value to keep it a string"
                            );
                            return Err((message, pointer.clone()));
                        }
                        // A plain scalar reads as its new text does: `"9797"` is the string 9797,
                        // `1e3` the number 1000 (through Go's JSON, as in Flux).
                        retyped => {
                            let mut retyped = retyped.map_err(|m| (m, pointer.clone()))?;
                            text::as_go_json(&mut retyped);
                            retyped
                        }
                    };
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = pointer.len();
                    // Writing to a String cannot fail.
                    let _ = write!(pointer, "/{i}");
                    self.value(item, pointer, true)?;
                    pointer.truncate(len);
                }
            }
            Value::Object(map) => {
                let needs_keys = map.keys().any(|k| may_substitute(k));
                if needs_keys {
                    let mut renamed = Map::new();
                    for (key, item) in std::mem::take(map) {
                        let key =
                            if may_substitute(&key) { self.text(&key).map_err(|m| (m, pointer.clone()))? } else { key };
                        renamed.insert(key, item);
                    }
                    *map = renamed;
                }
                for (key, item) in map.iter_mut() {
                    if matches!(item, Value::Null | Value::Bool(_) | Value::Number(_)) {
                        continue;
                    }
                    let len = pointer.len();
                    pointer.push('/');
                    match key.contains(['~', '/']) {
                        true => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
                        false => pointer.push_str(key),
                    }
                    self.value(item, pointer, false)?;
                    pointer.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// What substituting did: its problems.
pub struct Applied {
    pub results: Vec<Diagnostic>,
}

/// Whether substitution changes this item: it is not opted out and some string holds `${` or
/// `$$` (every such string changes, but for a variable whose value is its own reference). The
/// caller marks an input item so changed, since its `${…}` are gone after this run.
pub fn touches(item: &Value) -> bool {
    !disabled(item) && contains_candidate(item)
}

/// Whether substitution changes what patches select an item by (`apiVersion`, `kind`,
/// `metadata`): a patch's target may name the item as it was before.
pub fn touches_header(item: &Value) -> bool {
    !disabled(item)
        && ["apiVersion", "kind", "metadata"].iter().any(|key| item.get(*key).is_some_and(contains_candidate))
}

/// Substitutes every item handed over, charging the render's `budget`; `quoted(i, pointer)` says
/// whether item i's scalar at `pointer` was quoted in its source.
pub fn apply(
    variables: &Variables,
    budget: &Budget,
    items: &mut [&mut Value],
    quoted: &mut dyn FnMut(usize, &str) -> bool,
) -> Applied {
    let mut results = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        if disabled(item) || !contains_candidate(item) {
            continue;
        }
        let mut quoted_here = |pointer: &str| quoted(i, pointer);
        let mut walk = Walk { variables, budget, quoted: &mut quoted_here };
        // In place: an error fails the render, which then writes its input unchanged.
        match walk.value(item, &mut String::new(), false) {
            Ok(()) => {}
            Err((message, pointer)) => {
                let field = pointer.split('/').skip(1).fold(FieldPath::root(), |path, token| {
                    let token = token.replace("~1", "/").replace("~0", "~");
                    match token.parse::<usize>() {
                        Ok(index) => path.index(index),
                        Err(_) => path.key(token),
                    }
                });
                results.push(Diagnostic::error(Kind::Render, message).about(item).at(field));
            }
        }
    }
    Applied { results }
}

#[cfg(test)]
mod tests {
    use super::variables::DISABLE_KEY;
    use super::*;
    use serde_json::json;

    fn variables(values: &[(&str, &str)], strict: bool) -> Variables {
        Variables {
            values: values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            strict,
            ..Default::default()
        }
    }

    #[test]
    fn plain_scalars_take_their_new_type_quoted_ones_stay_strings() {
        let vars = variables(&[("n", "3"), ("port", "8080"), ("flag", "on"), ("name", "web")], true);
        let mut item = json!({"spec": {"replicas": "${n}", "env": [{"name": "PORT", "value": "${port}"}],
                                        "enabled": "${flag}", "label": "app-${name}"}});
        let applied =
            apply(&vars, &Budget::default(), &mut [&mut item], &mut |_, pointer| pointer == "/spec/env/0/value");
        assert!(applied.results.is_empty());
        assert_eq!(
            item,
            json!({"spec": {"replicas": 3, "env": [{"name": "PORT", "value": "8080"}], "enabled": true, "label": "app-web"}})
        );
    }

    #[test]
    fn opt_out_and_strict_errors() {
        let vars = variables(&[], true);
        let mut off = json!({"metadata": {"labels": {DISABLE_KEY: "disabled"}}, "data": {"x": "${missing}"}});
        let mut on = json!({"metadata": {"name": "a"}, "data": {"x": "${missing}"}});
        let applied = apply(&vars, &Budget::default(), &mut [&mut off, &mut on], &mut |_, _| false);
        assert_eq!(applied.results.len(), 1);
        assert_eq!(
            applied.results[0].message,
            "variable substitution failed: variable not set (strict mode): \"missing\""
        );
        assert_eq!(applied.results[0].field.as_ref().map(|f| f.to_string()), Some("data.x".to_string()));
    }

    /// Every text the shortcut takes for a string, the YAML reader reads as that string: the
    /// words readers give meaning to in every case spelling, and random texts of the shortcut's
    /// alphabet.
    #[test]
    fn plainly_text_is_what_the_reader_reads() {
        let words = ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "inf", "nan", "infinity", "e3"];
        let mut texts: Vec<String> = Vec::new();
        for word in words {
            let n = word.len();
            for mask in 0..(1u32 << n) {
                let spelled: String = word
                    .chars()
                    .enumerate()
                    .map(|(i, c)| if mask & (1 << i) != 0 { c.to_ascii_uppercase() } else { c })
                    .collect();
                texts.push(spelled);
            }
        }
        let alphabet: Vec<char> = "aeEnNoOfFyYtTlLsxX01289-_./".chars().collect();
        let mut rng = crate::krm::differential::generate::Rng(19);
        for _ in 0..20_000 {
            let length = 1 + rng.below(16);
            texts.push((0..length).map(|_| *rng.pick(&alphabet)).collect());
        }
        let mut taken = 0;
        for text in texts.iter().filter(|text| plainly_text(text)) {
            taken += 1;
            let read = read_yaml_documents(text).ok();
            assert_eq!(read, Some(vec![Value::String(text.clone())]), "{text:?}");
        }
        assert!(taken > 5_000, "{taken}");
    }

    #[test]
    fn escapes_and_opt_outs_decide_what_is_touched() {
        let vars = variables(&[], false);
        let mut item = json!({"data": {"x": "$${kept}"}});
        assert!(touches(&item) && !touches_header(&item));
        apply(&vars, &Budget::default(), &mut [&mut item], &mut |_, _| false);
        assert_eq!(item, json!({"data": {"x": "${kept}"}}));
        let named = json!({"metadata": {"name": "${app}"}});
        assert!(touches(&named) && touches_header(&named));
        let off = json!({"metadata": {"name": "${app}", "labels": {DISABLE_KEY: "disabled"}}});
        assert!(!touches(&off) && !touches_header(&off));
        assert!(!touches(&json!({"data": {"x": "$v and $"}})));
    }

    #[test]
    fn referenced_and_unset_names_are_noted_for_explain() {
        let vars = variables(&[("used", "a"), ("idle", "b")], false);
        let mut item = json!({"data": {"x": "${used}-${missing:=d}", "y": "${used}"}});
        apply(&vars, &Budget::default(), &mut [&mut item], &mut |_, _| false);
        assert_eq!(item, json!({"data": {"x": "a-d", "y": "a"}}));
        let report = vars.report();
        let referenced: Vec<(&str, bool)> = report.variables.iter().map(|v| (v.0.as_str(), v.3)).collect();
        assert_eq!(referenced, vec![("idle", false), ("used", true)]);
        assert_eq!(report.unset, vec!["missing".to_string()]);
    }
}
