//! KOTS templates inside resources (compat: KOTS): Go `text/template` with KOTS's delimiters and
//! functions, and the repeat placeholders.
//!
//! KOTS renders a file's *text* twice, first with the delimiters `{{repl` / `}}`, then with
//! `repl{{` / `}}`, and parses the YAML afterwards. We hold parsed items, so each string holding a
//! template is rendered (both passes, as KOTS runs them) and, when it was a plain scalar in the
//! source, read back as YAML the way KOTS's text would read: `port: repl{{ … }}` becomes a
//! number, `annotations: repl{{ … | nindent 8 }}` a mapping. Quoted scalars stay strings.
//!
//! Repeat placeholders (`repl[[ .files ]]`, `[[repl .files ]]`) are Go templates too, over
//! `{<item name>: <value name>}`; [`Engine::placeholders`] runs them on the strings of a clone
//! that mention the item, before the templates, as KOTS does.
//!
//! Each distinct template text is compiled once per render; the functions read the render's
//! [`context::Shared`] state, so a compiled template serves every clone whose text is the same
//! (a repeatable group's; an item's clones differ once their placeholders are replaced).

pub mod context;
pub mod statics;

use crate::doc::{pointer_segment, read_yaml_documents, FieldPath, Map, Value};
use crate::limits::{Budget, MAX_DEPTH};
use crate::template::go::{self, Compiled, FuncMap, GoValue};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

const FIRST: (&str, &str) = ("{{repl", "}}");
const SECOND: (&str, &str) = ("repl{{", "}}");
const PLACEHOLDER_FIRST: (&str, &str) = ("[[repl", "]]");
const PLACEHOLDER_SECOND: (&str, &str) = ("repl[[", "]]");

/// Whether a string holds a KOTS template (the cheap test before rendering).
pub fn has_template(text: &str) -> bool {
    text.contains("repl{{") || text.contains("{{repl")
}

/// Whether a string holds a repeat placeholder.
pub fn has_placeholder(text: &str) -> bool {
    text.contains("repl[[") || text.contains("[[repl")
}

/// The start of a long text, for messages.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// One render's KOTS templates: the functions and the compiled texts.
pub struct Engine {
    funcs: FuncMap,
    placeholder_funcs: FuncMap,
    pub shared: context::Shared,
    /// Per pass (the two template passes, the two placeholder passes): text → compiled.
    compiled: [HashMap<String, Rc<Compiled>>; 4],
}

impl Engine {
    /// `statics`: the static context (Sprig and KOTS's own); the config context goes over it.
    /// Every function call is charged a step of `budget`.
    pub fn new(mut statics: FuncMap, budget: &Arc<Budget>) -> Self {
        let shared = context::Shared::default();
        statics.extend(context::functions(&shared));
        Self {
            funcs: go::charged(statics, budget),
            placeholder_funcs: FuncMap::new(),
            shared,
            compiled: Default::default(),
        }
    }

    fn compiled(&mut self, pass: u8, text: &str) -> Result<Rc<Compiled>, String> {
        let cache = usize::from(pass);
        if let Some(compiled) = self.compiled[cache].get(text) {
            return Ok(compiled.clone());
        }
        let (delims, funcs) = match pass {
            0 => (FIRST, &self.funcs),
            1 => (SECOND, &self.funcs),
            2 => (PLACEHOLDER_FIRST, &self.placeholder_funcs),
            _ => (PLACEHOLDER_SECOND, &self.placeholder_funcs),
        };
        let compiled = Rc::new(go::compile(text, delims, funcs)?);
        self.compiled[cache].insert(text.to_string(), compiled.clone());
        Ok(compiled)
    }

