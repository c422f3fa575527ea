//! Handlebars templates (Landscaper's executions, in Handlebars) with the handlebars crate in
//! strict mode: a missing variable is an error naming it (`{{#if}}` still tests optional values).
//! Helpers: `toYaml`, `toJson`, `indent`, `nindent`, `default`, `b64enc`, `b64dec`, `quote`,
//! `getResource`, `backend`, and the crate's own `eq`, `ne`, `and`, `or`, `not`, `gt`, `lt`,
//! `lookup`.
//!
//! Templates are compiled once (by name) and rendered many times. This module knows nothing
//! about blueprints; the binding and the lookups for `getResource`/`backend` come from the caller.
//!
//! Every render charges the render's [`Budget`]: output as it is written (through
//! [`BudgetedWriter`]), one step per `each` round (our own `each`, because the crate's cannot be
//! wrapped) and the partial expansions counted when the template was compiled. Nesting deeper
//! than [`MAX_DEPTH`] is refused before the crate's recursive parser sees it.

pub mod go;
pub mod sprig;

use crate::doc::{to_yaml, Value};
use crate::limits::{Budget, Exhausted, MAX_DEPTH};
use base64::Engine as _;
use handlebars::{
    BlockContext, BlockParams, Context, Handlebars, Helper, HelperDef, HelperResult, JsonValue, Output, RenderContext,
    RenderError, RenderErrorReason, Renderable, ScopedJson, TemplateErrorReason,
};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex};

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
/// Resolves `backend "<typeRef path>" "<revision>"` (Capact's TypeInstance backends).
pub type BackendLookup = Arc<dyn Fn(&str, &str) -> Result<Value, String> + Send + Sync>;

pub struct Engine {
    handlebars: Handlebars<'static>,
    budget: Arc<Budget>,
    /// Partial invocations one render of each template makes (counted at compile time).
    expansions: HashMap<String, u64>,
    /// Per inline partial name, the invocations one call of it makes (the largest, should two
    /// templates use one name), for `each` to charge per round.
    partial_calls: PartialCalls,
}

type PartialCalls = Arc<Mutex<HashMap<String, u64>>>;

fn param<'a>(h: &'a Helper, index: usize) -> Result<&'a Value, RenderError> {
    h.param(index)
        .map(|p| p.value())
        // Handlebars' own ParamNotFoundForIndex wants a 'static name, which a user's helper call
        // does not have (leaking one per error let a template grow memory without bound).
        .ok_or_else(|| {
            RenderErrorReason::Other(format!("helper {} needs a parameter at position {}", h.name(), index + 1)).into()
        })
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Indents every non-empty line. The size is checked against the budget first: a width of
/// 4 000 000 000 would otherwise allocate gigabytes before anything noticed.
fn indent(text: &str, spaces: usize, budget: &Budget) -> Result<String, RenderError> {
    // One more line than the text has: the padding itself is allocated even for empty text.
    let lines = text.lines().count() as u64 + 1;
    let size = (spaces as u64).saturating_mul(lines).saturating_add(text.len() as u64);
    budget.output_fits(size).map_err(|err| helper_error("indent", err.to_string()))?;
    let pad = " ".repeat(spaces);
    Ok(indent_with(text, &pad))
}

fn indent_with(text: &str, pad: &str) -> String {
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
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| helper_error(name, "the first argument is a number of spaces".into()))
}

fn helper_error(name: &str, message: String) -> RenderError {
    RenderErrorReason::Other(format!("{name}: {message}")).into()
}

