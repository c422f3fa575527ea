//! Handlebars templates (SPEC §9) with the handlebars crate in strict mode: a missing variable
//! is an error naming it (`{{#if}}` still tests optional values). Helpers: `toYaml`, `toJson`,
//! `indent`, `nindent`, `default`, `b64enc`, `b64dec`, `quote`, `getResource`, `backend`, and
//! the crate's own `eq`, `ne`, `and`, `or`, `not`, `gt`, `lt`, `lookup`.
//!
//! Templates are compiled once (by name) and rendered many times. This module knows nothing
//! about blueprints; the binding and the lookups for `getResource`/`backend` come from the caller.
//!
//! Every render charges the render's [`Budget`]: the text written and every helper result to the
//! output budget (as it is written, so oversized output is never materialised), and every `each`
//! round and partial invocation to the step budget (the crate has no hook of its own, so `each`
//! is ours and a partial's cost is known from its text before it runs).

use crate::doc::{to_yaml, Value};
use crate::limits::{Budget, Exhausted, MAX_DEPTH};
use base64::Engine as _;
use handlebars::template::TemplateElement;
use handlebars::{
    BlockContext, BlockParams, Context, Handlebars, Helper, HelperDef, HelperResult, JsonRender, Output, PathAndJson,
    RenderContext, RenderError, RenderErrorReason, Renderable, ScopedJson, Template, TemplateErrorReason,
};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, RwLock};

/// Steps one `each` round costs. A step is meant as about 100 ns of work; a round pushes a block
/// context and renders its body, about a microsecond measured (three nested loops over 600
/// elements ran 50 million rounds in far more than 10 s at one step each).
const ROUND_STEPS: u64 = 10;
/// Steps one partial invocation costs: it copies its context, like a round.
const PARTIAL_STEPS: u64 = 10;

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

/// Steps each inline partial costs per invocation, itself and the partials it includes (by
/// name; the most expensive definition of a name among the compiled templates).
type Weights = Arc<RwLock<HashMap<String, u64>>>;

pub struct Engine {
    handlebars: Handlebars<'static>,
    budget: Arc<Budget>,
    weights: Weights,
}

fn exhausted(err: Exhausted) -> RenderError {
    RenderErrorReason::Other(err.to_string()).into()
}

/// Steps that rendering `template` once costs beyond its own text: the partials it includes,
/// including those in nested blocks other than `each` (which charges its own rounds).
fn body_steps(template: Option<&Template>, weights: &HashMap<String, u64>, depth: usize) -> u64 {
    let Some(template) = template else { return 0 };
    if depth > MAX_DEPTH {
        return 0;
    }
    let mut steps: u64 = 0;
    for element in &template.elements {
        let more = match element {
            TemplateElement::PartialExpression(d) | TemplateElement::PartialBlock(d) => {
                let name = d.name.as_name().map(str::to_string).or_else(|| match &d.name {
                    handlebars::template::Parameter::Literal(Value::String(s)) => Some(s.clone()),
                    _ => None,
                });
                name.and_then(|n| weights.get(&n).copied()).unwrap_or(PARTIAL_STEPS)
            }
            TemplateElement::HelperBlock(h) if h.name.as_name() != Some("each") => body_steps(
                h.template.as_ref(),
                weights,
                depth + 1,
            )
            .saturating_add(body_steps(h.inverse.as_ref(), weights, depth + 1)),
            _ => 0,
        };
        steps = steps.saturating_add(more);
    }
    steps
}

/// The crate's `each` (handlebars 6.4, helper_each.rs, MIT), charging one step per round plus
/// the partials its body includes, before it starts: nested loops over large lists end in a
/// clear error instead of running for minutes.
struct Each {
    budget: Arc<Budget>,
    weights: Weights,
}

