//! KOTS's config context: what `ConfigOption` and its siblings read.
//!
//! Every name KOTS knows has an [`Entry`]: a `ConfigValues` entry, a Config item (its value and
//! its rendered default), or a repeat value (its `valuesByGroup` value as default). `ConfigOption`
//! is the entry's value when not empty, else its default, else `""`. An unknown name is `""`
//! too, as in KOTS; the render reports it as a warning so a typo is still seen.
//!
//! The functions are closures over one [`Shared`] state, built once per render, so compiled
//! templates can be cached across clones; the state also carries the clone being rendered (the
//! repeatable-group extension reads its instance's values) and collects what to warn about.

use crate::doc::{Map, Value};
use crate::template::go::args::Func;
use crate::template::go::{fail, Args, Arity, Cost, FuncMap, Function, GoValue, TemplateError};
use base64::Engine as _;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

/// One name's stored value.
#[derive(Clone, Debug, Default)]
pub struct Entry {
    pub value: String,
    pub default: String,
    pub filename: String,
}

impl Entry {
    /// What `ConfigOption` gives.
    pub fn resolved(&self) -> &str {
        if self.value.is_empty() {
            &self.default
        } else {
            &self.value
        }
    }
}

/// The clone being rendered, for the extensions that read it.
#[derive(Clone, Debug, Default)]
pub struct CloneScope {
    /// A repeatable item's clone: (item name, value name).
    pub item: Option<(String, String)>,
    /// A repeatable group's instance: (instance name, its item values).
    pub group: Option<(String, Map)>,
}

/// What the functions read and what they noticed.
#[derive(Debug, Default)]
pub struct State {
    pub entries: HashMap<String, Entry>,
    pub clone: CloneScope,
    /// Problems KOTS renders past silently (an unknown name, data that is not base64); the step
    /// turns them into warnings.
    pub noticed: Noticed,
}

/// Warnings, each once, the first [`Noticed::SHOWN`] kept and the rest counted: a loop reading
/// ten thousand undeclared names gives a readable report, not ten thousand lines.
#[derive(Debug, Default)]
pub struct Noticed {
    pub messages: Vec<String>,
    seen: HashSet<String>,
    pub more: usize,
}

impl Noticed {
    pub const SHOWN: usize = 20;

    pub fn add(&mut self, message: String) {
        if self.seen.contains(&message) {
            return;
        }
        if self.messages.len() < Self::SHOWN {
            self.messages.push(message.clone());
        } else {
            self.more += 1;
        }
        self.seen.insert(message);
    }

    /// Takes in another collection's warnings.
    pub fn absorb(&mut self, other: Noticed) {
        for message in other.messages {
            self.add(message);
        }
        self.more += other.more;
    }
}

impl State {
    fn notice(&mut self, message: String) {
        self.noticed.add(message);
    }

    /// The value of `name` for the clone being rendered, and whether anything declares it.
    fn option(&self, name: &str) -> Option<String> {
        if let Some((_, values)) = &self.clone.group {
            if let Some(value) = values.get(name) {
                return Some(text(value));
            }
        }
        self.entries.get(name).map(|entry| entry.resolved().to_string())
    }
}

/// The state shared by a render's functions.
#[derive(Clone, Debug, Default)]
pub struct Shared(Arc<Mutex<State>>);

