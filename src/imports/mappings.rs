//! Landscaper's `importDataMappings` (installations/imports/constructor.go templateDataMappings):
//! each key is a child import, its value a Spiff template over the installation template's
//! imports (the `name`s of `imports.data` and `imports.targets`), and the result replaces the
//! data import of that name. There is no Spiff engine here: the part of Spiff that mappings use
//! is evaluated — `(( name ))` and `(( name.field ))` references, string, number, boolean and
//! `nil` literals, concatenation (`(( a "-" b ))`) and `||` alternatives — and any other
//! expression is an error that names it.

use crate::doc::{Map, Value};
use crate::expr::size_of;
use crate::limits::Budget;
use std::borrow::Cow;

/// The mapped value of every key, or the first problem as `(field under importDataMappings,
/// message)`. What concatenation builds is charged to the render's output budget before it is
/// built: `(( l l l … ))` copies a list once per term.
pub(super) fn evaluate(mappings: &Map, names: &Map, budget: &Budget) -> Result<Map, (String, String)> {
    let mut out = Map::new();
    for (key, template) in mappings {
        let value = walk(template, names, key, budget)?;
        out.insert(key.clone(), value);
    }
    Ok(out)
}

fn walk(template: &Value, names: &Map, at: &str, budget: &Budget) -> Result<Value, (String, String)> {
    match template {
        Value::String(text) => match expression(text) {
            Some(source) => eval(source, names, budget)
                .map_err(|message| (at.to_string(), format!("{}: {message}", crate::doc::excerpt(text)))),
            None => Ok(template.clone()),
        },
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, item)| walk(item, names, &format!("{at}[{i}]"), budget))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| Ok((k.clone(), walk(v, names, &format!("{at}.{k}"), budget)?)))
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
                if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']') {
                    end = i + c.len_utf8();
                    chars.next();
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
        "{what} is a Spiff operation a render does not evaluate: importDataMappings take references \
         (( name.field )), literals, concatenation and || (there is no Spiff engine here)"
    )
}

/// Evaluates alternatives left to right: the first that resolves to a value other than nil.
fn eval(source: &str, names: &Map, budget: &Budget) -> Result<Value, String> {
    let tokens = tokens(source)?;
    if tokens.is_empty() {
        return Err("an empty expression".into());
    }
    let mut last = Err(String::new());
    for alternative in tokens.split(|t| *t == Token::Or) {
        if alternative.is_empty() {
            return Err(unsupported("an empty side of ||"));
        }
        last = concatenate(alternative, names, budget);
        if matches!(&last, Ok(value) if !value.is_null()) {
            return last;
        }
    }
    last
}

/// Juxtaposed terms: one term is its value; several are joined as Spiff concatenates them
/// (lists appended to a list, anything else as text). Each term is a copy of its value, so every
/// copy is charged to the output budget before it is made.
fn concatenate(terms: &[Token], names: &Map, budget: &Budget) -> Result<Value, String> {
    let values = terms
        .iter()
        .map(|t| {
            let value = term(t, names)?;
            budget.charge_output(size_of(&value)).map_err(|err| err.to_string())?;
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
fn term<'a>(token: &Token, names: &'a Map) -> Result<Cow<'a, Value>, String> {
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
    reference(word, names).map(Cow::Borrowed)
}

/// `a.b.[0]` / `a.b[0]`: the first name is an import of the template, the rest fields and list
/// indexes inside its value.
fn reference<'a>(path: &str, names: &'a Map) -> Result<&'a Value, String> {
    let normalized = path.replace(".[", "[").replace('[', ".[");
    let mut parts = normalized.split('.');
    let first = parts.next().unwrap_or_default();
    let mut value = names.get(first).ok_or_else(|| {
        format!(
            "{first:?} is not an import of the installation template (the names of imports.data and imports.targets)"
        )
    })?;
    for part in parts {
        let next = match part.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
            Some(index) => index.parse::<usize>().ok().and_then(|i| value.as_array()?.get(i)),
            None if part.is_empty() => None,
            None => value.as_object().and_then(|m| m.get(part)),
        };
        value = next.ok_or_else(|| format!("{path:?} is not found: {part:?} is not in the value"))?;
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
        evaluate(&mapping, &names(), &Budget::default()).map(|m| m["k"].clone()).map_err(|(_, e)| e)
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

    #[test]
    fn concatenation_is_charged_before_it_is_built() {
        let limits = crate::limits::Limits { max_output_bytes: 1000, ..Default::default() };
        let budget = Budget::new(limits);
        let names = json!({"l": ["x".repeat(100)]}).as_object().cloned().unwrap_or_default();
        let mapping = json!({"k": format!("(( {} ))", ["l"; 20].join(" "))}).as_object().cloned().unwrap_or_default();
        let err = evaluate(&mapping, &names, &budget).map(|_| ()).map_err(|(_, e)| e);
        assert!(err.is_err_and(|e| e.contains("--max-output-size")));
    }
}