    /// Go's wording for an unknown function, with the nearest known name.
    fn explain(&self, message: String) -> String {
        let Some(name) = message.strip_prefix("undefined function: ") else { return message };
        let nearest = self
            .funcs
            .keys()
            .map(|known| (strsim::jaro_winkler(known, name), known))
            .filter(|(score, _)| *score > 0.85)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, known)| format!(" (did you mean {known}?)"))
            .unwrap_or_default();
        format!("function {name:?} not defined{nearest}")
    }

    /// Renders both passes over one string.
    pub fn render_text(&mut self, text: &str, budget: &Budget) -> Result<String, String> {
        self.passes(text, [0, 1], &GoValue::Nil, budget).map_err(|m| format!("template {}: {m}", excerpt(text)))
    }

    /// Replaces a clone's placeholders in one string: both placeholder passes over
    /// `{<item>: <value name>}` (and `{item: …}`, this function's older spelling).
    pub fn placeholders(&mut self, text: &str, data: &GoValue, budget: &Budget) -> Result<String, String> {
        self.passes(text, [2, 3], data, budget).map_err(|m| format!("placeholder in {}: {m}", excerpt(text)))
    }

    /// Two passes, each run only when its opening delimiter occurs in what the last one gave.
    fn passes(&mut self, text: &str, passes: [u8; 2], data: &GoValue, budget: &Budget) -> Result<String, String> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for pass in passes {
            let open = [FIRST.0, SECOND.0, PLACEHOLDER_FIRST.0, PLACEHOLDER_SECOND.0][usize::from(pass)];
            if out.contains(open) {
                budget.charge_steps(1).map_err(|e| e.to_string())?;
                let rendered =
                    self.compiled(pass, &out).and_then(|c| c.execute(data, budget)).map_err(|m| self.explain(m))?;
                out = std::borrow::Cow::Owned(rendered);
            }
        }
        Ok(out.into_owned())
    }
}

/// The data a clone's placeholders read.
pub fn placeholder_data(item: &str, value_name: &str) -> GoValue {
    let mut map = Map::new();
    map.insert("item".into(), Value::String(value_name.into()));
    map.insert(item.into(), Value::String(value_name.into()));
    go::map_to_go(&map)
}

/// Which mapping keys a clone's placeholders rename: a whole-resource copy's, or (a `yamlPath`
/// element's, as KOTS does) all but the element's own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    All,
    BelowTop,
}

/// Runs a clone's placeholders on every string (and key, see [`Keys`]) that mentions the item.
/// Returns the keys it renamed, as (new pointer, pointer before), so a renamed field's source
/// style can still be found.
pub fn replace_placeholders(
    value: &mut Value,
    item: &str,
    data: &GoValue,
    keys: Keys,
    engine: &mut Engine,
    budget: &Budget,
) -> Result<Vec<(String, String)>, String> {
    let mentions = |s: &str| has_placeholder(s) && (s.contains(item) || s.contains(".item"));
    let mut renames = Vec::new();
    let mut stack = vec![(value, String::new(), 0usize)];
    while let Some((value, pointer, depth)) = stack.pop() {
        match value {
            Value::String(s) if mentions(s) => *s = engine.placeholders(s, data, budget)?,
            Value::Array(items) => {
                stack.extend(items.iter_mut().enumerate().map(|(i, v)| (v, format!("{pointer}/{i}"), depth + 1)));
            }
            Value::Object(map) => {
                let rename = keys == Keys::All || depth > 0;
                if rename && map.keys().any(|k| mentions(k)) {
                    let mut renamed = Map::new();
                    for (key, item) in std::mem::take(map) {
                        if !mentions(&key) {
                            renamed.insert(key, item);
                            continue;
                        }
                        let new = engine.placeholders(&key, data, budget)?;
                        if renamed.contains_key(&new) {
                            return Err(format!("two keys become {new:?} once the placeholders are replaced"));
                        }
                        renames.push((
                            format!("{pointer}/{}", pointer_segment(&new)),
                            format!("{pointer}/{}", pointer_segment(&key)),
                        ));
                        renamed.insert(new, item);
                    }
                    *map = renamed;
                }
                stack.extend(map.iter_mut().map(|(k, v)| (v, format!("{pointer}/{}", pointer_segment(k)), depth + 1)));
            }
            _ => {}
        }
    }
    Ok(renames)
}

