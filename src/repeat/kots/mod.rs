//! The KOTS template syntax inside resources (compat: KOTS): `repl{{ F args }}` and `{{repl F args }}`
//! with `ConfigOption`, `ConfigOptionEquals`, `ConfigOptionNotEquals`, `ConfigOptionData`,
//! `ConfigOptionFilename`, `RepeatableConfigOptionName` and `RepeatableConfigGroupName`, and the
//! clone placeholders `repl[[ .item ]]` / `[[repl .item ]]`. Written here: KOTS's renderer is Go
//! text/template over Sprig and no crate speaks this dialect. Arguments are quoted strings or bare
//! words (the proposal writes both); a leading `$` on a function name is accepted (the proposal's
//! `$RepeatableConfigGroupName`).

pub mod statics;

use crate::doc::{parse_scalar, Map, Value};
use crate::limits::{Budget, MAX_DEPTH};
use base64::Engine as _;

/// What a template can read: resolved config values, and inside a clone its repeat scope.
pub struct Scope<'a> {
    /// The render's budget: every template evaluated is a step, every value it inserts output.
    pub budget: &'a Budget,
    pub values: &'a Map,
    /// File names of file items (`ConfigOptionFilename`).
    pub filenames: &'a Map,
    /// Inside a repeatable item's clone: (item name, value name, value).
    pub item: Option<(&'a str, &'a str, &'a Value)>,
    /// Inside a repeatable group's clone: (instance name, the instance's item values).
    pub group: Option<(&'a str, &'a Map)>,
}

