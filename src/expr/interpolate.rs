//! `${…}` interpolation inside strings, as Windsor interpolates feature fields (the templates
//! are `template.rs`'s): here they are compiled with the crate's builtins, which this module,
//! above every one of them, may name.

use super::builtins::TABLE;
use super::host::Host;
use super::scope::Scope;
use super::semantics::Semantics;
use super::template::interpolate_in;
pub use super::template::{InterpolationError, Template};
pub use super::value::{embedded_text, sorted};
use crate::doc::Value;
use crate::limits::{Budget, MAX_DEPTH};

impl Template {
    /// Compiles `text`; `Ok(None)` when it holds no `${` (the common case costs one scan).
    pub fn compile(text: &str) -> Result<Option<Self>, InterpolationError> {
        Self::compile_in(text, false, &TABLE, Semantics::Expr)
    }

    /// Compiles `text` as Windsor does: a `${…}` that is a secret notation is its deferred
    /// `secret(…)` call ([`super::secret`]); `semantics` is the release's meaning.
    pub fn compile_windsor(text: &str, semantics: Semantics) -> Result<Option<Self>, InterpolationError> {
        Self::compile_in(text, true, &TABLE, semantics)
    }
}

/// Interpolates one string: the string itself when it has no `${`.
pub fn interpolate(text: &str, env: &Value, host: &dyn Host, budget: &Budget) -> Result<Value, InterpolationError> {
    interpolate_in(text, &Scope::new(env, host, budget, &TABLE, Semantics::Expr))
}

/// Interpolates every string inside a value (maps and lists, at most [`MAX_DEPTH`] deep),
/// keeping types where a string is one whole expression.
pub fn interpolate_value(
    value: &Value,
    env: &Value,
    host: &dyn Host,
    budget: &Budget,
) -> Result<Value, InterpolationError> {
    interpolate_nested(value, env, host, budget, 0)
}

fn interpolate_nested(
    value: &Value,
    env: &Value,
    host: &dyn Host,
    budget: &Budget,
    depth: usize,
) -> Result<Value, InterpolationError> {
    if depth > MAX_DEPTH {
        return Err(InterpolationError {
            expression: None,
            message: format!("the value is nested more than {MAX_DEPTH} levels deep; flatten it"),
        });
    }
    let nested = |v: &Value| interpolate_nested(v, env, host, budget, depth + 1);
    Ok(match value {
        Value::String(text) => interpolate(text, env, host, budget)?,
        Value::Array(items) => Value::Array(items.iter().map(nested).collect::<Result<_, _>>()?),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| nested(v).map(|v| (k.clone(), v))).collect::<Result<_, _>>()?)
        }
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::NoFiles;
    use serde_json::json;

    fn run(text: &str) -> Result<Value, String> {
        let env = json!({"dns": {"domain": "example.com"}, "n": 3, "f": 2.5, "on": true, "m": {"a": [1]}});
        interpolate(text, &env, &NoFiles, &Budget::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn whole_expression_keeps_its_type() {
        assert_eq!(run("${n}"), Ok(json!(3)));
        assert_eq!(run("${on}"), Ok(json!(true)));
        assert_eq!(run("${m}"), Ok(json!({"a": [1]})));
        assert_eq!(run("${missing}"), Ok(json!(null)));
        assert_eq!(run("${ n + 1 }"), Ok(json!(4)));
    }

    #[test]
    fn mixed_text_is_stringified() {
        assert_eq!(run("app.${dns.domain}"), Ok(json!("app.example.com")));
        assert_eq!(run("${n}${f}-${missing}-${on}-${m}"), Ok(json!("32.5--true-a:\n- 1")));
        assert_eq!(run("no expressions"), Ok(json!("no expressions")));
    }

    #[test]
    fn braces_inside_strings_and_maps() {
        assert_eq!(run("${'}' + dns.domain}"), Ok(json!("}example.com")));
        assert_eq!(run("${ {a: 1}.a }"), Ok(json!(1)));
    }

    #[test]
    fn escapes_and_no_rescanning() {
        assert_eq!(run("$${literal}"), Ok(json!("${literal}")));
        assert_eq!(run("$${a} ${n}"), Ok(json!("${a} 3")));
        assert_eq!(run("${'$' + '{n}'}"), Ok(json!("${n}")));
        assert_eq!(run("cost: $5"), Ok(json!("cost: $5")));
    }

    #[test]
    fn errors_name_the_expression() {
        assert_eq!(
            run("${n"),
            Err("unclosed expression in string: ${n (the ${ at column 1 has no closing }; write $${ for a literal ${)"
                .to_string())
        );
        let err = run("x ${n +} y").err().unwrap_or_default();
        assert!(err.starts_with("failed to evaluate expression '${n +}': unexpected token"), "{err}");
    }
}
