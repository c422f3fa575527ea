//! KOTS templates inside resources (compat: KOTS): Go `text/template` with KOTS's delimiters and
//! functions, and the repeat placeholders.
//!
//! KOTS renders a file's *text* twice, first with the delimiters `{{repl` / `}}`, then with
//! `repl{{` / `}}`, and parses the YAML afterwards; [`render_resource`] does the same with a
//! resource's text, so quotes, block scalars and templates that write YAML mean what they mean to
//! KOTS. Only when that fails are the resource's strings rendered one by one, to name the field
//! ([`first_failure`]).
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

use crate::doc::{read_yaml_documents, FieldPath, Map, Value};
use crate::limits::Budget;
use crate::template::go::{self, Compiled, FuncMap, Functions, GoValue};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;

const FIRST: (&str, &str) = ("{{repl", "}}");
const SECOND: (&str, &str) = ("repl{{", "}}");
const PLACEHOLDER_FIRST: (&str, &str) = ("[[repl", "]]");
const PLACEHOLDER_SECOND: (&str, &str) = ("repl[[", "]]");

/// Whether a string holds a KOTS template (the cheap test before rendering).
pub fn has_template(text: &str) -> bool {
    // Most strings hold no brace at all: one byte scan answers for them.
    memchr::memchr(b'{', text.as_bytes()).is_some() && (text.contains("repl{{") || text.contains("{{repl"))
}

/// Whether a string holds a repeat placeholder.
pub fn has_placeholder(text: &str) -> bool {
    memchr::memchr(b'[', text.as_bytes()).is_some() && (text.contains("repl[[") || text.contains("[[repl"))
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
    funcs: Functions,
    placeholder_funcs: Functions,
    pub shared: context::Shared,
    /// Per pass (the two template passes, the two placeholder passes): text → compiled.
    compiled: [HashMap<String, Rc<Compiled>>; 4],
    /// Template strings → whether the YAML writer writes them plain; the clones share them.
    plain: HashMap<String, bool>,
}

impl Engine {
    /// `statics`: the static context (Sprig and KOTS's own); the config context goes over it.
    pub fn new(mut statics: FuncMap) -> Self {
        let shared = context::Shared::default();
        statics.extend(context::functions(&shared));
        Self {
            funcs: statics.into(),
            placeholder_funcs: Functions::default(),
            shared,
            compiled: Default::default(),
            plain: HashMap::new(),
        }
    }

    /// `text` compiled for `pass`: from the cache, or compiled now and kept when `keep` (a
    /// string many clones share; a resource's whole text is compiled once and let go).
    fn compiled(&mut self, pass: u8, text: &str, keep: bool) -> Result<Rc<Compiled>, String> {
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
        if keep {
            self.compiled[cache].insert(text.to_string(), compiled.clone());
        }
        Ok(compiled)
    }

    /// Go's wording for an unknown function, with the nearest known name.
    fn explain(&self, message: String) -> String {
        let Some(name) = message.strip_prefix("undefined function: ") else { return message };
        let nearest = self
            .funcs
            .names()
            .map(|known| (strsim::jaro_winkler(known, name), known))
            .filter(|(score, _)| *score > 0.85)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, known)| format!(" (did you mean {known}?)"))
            .unwrap_or_default();
        format!("function {name:?} not defined{nearest}")
    }

    /// Renders both passes over one string.
    pub fn render_text(&mut self, text: &str, budget: &Budget) -> Result<String, String> {
        self.passes(text, [0, 1], &GoValue::Nil, budget, true).map_err(|m| format!("template {}: {m}", excerpt(text)))
    }

    /// Replaces a clone's placeholders in one string: both placeholder passes over
    /// `{<item>: <value name>}` (and `{item: …}`, this function's older spelling).
    pub fn placeholders(&mut self, text: &str, data: &GoValue, budget: &Budget) -> Result<String, String> {
        self.passes(text, [2, 3], data, budget, true).map_err(|m| format!("placeholder in {}: {m}", excerpt(text)))
    }

    /// Two passes, each run only when its opening delimiter occurs in what the last one gave.
    fn passes(
        &mut self,
        text: &str,
        passes: [u8; 2],
        data: &GoValue,
        budget: &Budget,
        keep: bool,
    ) -> Result<String, String> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for pass in passes {
            let open = [FIRST.0, SECOND.0, PLACEHOLDER_FIRST.0, PLACEHOLDER_SECOND.0][usize::from(pass)];
            if out.contains(open) {
                budget.charge_steps(1).map_err(|e| e.to_string())?;
                let rendered = self
                    .compiled(pass, &out, keep)
                    .and_then(|c| Ok(c.execute(data, budget)?))
                    .map_err(|m| self.explain(m))?;
                out = std::borrow::Cow::Owned(rendered);
            }
        }
        Ok(out.into_owned())
    }
}