impl Scope<'_> {
    fn option(&self, name: &str) -> Result<Value, String> {
        if let Some((item, _, value)) = self.item {
            if item == name {
                return Ok(value.clone());
            }
        }
        if let Some((_, values)) = self.group {
            if let Some(value) = values.get(name) {
                return Ok(value.clone());
            }
        }
        self.values.get(name).cloned().ok_or_else(|| format!("config item {name:?} is not defined in the KOTS Config"))
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Whether a string holds KOTS template syntax at all (the cheap test before rendering).
pub fn has_template(text: &str) -> bool {
    text.contains("repl{{") || text.contains("{{repl") || text.contains("repl[[") || text.contains("[[repl")
}

fn call(body: &str, scope: &Scope) -> Result<String, String> {
    let args = split_args(body)?;
    let Some((name, args)) = args.split_first() else { return Err("empty template".into()) };
    let name = name.trim_start_matches('$');
    let arg = |i: usize| args.get(i).cloned().ok_or_else(|| format!("{name} needs {} argument(s)", i + 1));
    Ok(match name {
        "ConfigOption" => text(&scope.option(&arg(0)?)?),
        "ConfigOptionEquals" => (text(&scope.option(&arg(0)?)?) == arg(1)?).to_string(),
        "ConfigOptionNotEquals" => (text(&scope.option(&arg(0)?)?) != arg(1)?).to_string(),
        "ConfigOptionData" => {
            let encoded = text(&scope.option(&arg(0)?)?);
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).map_err(|err| {
                format!("ConfigOptionData {:?}: value is not base64: {err}", arg(0).unwrap_or_default())
            })?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        "ConfigOptionFilename" => scope.filenames.get(&arg(0)?).map(text).unwrap_or_default(),
        "RepeatableConfigOptionName" => match scope.item {
            Some((item, value_name, _)) if item == arg(0)? => value_name.to_string(),
            _ => {
                return Err(format!("RepeatableConfigOptionName {:?} is only valid inside that item's clones", arg(0)?))
            }
        },
        "RepeatableConfigGroupName" => match scope.group {
            Some((instance, _)) => instance.to_string(),
            None => {
                return Err(format!(
                    "RepeatableConfigGroupName {:?} is only valid inside a repeatable group's clones",
                    arg(0)?
                ))
            }
        },
        other => return Err(format!("unknown KOTS template function {other:?}")),
    })
}

/// Words and quoted strings.
fn split_args(body: &str) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    let mut chars = body.trim().chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' || c == '`' {
            chars.next();
            let mut arg = String::new();
            loop {
                match chars.next() {
                    None => return Err(format!("unterminated string in {body:?}")),
                    Some('\\') if c == '"' => arg.extend(chars.next()),
                    Some(q) if q == c => break,
                    Some(other) => arg.push(other),
                }
            }
            args.push(arg);
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
            args.push(word);
        }
    }
    Ok(args)
}

/// The four delimiter pairs and whether their body is a clone placeholder.
const FORMS: [(&str, &str, bool); 4] =
    [("repl{{", "}}", false), ("{{repl", "}}", false), ("repl[[", "]]", true), ("[[repl", "]]", true)];

/// The start of a long text, for messages.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{:?}…", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// Renders every template in `text`, in one pass: each form's next occurrence is searched again
/// only once the cursor has passed it, so 40 000 templates in one string stay linear.
pub fn render_text(text: &str, scope: &Scope) -> Result<String, String> {
    let mut out = String::new();
    let mut cursor = 0;
    // Each form's next offset; `usize::MAX` once the form does not occur again.
    let mut next = FORMS.map(|form| text.find(form.0).unwrap_or(usize::MAX));
    loop {
        for (slot, form) in next.iter_mut().zip(FORMS.iter()) {
            if *slot < cursor {
                *slot = text[cursor..].find(form.0).map_or(usize::MAX, |at| cursor + at);
            }
        }
        let found = next
            .iter()
            .zip(FORMS.iter())
            .filter(|(at, _)| **at != usize::MAX)
            .map(|(at, f)| (*at, f))
            .min_by_key(|f| f.0);
        let Some((at, (open, close, placeholder))) = found else {
            out.push_str(&text[cursor..]);
            return Ok(out);
        };
        out.push_str(&text[cursor..at]);
        let body_start = at + open.len();
        let Some(length) = text[body_start..].find(close) else {
            return Err(format!("{open} is not closed by {close} in {}", excerpt(&text[at..])));
        };
        let body = &text[body_start..body_start + length];
        scope.budget.charge_steps(1).map_err(|err| err.to_string())?;
        let inserted = if *placeholder {
            match (body.trim(), scope.item) {
                (".item", Some((_, value_name, _))) => value_name.to_string(),
                (".item", None) => {
                    return Err(format!("{open} .item {close} is only valid inside a repeatable item's clones"))
                }
                (other, _) => {
                    return Err(format!("unknown placeholder {open} {} {close}: only .item is defined", excerpt(other)))
                }
            }
        } else {
            call(body, scope)?
        };
        scope.budget.charge_output(inserted.len()).map_err(|err| err.to_string())?;
        out.push_str(&inserted);
        cursor = body_start + length + close.len();
    }
}

/// Renders every string (and key) of a value found at JSON pointer `pointer`. A string that is
/// exactly one template keeps the YAML type its result reads as (`replicas: repl{{ ConfigOption
/// "n" }}` is a number) when `typed(pointer)` allows it (plain in its source, as KOTS renders
/// text and parses it again).
pub fn render_value(
    value: &mut Value,
    scope: &Scope,
    pointer: &mut String,
    typed: &mut dyn FnMut(&str) -> bool,
) -> Result<(), String> {
    render_nested(value, scope, pointer, typed, 0)
}

fn render_nested(
    value: &mut Value,
    scope: &Scope,
    pointer: &mut String,
    typed: &mut dyn FnMut(&str) -> bool,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("the resource nests deeper than {MAX_DEPTH} levels at {pointer}: flatten it"));
    }
    match value {
        Value::String(s) if has_template(s) => {
            let whole = is_whole_template(s);
            let rendered = render_text(s, scope)?;
            *value = if whole && typed(pointer) { parse_scalar(&rendered) } else { Value::String(rendered) };
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                render_nested(item, scope, pointer, typed, depth + 1)?;
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            if map.keys().any(|k| has_template(k)) {
                let mut renamed = Map::new();
                for (key, item) in std::mem::take(map) {
                    let key = if has_template(&key) { render_text(&key, scope)? } else { key };
                    renamed.insert(key, item);
                }
                *map = renamed;
            }
            for (key, item) in map.iter_mut() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                render_nested(item, scope, pointer, typed, depth + 1)?;
                pointer.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

fn is_whole_template(text: &str) -> bool {
    let text = text.trim();
    FORMS.iter().any(|(open, close, _)| {
        text.starts_with(open)
            && text.ends_with(close)
            && text[open.len()..].find(close) == Some(text.len() - open.len() - close.len())
    })
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

/// The bytes a value takes as output (its strings and keys, and a few for every other node),
/// counted with a stack: what one more clone of it costs the output budget.
pub fn output_size(value: &Value) -> u64 {
    let mut size = 0u64;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size = size.saturating_add(match value {
            Value::String(s) => s.len() as u64 + 2,
            Value::Array(items) => {
                stack.extend(items);
                2
            }
            Value::Object(map) => {
                stack.extend(map.values());
                map.keys().map(|k| k.len() as u64 + 2).sum::<u64>() + 2
            }
            _ => 8,
        });
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values() -> Map {
        json!({"nginx_port": "80", "n": "3", "flag": "1", "cert": "aGVsbG8=", "name": "alpha"})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn functions_and_forms() {
        let values = values();
        let filenames = json!({"cert": "tls.crt"}).as_object().cloned().unwrap_or_default();
        let budget = Budget::default();
        let scope = Scope { budget: &budget, values: &values, filenames: &filenames, item: None, group: None };
        assert_eq!(render_text("port repl{{ ConfigOption \"nginx_port\" }}", &scope), Ok("port 80".into()));
        assert_eq!(render_text("{{repl ConfigOption \"nginx_port\" }}-x", &scope), Ok("80-x".into()));
        assert_eq!(render_text("repl{{ ConfigOptionEquals \"flag\" \"1\" }}", &scope), Ok("true".into()));
        assert_eq!(render_text("repl{{ ConfigOptionNotEquals \"flag\" \"1\" }}", &scope), Ok("false".into()));
        assert_eq!(render_text("repl{{ ConfigOptionData \"cert\" }}", &scope), Ok("hello".into()));
        assert_eq!(render_text("repl{{ ConfigOptionFilename \"cert\" }}", &scope), Ok("tls.crt".into()));
        assert_eq!(render_text("kafka-repl{{ $ConfigOption name }}", &scope), Ok("kafka-alpha".into()));
        assert!(render_text("repl{{ Nope \"x\" }}", &scope).is_err());
        assert!(render_text("repl{{ ConfigOption \"missing\" }}", &scope).is_err());
        assert!(render_text("repl[[ .item ]]", &scope).is_err());
    }

    #[test]
    fn many_templates_in_one_string_are_linear_and_charged() {
        let values = values();
        let budget = Budget::new(crate::limits::Limits { max_output_bytes: 100_000, ..Default::default() });
        let scope = Scope { budget: &budget, values: &values, filenames: &Map::new(), item: None, group: None };
        let text = "repl{{ ConfigOption \"name\" }} ".repeat(40_000);
        let err = render_text(&text, &scope).err().unwrap_or_default();
        assert!(err.contains("(--max-output-size)"), "{err}");
        let budget = Budget::default();
        let scope = Scope { budget: &budget, values: &values, filenames: &Map::new(), item: None, group: None };
        assert_eq!(render_text(&text, &scope).map(|t| t.len()), Ok(40_000 * 6));
    }

    #[test]
    fn whole_templates_keep_their_type() {
        let values = values();
        let budget = Budget::default();
        let scope = Scope { budget: &budget, values: &values, filenames: &Map::new(), item: None, group: None };
        let mut value = json!({"replicas": "repl{{ ConfigOption \"n\" }}", "label": "n-repl{{ ConfigOption \"n\" }}"});
        assert_eq!(render_value(&mut value, &scope, &mut String::new(), &mut |_| true), Ok(()));
        assert_eq!(value, json!({"replicas": 3, "label": "n-3"}));
        let mut quoted = json!({"replicas": "repl{{ ConfigOption \"n\" }}"});
        assert_eq!(render_value(&mut quoted, &scope, &mut String::new(), &mut |_| false), Ok(()));
        assert_eq!(quoted, json!({"replicas": "3"}));
    }

    #[test]
    fn clone_scopes() {
        let values = values();
        let instance = json!({"port": 443}).as_object().cloned().unwrap_or_default();
        let file = json!("ZmlsZQ==");
        let budget = Budget::default();
        let scope = Scope {
            budget: &budget,
            values: &values,
            filenames: &Map::new(),
            item: Some(("static_files", "logo", &file)),
            group: Some(("nginx-2", &instance)),
        };
        assert_eq!(render_text("repl[[ .item ]]/[[repl .item ]]", &scope), Ok("logo/logo".into()));
        assert_eq!(render_text("repl{{ RepeatableConfigOptionName \"static_files\" }}", &scope), Ok("logo".into()));
        assert_eq!(
            render_text("proxy-repl{{ $RepeatableConfigGroupName \"port\" }}", &scope),
            Ok("proxy-nginx-2".into())
        );
        assert_eq!(render_text("{{repl ConfigOption \"port\" }}", &scope), Ok("443".into()));
        assert_eq!(render_text("a[[repl .item ]]b repl{{ ConfigOption \"port\" }}c", &scope), Ok("alogob 443c".into()));
        assert_eq!(render_text("repl{{ ConfigOption \"static_files\" }}", &scope), Ok("ZmlsZQ==".into()));
    }
}
