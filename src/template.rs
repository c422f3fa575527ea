//! Handlebars templates (SPEC §9) with the handlebars crate in strict mode: a missing variable
//! is an error naming it (`{{#if}}` still tests optional values). Helpers: `toYaml`, `toJson`,
//! `indent`, `nindent`, `default`, `b64enc`, `b64dec`, `quote`, `getResource`, `backend`, and
//! the crate's own `eq`, `ne`, `and`, `or`, `not`, `gt`, `lt`, `lookup`.
//!
//! Templates are compiled once (by name) and rendered many times. This module knows nothing
//! about blueprints; the binding and the lookups for `getResource`/`backend` come from the caller.

use crate::doc::{to_yaml, Value};
use base64::Engine as _;
use handlebars::{
    Context, Handlebars, Helper, HelperDef, RenderContext, RenderError, RenderErrorReason, ScopedJson,
    TemplateErrorReason,
};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

/// A template problem with its position in the template text (1-based), when known.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateError {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl TemplateError {
    /// The message with the template line and a caret under the column, when known.
    pub fn render(&self, source: &str) -> String {
        let (Some(line), Some(column)) = (self.line, self.column) else { return self.message.clone() };
        match source.lines().nth(line.saturating_sub(1)).filter(|text| !text.trim().is_empty()) {
            Some(text) => {
                let text = text.replace('\t', " ");
                format!("{} ({line}:{column})\n | {text}\n | {}^", self.message, ".".repeat(column.saturating_sub(1)))
            }
            None => format!("{} ({line}:{column})", self.message),
        }
    }
}

/// Looks up an input item for `getResource kind name [namespace]`.
pub type ResourceLookup = Arc<dyn Fn(&str, &str, Option<&str>) -> Option<Value> + Send + Sync>;
/// Resolves `backend "<typeRef path>" "<revision>"` (SPEC §6).
pub type BackendLookup = Arc<dyn Fn(&str, &str) -> Result<Value, String> + Send + Sync>;

pub struct Engine {
    handlebars: Handlebars<'static>,
}

fn param<'a>(h: &'a Helper, index: usize) -> Result<&'a Value, RenderError> {
    h.param(index)
        .map(|p| p.value())
        .ok_or_else(|| RenderErrorReason::ParamNotFoundForIndex(h.name().to_string().leak(), index).into())
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn indent(text: &str, spaces: usize) -> String {
    let pad = " ".repeat(spaces);
    text.lines()
        .map(|line| if line.is_empty() { String::new() } else { format!("{pad}{line}") })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A helper's body: its parameters to a JSON value.
type HelperFn = Box<dyn Fn(&Helper) -> Result<Value, RenderError> + Send + Sync>;

struct FnHelper(HelperFn);

impl HelperDef for FnHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        (self.0)(h).map(ScopedJson::Derived)
    }
}

fn register(
    handlebars: &mut Handlebars<'static>,
    name: &str,
    body: impl Fn(&Helper) -> Result<Value, RenderError> + Send + Sync + 'static,
) {
    handlebars.register_helper(name, Box::new(FnHelper(Box::new(body))));
}

fn spaces(h: &Helper, name: &str) -> Result<usize, RenderError> {
    param(h, 0)?
        .as_u64()
        .map(|n| n as usize)
        .ok_or_else(|| helper_error(name, "the first argument is a number of spaces".into()))
}

fn helper_error(name: &str, message: String) -> RenderError {
    RenderErrorReason::Other(format!("{name}: {message}")).into()
}

