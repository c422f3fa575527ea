//! `${…}` interpolation inside strings, as Windsor interpolates feature fields: templates
//! compiled with a table of builtins given to them (`interpolate.rs` gives the crate's).
//!
//! A string that is exactly one `${expr}` yields the expression's value with its type; otherwise
//! each `${expr}` is replaced by its text ([`embedded_text`]: maps and lists as YAML, as Windsor
//! marshals them). `$${` writes a literal `${` (ours).
//! Expressions may contain `}` inside string literals and map literals; results are never
//! scanned again, so a value containing `${` cannot loop.

use super::error::ExprError;
use super::expression::{Dialect, Expression};
use super::host::Host;
use super::scope::{Builtin, Scope};
use super::semantics::Semantics;
use super::value::{embedded_text, size_of};
use crate::doc::Value;
use crate::limits::Budget;

#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Expr(Expression),
    /// A secret notation (`${sops.db.password}`): Windsor's `secret(…)` call, always deferred,
    /// kept as written ([`super::secret`]).
    Secret(String),
}

/// Windsor v0.9's `indentForEmbeddedYAML`: text of several lines put into a longer text starts
/// on a line of its own, each non-empty line indented two spaces past the line it is put in, so
/// a certificate put under `content: |` stays inside the block scalar.
fn embed_indented(out: &mut String, text: &str) {
    let line = out.rfind('\n').map_or("", |at| &out[at + 1..]);
    let indent = line.len() - line.trim_start_matches(' ').len() + 2;
    for part in text.split('\n') {
        out.push('\n');
        if !part.is_empty() {
            out.extend(std::iter::repeat_n(' ', indent));
            out.push_str(part);
        }
    }
}

/// A string with its `${…}` parts compiled.
#[derive(Clone, Debug)]
pub struct Template {
    pieces: Vec<Piece>,
    /// The builtins its expressions were compiled with.
    functions: &'static [Builtin],
    semantics: Semantics,
}

/// An interpolation failure: the expression text (without `${}`), when there is one, and what
/// went wrong, rendered with its caret.
#[derive(Clone, Debug, PartialEq)]
pub struct InterpolationError {
    pub expression: Option<String>,
    pub message: String,
}

