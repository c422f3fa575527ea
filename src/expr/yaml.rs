//! Windsor v0.9's `yaml(pathOrText, input?)` and `yamlString(path, input)`
//! (pkg/runtime/evaluator/evaluator.go, evaluateYamlFunction): a file's YAML, or the text itself,
//! templated with `input` among the values. A template is compiled with the builtins of the
//! scope it is called from, and runs one `yaml()` level deeper than it.

use super::error::ExprError;
use super::host::Host;
use super::scope::{Call, Scope};
use super::value::{exhausted, go_type, go_yaml, size_of, type_name};
use crate::doc::{Map, Value};
use std::borrow::Cow;

type Args<'v> = [Cow<'v, Value>];

pub fn yaml(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value, ExprError> {
    call.count(args.len())?;
    read(call, args)
}

/// `yamlString(value)`: Go's `yaml.Marshal` text (not charged: a gap kept as it was, for now);
/// `yamlString(path, input)`: the file's text (else the argument), templated and charged.
pub fn yaml_string(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value, ExprError> {
    call.count(args.len())?;
    if let [value] = args {
        return Ok(Value::String(go_yaml(value)));
    }
    read(call, args)
}

/// The two forms that read a file or text, charged once made.
fn read(call: &Call<'_, '_>, args: &Args<'_>) -> Result<Value, ExprError> {
    let name = call.name();
    let first = args.first().map_or(&Value::Null, |a| a.as_ref());
    let Value::String(text) = first else {
        let message = match name {
            "yaml" => "yaml() first argument must be a string (file path or YAML content)",
            _ => "yamlString(path, input) first argument must be a string",
        };
        return Err(call.error(format!("{message}, got {}", go_type(first))));
    };
    let input = args.get(1).map(|a| a.as_ref()).filter(|input| !input.is_null());
    let scope = call.scope;
    let value = match name {
        "yaml" => yaml_value(text, input, scope),
        _ => yaml_source(text, scope.host)
            .and_then(|source| yaml_template(name, source, input, scope))
            .map(Value::String),
    };
    let value = value.map_err(|message| call.error(message))?;
    scope.budget.charge_output(size_of(&value)).map_err(exhausted(call.span))?;
    Ok(value)
}

/// The file `yaml()` and `yamlString()` read for `arg`, resolved next to the declaring file
/// (text holding a newline is YAML itself, never a path); `None` when there is none. A file that
/// exists but may not be read is an error, so refused content never passes as literal text.
fn yaml_file(arg: &str, host: &dyn Host) -> std::result::Result<Option<String>, String> {
    if arg.contains('\n') {
        return Ok(None);
    }
    host.yaml_file(arg)
}

/// `yamlString(path, input)`'s text: the file, else the argument itself.
fn yaml_source<'a>(arg: &'a str, host: &dyn Host) -> std::result::Result<Cow<'a, str>, String> {
    Ok(yaml_file(arg, host)?.map_or(Cow::Borrowed(arg), Cow::Owned))
}

/// The deepest `yaml()`/`yamlString()` nesting: each level is a whole template evaluation
/// (parser, interpolation, evaluator frames, up to 200 expression levels each): 8 such levels fit
/// the stack of a debug build, while a value nests 256.
const MAX_YAML_NESTING: usize = 8;

/// The message for nesting past [`MAX_YAML_NESTING`], passed up unwrapped by every level (so
/// its size does not grow with the depth).
fn too_deep() -> String {
    format!(
        "yaml() and yamlString() are nested more than {MAX_YAML_NESTING} levels deep (a file or text whose \
         ${{…}} calls yaml() or yamlString() on itself?): break the cycle"
    )
}

/// `text` with its `${…}` evaluated against the values and `input` (Windsor templates the file
/// with `input` among the names), when there is an input.
fn yaml_template(
    name: &str,
    text: Cow<'_, str>,
    input: Option<&Value>,
    scope: &Scope<'_>,
) -> std::result::Result<String, String> {
    let Some(input) = input else { return Ok(text.into_owned()) };
    let (env, budget) = (scope.env, scope.budget);
    let mut values = match env {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    budget.charge_output(size_of(env).saturating_add(size_of(input))).map_err(|e| e.to_string())?;
    values.insert("input".into(), input.clone());
    if scope.yaml_depth() >= MAX_YAML_NESTING {
        return Err(too_deep());
    }
    let values = Value::Object(values);
    match super::template::interpolate_in(&text, &scope.template(&values)) {
        Ok(Value::String(text)) => Ok(text),
        Ok(other) if name == "yaml" => {
            Err(format!("yaml() with input expects template to evaluate to a string, got {}", type_name(&other)))
        }
        Ok(other) => {
            Err(format!("yamlString(path, input) expects template to evaluate to a string, got {}", type_name(&other)))
        }
        Err(err) => {
            let deep = too_deep();
            match err.to_string().contains(&deep) {
                true => Err(deep),
                false => Err(format!("{name}() failed to template: {err}")),
            }
        }
    }
}

/// Windsor v0.9's `yaml(pathOrText, input?)` (evaluateYamlFunction): a file's YAML, else the
/// text itself as YAML (without `input`; a bare word, which parses as text, is "not found"); a
/// list of one mapping gives the mapping.
fn yaml_value(arg: &str, input: Option<&Value>, scope: &Scope<'_>) -> std::result::Result<Value, String> {
    let inline = arg.contains('\n');
    let file = yaml_file(arg, scope.host)?;
    let not_found = || format!("yaml() file not found: {arg}");
    let value = match file {
        None if !inline && input.is_some() => return Err(not_found()),
        None if !inline => {
            let value = first_document(arg).map_err(|_| not_found())?;
            if value.is_string() {
                return Err(not_found());
            }
            value
        }
        file => {
            let text = yaml_template("yaml", file.map_or(Cow::Borrowed(arg), Cow::Owned), input, scope)?;
            first_document(&text).map_err(|err| format!("yaml() failed to parse: {err}"))?
        }
    };
    Ok(match value {
        Value::Array(mut items) if items.len() == 1 && items[0].is_object() => items.swap_remove(0),
        other => other,
    })
}

/// The first YAML document of `text` (nil when there is none), as Go's `yaml.Unmarshal` reads.
fn first_document(text: &str) -> std::result::Result<Value, String> {
    let documents = crate::doc::read_yaml_documents(text).map_err(|err| err.message)?;
    Ok(documents.into_iter().next().unwrap_or(Value::Null))
}
