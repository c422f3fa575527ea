//! Flux's post-build substitution of one object, on its text, as kustomize-controller does it
//! (fluxcd/pkg `kustomize/kustomize_varsub.go`, `SubstituteVariables`): the object is written as
//! YAML the way sigs.k8s.io/yaml writes JSON (`resource.AsYAML`: keys sorted, each string plain
//! or quoted by yaml.v2's own rules, whatever quotes the source file had), every `${…}` in that
//! text is substituted, and the text is read back with yaml.v2 (`yaml.YAMLToJSON`) into JSON.
//!
//! So a substituted value is typed by YAML 1.1 as yaml.v2 reads it (`8080` a number, `on` a
//! boolean, `1e3` the number 1000, through Go's JSON), even where the source quoted it, and a
//! value that breaks the text's structure (`a: ${X}` with `X` = `k: v`) fails the build with
//! yaml.v2's message, as in Flux. `flux-build` uses this; `render`'s substitution step, which
//! edits the package's own files, keeps their quotes ([`super::apply`]).

use super::envsubst::substitute;
use super::variables::{contains_candidate, disabled, Variables};
use crate::doc::{pointer_mut, pointer_segment, read_yaml_documents, to_go_yaml, Value};
use crate::limits::Budget;
use granit_parser::{Event, Parser, ScalarStyle};

/// The object after Flux's substitution of its text; `None` when it is opted out or its text
/// holds nothing to substitute (Flux writes it back unchanged then). An error is Flux's: the
/// substitution's (`variable substitution failed: …`) or yaml.v2's on the substituted text
/// (`YAMLToJSON: yaml: line 3: mapping values are not allowed in this context`).
pub fn substitute_object(variables: &Variables, budget: &Budget, object: &Value) -> Result<Option<Value>, String> {
    if disabled(object) || !contains_candidate(object) {
        return Ok(None);
    }
    let text = to_go_yaml(object);
    let lookup = |name: &str| {
        let found = variables.values.get(name).map(String::as_str);
        variables.note(name, found.is_some());
        found
    };
    let substituted = substitute(&text, &lookup, variables.strict, budget)
        .map_err(|err| format!("variable substitution failed: {err}"))?;
    if substituted == text {
        return Ok(None);
    }
    read_as_yaml_v2(&substituted).map(Some)
}

/// What `yaml.YAMLToJSON` and Kubernetes' JSON decoding make of a YAML text: its first document,
/// plain scalars typed as yaml.v2 types them, numbers as Go's JSON writes them.
pub fn read_as_yaml_v2(text: &str) -> Result<Value, String> {
    let documents = read_yaml_documents(text).map_err(|err| {
        // Flux prints the parser's message, without the hint the reader adds.
        let message = err.parser_message();
        let line = err.line.map(|line| format!("line {line}: ")).unwrap_or_default();
        format!(
            "YAMLToJSON: yaml: {line}{message} (Flux substitutes the object's YAML text, and a value holding \
             \": \", \"- \" or \" #\" can break it: write the variable's value quoted, e.g. '\"k: v\"', to keep \
             it one string)"
        )
    })?;
    let mut value = documents.into_iter().next().unwrap_or(Value::Null);
    for pointer in plain_scalars(text) {
        if let Some(node) = pointer_mut(&mut value, &pointer) {
            if let Value::String(plain) = node {
                if let Some(typed) = resolve_plain(plain) {
                    *node = typed;
                }
            }
        }
    }
    as_go_json(&mut value);
    Ok(value)
}