impl HelperDef for Each {
    fn call<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        r: &'reg Handlebars<'reg>,
        ctx: &'rc Context,
        rc: &mut RenderContext<'reg, 'rc>,
        out: &mut dyn Output,
    ) -> HelperResult {
        let value = h.param(0).ok_or(RenderErrorReason::ParamNotFoundForIndex("each", 0))?;
        let Some(template) = h.template() else { return Ok(()) };
        let rounds = match value.value() {
            Value::Array(list) => list.len(),
            Value::Object(map) => map.len(),
            _ => 0,
        } as u64;
        let per_round = match self.weights.read() {
            Ok(weights) => ROUND_STEPS.saturating_add(body_steps(Some(template), &weights, 0)),
            Err(_) => ROUND_STEPS,
        };
        self.budget.charge_steps(rounds.saturating_mul(per_round)).map_err(exhausted)?;
        let entries: Vec<(Value, &Value)> = match value.value() {
            Value::Array(list) if !list.is_empty() || h.inverse().is_none() => {
                list.iter().enumerate().map(|(i, v)| (Value::from(i), v)).collect()
            }
            Value::Object(map) if !map.is_empty() || h.inverse().is_none() => {
                map.iter().map(|(k, v)| (Value::String(k.clone()), v)).collect()
            }
            _ => {
                return match h.inverse() {
                    Some(inverse) => inverse.render(r, ctx, rc, out),
                    None if r.strict_mode() => Err(RenderError::strict_error(value.relative_path())),
                    None => Ok(()),
                }
            }
        };
        let is_object = value.value().is_object();
        rc.push_block(create_block(value));
        let base_path = value.context_path();
        let len = entries.len();
        for (i, (key, v)) in entries.into_iter().enumerate() {
            if let Some(block) = rc.block_mut() {
                block.set_local_var("first", Value::Bool(i == 0));
                block.set_local_var("last", Value::Bool(i + 1 == len));
                if is_object {
                    block.set_local_var("key", key.clone());
                }
                block.set_local_var("index", Value::from(i));
                let relative = match &key {
                    Value::String(k) => k.clone(),
                    other => other.render(),
                };
                match base_path {
                    Some(path) if i == 0 => {
                        let mut path = path.clone();
                        path.push(relative);
                        *block.base_path_mut() = path;
                    }
                    Some(_) => {
                        if let Some(last) = block.base_path_mut().last_mut() {
                            *last = relative;
                        }
                    }
                    None => block.set_base_value(v.clone()),
                }
                let params = if let Some(name) = h.block_param() {
                    let mut params = BlockParams::new();
                    block_value(&mut params, name, base_path.is_some(), v)?;
                    Some(params)
                } else if let Some((name, key_name)) = h.block_param_pair() {
                    let mut params = BlockParams::new();
                    block_value(&mut params, name, base_path.is_some(), v)?;
                    params.add_value(key_name, key)?;
                    Some(params)
                } else {
                    None
                };
                if let Some(params) = params {
                    block.set_block_params(params);
                }
            }
            template.render(r, ctx, rc, out)?;
        }
        rc.pop_block();
        Ok(())
    }
}

fn block_value<'rc>(
    params: &mut BlockParams<'rc>,
    name: &'rc str,
    by_path: bool,
    v: &Value,
) -> Result<(), RenderError> {
    if by_path {
        params.add_path(name, Vec::new())
    } else {
        params.add_value(name, v.clone())
    }
}

fn create_block<'rc>(param: &PathAndJson<'rc>) -> BlockContext<'rc> {
    let mut block = BlockContext::new();
    match param.context_path() {
        Some(path) => block.base_path_mut().clone_from(path),
        None => block.set_base_value(param.value().clone()),
    }
    block
}

/// Where a render writes: every byte is charged to the budget before it is kept.
struct Sink<'b> {
    text: String,
    budget: &'b Budget,
    exhausted: Option<Exhausted>,
}

impl Output for Sink<'_> {
    fn write(&mut self, seg: &str) -> Result<(), std::io::Error> {
        if let Err(err) = self.budget.charge_output(seg.len()) {
            self.exhausted = Some(err.clone());
            return Err(std::io::Error::other(err));
        }
        self.text.push_str(seg);
        Ok(())
    }
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

/// `text` with every non-empty line indented, refused before anything is allocated when the
/// result would not fit the output budget (`{{indent 4000000000 "x"}}`).
fn indent(name: &str, text: &str, spaces: usize, budget: &Budget) -> Result<String, RenderError> {
    let lines = text.lines().count().max(1) as u64;
    let size = (spaces as u64).saturating_mul(lines).saturating_add(text.len() as u64).saturating_add(1);
    budget.output_fits(size).map_err(|err| helper_error(name, err.to_string()))?;
    let pad = " ".repeat(spaces);
    let mut out = String::with_capacity(usize::try_from(size).unwrap_or(0));
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Ok(out)
}

/// A helper's body: its parameters to a JSON value.
type HelperFn = Box<dyn Fn(&Helper) -> Result<Value, RenderError> + Send + Sync>;