/// How a rendered string is read back.
pub struct Typing<'a> {
    /// Whether the scalar at this pointer was quoted (or a block) in the source.
    pub quoted: &'a mut dyn FnMut(&str) -> bool,
    /// Fields Kubernetes requires to be strings: a scalar result stays text there.
    pub must_stay_string: &'a dyn Fn(&str) -> bool,
}

/// Renders every template in a resource. On failure: the field and the message.
pub fn render_value(
    value: &mut Value,
    engine: &mut Engine,
    budget: &Budget,
    typing: &mut Typing,
) -> Result<(), (FieldPath, String)> {
    render_nested(value, engine, budget, typing, &mut String::new(), &mut FieldPath::root(), 0)
}

fn render_nested(
    value: &mut Value,
    engine: &mut Engine,
    budget: &Budget,
    typing: &mut Typing,
    pointer: &mut String,
    field: &mut FieldPath,
    depth: usize,
) -> Result<(), (FieldPath, String)> {
    if depth > MAX_DEPTH {
        let message = format!("the resource nests deeper than {MAX_DEPTH} levels: flatten it");
        return Err((field.clone(), message));
    }
    match value {
        Value::String(s) if has_template(s) => {
            let rendered = engine.render_text(s, budget).map_err(|m| (field.clone(), m))?;
            *value = if (typing.quoted)(pointer) {
                Value::String(rendered)
            } else {
                let read = read_rendered(&rendered).map_err(|m| (field.clone(), m))?;
                match read {
                    Value::Null | Value::Bool(_) | Value::Number(_) if (typing.must_stay_string)(pointer) => {
                        Value::String(rendered.trim().to_string())
                    }
                    read => read,
                }
            };
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                let mut inner = field.clone().index(i);
                render_nested(item, engine, budget, typing, pointer, &mut inner, depth + 1)?;
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            // Values first, under their keys as written, so the source's styles are found.
            for (key, item) in map.iter_mut() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&pointer_segment(key));
                let mut inner = field.clone().key(key.as_str());
                render_nested(item, engine, budget, typing, pointer, &mut inner, depth + 1)?;
                pointer.truncate(len);
            }
            if map.keys().any(|k| has_template(k)) {
                let mut renamed = Map::new();
                for (key, item) in std::mem::take(map) {
                    let new = if has_template(&key) {
                        engine.render_text(&key, budget).map_err(|m| (field.clone().key(key.as_str()), m))?
                    } else {
                        key.clone()
                    };
                    if renamed.contains_key(&new) {
                        let message =
                            format!("two keys of this mapping render to {new:?}: a mapping's keys must differ");
                        return Err((field.clone().key(key.as_str()), message));
                    }
                    renamed.insert(new, item);
                }
                *map = renamed;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A rendered plain scalar read as KOTS's YAML parse of the rendered text reads it: after a key,
/// with the lines that follow belonging to that key. The lines keep their indentation relative
/// to each other (the package file's absolute columns are not known here).
pub fn read_rendered(text: &str) -> Result<Value, String> {
    let simple = !text.contains('\n')
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.starts_with(['{', '[', '|', '>', '&', '*', '!', '%', '@', '`', '"', '\'', '#', '-', '?']);
    if simple {
        return Ok(if text.trim().is_empty() { Value::Null } else { crate::doc::parse_scalar(text.trim()) });
    }
    let mut lines = text.split('\n');
    let mut document = String::from("k: ");
    document.push_str(lines.next().unwrap_or_default());
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    for line in rest {
        document.push('\n');
        if !line.trim().is_empty() {
            document.push_str("  ");
            document.push_str(line.get(indent..).unwrap_or(line));
        }
    }
    document.push('\n');
    let parsed = read_yaml_documents(&document).map_err(|err| {
        format!(
            "the template's result {} does not read as YAML here ({}): quote the field to keep the result as text",
            excerpt(text),
            err.message
        )
    })?;
    Ok(parsed.into_iter().next().and_then(|mut d| d.as_object_mut().and_then(|m| m.remove("k"))).unwrap_or_default())
}

/// Whether a value holds template syntax anywhere (walked with a stack, not recursion).
pub fn contains_template(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) if has_template(s) => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                if map.keys().any(|k| has_template(k)) {
                    return true;
                }
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn engine() -> Engine {
        let engine = Engine::new(statics::functions(&statics::Statics::default()), &Arc::new(Budget::default()));
        engine
            .shared
            .lock()
            .entries
            .insert("n".into(), context::Entry { value: "3".into(), default: String::new(), filename: String::new() });
        engine
    }

    #[test]
    fn passes_and_typing() {
        let mut engine = engine();
        let budget = Budget::default();
        assert_eq!(engine.render_text(r#"a-repl{{ ConfigOption "n" }}"#, &budget), Ok("a-3".into()));
        assert_eq!(engine.render_text(r#"{{repl ConfigOption "n" }}-b"#, &budget), Ok("3-b".into()));
        // The first pass's output is rendered by the second.
        assert_eq!(engine.render_text(r#"{{repl print "repl{{" }} ConfigOption "n" }}"#, &budget), Ok("3".into()));
        let mut value = json!({"replicas": "repl{{ ConfigOption \"n\" }}", "label": "n-repl{{ ConfigOption \"n\" }}",
            "quoted": "repl{{ ConfigOption \"n\" }}", "metadata": {"x": "repl{{ ConfigOption \"n\" }}"},
            "ann": "repl{{ print \"\\n      a: 1\\n      b: 2\" }}"});
        let mut quoted = |p: &str| p == "/quoted";
        let must = |p: &str| p.starts_with("/metadata/");
        let mut typing = Typing { quoted: &mut quoted, must_stay_string: &must };
        assert_eq!(render_value(&mut value, &mut engine, &budget, &mut typing), Ok(()));
        assert_eq!(
            value,
            json!({"replicas": 3, "label": "n-3", "quoted": "3", "metadata": {"x": "3"}, "ann": {"a": 1, "b": 2}})
        );
    }

    #[test]
    fn rendered_text_reads_as_yaml() {
        assert_eq!(read_rendered("80"), Ok(json!(80)));
        assert_eq!(read_rendered(""), Ok(Value::Null));
        assert_eq!(read_rendered("|\n    a\n    b"), Ok(json!("a\nb\n")));
        assert_eq!(read_rendered("{\"a\":1}"), Ok(json!({"a": 1})));
        assert!(read_rendered("a: b").is_err());
    }

    #[test]
    fn placeholders() {
        let mut engine = engine();
        let budget = Budget::default();
        let data = placeholder_data("files", "files-logo");
        let mut value = json!({"repl[[ .files ]]": "x [[repl .files ]] repl[[ .other ]] files",
            "a": "repl[[ .nosuch ]]", "b": "repl[[ .item ]]"});
        assert_eq!(
            replace_placeholders(&mut value, "files", &data, Keys::All, &mut engine, &budget),
            Ok(vec![("/files-logo".to_string(), "/repl[[ .files ]]".to_string())])
        );
        assert_eq!(
            value,
            json!({"files-logo": "x files-logo <no value> files", "a": "repl[[ .nosuch ]]", "b": "files-logo"})
        );
    }

    #[test]
    fn unknown_functions_are_named() {
        let mut engine = engine();
        let err = engine.render_text(r#"repl{{ ConfigOptionz "n" }}"#, &Budget::default()).err().unwrap_or_default();
        assert!(err.contains(r#"function "ConfigOptionz" not defined (did you mean ConfigOption"#), "{err}");
    }
}