impl Engine {
    pub fn new(resources: ResourceLookup, backends: BackendLookup, budget: Arc<Budget>) -> Self {
        let mut handlebars = Handlebars::new();
        let partial_calls = PartialCalls::default();
        handlebars.register_helper("each", Box::new(BudgetedEach(budget.clone(), partial_calls.clone())));
        handlebars.set_strict_mode(true);
        // Templates produce YAML, not HTML.
        handlebars.register_escape_fn(handlebars::no_escape);
        register(&mut handlebars, "toJson", |h| {
            Ok(Value::String(serde_json::to_string(param(h, 0)?).unwrap_or_default()))
        });
        register(&mut handlebars, "toYaml", |h| {
            Ok(Value::String(to_yaml(param(h, 0)?).trim_end_matches('\n').to_string()))
        });
        let for_indent = budget.clone();
        register(&mut handlebars, "indent", move |h| {
            let spaces = spaces(h, "indent")?;
            Ok(Value::String(indent(&text_of(param(h, 1)?), spaces, &for_indent)?))
        });
        let for_nindent = budget.clone();
        register(&mut handlebars, "nindent", move |h| {
            let spaces = spaces(h, "nindent")?;
            Ok(Value::String(format!("\n{}", indent(&text_of(param(h, 1)?), spaces, &for_nindent)?)))
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
        Self { handlebars, budget, expansions: HashMap::new(), partial_calls }
    }

    /// Compiles a template under a name, once.
    pub fn compile(&mut self, name: &str, source: &str) -> Result<(), TemplateError> {
        if self.handlebars.has_template(name) {
            return Ok(());
        }
        check_depth(source)?;
        check_compile_cost(source)?;
        let (expansions, per_partial) = check_partials(source)?;
        self.expansions.insert(name.to_string(), expansions);
        if let Ok(mut calls) = self.partial_calls.lock() {
            for (partial, count) in per_partial {
                let entry = calls.entry(partial).or_insert(0);
                *entry = (*entry).max(count);
            }
        }
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
        let charge = self.budget.charge_steps(self.expansions.get(name).copied().unwrap_or(0));
        charge.map_err(|err| TemplateError { message: err.to_string(), line: None, column: None })?;
        let mut writer = BudgetedWriter { budget: &self.budget, text: Vec::new(), exhausted: None };
        let rendered = self.handlebars.render_to_write(name, data, &mut writer);
        if let Some(exhausted) = writer.exhausted {
            return Err(TemplateError { message: exhausted.to_string(), line: None, column: None });
        }
        rendered.map_err(|err| {
            let message = match err.reason() {
                RenderErrorReason::MissingVariable(Some(path)) => {
                    format!("missing variable {path:?} (templates are strict: give it a value or test it with #if)")
                }
                reason => reason.to_string(),
            };
            TemplateError { message, line: err.line_no, column: err.column_no }
        })?;
        String::from_utf8(writer.text).map_err(|_| TemplateError {
            message: "the template wrote invalid UTF-8".into(),
            line: None,
            column: None,
        })
    }
}

/// Collects a template's output and charges it to the render's budget as it is written, so a
/// template that repeats a large value stops at the limit instead of exhausting memory.
struct BudgetedWriter<'a> {
    budget: &'a Budget,
    text: Vec<u8>,
    exhausted: Option<Exhausted>,
}

impl std::io::Write for &mut BudgetedWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Err(err) = self.budget.charge_output(bytes.len()).and_then(|()| self.budget.charge_steps(1)) {
            self.exhausted = Some(err);
            return Err(std::io::Error::other("budget exhausted"));
        }
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `{{#each}}` as Handlebars defines it (lists and mappings, `@index`, `@key`, `@first`, `@last`,
/// block parameters, `{{else}}`), charging one step per round: three nested loops over 600
/// elements are 216 million rounds, which must meet the step budget rather than the clock.
/// Our own because the crate's `each` is private and a helper cannot wrap another.
struct BudgetedEach(Arc<Budget>, PartialCalls);

/// The partial invocations one rendering of `template` makes, loops inside it counted once
/// (they charge their own rounds).
fn partial_cost(template: &handlebars::Template, calls: &HashMap<String, u64>) -> u64 {
    use handlebars::template::{Parameter, TemplateElement};
    let mut cost = 0u64;
    let mut stack = vec![template];
    while let Some(template) = stack.pop() {
        for element in &template.elements {
            match element {
                TemplateElement::PartialExpression(partial) | TemplateElement::PartialBlock(partial) => {
                    let name = match &partial.name {
                        Parameter::Name(name) => Some(name.as_str()),
                        Parameter::Literal(JsonValue::String(name)) => Some(name.as_str()),
                        _ => None,
                    };
                    let inner = name.and_then(|n| calls.get(n)).copied().unwrap_or(0);
                    cost = cost.saturating_add(1).saturating_add(inner);
                }
                TemplateElement::HelperBlock(block) => {
                    stack.extend(block.template.iter().chain(block.inverse.iter()));
                }
                _ => {}
            }
        }
    }
    cost
}

impl HelperDef for BudgetedEach {
    fn call<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        registry: &'reg Handlebars<'reg>,
        context: &'rc Context,
        rc: &mut RenderContext<'reg, 'rc>,
        out: &mut dyn Output,
    ) -> HelperResult {
        let value = h.param(0).ok_or(RenderErrorReason::ParamNotFoundForIndex("each", 0))?;
        let Some(template) = h.template() else { return Ok(()) };
        let entries: Vec<(JsonValue, &JsonValue)> = match value.value() {
            JsonValue::Array(list) => list.iter().enumerate().map(|(i, v)| (JsonValue::from(i), v)).collect(),
            JsonValue::Object(map) => map.iter().map(|(k, v)| (JsonValue::String(k.clone()), v)).collect(),
            _ => Vec::new(),
        };
        let iterable = matches!(value.value(), JsonValue::Array(_) | JsonValue::Object(_));
        if entries.is_empty() {
            return match h.inverse() {
                Some(otherwise) => otherwise.render(registry, context, rc, out),
                None if !iterable && registry.strict_mode() => Err(RenderError::strict_error(value.relative_path())),
                None => Ok(()),
            };
        }
        let base = value.context_path().cloned();
        let mut block = BlockContext::new();
        match &base {
            Some(path) => block.base_path_mut().clone_from(path),
            None => block.set_base_value(value.value().clone()),
        }
        rc.push_block(block);
        let last = entries.len() - 1;
        let round = match self.1.lock() {
            Ok(calls) => 1u64.saturating_add(partial_cost(template, &calls)),
            Err(_) => 1,
        };
        for (i, (key, item)) in entries.iter().enumerate() {
            self.0.charge_steps(round).map_err(|err| RenderErrorReason::Other(err.to_string()))?;
            if let Some(block) = rc.block_mut() {
                block.set_local_var("first", JsonValue::Bool(i == 0));
                block.set_local_var("last", JsonValue::Bool(i == last));
                block.set_local_var("index", JsonValue::from(i));
                if key.is_string() {
                    block.set_local_var("key", key.clone());
                }
                // The element is addressed by path when the list came from the data (so
                // `../` works), by value when it was computed by a helper.
                let segment = match key {
                    JsonValue::String(k) => k.clone(),
                    other => other.to_string(),
                };
                match &base {
                    Some(path) => {
                        let mut element = path.clone();
                        element.push(segment);
                        *block.base_path_mut() = element;
                    }
                    None => block.set_base_value((*item).clone()),
                }
                let mut params = BlockParams::new();
                let (value_name, key_name) = match (h.block_param(), h.block_param_pair()) {
                    (Some(name), _) => (Some(name), None),
                    (None, Some((value_name, key_name))) => (Some(value_name), Some(key_name)),
                    (None, None) => (None, None),
                };
                if let Some(name) = value_name {
                    match &base {
                        Some(_) => params.add_path(name, Vec::new())?,
                        None => params.add_value(name, (*item).clone())?,
                    }
                }
                if let Some(name) = key_name {
                    params.add_value(name, key.clone())?;
                }
                if value_name.is_some() {
                    block.set_block_params(params);
                }
            }
            template.render(registry, context, rc, out)?;
        }
        rc.pop_block();
        Ok(())
    }
}

/// Refuses templates whose blocks nest deeper than [`MAX_DEPTH`]: the crate's parser and renderer
/// recurse once per level, and 5 000 nested `{{#if}}` overflowed the stack.
fn check_depth(source: &str) -> Result<(), TemplateError> {
    static BLOCK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\{\{\{?\{?~?\s*([#/^]|else\b)").unwrap_or_else(|_| unreachable!()));
    let mut depth = 0usize;
    for capture in BLOCK.captures_iter(source) {
        let (Some(whole), Some(kind)) = (capture.get(0), capture.get(1)) else { continue };
        match kind.as_str() {
            "#" | "^" => depth += 1,
            "/" => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > MAX_DEPTH {
            let before = &source[..whole.start()];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
            return Err(TemplateError {
                message: format!(
                    "blocks nest more than {MAX_DEPTH} levels deep: flatten the template (split it into partials or \
                     compute the condition once)"
                ),
                line: Some(line),
                column: Some(column),
            });
        }
    }
    Ok(())
}

/// The most tags times bytes a template may have. The handlebars crate finds the line and column
/// of every element by counting from the start of the text, so compiling takes time in
/// proportion to both multiplied: 32 000 tags in 386 KB took 20 s. At this bound it takes about
/// a second; real templates stay far below it (2 000 tags in 100 KB is two fifths of it).
const MAX_COMPILE_COST: usize = 500_000_000;

/// Refuses a template the crate would take more than about a second to compile.
fn check_compile_cost(source: &str) -> Result<(), TemplateError> {
    let tags = source.matches("{{").count();
    if tags.saturating_mul(source.len()) > MAX_COMPILE_COST {
        return Err(TemplateError {
            message: format!(
                "the template has {tags} tags in {} bytes, more than the Handlebars compiler handles in reasonable \
                 time (its cost grows with both multiplied): split it into several templates or files",
                source.len()
            ),
            line: None,
            column: None,
        });
    }
    Ok(())
}

/// The handlebars crate has no recursion limit: a partial that includes itself overflows the
/// stack. So partials must be inline partials of the same template (`{{#*inline "p"}}`), named
/// literally, and may not include each other in a cycle. Checked by hand on the text because the
/// crate does not expose its parse tree.
///
/// Returns the partial invocations one render makes and, per inline partial, the invocations one
/// call of it makes (`p1` calling `p0` twice, 24 levels deep, is 2^24 calls: the step budget
/// must see them, and the crate has no hook where a partial is entered).
fn check_partials(source: &str) -> Result<(u64, HashMap<String, u64>), TemplateError> {
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
    let mut top: Vec<&str> = Vec::new();
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
        match inlines.iter().find(|(_, body)| body.contains(&reference.start())) {
            Some((from, _)) => edges.entry(from.as_str()).or_default().push((name, reference.start())),
            None => top.push(name),
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
    // No cycles: count calls bottom-up, in the order depth-first search finished the partials.
    let mut calls: HashMap<String, u64> = HashMap::new();
    let mut pending: Vec<&str> = inlines.iter().map(|(name, _)| name.as_str()).collect();
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|name| {
            let children = edges.get(name).map(Vec::as_slice).unwrap_or_default();
            if children.iter().any(|(child, _)| !calls.contains_key(*child)) {
                return true;
            }
            let total = children.iter().fold(0u64, |sum, (child, _)| {
                sum.saturating_add(1).saturating_add(calls.get(*child).copied().unwrap_or(0))
            });
            calls.insert(name.to_string(), total);
            false
        });
        if pending.len() == before {
            break;
        }
    }
    let total =
        top.iter().fold(0u64, |sum, name| sum.saturating_add(1).saturating_add(calls.get(*name).copied().unwrap_or(0)));
    Ok((total, calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn engine() -> Engine {
        let items = Arc::new(|kind: &str, name: &str, _: Option<&str>| {
            (kind == "ConfigMap" && name == "cm").then(|| json!({"data": {"k": "v"}}))
        });
        Engine::new(items, Arc::new(|path: &str, _: &str| Ok(json!({"backend": path}))), Arc::new(Budget::default()))
    }

    fn with_budget(source: &str, data: Value, limits: crate::limits::Limits) -> Result<String, String> {
        let no_items = Arc::new(|_: &str, _: &str, _: Option<&str>| None);
        let mut engine = Engine::new(no_items, Arc::new(|_: &str, _: &str| Ok(Value::Null)), Budget::shared(limits));
        engine.compile("t", source).map_err(|e| e.message.clone())?;
        engine.render("t", &data).map_err(|e| e.message)
    }

    #[test]
    fn each_behaves_as_handlebars_each() {
        let data = json!({"l": ["a", "b"], "m": {"x": 1, "y": 2}, "e": [], "n": "s", "o": {"p": "q"}});
        assert_eq!(
            render("{{#each l}}{{@index}}{{this}}{{#if @first}}F{{/if}}{{#if @last}}L{{/if}};{{/each}}", data.clone()),
            Ok("0aF;1bL;".into())
        );
        assert_eq!(render("{{#each m}}{{@key}}={{this}},{{/each}}", data.clone()), Ok("x=1,y=2,".into()));
        assert_eq!(render("{{#each e}}x{{else}}empty{{/each}}", data.clone()), Ok("empty".into()));
        assert_eq!(render("{{#each l as |v i|}}{{i}}{{v}}{{../o.p}}{{/each}}", data.clone()), Ok("0aq1bq".into()));
        assert_eq!(render("{{#each m as |v k|}}{{k}}{{v}}{{/each}}", data.clone()), Ok("x1y2".into()));
        assert!(render("{{#each missing}}x{{/each}}", data.clone()).is_err(), "strict mode names the missing list");
    }

    #[test]
    fn hostile_templates_meet_the_budget() {
        let limits = crate::limits::Limits { max_steps: 1_000_000, max_output_bytes: 1 << 20, ..Default::default() };
        let list: Vec<u32> = (0..600).collect();
        let nested = "{{#each l}}{{#each ../l}}{{#each ../../l}}{{/each}}{{/each}}{{/each}}";
        let err = with_budget(nested, json!({"l": list}), limits).unwrap_err();
        assert!(err.contains("--max-steps"), "{err}");
        let err = with_budget(r#"{{indent 18446744073709551615 "x"}}"#, json!({}), limits).unwrap_err();
        assert!(err.contains("indent"), "{err}");
        let err = with_budget(r#"{{indent 4000000000 "x"}}"#, json!({}), limits).unwrap_err();
        assert!(err.contains("--max-output-size"), "{err}");
        let err = with_budget(r#"{{indent 4294967296 ""}}"#, json!({}), limits).unwrap_err();
        assert!(err.contains("--max-output-size"), "{err}");
        let mut partials = String::from("{{#*inline \"p0\"}}{{/inline}}");
        for level in 1..=24 {
            partials.push_str(&format!(
                "{{{{#*inline \"p{level}\"}}}}{{{{> p{}}}}}{{{{> p{}}}}}{{{{/inline}}}}",
                level - 1,
                level - 1
            ));
        }
        partials.push_str("{{> p24}}");
        let err = with_budget(&partials, json!({}), limits).unwrap_err();
        assert!(err.contains("--max-steps"), "{err}");
        let deep = format!("{}x{}", "{{#if a}}".repeat(5_000), "{{/if}}".repeat(5_000));
        let err = with_budget(&deep, json!({"a": true}), limits).unwrap_err();
        assert!(err.contains("nest more than 256"), "{err}");
        let output =
            with_budget("{{#each l}}0123456789{{/each}}", json!({"l": (0..200_000).collect::<Vec<_>>()}), limits);
        assert!(output.unwrap_err().contains("--max-output-size"));
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