impl Engine {
    pub fn new(resources: ResourceLookup, backends: BackendLookup) -> Self {
        let mut handlebars = Handlebars::new();
        handlebars.set_strict_mode(true);
        // Templates produce YAML, not HTML.
        handlebars.register_escape_fn(handlebars::no_escape);
        register(&mut handlebars, "toJson", |h| {
            Ok(Value::String(serde_json::to_string(param(h, 0)?).unwrap_or_default()))
        });
        register(&mut handlebars, "toYaml", |h| {
            Ok(Value::String(to_yaml(param(h, 0)?).trim_end_matches('\n').to_string()))
        });
        register(&mut handlebars, "indent", |h| {
            let spaces = spaces(h, "indent")?;
            Ok(Value::String(indent(&text_of(param(h, 1)?), spaces)))
        });
        register(&mut handlebars, "nindent", |h| {
            let spaces = spaces(h, "nindent")?;
            Ok(Value::String(format!("\n{}", indent(&text_of(param(h, 1)?), spaces))))
        });
        register(&mut handlebars, "default", |h| {
            // Helm's order: default FALLBACK VALUE. A missing value is allowed here.
            let fallback = param(h, 0)?.clone();
            let value = h.param(1).map(|p| p.value().clone()).unwrap_or(Value::Null);
            let empty = matches!(&value, Value::Null | Value::Bool(false))
                || value.as_str().is_some_and(str::is_empty)
                || value.as_array().is_some_and(Vec::is_empty)
                || value.as_object().is_some_and(|m| m.is_empty());
            Ok(if empty { fallback } else { value })
        });
        register(&mut handlebars, "b64enc", |h| {
            Ok(Value::String(base64::engine::general_purpose::STANDARD.encode(text_of(param(h, 0)?))))
        });
        register(&mut handlebars, "b64dec", |h| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text_of(param(h, 0)?).trim())
                .map_err(|err| helper_error("b64dec", format!("not valid base64: {err}")))?;
            String::from_utf8(bytes).map(Value::String).map_err(|_| helper_error("b64dec", "not UTF-8 text".into()))
        });
        register(&mut handlebars, "quote", |h| {
            Ok(Value::String(serde_json::to_string(&Value::String(text_of(param(h, 0)?))).unwrap_or_default()))
        });
        register(&mut handlebars, "getResource", move |h| {
            let kind = param(h, 0)?.as_str().unwrap_or_default().to_string();
            let name = param(h, 1)?.as_str().unwrap_or_default().to_string();
            let namespace = h.param(2).and_then(|p| p.value().as_str()).map(str::to_string);
            resources(&kind, &name, namespace.as_deref())
                .ok_or_else(|| helper_error("getResource", format!("no {kind} {name:?} among the input items")))
        });
        register(&mut handlebars, "backend", move |h| {
            let path = param(h, 0)?.as_str().unwrap_or_default().to_string();
            let revision = h.param(1).and_then(|p| p.value().as_str()).unwrap_or_default().to_string();
            backends(&path, &revision).map_err(|err| helper_error("backend", err))
        });
        Self { handlebars }
    }

    /// Compiles a template under a name, once.
    pub fn compile(&mut self, name: &str, source: &str) -> Result<(), TemplateError> {
        if self.handlebars.has_template(name) {
            return Ok(());
        }
        check_partials(source)?;
        self.handlebars.register_template_string(name, source).map_err(|err| {
            let line = err.pos().map(|(line, _)| line);
            // The parser's own text lists every token it could have read; say what to change.
            let message = match err.reason() {
                TemplateErrorReason::InvalidSyntax(_)
                    if source.lines().skip(line.unwrap_or(1)).all(|l| l.trim().is_empty()) =>
                {
                    "invalid template: it ends inside an open block or expression: close each {{#name …}} with \
                     {{/name}} and each {{ with }}"
                        .to_string()
                }
                TemplateErrorReason::InvalidSyntax(_) => "invalid template: this is not Handlebars syntax: write \
                    {{name}}, {{helper arg}}, {{#if cond}}…{{/if}} or {{! comment }}, and {{{{raw}}}}…{{{{/raw}}}} \
                    around literal braces"
                    .to_string(),
                reason => format!("invalid template: {reason}"),
            };
            TemplateError { message, line, column: err.pos().map(|(_, column)| column) }
        })
    }

    /// Renders a compiled template with `data`.
    pub fn render(&self, name: &str, data: &Value) -> Result<String, TemplateError> {
        self.handlebars.render(name, data).map_err(|err| {
            let message = match err.reason() {
                RenderErrorReason::MissingVariable(Some(path)) => {
                    format!("missing variable {path:?} (templates are strict: give it a value or test it with #if)")
                }
                reason => reason.to_string(),
            };
            TemplateError { message, line: err.line_no, column: err.column_no }
        })
    }
}