/// The JSON pointers of the plain scalar values (not keys) of the first document of `text`.
fn plain_scalars(text: &str) -> Vec<String> {
    enum Frame {
        Map {
            key_next: bool,
        },
        Seq {
            index: usize,
        },
        /// A mapping or sequence that is a key: nothing inside is a value of the document.
        Key,
    }
    let mut found = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: Vec<String> = Vec::new();
    // Before a value: a sequence item's index goes on the path (a key's segment is already on it).
    let enter = |stack: &mut Vec<Frame>, path: &mut Vec<String>| {
        if let Some(Frame::Seq { index }) = stack.last() {
            path.push(index.to_string());
        }
    };
    let leave = |stack: &mut Vec<Frame>, path: &mut Vec<String>| match stack.last_mut() {
        Some(Frame::Map { key_next }) => {
            path.pop();
            *key_next = true;
        }
        Some(Frame::Seq { index }) => {
            path.pop();
            *index += 1;
        }
        _ => {}
    };
    let in_key = |stack: &[Frame]| stack.iter().any(|frame| matches!(frame, Frame::Key));
    for event in Parser::new_from_str(text) {
        let Ok((event, _)) = event else { break };
        match event {
            Event::DocumentEnd => break,
            Event::Scalar(value, style, _, tag) => {
                if in_key(&stack) {
                    continue;
                }
                if let Some(Frame::Map { key_next: key_next @ true }) = stack.last_mut() {
                    *key_next = false;
                    path.push(pointer_segment(&value));
                    continue;
                }
                enter(&mut stack, &mut path);
                if style == ScalarStyle::Plain && tag.is_none() {
                    found.push(path.iter().fold(String::new(), |pointer, segment| pointer + "/" + segment));
                }
                leave(&mut stack, &mut path);
            }
            Event::Alias(_) if !in_key(&stack) => {
                if let Some(Frame::Map { key_next: key_next @ true }) = stack.last_mut() {
                    // An alias as a key: it names no field here.
                    *key_next = false;
                    path.push("?".into());
                    continue;
                }
                enter(&mut stack, &mut path);
                leave(&mut stack, &mut path);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_key = in_key(&stack) || matches!(stack.last(), Some(Frame::Map { key_next: true }));
                if is_key {
                    stack.push(Frame::Key);
                    continue;
                }
                enter(&mut stack, &mut path);
                stack.push(match event {
                    Event::MappingStart(..) => Frame::Map { key_next: true },
                    _ => Frame::Seq { index: 0 },
                });
            }
            Event::MappingEnd | Event::SequenceEnd => match stack.pop() {
                Some(Frame::Key) => {
                    if !in_key(&stack) {
                        if let Some(Frame::Map { key_next }) = stack.last_mut() {
                            *key_next = false;
                            path.push("?".into());
                        }
                    }
                }
                _ => leave(&mut stack, &mut path),
            },
            _ => {}
        }
    }
    found
}

/// What yaml.v2 makes of a plain scalar that YAML 1.2's core schema (our reader) leaves a
/// string (gopkg.in/yaml.v2 `resolve.go`): YAML 1.1's booleans, and integers and floats
/// with `_` separators or a `0b` prefix. `None`: it stays a string.
fn resolve_plain(text: &str) -> Option<Value> {
    const TRUE: [&str; 11] = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"];
    const FALSE: [&str; 11] = ["n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"];
    if TRUE.contains(&text) {
        return Some(Value::Bool(true));
    }
    if FALSE.contains(&text) {
        return Some(Value::Bool(false));
    }
    if ["~", "null", "Null", "NULL"].contains(&text) {
        return Some(Value::Null);
    }
    // Only text starting with a digit or a sign is tried as a number (yaml.v2's hint table).
    if !text.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-') {
        return None;
    }
    let plain = text.replace('_', "");
    if let Some(integer) = go_parse_int(&plain) {
        return Some(Value::from(integer));
    }
    if yaml_style_float(&plain) {
        return plain.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number);
    }
    None
}

