//! Landscaper's data mappings, evaluated with Spiff: `importDataMappings`
//! (installations/imports/constructor.go templateDataMappings), each key a child import and its
//! value a template over the installation template's imports (the `name`s of `imports.data` and
//! `imports.targets`), and `exportDataMappings` (installations/exports/constructor.go), each key
//! an export and its value a template over the installation's exports (each by name, and all of
//! them as `exports`). There is no Spiff engine here: the part of Spiff that mappings use is
//! evaluated — references (`(( name ))`, `(( name.field ))`, `(( name.[0] ))`,
//! `(( exports["a.b"] ))`), string, number, boolean and `nil` literals, concatenation
//! (`(( a "-" b ))`) and `||` alternatives — and any other expression is an error that names it.

use crate::doc::{Map, Value};
use crate::expr::size_of;
use crate::limits::Budget;
use std::borrow::Cow;

/// The mapped value of every key, or the first problem as `(field under importDataMappings,
/// message)`. What concatenation builds is charged to the render's output budget before it is
/// built: `(( l l l … ))` copies a list once per term.
pub(super) fn evaluate(mappings: &Map, names: &Map, what: Names, budget: &Budget) -> Result<Map, (String, String)> {
    let scope = Scope { names, what, budget };
    let mut out = Map::new();
    for (key, template) in mappings {
        let value = walk(template, &scope, key)?;
        out.insert(key.clone(), value);
    }
    Ok(out)
}

/// What the names a mapping refers to are, for messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Names {
    /// importDataMappings: the installation template's imports.
    Imports,
    /// exportDataMappings: the installation's exports.
    Exports,
}

impl Names {
    fn describe(self, name: &str) -> String {
        match self {
            Names::Imports => format!(
                "{name:?} is not an import of the installation template (the names of imports.data and imports.targets)"
            ),
            Names::Exports => format!(
                "{name:?} is not an export of the installation (the exports its blueprint declares and produces, \
                 or `exports`)"
            ),
        }
    }
}

/// What a mapping is evaluated over.
struct Scope<'a> {
    names: &'a Map,
    what: Names,
    budget: &'a Budget,
}

fn walk(template: &Value, scope: &Scope, at: &str) -> Result<Value, (String, String)> {
    match template {
        Value::String(text) => match expression(text) {
            Some(source) => eval(source, scope)
                .map_err(|message| (at.to_string(), format!("{}: {message}", crate::doc::excerpt(text)))),
            None => Ok(template.clone()),
        },
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, item)| walk(item, scope, &format!("{at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| Ok((k.clone(), walk(v, scope, &format!("{at}.{k}"))?)))
            .collect::<Result<Map, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

/// The expression of a string that is one Spiff expression, `(( … ))`; `((!` escapes one.
fn expression(text: &str) -> Option<&str> {
    let inner = text.trim().strip_prefix("((")?.strip_suffix("))")?;
    (!inner.starts_with('!')).then_some(inner.trim())
}

#[derive(Debug, PartialEq)]
enum Token {
    Str(String),
    Word(String),
    Or,
}

fn tokens(source: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = source.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut text = String::new();
            loop {
                match chars.next() {
                    Some((_, '"')) => break,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => text.push('\n'),
                        Some((_, 't')) => text.push('\t'),
                        Some((_, other)) => text.push(other),
                        None => return Err("a string literal is not closed".into()),
                    },
                    Some((_, other)) => text.push(other),
                    None => return Err("a string literal is not closed".into()),
                }
            }
            out.push(Token::Str(text));
        } else if source[start..].starts_with("||") {
            chars.next();
            chars.next();
            out.push(Token::Or);
        } else if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']') {
            let mut end = start;
            while let Some(&(i, c)) = chars.peek() {
                if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']' | ':') {
                    end = i + c.len_utf8();
                    chars.next();
                    // A quoted index, `["a.b"]`: everything up to the closing quote is the key.
                    if c == '[' && chars.peek().is_some_and(|&(_, next)| next == '"') {
                        chars.next();
                        loop {
                            match chars.next() {
                                Some((_, '\\')) => {
                                    chars.next();
                                }
                                Some((j, '"')) => {
                                    end = j + 1;
                                    break;
                                }
                                Some(_) => {}
                                None => return Err("a string literal is not closed".into()),
                            }
                        }
                    }
                } else {
                    break;
                }
            }
            out.push(Token::Word(source[start..end].to_string()));
        } else {
            return Err(unsupported(&format!("{c:?}")));
        }
    }
    Ok(out)
}

fn unsupported(what: &str) -> String {
    format!(
        "{what} is a Spiff operation a render does not evaluate: data mappings take references \
         (( name.field )), literals, concatenation and || (there is no Spiff engine here)"
    )
}

