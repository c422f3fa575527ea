//! The variables of a render and the checks every substitution makes first (opted out, anything
//! to substitute), shared by the step ([`super`]) and Flux's substitution of an object's text
//! ([`super::text`]) without either using the other.

use super::envsubst::{clean_value, may_substitute};
use crate::doc::Value;
use crate::render::Source;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

pub(super) const DISABLE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";
pub(super) const NAME_PATTERN: &str = "^[_[:alpha:]][_[:alpha:][:digit:]]*$";

/// The variables of a render.
#[derive(Default)]
pub struct Variables {
    pub(super) values: BTreeMap<String, String>,
    pub(super) strict: bool,
    pub fingerprint: String,
    /// Where each variable came from, for `explain`.
    pub(super) sources: BTreeMap<String, Source>,
    /// Names looked up so far that are set, and that are not: noted once each (a lookup that
    /// finds the name already noted allocates nothing), for `explain`. Items are substituted
    /// on two threads, hence the locks.
    pub(super) referenced: Mutex<HashSet<String>>,
    pub(super) unset: Mutex<HashSet<String>>,
}

/// The post-build variables for `explain`.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub strict: bool,
    /// Every variable (by name), its value, its source, and whether a resource referenced it.
    pub variables: Vec<(String, String, Source, bool)>,
    /// Names resources referenced that no source sets: a default form gave their value, or
    /// (not strict) they read as empty, or (strict) they failed the render.
    pub unset: Vec<String>,
}

impl Variables {
    pub(super) fn note(&self, name: &str, found: bool) {
        let names = if found { &self.referenced } else { &self.unset };
        if let Ok(mut names) = names.lock() {
            if !names.contains(name) {
                names.insert(name.to_string());
            }
        }
    }

    /// Variables given directly (`flux-build`: one Flux Kustomization's post-build), their names
    /// checked and their values cleaned as Flux does.
    pub fn given(values: BTreeMap<String, String>, strict: bool) -> Result<Self, String> {
        if let Some(name) = values.keys().find(|name| !valid_name(name)) {
            return Err(format!("'{name}' var name is invalid, must match '{NAME_PATTERN}'"));
        }
        let values: BTreeMap<String, String> =
            values.into_iter().map(|(k, v)| (k, clean_value(&v).into_owned())).collect();
        Ok(Variables { values, strict, ..Default::default() })
    }

    pub fn report(&self) -> Report {
        let none = HashSet::new();
        let referenced = self.referenced.lock();
        let referenced = referenced.as_deref().unwrap_or(&none);
        let variables = self
            .values
            .iter()
            .map(|(name, value)| {
                let source = self.sources.get(name).cloned().unwrap_or_default();
                (name.clone(), value.clone(), source, referenced.contains(name))
            })
            .collect();
        let mut unset: Vec<String> = self.unset.lock().map(|unset| unset.iter().cloned().collect()).unwrap_or_default();
        unset.sort();
        Report { strict: self.strict, variables, unset }
    }
}

pub(super) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

pub(super) fn disabled(item: &Value) -> bool {
    let metadata = item.get("metadata");
    ["labels", "annotations"].iter().any(|field| {
        metadata.and_then(|m| m.get(*field)).and_then(|m| m.get(DISABLE_KEY)).and_then(Value::as_str)
            == Some("disabled")
    })
}

pub(super) fn contains_candidate(value: &Value) -> bool {
    match value {
        Value::String(s) => may_substitute(s),
        Value::Array(items) => items.iter().any(contains_candidate),
        Value::Object(map) => map.iter().any(|(k, v)| may_substitute(k) || contains_candidate(v)),
        _ => false,
    }
}