/// A helper and the budget its results are charged to (a result used as an argument is
/// produced as much as one written out).
struct FnHelper(HelperFn, Arc<Budget>);

impl HelperDef for FnHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let value = (self.0)(h)?;
        let size = match &value {
            Value::String(s) => s.len(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 8,
            // Structured results (getResource, backend) are input that already exists.
            _ => 0,
        };
        self.1.charge_output(size).map_err(exhausted)?;
        self.1.charge_steps(1).map_err(exhausted)?;
        Ok(ScopedJson::Derived(value))
    }
}

fn register(
    handlebars: &mut Handlebars<'static>,
    budget: &Arc<Budget>,
    name: &str,
    body: impl Fn(&Helper) -> Result<Value, RenderError> + Send + Sync + 'static,
) {
    handlebars.register_helper(name, Box::new(FnHelper(Box::new(body), budget.clone())));
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
    /// An engine whose renders charge `budget` (the render's).
    pub fn new(resources: ResourceLookup, backends: BackendLookup, budget: Arc<Budget>) -> Self {
        let mut handlebars = Handlebars::new();
        let weights = Weights::default();
        handlebars.register_helper("each", Box::new(Each { budget: budget.clone(), weights: weights.clone() }));
        handlebars.set_strict_mode(true);
        // Templates produce YAML, not HTML.
        handlebars.register_escape_fn(handlebars::no_escape);
        register(&mut handlebars, &budget, "toJson", |h| {
            Ok(Value::String(serde_json::to_string(param(h, 0)?).unwrap_or_default()))
        });
        register(&mut handlebars, &budget, "toYaml", |h| {
            Ok(Value::String(to_yaml(param(h, 0)?).trim_end_matches('\n').to_string()))
        });
        let shared = budget.clone();
        register(&mut handlebars, &budget, "indent", move |h| {
            let spaces = spaces(h, "indent")?;
            Ok(Value::String(indent("indent", &text_of(param(h, 1)?), spaces, &shared)?))
        });
        let shared = budget.clone();
        register(&mut handlebars, &budget, "nindent", move |h| {
            let spaces = spaces(h, "nindent")?;
            Ok(Value::String(format!("\n{}", indent("nindent", &text_of(param(h, 1)?), spaces, &shared)?)))
        });
        register(&mut handlebars, &budget, "default", |h| {
            // Helm's order: default FALLBACK VALUE. A missing value is allowed here.
            let fallback = param(h, 0)?.clone();
            let value = h.param(1).map(|p| p.value().clone()).unwrap_or(Value::Null);
            let empty = matches!(&value, Value::Null | Value::Bool(false))
                || value.as_str().is_some_and(str::is_empty)
                || value.as_array().is_some_and(Vec::is_empty)
                || value.as_object().is_some_and(|m| m.is_empty());
            Ok(if empty { fallback } else { value })
        });
        register(&mut handlebars, &budget, "b64enc", |h| {
            Ok(Value::String(base64::engine::general_purpose::STANDARD.encode(text_of(param(h, 0)?))))
        });
        register(&mut handlebars, &budget, "b64dec", |h| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text_of(param(h, 0)?).trim())
                .map_err(|err| helper_error("b64dec", format!("not valid base64: {err}")))?;
            String::from_utf8(bytes).map(Value::String).map_err(|_| helper_error("b64dec", "not UTF-8 text".into()))
        });
        register(&mut handlebars, &budget, "quote", |h| {
            Ok(Value::String(serde_json::to_string(&Value::String(text_of(param(h, 0)?))).unwrap_or_default()))
        });
        register(&mut handlebars, &budget, "getResource", move |h| {
            let kind = param(h, 0)?.as_str().unwrap_or_default().to_string();
            let name = param(h, 1)?.as_str().unwrap_or_default().to_string();
            let namespace = h.param(2).and_then(|p| p.value().as_str()).map(str::to_string);
            resources(&kind, &name, namespace.as_deref())
                .ok_or_else(|| helper_error("getResource", format!("no {kind} {name:?} among the input items")))
        });
        register(&mut handlebars, &budget, "backend", move |h| {
            let path = param(h, 0)?.as_str().unwrap_or_default().to_string();
            let revision = h.param(1).and_then(|p| p.value().as_str()).unwrap_or_default().to_string();
            backends(&path, &revision).map_err(|err| helper_error("backend", err))
        });
        Self { handlebars, budget, weights }
    }

    /// Compiles a template under a name, once.
    pub fn compile(&mut self, name: &str, source: &str) -> Result<(), TemplateError> {
        if self.handlebars.has_template(name) {
            return Ok(());
        }
        let depths = check_nesting(source)?;
        let weights = check_partials(source, &depths)?;
        if let Ok(mut all) = self.weights.write() {
            for (name, steps) in weights {
                let known = all.entry(name).or_insert(0);
                *known = (*known).max(steps);
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

    /// Renders a compiled template with `data`, into text charged to the budget as it is written.
    pub fn render(&self, name: &str, data: &Value) -> Result<String, TemplateError> {
        let fail = |message: String| TemplateError { message, line: None, column: None };
        if let Some(depth) = deeper_than(data, MAX_DEPTH) {
            return Err(fail(format!(
                "the template's data nest deeper than {depth} levels: flatten the values the template reads"
            )));
        }
        let Some(template) = self.handlebars.get_template(name) else {
            return Err(fail(format!("template {name:?} was not compiled")));
        };
        let own = match self.weights.read() {
            Ok(weights) => 1 + body_steps(Some(template), &weights, 0),
            Err(_) => 1,
        };
        self.budget.charge_steps(own).map_err(|err| fail(err.to_string()))?;
        let context = Context::wraps(data).map_err(|err| fail(err.to_string()))?;
        let mut sink = Sink { text: String::new(), budget: &self.budget, exhausted: None };
        let mut rc = RenderContext::new(template.name.as_ref());
        match template.render(&self.handlebars, &context, &mut rc, &mut sink) {
            Ok(()) => Ok(sink.text),
            Err(err) => {
                let message = match (sink.exhausted, err.reason()) {
                    (Some(exhausted), _) => exhausted.to_string(),
                    (None, RenderErrorReason::MissingVariable(Some(path))) => {
                        format!("missing variable {path:?} (templates are strict: give it a value or test it with #if)")
                    }
                    (None, reason) => reason.to_string(),
                };
                Err(TemplateError { message, line: err.line_no, column: err.column_no })
            }
        }
    }
}

/// Whether `value` nests deeper than `limit` (walked with a stack of its own, not recursion):
/// the crate copies the data recursively, and so would a deep value's conversion.
pub fn deeper_than(value: &Value, limit: usize) -> Option<usize> {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > limit {
            return Some(limit);
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    None
}

/// The handlebars parser and renderer recurse once per nested block (and per nested
/// subexpression): 5 000 nested `{{#if}}` overflow the stack. Counted on the text before
/// compiling: block openers and closers, and parentheses inside a tag.
/// Returns the block depth after each tag that changes it, by offset.
fn check_nesting(source: &str) -> Result<Vec<(usize, usize)>, TemplateError> {
    let bytes = source.as_bytes();
    let mut depths = Vec::new();
    let mut depth = 0usize;
    let mut at = 0usize;
    while let Some(found) = source[at..].find("{{") {
        let start = at + found;
        // Raw blocks hold literal text up to their closer.
        if source[start..].starts_with("{{{{") {
            at = match source[start + 4..].find("{{{{/") {
                Some(end) => start + 4 + end + 5,
                None => return Ok(depths),
            };
            continue;
        }
        let mut i = start + 2;
        while i < bytes.len() && matches!(bytes[i], b'{' | b'~' | b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        if source[i..].starts_with("!--") {
            at = source[i..].find("--}}").map_or(bytes.len(), |end| i + end + 4);
            continue;
        }
        if source[i..].starts_with('!') {
            at = source[i..].find("}}").map_or(bytes.len(), |end| i + end + 2);
            continue;
        }
        let before = depth;
        match bytes.get(i) {
            Some(b'#') => depth += 1,
            Some(b'^') if !matches!(bytes.get(i + 1), Some(b'}' | b'~')) => depth += 1,
            Some(b'/') => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth != before {
            depths.push((start, depth));
        }
        // Subexpressions inside the tag, up to its end (quotes may hold braces).
        let (mut parens, mut deepest, mut quote) = (0usize, 0usize, None);
        let mut end = bytes.len();
        let mut j = i;
        while j < bytes.len() {
            let c = bytes[j];
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'"' || c == b'\'' => quote = Some(c),
                None if c == b'(' => {
                    parens += 1;
                    deepest = deepest.max(parens);
                }
                None if c == b')' => parens = parens.saturating_sub(1),
                None if c == b'}' && bytes.get(j + 1) == Some(&b'}') => {
                    end = j + 2;
                    break;
                }
                None => {}
            }
            j += 1;
        }
        if depth > MAX_DEPTH || deepest > MAX_DEPTH {
            let before = &source[..start];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
            let what = if depth > MAX_DEPTH { "blocks" } else { "subexpressions" };
            return Err(TemplateError {
                message: format!(
                    "the template nests {what} deeper than {MAX_DEPTH} levels: combine conditions with \
                     (and …) or (or …), or flatten the data"
                ),
                line: Some(line),
                column: Some(column),
            });
        }
        at = end;
    }
    Ok(depths)
}

/// The handlebars crate has no recursion limit: a partial that includes itself overflows the
/// stack. So partials must be inline partials of the same template (`{{#*inline "p"}}`), named
/// literally, and may not include each other in a cycle. Checked by hand on the text because the
/// crate does not expose its parse tree.
///
/// Returns each inline partial's steps per invocation ([`PARTIAL_STEPS`] for itself and what it
/// includes), and refuses chains of partials that together nest deeper than [`MAX_DEPTH`]
/// (`depths` are the block depths of [`check_nesting`], each partial adding its site's depth).
fn check_partials(source: &str, depths: &[(usize, usize)]) -> Result<HashMap<String, u64>, TemplateError> {
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
    let mut roots: Vec<(&str, usize)> = Vec::new();
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
            None => roots.push((name, reference.start())),
        }
    }
    // A cycle among inline partials: depth-first from each, with the path on a stack. A path
    // longer than MAX_DEPTH is refused below as too deep before it could overflow.
    fn visit<'a>(
        node: &'a str,
        edges: &HashMap<&'a str, Vec<(&'a str, usize)>>,
        path: &mut Vec<&'a str>,
        done: &mut HashSet<&'a str>,
    ) -> Option<(Vec<&'a str>, usize)> {
        if done.contains(node) || path.len() > MAX_DEPTH {
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
    // Now a DAG: each partial's cost and nesting, callees first (memoised; the order is found
    // with an explicit stack, so a long chain cannot recurse).
    let depth_at = |offset: usize| match depths.binary_search_by(|(at, _)| at.cmp(&offset)) {
        Ok(i) => depths[i].1,
        Err(0) => 0,
        Err(i) => depths[i - 1].1,
    };
    let mut cost: HashMap<&str, (u64, usize)> = HashMap::new();
    for (start, _) in &inlines {
        let mut stack = vec![(start.as_str(), false)];
        while let Some((node, expanded)) = stack.pop() {
            if cost.contains_key(node) {
                continue;
            }
            let callees = edges.get(node).map(Vec::as_slice).unwrap_or_default();
            if !expanded {
                stack.push((node, true));
                stack.extend(callees.iter().filter(|(c, _)| !cost.contains_key(c)).map(|(c, _)| (*c, false)));
                continue;
            }
            let (mut steps, mut depth) = (PARTIAL_STEPS, 0usize);
            for (callee, offset) in callees {
                let (s, d) = cost.get(callee).copied().unwrap_or((PARTIAL_STEPS, 0));
                steps = steps.saturating_add(s);
                depth = depth.max(depth_at(*offset).saturating_add(1).saturating_add(d));
            }
            cost.insert(node, (steps, depth));
        }
    }
    for (name, offset) in roots {
        let depth = depth_at(offset).saturating_add(1).saturating_add(cost.get(name).map_or(0, |c| c.1));
        if depth > MAX_DEPTH {
            return Err(at(
                offset,
                format!(
                    "partial {name:?} with the partials it includes nests deeper than {MAX_DEPTH} levels: \
                     include fewer partials inside each other"
                ),
            ));
        }
    }
    Ok(cost.into_iter().map(|(name, (steps, _))| (name.to_string(), steps)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn engine() -> Engine {
        let items = Arc::new(|kind: &str, name: &str, _: Option<&str>| {
            (kind == "ConfigMap" && name == "cm").then(|| json!({"data": {"k": "v"}}))
        });
        Engine::new(items, Arc::new(|path: &str, _: &str| Ok(json!({"backend": path}))), Arc::default())
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
    fn size_arguments_are_checked_before_allocating() {
        for source in
            [r#"{{indent 18446744073709551615 "x"}}"#, r#"{{nindent 4000000000 "x"}}"#, r#"{{indent 4000000000 ""}}"#]
        {
            let err = render(source, json!({})).err().unwrap_or_default();
            assert!(err.contains("indent: the render would produce more than 256 MiB"), "{source}: {err}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_before_compiling() {
        let deep = format!("{}x{}", "{{#if a}}".repeat(5000), "{{/if}}".repeat(5000));
        let err = render(&deep, json!({"a": true})).err().unwrap_or_default();
        assert!(err.starts_with("the template nests blocks deeper than 256 levels"), "{err}");
        let parens = format!("{{{{not {}true{}}}}}", "(not ".repeat(5000), ")".repeat(5000));
        let err = render(&parens, json!({})).err().unwrap_or_default();
        assert!(err.starts_with("the template nests subexpressions deeper than 256 levels"), "{err}");
        let fine = format!("{}x{}", "{{#if a}}".repeat(250), "{{/if}}".repeat(250));
        assert_eq!(render(&fine, json!({"a": true})), Ok("x".into()));
        let mut chain = String::from(r#"{{#*inline "p0"}}x{{/inline}}"#);
        for i in 1..300 {
            chain.push_str(&format!(r#"{{{{#*inline "p{i}"}}}}{{{{> p{}}}}}{{{{/inline}}}}"#, i - 1));
        }
        chain.push_str("{{> p299}}");
        let err = render(&chain, json!({})).err().unwrap_or_default();
        assert!(err.contains("nests deeper than 256 levels"), "{err}");
    }

    #[test]
    fn loops_and_partials_charge_the_render_budget() {
        let budget = Arc::new(Budget::new(crate::limits::Limits { max_steps: 1_000_000, ..Default::default() }));
        let mut engine = Engine::new(
            Arc::new(|_: &str, _: &str, _: Option<&str>| None),
            Arc::new(|_: &str, _: &str| Ok(Value::Null)),
            budget,
        );
        let xs: Vec<u32> = (0..600).collect();
        engine.compile("each", "{{#each xs}}{{#each ../xs}}{{#each ../../xs}}{{/each}}{{/each}}{{/each}}").ok();
        let err = engine.render("each", &json!({"xs": xs})).err().map(|e| e.message).unwrap_or_default();
        assert!(err.contains("more than 1000000 evaluation steps (--max-steps)"), "{err}");
        let mut partials = String::from(r#"{{#*inline "p0"}}x{{/inline}}"#);
        for i in 1..=24 {
            partials
                .push_str(&format!(r#"{{{{#*inline "p{i}"}}}}{{{{> p{j}}}}}{{{{> p{j}}}}}{{{{/inline}}}}"#, j = i - 1));
        }
        partials.push_str("{{> p24}}");
        let mut engine = super::tests::engine();
        engine.compile("p", &partials).ok();
        let err = engine.render("p", &json!({})).err().map(|e| e.message).unwrap_or_default();
        assert!(err.contains("evaluation steps (--max-steps)"), "{err}");
        // Output is charged as it is written.
        let budget = Arc::new(Budget::new(crate::limits::Limits { max_output_bytes: 1000, ..Default::default() }));
        let mut engine = Engine::new(
            Arc::new(|_: &str, _: &str, _: Option<&str>| None),
            Arc::new(|_: &str, _: &str| Ok(Value::Null)),
            budget,
        );
        engine.compile("out", "{{#each xs}}0123456789{{/each}}").ok();
        let err = engine.render("out", &json!({"xs": (0..200).collect::<Vec<u32>>()})).err().map(|e| e.message);
        assert!(err.unwrap_or_default().contains("(--max-output-size)"));
    }

    #[test]
    fn each_keeps_its_variables() {
        let data = json!({"m": {"a": 1, "b": 2}, "l": ["x", "y"], "top": "T"});
        assert_eq!(
            render(
                "{{#each m}}{{@key}}={{this}}{{@index}}{{#if @first}}F{{/if}}{{#if @last}}L{{/if}};{{/each}}",
                data.clone()
            ),
            Ok("a=10F;b=21L;".into())
        );
        assert_eq!(
            render("{{#each l as |v i|}}{{i}}:{{v}}{{../top}},{{/each}}", data.clone()),
            Ok("0:xT,1:yT,".into())
        );
        assert_eq!(render("{{#each nope}}x{{else}}none{{/each}}", json!({"nope": []})), Ok("none".into()));
        assert!(render("{{#each nope}}x{{/each}}", json!({})).is_err());
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = render("{{imports.a", json!({})).err().unwrap_or_default();
        assert!(err.starts_with("invalid template:"), "{err}");
    }
}