/// Evaluates alternatives left to right: the first that resolves to a value other than nil.
fn eval(source: &str, scope: &Scope) -> Result<Value, String> {
    let tokens = tokens(source)?;
    if tokens.is_empty() {
        return Err("an empty expression".into());
    }
    let mut last = Err(String::new());
    for alternative in tokens.split(|t| *t == Token::Or) {
        if alternative.is_empty() {
            return Err(unsupported("an empty side of ||"));
        }
        last = concatenate(alternative, scope);
        if matches!(&last, Ok(value) if !value.is_null()) {
            return last;
        }
    }
    last
}

/// Juxtaposed terms: one term is its value; several are joined as Spiff concatenates them
/// (lists appended to a list, anything else as text). Each term is a copy of its value, so every
/// copy is charged to the output budget before it is made.
fn concatenate(terms: &[Token], scope: &Scope) -> Result<Value, String> {
    let values = terms
        .iter()
        .map(|t| {
            let value = term(t, scope)?;
            scope.budget.charge_output(size_of(&value)).map_err(|err| err.to_string())?;
            Ok(value.into_owned())
        })
        .collect::<Result<Vec<_>, String>>()?;
    match values.as_slice() {
        [one] => Ok(one.clone()),
        [Value::Array(_), ..] => {
            let mut list = Vec::new();
            for value in values {
                match value {
                    Value::Array(items) => list.extend(items),
                    other => list.push(other),
                }
            }
            Ok(Value::Array(list))
        }
        _ => {
            let mut text = String::new();
            for value in &values {
                match value {
                    Value::String(s) => text.push_str(s),
                    Value::Number(n) => text.push_str(&n.to_string()),
                    Value::Bool(b) => text.push_str(if *b { "true" } else { "false" }),
                    _ => return Err("only strings and numbers are concatenated to text".into()),
                }
            }
            Ok(Value::String(text))
        }
    }
}

/// A term's value: literals built, references borrowed (the caller charges their copy).
fn term<'a>(token: &Token, scope: &Scope<'a>) -> Result<Cow<'a, Value>, String> {
    let word = match token {
        Token::Str(text) => return Ok(Cow::Owned(Value::String(text.clone()))),
        Token::Word(word) => word,
        Token::Or => return Err(unsupported("||")),
    };
    match word.as_str() {
        "nil" | "~" => return Ok(Cow::Owned(Value::Null)),
        "true" => return Ok(Cow::Owned(Value::Bool(true))),
        "false" => return Ok(Cow::Owned(Value::Bool(false))),
        _ => {}
    }
    if let Ok(number) = word.parse::<i64>() {
        return Ok(Cow::Owned(Value::from(number)));
    }
    if word.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(unsupported(word));
    }
    reference(word, scope.names, scope.what).map(Cow::Borrowed)
}

/// One step of a reference: a field, or a list index.
#[derive(Debug, PartialEq)]
enum Part {
    Key(String),
    Index(usize),
}

/// Spiff's reference syntax: a name, then `.field`, `.[0]` or `[0]`, and `["a.b"]` or `.["a.b"]`
/// for a field whose name is not a Spiff key (it holds a dot).
fn parts(path: &str) -> Result<Vec<Part>, String> {
    let is_key = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | ':');
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let after_dot = rest.strip_prefix('.');
        if out.is_empty() && after_dot.is_some() {
            return Err(unsupported(&format!("{path:?} (a reference from the document root)")));
        }
        let body = after_dot.unwrap_or(rest);
        if let Some(inside) = body.strip_prefix('[') {
            let close = match inside.strip_prefix('"') {
                // The closing quote: the first not escaped by a backslash.
                Some(quoted) => {
                    let mut escaped = false;
                    quoted
                        .char_indices()
                        .find(|&(_, c)| {
                            let closes = c == '"' && !escaped;
                            escaped = c == '\\' && !escaped;
                            closes
                        })
                        .map(|(q, _)| q + 2)
                }
                None => inside.find(']'),
            };
            let Some(close) = close else {
                return Err(format!("{path:?}: an index is not closed"));
            };
            let (index, after) = inside.split_at(close);
            let Some(after) = after.strip_prefix(']') else {
                return Err(format!("{path:?}: an index is not closed"));
            };
            let part = match index.strip_prefix('"').and_then(|i| i.strip_suffix('"')) {
                Some(key) => Part::Key(key.replace("\\\"", "\"")),
                None => match index.parse::<usize>() {
                    Ok(i) => Part::Index(i),
                    Err(_) => return Err(unsupported(&format!("the index [{index}]"))),
                },
            };
            if out.is_empty() {
                return Err(unsupported(&format!("{path:?} (an index without a name before it)")));
            }
            out.push(part);
            rest = after;
        } else {
            if after_dot.is_none() && !out.is_empty() {
                return Err(format!("{path:?} is not a reference"));
            }
            let end = body.find(|c: char| !is_key(c)).unwrap_or(body.len());
            if end == 0 {
                return Err(format!("{path:?} is not a reference"));
            }
            out.push(Part::Key(body[..end].to_string()));
            rest = &body[end..];
        }
    }
    Ok(out)
}