impl Shared {
    /// The state; a function that panicked while holding it cannot leave it half-written (every
    /// update is one push or insert), so a poisoned lock is taken over.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A scalar as KOTS's string-typed values hold it.
pub fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn string(s: impl Into<Arc<str>>) -> GoValue {
    GoValue::String(s.into())
}

fn absent(name: &str) -> String {
    format!("no config item or value is named {name:?} (KOTS renders it as empty)")
}

/// The config context's functions, reading `shared`.
pub fn functions(shared: &Shared) -> FuncMap {
    let mut funcs = FuncMap::new();
    let mut add = |name: &str, arity: Arity, body: Func| {
        funcs.insert(name.to_string(), Function { arity, cost: Cost::Call, body });
    };
    let s = shared.clone();
    add(
        "ConfigOption",
        Arity::Exact(1),
        Arc::new(move |args: &Args<'_>| {
            let name = args.string(0)?;
            let mut state = s.lock();
            Ok(string(state.option(name).unwrap_or_else(|| {
                state.notice(format!("ConfigOption {name:?}: {}", absent(name)));
                String::new()
            })))
        }),
    );
    let s = shared.clone();
    add(
        "ConfigOptionData",
        Arity::Exact(1),
        Arc::new(move |args: &Args<'_>| {
            let name = args.string(0)?;
            let mut state = s.lock();
            let Some(encoded) = state.option(name) else {
                state.notice(format!("ConfigOptionData {name:?}: {}", absent(name)));
                return Ok(string(""));
            };
            match base64::engine::general_purpose::STANDARD.decode(encoded.as_bytes()) {
                Ok(bytes) => Ok(string(String::from_utf8_lossy(&bytes).as_ref())),
                Err(err) => {
                    state.notice(format!(
                        "ConfigOptionData {name:?}: the value is not base64 ({}); KOTS renders it as empty",
                        err.to_string().trim_end_matches('.')
                    ));
                    Ok(string(""))
                }
            }
        }),
    );
    let s = shared.clone();
    add(
        "ConfigOptionFilename",
        Arity::Exact(1),
        Arc::new(move |args: &Args<'_>| {
            let name = args.string(0)?;
            let mut state = s.lock();
            match state.entries.get(name) {
                Some(entry) => Ok(string(entry.filename.as_str())),
                None => {
                    state.notice(format!("ConfigOptionFilename {name:?}: {}", absent(name)));
                    Ok(string(""))
                }
            }
        }),
    );
    for (name, equal) in [("ConfigOptionEquals", true), ("ConfigOptionNotEquals", false)] {
        let s = shared.clone();
        add(
            name,
            Arity::Exact(2),
            Arc::new(move |args: &Args<'_>| {
                let (option, expected) = (args.string(0)?, args.string(1)?);
                let mut state = s.lock();
                // KOTS: false for a name nothing declares, whichever the comparison.
                Ok(GoValue::Bool(match state.option(option) {
                    Some(value) => (value == expected) == equal,
                    None => {
                        state.notice(format!("{name} {option:?}: {} and the comparison is false", absent(option)));
                        false
                    }
                }))
            }),
        );
    }
    add("ConfigOptionName", Arity::Exact(1), Arc::new(|args: &Args<'_>| Ok(string(args.string(0)?))));
    add(
        "ConfigOptionIndex",
        Arity::Exact(1),
        Arc::new(|args: &Args<'_>| -> Result<GoValue, TemplateError> {
            args.string(0)?;
            Ok(string(""))
        }),
    );
    let s = shared.clone();
    add(
        "RepeatableConfigOptionName",
        Arity::Exact(1),
        Arc::new(move |args: &Args<'_>| {
            let item = args.string(0)?;
            match &s.lock().clone.item {
                Some((name, value)) if name == item => Ok(string(value.as_str())),
                _ => {
                    Err(fail("RepeatableConfigOptionName", format!("{item:?} is only valid inside that item's clones")))
                }
            }
        }),
    );
    let s = shared.clone();
    add(
        "RepeatableConfigGroupName",
        Arity::AtLeast(0),
        Arc::new(move |args: &Args<'_>| match &s.lock().clone.group {
            Some((instance, _)) => Ok(string(instance.as_str())),
            None => Err(fail(
                "RepeatableConfigGroupName",
                format!("{:?} is only valid inside a repeatable group's clones", args.string(0).unwrap_or("")),
            )),
        }),
    );
    // No local registry is configured offline: KOTS's own results then.
    add(
        "HasLocalRegistry",
        Arity::Exact(0),
        Arc::new(|_: &Args<'_>| -> Result<GoValue, TemplateError> { Ok(GoValue::Bool(false)) }),
    );
    for name in ["LocalRegistryHost", "LocalRegistryNamespace", "LocalRegistryAddress"] {
        add(name, Arity::Exact(0), Arc::new(move |_: &Args<'_>| -> Result<GoValue, TemplateError> { Ok(string("")) }));
    }
    funcs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;
    use crate::template::go::compile;

    fn run(shared: &Shared, source: &str) -> Result<String, String> {
        Ok(compile(source, ("repl{{", "}}"), &functions(shared).into())?.execute(&GoValue::Nil, &Budget::default())?)
    }

    #[test]
    fn config_options() {
        let shared = Shared::default();
        {
            let mut state = shared.lock();
            let entry = |value: &str, default: &str| Entry {
                value: value.into(),
                default: default.into(),
                filename: "f.txt".into(),
            };
            state.entries.insert("a".into(), entry("", "fallback"));
            state.entries.insert("b".into(), entry("aGVsbG8=", "x"));
            state.entries.insert("c".into(), entry("not base64!", ""));
        }
        assert_eq!(run(&shared, r#"repl{{ ConfigOption "a" }}"#), Ok("fallback".into()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionData "b" }}"#), Ok("hello".into()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionFilename "b" }}"#), Ok("f.txt".into()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionEquals "a" "fallback" }}"#), Ok("true".into()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionNotEquals "a" "fallback" }}"#), Ok("false".into()));
        assert!(shared.lock().noticed.messages.is_empty());
        // Absent names and bad data: empty, false, and noticed.
        assert_eq!(run(&shared, r#"repl{{ ConfigOption "zz" }}"#), Ok(String::new()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionEquals "zz" "" }}"#), Ok("false".into()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionNotEquals "zz" "" }}"#), Ok("false".into()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionData "c" }}"#), Ok(String::new()));
        assert_eq!(run(&shared, r#"repl{{ ConfigOptionName "zz" }}"#), Ok("zz".into()));
        assert_eq!(shared.lock().noticed.messages.len(), 4);
        let err = run(&shared, r#"repl{{ ConfigOption "a" "b" }}"#).err().unwrap_or_default();
        assert!(err.contains("wrong number of args for ConfigOption: want 1 got 2"), "{err}");
    }

    #[test]
    fn clone_scopes() {
        let shared = Shared::default();
        shared.lock().clone = CloneScope {
            item: Some(("files".into(), "files-logo".into())),
            group: Some(("nginx-a".into(), serde_json::json!({"port": 443}).as_object().cloned().unwrap_or_default())),
        };
        assert_eq!(run(&shared, r#"repl{{ ConfigOption "port" }}"#), Ok("443".into()));
        assert_eq!(run(&shared, r#"repl{{ RepeatableConfigOptionName "files" }}"#), Ok("files-logo".into()));
        assert_eq!(run(&shared, r#"proxy-repl{{ RepeatableConfigGroupName "port" }}"#), Ok("proxy-nginx-a".into()));
    }
}