/// Why a resource's text did not render.
pub enum TextFailure {
    /// A template failed; the message without a place (the caller finds the field).
    Template(String),
    /// The rendered text is not YAML.
    Yaml(String),
    /// The documents it renders to would pass the render's budget (the message names the flag).
    Budget(String),
}

/// What one generated resource costs besides its text: its value, its item and its annotations
/// (a template that writes `---` in a loop turns a few bytes into many resources).
pub const DOCUMENT_BYTES: usize = 2048;

/// How many documents `text` holds at most: one, plus one per line that starts with `---`.
fn documents_in(text: &str) -> usize {
    let separator =
        |line: &str| line.strip_prefix("---").is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
    1 + text.lines().filter(|line| separator(line)).count()
}

/// A resource's YAML text rendered as KOTS renders a manifest file: both passes over the whole
/// text, then read as YAML. So a block scalar's indentation, a folded scalar, a template that
/// writes more keys or list entries, and quotes all mean what they mean to KOTS. Returns the
/// documents the text renders to (a template may write `---`), empty ones left out.
pub fn render_resource(text: &str, engine: &mut Engine, budget: &Budget) -> Result<Vec<Value>, TextFailure> {
    let rendered = engine.passes(text, [0, 1], &GoValue::Nil, budget, false).map_err(TextFailure::Template)?;
    let count = documents_in(&rendered);
    budget
        .charge_steps(count as u64)
        .and_then(|()| budget.charge_output(count.saturating_mul(DOCUMENT_BYTES)))
        .map_err(|err| TextFailure::Budget(format!("the resource's text renders to {count} documents: {err}")))?;
    let documents = read_yaml_documents(&rendered).map_err(|err| {
        let place = match (err.line, err.column) {
            (Some(line), Some(column)) => {
                let text = rendered.lines().nth(line.saturating_sub(1) as usize).unwrap_or_default();
                format!(" at rendered line {line}, column {column} ({})", excerpt(text.trim()))
            }
            _ => String::new(),
        };
        TextFailure::Yaml(format!(
            "the resource's text does not read as YAML once its templates are rendered{place}: {}; a template \
             that writes YAML must write it at the indentation of where it stands",
            err.message
        ))
    })?;
    Ok(documents.into_iter().filter(|document| !document.is_null()).collect())
}

/// Renders the templates in a resource's mapping keys, in place. A copy's text is written before
/// it is rendered, and the YAML writer double-quotes such keys with backslash escapes, which the
/// template engine cannot read; a key's result is only ever a key.
pub fn render_keys(value: &mut Value, engine: &mut Engine, budget: &Budget) -> Result<(), (FieldPath, String)> {
    // Templated keys are rare: a read-only look spares the paths below for every other resource.
    if !has_templated_key(value) {
        return Ok(());
    }
    let mut stack = vec![(value, FieldPath::root())];
    while let Some((value, field)) = stack.pop() {
        match value {
            Value::Array(items) => {
                stack.extend(items.iter_mut().enumerate().map(|(i, v)| (v, field.clone().index(i))));
            }
            Value::Object(map) => {
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
                stack.extend(map.iter_mut().map(|(k, v)| (v, field.clone().key(k.as_str()))));
            }
            _ => {}
        }
    }
    Ok(())
}