/// `a.b.[0]`, `a.b[0]`, `a["b.c"]`: the first name is one of `names`, the rest fields and list
/// indexes inside its value.
fn reference<'a>(path: &str, names: &'a Map, what: Names) -> Result<&'a Value, String> {
    let parts = parts(path)?;
    let mut parts = parts.iter();
    let Some(Part::Key(first)) = parts.next() else { return Err(format!("{path:?} is not a reference")) };
    let mut value = names.get(first).ok_or_else(|| what.describe(first))?;
    for part in parts {
        let next = match part {
            Part::Index(i) => value.as_array().and_then(|list| list.get(*i)),
            Part::Key(key) => value.as_object().and_then(|m| m.get(key)),
        };
        value = next.ok_or_else(|| {
            let shown = match part {
                Part::Index(i) => format!("[{i}]"),
                Part::Key(key) => format!("{key:?}"),
            };
            format!("{path:?} is not found: {shown} is not in the value")
        })?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names() -> Map {
        json!({"temp-name": "echo", "ns": {"a": ["x", "y"]}, "n": 3}).as_object().cloned().unwrap_or_default()
    }

    fn eval_text(text: &str) -> Result<Value, String> {
        let mapping = json!({"k": text}).as_object().cloned().unwrap_or_default();
        evaluate(&mapping, &names(), Names::Imports, &Budget::default()).map(|m| m["k"].clone()).map_err(|(_, e)| e)
    }

    #[test]
    fn references_literals_and_alternatives() {
        assert_eq!(eval_text("(( temp-name ))"), Ok(json!("echo")));
        assert_eq!(eval_text("(( ns.a.[1] ))"), Ok(json!("y")));
        assert_eq!(eval_text("(( ns.a[0] ))"), Ok(json!("x")));
        assert_eq!(eval_text("(( temp-name \"-\" n ))"), Ok(json!("echo-3")));
        assert_eq!(eval_text("(( missing || \"fallback\" ))"), Ok(json!("fallback")));
        assert_eq!(eval_text("plain"), Ok(json!("plain")));
        assert_eq!(eval_text("((! temp-name ))"), Ok(json!("((! temp-name ))")));
        assert!(eval_text("(( missing ))").unwrap_err().contains("\"missing\" is not an import"));
        assert!(eval_text("(( n + 1 ))").unwrap_err().contains("'+' is a Spiff operation"));
    }

    /// Spiff's dynamic index with a string, for keys that hold a dot (Landscaper's
    /// exports/constructor_test.go, testdata/state/test6: `(( exports["root.z"] ))`).
    #[test]
    fn quoted_indexes_name_keys_with_dots() {
        let names = json!({"exports": {"root.z": {"a": 1}, "root.y": "val-c"}, "root.y": "val-c"});
        let names = names.as_object().cloned().unwrap_or_default();
        let mapping = json!({
            "foo": {"some": {"arbitrary": {"struct": "(( exports[\"root.z\"] ))"}}},
            "dotted": "(( exports.[\"root.y\"] ))",
            "nested": "(( exports[\"root.z\"].a ))",
        });
        let mapping = mapping.as_object().cloned().unwrap_or_default();
        let out = evaluate(&mapping, &names, Names::Exports, &Budget::default());
        let expected = json!({"foo": {"some": {"arbitrary": {"struct": {"a": 1}}}}, "dotted": "val-c", "nested": 1});
        assert_eq!(out.map(Value::Object), Ok(expected));
        let quoted = json!({"k": "(( x[\"say \\\"hi\\\"\"] ))"}).as_object().cloned().unwrap_or_default();
        let names_quoted = json!({"x": {"say \"hi\"": 5}}).as_object().cloned().unwrap_or_default();
        let out = evaluate(&quoted, &names_quoted, Names::Exports, &Budget::default()).map(Value::Object);
        assert_eq!(out, Ok(json!({"k": 5})));
        let missing = json!({"k": "(( nothing ))"}).as_object().cloned().unwrap_or_default();
        let err = evaluate(&missing, &names, Names::Exports, &Budget::default()).map_err(|(_, e)| e);
        assert!(err.is_err_and(|e| e.contains("\"nothing\" is not an export of the installation")));
    }

    #[test]
    fn concatenation_is_charged_before_it_is_built() {
        let limits = crate::limits::Limits { max_output_bytes: 1000, ..Default::default() };
        let budget = Budget::new(limits);
        let names = json!({"l": ["x".repeat(100)]}).as_object().cloned().unwrap_or_default();
        let mapping = json!({"k": format!("(( {} ))", ["l"; 20].join(" "))}).as_object().cloned().unwrap_or_default();
        let err = evaluate(&mapping, &names, Names::Imports, &budget).map(|_| ()).map_err(|(_, e)| e);
        assert!(err.is_err_and(|e| e.contains("--max-output-size")));
    }
}
