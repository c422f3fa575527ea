//! Secret values in kustomize's messages. kustomize prints what it could not place (a failing
//! replacement prints its target's text, a Secret's value included), and a message is printed
//! where the objects are not: so every value a Secret of the source could hold is taken out of
//! the message unless `--show-secrets`.

use crate::doc::Value;
use base64::Engine as _;

/// The values the Secrets of `document` hold, as written and, for `data`, decoded: a `v1`
/// Secret's `data` and `stringData` values, and the `literals` of a kustomization's
/// `secretGenerator`. Files and env files a generator names are read by the caller.
pub fn secret_values(document: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let text = |key: &str| document.get(key).and_then(Value::as_str);
    if text("apiVersion") == Some("v1") && text("kind") == Some("Secret") {
        for field in ["data", "stringData"] {
            let values = document.get(field).and_then(Value::as_object).into_iter().flat_map(|map| map.values());
            for value in values.filter_map(Value::as_str) {
                found.push(value.to_string());
                if field == "data" {
                    let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(compact) {
                        found.push(String::from_utf8_lossy(&bytes).into_owned());
                    }
                }
            }
        }
    }
    let generators = document.get("secretGenerator").and_then(Value::as_array).into_iter().flatten();
    for literal in generators.filter_map(|g| g.get("literals")).filter_map(Value::as_array).flatten() {
        if let Some((_, value)) = literal.as_str().and_then(|l| l.split_once('=')) {
            found.push(value.to_string());
        }
    }
    found
}

/// `message` with each of `values` (and each one's lines, trimmed, as a message may show a
/// multi-line value line by line) replaced by `<redacted>`, longest first.
pub fn redact_message(message: &str, values: &[String]) -> String {
    let mut all: Vec<&str> = Vec::new();
    for value in values {
        all.push(value.trim());
        all.extend(value.lines().map(str::trim));
    }
    all.retain(|value| !value.is_empty());
    all.sort_by_key(|value| std::cmp::Reverse(value.len()));
    all.dedup();
    // One pass, longest value first at each place, so no marker is redacted again.
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(c) = rest.chars().next() {
        match all.iter().find(|value| rest.starts_with(**value)) {
            Some(value) => {
                out.push_str("<redacted>");
                rest = &rest[value.len()..];
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}