fn has_templated_key(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().any(has_templated_key),
        Value::Object(map) => map.iter().any(|(key, item)| has_template(key) || has_templated_key(item)),
        _ => false,
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
pub fn replace_placeholders(
    value: &mut Value,
    item: &str,
    data: &GoValue,
    keys: Keys,
    engine: &mut Engine,
    budget: &Budget,
) -> Result<(), String> {
    let mentions = |s: &str| has_placeholder(s) && (s.contains(item) || s.contains(".item"));
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::String(s) if mentions(s) => *s = engine.placeholders(s, data, budget)?,
            Value::Array(items) => {
                stack.extend(items.iter_mut().map(|v| (v, depth + 1)));
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
                        renamed.insert(new, item);
                    }
                    *map = renamed;
                }
                stack.extend(map.values_mut().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A copy's templates rendered string by string, where that is sure to give what rendering its
/// written text ([`crate::doc::to_yaml_single_quoting`], then [`render_resource`]) gives: each
/// template string is on one line, and its result reads back from where the writer put it as
/// one scalar (plain: typed as YAML types it; single-quoted: the text itself). Strings repeated
/// across clones are then compiled once, not each clone's whole text. `None` when any result
/// might not (it spans lines, holds a quote, starts like YAML syntax…) or a template fails: the
/// caller renders the text, which also names the failure.
pub fn render_strings(value: &Value, engine: &mut Engine, budget: &Budget) -> Option<Vec<(String, Value)>> {
    let templates = template_strings(value);
    let mut rendered = Vec::with_capacity(templates.len());
    for (pointer, s) in templates {
        if s.chars().any(char::is_control) {
            return None;
        }
        let result = engine.render_text(s, budget).ok()?;
        let plain = match engine.plain.get(s) {
            Some(plain) => *plain,
            None => {
                let plain = crate::doc::writes_plain(s);
                engine.plain.insert(s.to_string(), plain);
                plain
            }
        };
        let read = if plain {
            let text = result.trim_matches(' ');
            if !reads_as_one_plain_scalar(text) {
                return None;
            }
            if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
                Value::Null
            } else {
                crate::doc::parse_scalar(text)
            }
        } else {
            if result.contains('\'') || result.chars().any(char::is_control) {
                return None;
            }
            Value::String(result)
        };
        rendered.push((pointer, read));
    }
    Some(rendered)
}

/// A step from a value to one inside it.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The strings holding a template, with their JSON pointers, written only for those strings.
pub fn template_strings(value: &Value) -> Vec<(String, &str)> {
    let mut found = Vec::new();
    collect_template_strings(value, &mut Vec::new(), &mut found);
    found
}

fn collect_template_strings<'a>(value: &'a Value, path: &mut Vec<Step<'a>>, found: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(s) if has_template(s) => {
            let mut pointer = String::new();
            for step in path.iter() {
                pointer.push('/');
                match step {
                    Step::Key(key) if key.contains(['~', '/']) => pointer.push_str(&crate::doc::pointer_segment(key)),
                    Step::Key(key) => pointer.push_str(key),
                    // Writing to a String cannot fail.
                    Step::Index(i) => {
                        let _ = write!(pointer, "{i}");
                    }
                }
            }
            found.push((pointer, s));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                collect_template_strings(item, path, found);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                path.push(Step::Key(key));
                collect_template_strings(item, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Whether `text` after `key: ` reads as one plain scalar with exactly this text: no line
/// break, comment, mapping indicator, or character that starts other YAML syntax.
fn reads_as_one_plain_scalar(text: &str) -> bool {
    let starts_syntax = text.starts_with(['{', '[', '|', '>', '&', '*', '!', '%', '@', '`', '"', '\'', '#', ','])
        || text.starts_with("- ")
        || text.starts_with("? ")
        || text.starts_with(": ")
        || matches!(text, "-" | "?" | ":");
    !starts_syntax
        && !text.chars().any(|c| c.is_control())
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.ends_with(':')
        && !text.starts_with("---")
        && !text.starts_with("...")
}

/// Where a resource's text failed to render: the first field whose template fails on its own,
/// rendered string by string (keys too) only after the text failed, to name the field. `None`
/// when each renders alone (a template that spans fields failed).
pub fn first_failure(value: &Value, engine: &mut Engine, budget: &Budget) -> Option<(FieldPath, String)> {
    let mut stack = vec![(value, FieldPath::root())];
    while let Some((value, field)) = stack.pop() {
        match value {
            Value::String(s) if has_template(s) => {
                if let Err(message) = engine.render_text(s, budget) {
                    return Some((field, message));
                }
            }
            Value::Array(items) => {
                stack.extend(items.iter().enumerate().rev().map(|(i, v)| (v, field.clone().index(i))));
            }
            Value::Object(map) => {
                for key in map.keys().filter(|key| has_template(key)) {
                    if let Err(message) = engine.render_text(key, budget) {
                        return Some((field.clone().key(key.as_str()), message));
                    }
                }
                stack.extend(map.iter().rev().map(|(k, v)| (v, field.clone().key(k.as_str()))));
            }
            _ => {}
        }
    }
    None
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
        let engine = Engine::new(statics::functions(&statics::Statics::default()));
        engine
            .shared
            .lock()
            .entries
            .insert("n".into(), context::Entry { value: "3".into(), default: String::new(), filename: String::new() });
        engine
    }

    #[test]
    fn passes() {
        let mut engine = engine();
        let budget = Budget::default();
        assert_eq!(engine.render_text(r#"a-repl{{ ConfigOption "n" }}"#, &budget), Ok("a-3".into()));
        assert_eq!(engine.render_text(r#"{{repl ConfigOption "n" }}-b"#, &budget), Ok("3-b".into()));
        // The first pass's output is rendered by the second.
        assert_eq!(engine.render_text(r#"{{repl print "repl{{" }} ConfigOption "n" }}"#, &budget), Ok("3".into()));
    }

    /// A resource's text is rendered, then read: quotes, blocks and written structure decide.
    #[test]
    fn a_resource_renders_as_its_text() {
        let mut engine = engine();
        let budget = Budget::default();
        let text = "replicas: repl{{ ConfigOption \"n\" }}\nquoted: 'repl{{ ConfigOption \"n\" }}'\n\
                    ann: repl{{ print \"\\n  a: 1\\n  b: 2\" }}\nblock: >-\n  {{repl if true }}\n    x\n  {{repl end }}\n";
        let documents = render_resource(text, &mut engine, &budget).ok();
        assert_eq!(
            documents,
            Some(vec![json!({"replicas": 3, "quoted": "3", "ann": {"a": 1, "b": 2}, "block": "\nx"})])
        );
        assert!(matches!(render_resource("a: repl{{ \"b: c\" }}\n", &mut engine, &budget), Err(TextFailure::Yaml(_))));
        let failing = json!({"ok": "repl{{ ConfigOption \"n\" }}", "list": [1, "repl{{ nosuch }}"]});
        let found = first_failure(&failing, &mut engine, &budget).map(|(field, _)| field.to_string());
        assert_eq!(found.as_deref(), Some("list[1]"));
    }

    /// Rendering a copy string by string gives what rendering its written text gives, or declines.
    #[test]
    fn strings_render_as_the_written_text_would() {
        let mut engine = engine();
        let budget = Budget::default();
        let results = [
            "3",
            "",
            " 7 ",
            "true",
            "yes",
            "null",
            "~",
            "a: b",
            "a #b",
            "x:",
            "- x",
            "{a}",
            "[1]",
            "it's",
            "a\nb",
            "#c",
            "'q'",
            "\"q\"",
            "1.50",
            "0x1F",
            "-",
            "?",
            ": x",
            "plain text",
            "---",
            "@x",
            "%x",
        ];
        for result in results {
            let quoted = serde_json::to_string(result).unwrap_or_default();
            for template in [
                format!("repl{{{{ print {quoted} }}}}"),
                format!("{{{{repl print {quoted} }}}}"),
                format!("x-repl{{{{ print {quoted} }}}}"),
            ] {
                let value = json!({"k": template});
                let by_strings = render_strings(&value, &mut engine, &budget).map(|strings| {
                    let mut value = value.clone();
                    for (pointer, read) in strings {
                        if let Some(field) = value.pointer_mut(&pointer) {
                            *field = read;
                        }
                    }
                    value
                });
                let text = crate::doc::to_yaml_single_quoting(&value, &has_template);
                let by_text = render_resource(&text, &mut engine, &budget).ok().and_then(|mut d| d.pop());
                if let Some(by_strings) = by_strings {
                    assert_eq!(Some(by_strings), by_text, "{template:?} written as {text:?}");
                }
            }
        }
    }

    #[test]
    fn placeholders() {
        let mut engine = engine();
        let budget = Budget::default();
        let data = placeholder_data("files", "files-logo");
        let mut value = json!({"repl[[ .files ]]": "x [[repl .files ]] repl[[ .other ]] files",
            "a": "repl[[ .nosuch ]]", "b": "repl[[ .item ]]"});
        assert_eq!(replace_placeholders(&mut value, "files", &data, Keys::All, &mut engine, &budget), Ok(()));
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