/// The handlebars crate has no recursion limit: a partial that includes itself overflows the
/// stack. So partials must be inline partials of the same template (`{{#*inline "p"}}`), named
/// literally, and may not include each other in a cycle. Checked by hand on the text because the
/// crate does not expose its parse tree.
fn check_partials(source: &str) -> Result<(), TemplateError> {
    // Constant patterns: they compile, and do so once.
    static INLINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"\{\{~?\s*#\*inline\s+"([^"]*)"\s*~?\}\}"#).unwrap_or_else(|_| unreachable!()));
    static END: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\{\{~?\s*/inline\s*~?\}\}").unwrap_or_else(|_| unreachable!()));
    static PARTIAL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"\{\{~?\s*#?>\s*("[^"]*"|'[^']*'|[^\s}~]+)"#).unwrap_or_else(|_| unreachable!()));
    let at = |offset: usize, message: String| {
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
        TemplateError { message, line: Some(line), column: Some(column) }
    };
    // Inline partials: name and the byte range of the body.
    let mut inlines: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    for capture in INLINE.captures_iter(source) {
        let (Some(whole), Some(name)) = (capture.get(0), capture.get(1)) else { continue };
        let end = END.find_at(source, whole.end()).map_or(source.len(), |m| m.start());
        inlines.push((name.as_str().to_string(), whole.end()..end));
    }
    let mut edges: HashMap<&str, Vec<(&str, usize)>> = HashMap::new();
    for capture in PARTIAL.captures_iter(source) {
        let Some(reference) = capture.get(1) else { continue };
        let name = reference.as_str().trim_matches(|c| c == '"' || c == '\'');
        if name.starts_with('(') {
            return Err(at(reference.start(), "dynamic partial names are not supported: name the partial".into()));
        }
        if !inlines.iter().any(|(inline, _)| inline == name) {
            return Err(at(
                reference.start(),
                format!("partial {name:?} is not defined here: define it in this template with {{{{#*inline \"{name}\"}}}}…{{{{/inline}}}}"),
            ));
        }
        if let Some((from, _)) = inlines.iter().find(|(_, body)| body.contains(&reference.start())) {
            edges.entry(from.as_str()).or_default().push((name, reference.start()));
        }
    }
    // A cycle among inline partials: depth-first from each, with the path on a stack.
    fn visit<'a>(
        node: &'a str,
        edges: &HashMap<&'a str, Vec<(&'a str, usize)>>,
        path: &mut Vec<&'a str>,
        done: &mut HashSet<&'a str>,
    ) -> Option<(Vec<&'a str>, usize)> {
        if done.contains(node) {
            return None;
        }
        path.push(node);
        for &(next, offset) in edges.get(node).into_iter().flatten() {
            if let Some(start) = path.iter().position(|p| *p == next) {
                let mut cycle = path[start..].to_vec();
                cycle.push(next);
                return Some((cycle, offset));
            }
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node);
        None
    }
    let mut done = HashSet::new();
    for (name, _) in &inlines {
        if let Some((cycle, offset)) = visit(name, &edges, &mut Vec::new(), &mut done) {
            return Err(at(
                offset,
                format!("partial {:?} includes itself ({}): templates may not recurse", cycle[0], cycle.join(" > ")),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn engine() -> Engine {
        let items = Arc::new(|kind: &str, name: &str, _: Option<&str>| {
            (kind == "ConfigMap" && name == "cm").then(|| json!({"data": {"k": "v"}}))
        });
        Engine::new(items, Arc::new(|path: &str, _: &str| Ok(json!({"backend": path}))))
    }

    fn render(source: &str, data: Value) -> Result<String, String> {
        let mut engine = engine();
        engine.compile("t", source).map_err(|e| e.render(source))?;
        engine.render("t", &data).map_err(|e| e.render(source))
    }

    #[test]
    fn partials_must_be_inline_and_must_not_recurse() {
        let ok = r#"{{#*inline "row"}}<{{this}}>{{/inline}}{{#each xs}}{{> row}}{{/each}}"#;
        assert_eq!(render(ok, json!({"xs": [1, 2]})), Ok("<1><2>".to_string()));
        for (source, expected) in [
            ("{{> other}}", "partial \"other\" is not defined here"),
            ("{{> (lookup this 'p')}}", "dynamic partial names are not supported"),
            (r#"{{#*inline "a"}}{{#if x}}{{> a}}{{/if}}{{/inline}}{{> a}}"#, "partial \"a\" includes itself (a > a)"),
        ] {
            let err = render(source, json!({})).err().unwrap_or_default();
            assert!(err.contains(expected), "{source}: {err}");
        }
    }

    #[test]
    fn helpers() {
        let data = json!({"imports": {"m": {"a": 1, "b": [1, 2]}, "s": "x\"y", "empty": ""}});
        assert_eq!(render("{{toJson imports.m}}", data.clone()), Ok(r#"{"a":1,"b":[1,2]}"#.into()));
        assert_eq!(
            render("m:\n{{indent 2 (toYaml imports.m)}}", data.clone()),
            Ok("m:\n  a: 1\n  b:\n  - 1\n  - 2".into())
        );
        assert_eq!(
            render("{{default \"d\" imports.empty}}/{{default \"d\" imports.s}}", data.clone()),
            Ok("d/x\"y".into())
        );
        assert_eq!(render("{{quote imports.s}}", data.clone()), Ok(r#""x\"y""#.into()));
        assert_eq!(render("{{b64dec (b64enc \"hi\")}}", data.clone()), Ok("hi".into()));
        assert_eq!(render("{{#if (and (eq imports.m.a 1) (not false))}}yes{{/if}}", data.clone()), Ok("yes".into()));
        assert_eq!(
            render("{{#with (getResource \"ConfigMap\" \"cm\")}}{{data.k}}{{/with}}", data.clone()),
            Ok("v".into())
        );
        assert_eq!(
            render("{{lookup (backend \"cap.type.db\" \"0.1.0\") \"backend\"}}", data),
            Ok("cap.type.db".into())
        );
    }

    #[test]
    fn strict_mode_names_the_variable_with_a_caret() {
        let err = render("a: 1\nb: {{imports.nope}}", json!({"imports": {}})).err().unwrap_or_default();
        assert!(err.starts_with("missing variable \"imports.nope\""), "{err}");
        assert!(err.contains("(2:4)\n | b: {{imports.nope}}\n | ...^"), "{err}");
        assert_eq!(render("{{#if imports.nope}}x{{else}}y{{/if}}", json!({"imports": {}})), Ok("y".into()));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = render("{{imports.a", json!({})).err().unwrap_or_default();
        assert!(err.starts_with("invalid template:"), "{err}");
    }
}