/// Go's `strconv.ParseInt(text, 0, 64)`: a sign, then `0x`, `0o`, `0b` or a leading `0`
/// (octal) choose the base.
fn go_parse_int(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, digits) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest.to_string())
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest.to_string())
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(&digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// yaml.v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(text: &str) -> bool {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let mut rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = digits(fraction);
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    } else {
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        rest = &rest[n..];
        if let Some(fraction) = rest.strip_prefix('.') {
            rest = &fraction[digits(fraction)..];
        }
    }
    if let Some(exponent) = rest.strip_prefix(['e', 'E']) {
        let exponent = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
        let n = digits(exponent);
        return n > 0 && n == exponent.len();
    }
    rest.is_empty()
}

/// Numbers as they come back from Go's JSON into a Kubernetes object: a float64 without a
/// fraction is written as an integer below 1e21 and read back as one when it fits 64 bits.
pub fn as_go_json(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64() {
                if float.fract() == 0.0 && float.abs() < 9.2e18 {
                    // Exact: the float has no fraction and is inside i64's range.
                    *value = Value::from(float as i64);
                }
            }
        }
        Value::Array(list) => list.iter_mut().for_each(as_go_json),
        Value::Object(map) => map.values_mut().for_each(as_go_json),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(values: &[(&str, &str)], strict: bool) -> Variables {
        let values = values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Variables::given(values, strict).unwrap_or_default()
    }

    fn run(object: Value, values: &[(&str, &str)], strict: bool) -> Result<Option<Value>, String> {
        substitute_object(&vars(values, strict), &Budget::default(), &object)
    }

    /// Answers of fluxcd/pkg's `varSubstitution` on the same objects (envsubst v1.7.0 and
    /// sigs.k8s.io/yaml run here; the oracle's text is in tests/fixtures/flux-build/varsub-types).
    #[test]
    fn typed_as_flux_types_the_text() {
        let object = json!({"kind": "ConfigMap", "spec": {"n": "${N}", "p": "${P}", "b": "${B}", "u": "${U}",
                            "s": "x-${P}", "under": "${UNDER}", "bin": "${BIN}", "list": ["${P}"]}});
        let values = [("N", "1e3"), ("P", "8080"), ("B", "on"), ("UNDER", "1_000"), ("BIN", "0b101")];
        let got = run(object, &values, false);
        let expected = json!({"kind": "ConfigMap", "spec": {"n": 1000, "p": 8080, "b": true, "u": null,
                              "s": "x-8080", "under": 1000, "bin": 5, "list": [8080]}});
        assert_eq!(got, Ok(Some(expected)));
    }

    #[test]
    fn a_value_that_breaks_the_text_fails() {
        let object = json!({"kind": "ConfigMap", "data": {"a": "${X}"}});
        let got = run(object, &[("X", "k: v")], true);
        assert!(got.as_ref().is_err_and(|e| e.starts_with("YAMLToJSON: yaml: line 2: mapping values")), "{got:?}");
        // In a sequence, the same text is a mapping, as in Flux.
        let object = json!({"kind": "ConfigMap", "data": ["${X}"]});
        assert_eq!(run(object, &[("X", "k: v")], true), Ok(Some(json!({"kind": "ConfigMap", "data": [{"k": "v"}]}))));
    }

    #[test]
    fn strict_and_untouched() {
        let object = json!({"kind": "ConfigMap", "data": {"a": "${missing}"}});
        let got = run(object.clone(), &[("x", "1")], true);
        assert_eq!(got, Err("variable substitution failed: variable not set (strict mode): \"missing\"".into()));
        assert_eq!(run(json!({"data": {"a": "plain"}}), &[("x", "1")], true), Ok(None));
    }

    #[test]
    fn yaml_v2_numbers() {
        for (text, expected) in [
            ("0x1F", Some(json!(31))),
            ("017", Some(json!(15))),
            ("08", Some(json!(8.0))),
            ("+5", Some(json!(5))),
            ("1e3", Some(json!(1000.0))),
            ("5.", Some(json!(5.0))),
            ("-.5", Some(json!(-0.5))),
            ("1-2", None),
            ("e3", None),
            ("1e", None),
        ] {
            assert_eq!(resolve_plain(text), expected, "{text}");
        }
    }
}