impl std::fmt::Display for InterpolationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.expression {
            Some(expression) => write!(f, "failed to evaluate expression '${{{expression}}}': {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Template {
    /// Compiles `text` with `functions`; `Ok(None)` when it holds no `${` (the common case costs
    /// one scan). With `secrets`, as Windsor v0.9 does: a `${…}` that is a secret notation is its
    /// deferred `secret(…)` call ([`super::secret`]).
    pub(super) fn compile_in(
        text: &str,
        secrets: bool,
        functions: &'static [Builtin],
        semantics: Semantics,
    ) -> Result<Option<Self>, InterpolationError> {
        if !text.contains("${") {
            return Ok(None);
        }
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${") {
            if rest[..at].ends_with('$') {
                // `$${` is an escaped `${`.
                literal.push_str(&rest[..at - 1]);
                literal.push_str("${");
                rest = &rest[at + 2..];
                continue;
            }
            literal.push_str(&rest[..at]);
            let body = &rest[at + 2..];
            let Some(end) = closing_brace(body) else {
                let column = text[..text.len() - rest.len() + at].chars().count() + 1;
                return Err(InterpolationError {
                    expression: None,
                    message: format!(
                        "unclosed expression in string: {text} (the ${{ at column {column} has no closing }}; \
                         write $${{ for a literal ${{)"
                    ),
                });
            };
            let source = &body[..end];
            if !literal.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut literal)));
            }
            if secrets && super::secret::notation(source).is_some() {
                pieces.push(Piece::Secret(source.to_string()));
            } else {
                let expression = Expression::compile_in(source, Dialect::Windsor, functions).map_err(|err| {
                    InterpolationError { expression: Some(source.to_string()), message: err.render(source) }
                })?;
                pieces.push(Piece::Expr(expression));
            }
            rest = &body[end + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Ok(Some(Self { pieces, functions, semantics }))
    }

    /// One `${expr}` and nothing else keeps the value's type; anything else is text. What is
    /// produced is charged to the render's `budget` before it is appended.
    pub fn eval(&self, env: &Value, host: &dyn Host, budget: &Budget) -> Result<Value, InterpolationError> {
        self.eval_whole(env, host, budget).map(|(value, _)| value)
    }

    /// [`Template::eval`], and whether one expression's value was the whole result (the text was
    /// one `${expr}`, with v0.9 also with only blanks around what was left of it): Windsor then
    /// evaluates a text result holding `${` again.
    pub fn eval_whole(
        &self,
        env: &Value,
        host: &dyn Host,
        budget: &Budget,
    ) -> Result<(Value, bool), InterpolationError> {
        self.eval_whole_in(&Scope::new(env, host, budget, self.functions, self.semantics))
    }

    fn eval_whole_in(&self, scope: &Scope<'_>) -> Result<(Value, bool), InterpolationError> {
        let budget = scope.budget;
        let failed = |expression: &Expression| {
            let source = expression.source().to_string();
            move |err: ExprError| InterpolationError { message: err.render(&source), expression: Some(source) }
        };
        // A deferred expression stays as written, `${…}` and all (Windsor's DeferredValue).
        let kept = |expression: &Expression| format!("${{{}}}", expression.source());
        match self.pieces.as_slice() {
            [Piece::Expr(expression)] => {
                return match expression.eval_in(scope) {
                    Err(err) if err.deferred => Ok((Value::String(kept(expression)), false)),
                    other => other.map(|value| (value, true)).map_err(failed(expression)),
                };
            }
            [Piece::Secret(source)] => return Ok((Value::String(format!("${{{source}}}")), false)),
            _ => {}
        }
        let exhausted =
            |err: crate::limits::Exhausted| InterpolationError { expression: None, message: err.to_string() };
        let v09 = scope.semantics == Semantics::WindsorV09;
        let mut out = String::new();
        for (at, piece) in self.pieces.iter().enumerate() {
            match piece {
                Piece::Text(text) => {
                    budget.charge_output(text.len()).map_err(exhausted)?;
                    out.push_str(text);
                }
                Piece::Secret(source) => {
                    budget.charge_output(source.len() + 3).map_err(exhausted)?;
                    out.push_str(&format!("${{{source}}}"));
                }
                Piece::Expr(expression) => {
                    let value = match expression.eval_borrowed(scope) {
                        Err(err) if err.deferred => {
                            // Kept as written; Windsor leaves it and goes on to the next.
                            out.push_str(&kept(expression));
                            continue;
                        }
                        other => other.map_err(failed(expression))?,
                    };
                    // v0.9 takes an expression with only blanks around it (what is left of the
                    // text at that point) for the whole text: its value keeps its type.
                    let blank = |text: &str| text.trim().is_empty();
                    let rest_blank = self.pieces[at + 1..].iter().all(|p| matches!(p, Piece::Text(t) if blank(t)));
                    if v09 && blank(&out) && rest_blank {
                        return Ok((value.into_owned(), true));
                    }
                    let text = match value.as_ref() {
                        Value::String(text) => {
                            budget.charge_output(text.len()).map_err(exhausted)?;
                            std::borrow::Cow::Borrowed(text.as_str())
                        }
                        other => {
                            budget.charge_output(size_of(other)).map_err(exhausted)?;
                            std::borrow::Cow::Owned(embedded_text(other))
                        }
                    };
                    // v0.9 keeps a map or list still holding a deferred `${…}` whole, rather than
                    // flattening it into the text where it could no longer be resolved.
                    if v09 && matches!(value.as_ref(), Value::Object(_) | Value::Array(_)) && text.contains("${") {
                        return Ok((value.into_owned(), false));
                    }
                    if v09 && text.contains('\n') {
                        embed_indented(&mut out, &text);
                    } else {
                        out.push_str(&text);
                    }
                }
            }
        }
        Ok((Value::String(out), false))
    }

    /// Expressions in this template, for `explain`.
    pub fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Expr(e) => Some(e),
            Piece::Text(_) | Piece::Secret(_) => None,
        })
    }
}

/// The index of the `}` that closes an expression, skipping braces inside string literals and
/// nested map literals.
fn closing_brace(body: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => quote = Some(c),
                '{' => depth += 1,
                '}' if depth == 0 => return Some(i),
                '}' => depth -= 1,
                _ => {}
            },
        }
    }
    None
}

/// One string interpolated inside `scope` (a `yaml()` template's), with its builtins: the
/// string itself when it has no `${`.
pub(super) fn interpolate_in(text: &str, scope: &Scope<'_>) -> Result<Value, InterpolationError> {
    match Template::compile_in(text, false, scope.functions, scope.semantics)? {
        None => Ok(Value::String(text.to_string())),
        Some(template) => template.eval_whole_in(scope).map(|(value, _)| value),
    }
}
