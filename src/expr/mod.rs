//! The expression language of `when` and `${…}` (Windsor's): an expr-lang compatible subset,
//! written here because the `expr-lang` crate breaks rules we must keep (it has no `??` mixing
//! error, fails on `nil.b` instead of yielding nil, and reports no columns for runtime errors).
//!
//! `lex` → `parse` (AST with spans) → `check` (expr's compile-time type errors, from literals) →
//! `eval`. An [`Expression`] is compiled once and evaluated against any number of environments.
//! Errors are data ([`ExprError`]) with a byte span; [`ExprError::render`] formats them as expr
//! does: `message (line:col)` and a caret snippet.
//! This module knows nothing about features or files: `file()`/`jsonnet()` go through [`Host`].

mod check;
mod cidr;
mod eval;
pub mod interpolate;
mod lex;
mod parse;
mod predicates;
mod scope;
pub mod secret;

pub use eval::{go_float, go_format, size_of, to_text, type_name};

use crate::doc::Value;
use crate::limits::Budget;
use std::borrow::Cow;
use std::fmt;

/// A regular expression that does not compile, in one line: the crate's message spans lines with
/// a caret under the pattern; its last line says what is wrong.
fn regex_error(pattern: &str, err: &regex::Error) -> String {
    let text = err.to_string();
    let reason = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    format!("error parsing regexp {pattern:?}: {}", reason.trim().trim_start_matches("error: "))
}

/// A byte range in the expression source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// 1-based line and column (in characters) of the start, as expr reports them.
    pub fn line_column(&self, source: &str) -> (usize, usize) {
        let before = source.get(..self.start).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExprError {
    pub message: String,
    pub span: Span,
    /// A value that exists only later (`terraform_output()` before terraform ran): the `${…}`
    /// holding it is kept as written, as Windsor keeps a deferred expression.
    pub deferred: bool,
}

impl ExprError {
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Self { message: message.into(), span, deferred: false }
    }

    /// `message (line:col)` followed by the offending line and a caret under the column.
    pub fn render(&self, source: &str) -> String {
        let (line, column) = self.span.line_column(source);
        let text = source.lines().nth(line - 1).unwrap_or("").replace('\t', " ");
        if text.is_empty() {
            return format!("{} ({line}:{column})", self.message);
        }
        // A long line is shown as a window around the column, so the caret stays readable.
        let chars: Vec<char> = text.chars().collect();
        let start = column.saturating_sub(1 + WINDOW);
        let end = chars.len().min(column + WINDOW);
        let mut shown: String = chars[start.min(end)..end].iter().collect();
        let mut caret = column - 1 - start;
        if start > 0 {
            shown.insert(0, '…');
            caret += 1;
        }
        if end < chars.len() {
            shown.push('…');
        }
        format!("{} ({line}:{column})\n | {shown}\n | {}^", self.message, ".".repeat(caret))
    }
}

/// Characters shown either side of an error's column.
const WINDOW: usize = 60;

pub use crate::doc::excerpt;

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Where `file()` and `jsonnet()` read from; the caller resolves paths and confines them.
pub trait Host {
    fn file(&self, path: &str) -> Result<String, String>;
    fn jsonnet(&self, path: &str) -> Result<Value, String>;
    /// The file `yaml()`/`yamlString()` read for `path`: `Ok(None)` only when there is no such
    /// file (the argument is then YAML text itself, as Windsor reads it); a file that exists but
    /// is refused (outside the package, too large) is `file()`'s error, never read as text.
    fn yaml_file(&self, path: &str) -> Result<Option<String>, String> {
        Ok(self.file(path).ok())
    }
    /// Evaluating as Windsor v0.9 does: `string()` gives maps and lists as YAML and nil as ""
    /// (v0.8.1's is expr's `%v`); in interpolation an expression with only blanks around it
    /// keeps its type, and text of several lines is put in indented (`indentForEmbeddedYAML`).
    fn windsor_v09(&self) -> bool {
        false
    }
    /// Windsor's `env(name)`: the variable from the environment the render was given (the
    /// command line's snapshot; nothing here reads the process environment), `None` when unset.
    fn env(&self, _name: &str) -> Option<String> {
        None
    }
    /// `terraform_output(component, key)`: `None` while terraform has not run (the expression is
    /// deferred), else the output (nil when the component has no such key).
    fn terraform_output(&self, _component: &str, _key: &str) -> Option<Value> {
        None
    }
}

/// A host that refuses file access, for contexts without a package.
pub struct NoFiles;

impl Host for NoFiles {
    fn file(&self, path: &str) -> Result<String, String> {
        Err(format!("file({path:?}) is not available here"))
    }
    fn jsonnet(&self, path: &str) -> Result<Value, String> {
        Err(format!("jsonnet({path:?}) is not available here"))
    }
}

/// A compiled expression.
#[derive(Clone, Debug)]
pub struct Expression {
    source: String,
    root: parse::Node,
}

impl Expression {
    /// Compiles a condition (`when`), as Windsor does: with expr's builtins only.
    pub fn compile(source: &str) -> Result<Self, ExprError> {
        Self::compile_with(source, check::Functions::Builtins)
    }

    /// Compiles a value (`${…}`), as Windsor does: with its `file`, `jsonnet` and `split`.
    pub fn compile_value(source: &str) -> Result<Self, ExprError> {
        Self::compile_with(source, check::Functions::Windsor)
    }

    fn compile_with(source: &str, functions: check::Functions) -> Result<Self, ExprError> {
        let root = parse::parse(source)?;
        check::check(&root, functions)?;
        Ok(Self { source: source.to_string(), root })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates against `env` (the values tree), charging the render's `budget` (as in current
    /// Windsor, missing keys and member access on nil are nil).
    pub fn eval(&self, env: &Value, host: &dyn Host, budget: &Budget) -> Result<Value, ExprError> {
        self.eval_in(&scope::Scope::new(env, host, budget))
    }

    fn eval_in(&self, scope: &scope::Scope<'_>) -> Result<Value, ExprError> {
        let value = self.eval_borrowed(scope)?;
        eval::owned(value, scope.budget, self.root.span)
    }

    /// As [`Expression::eval`], without copying a value read from the values.
    fn eval_borrowed<'a>(&self, scope: &scope::Scope<'a>) -> Result<Cow<'a, Value>, ExprError> {
        eval::eval(&self.root, scope)
    }

    /// The paths read inside function arguments (`a.b` in `string(a.b)`).
    pub fn call_argument_paths(&self) -> Vec<String> {
        let mut names = Vec::new();
        eval::collect_call_paths(&self.root, &mut names);
        names
    }

    /// The top-level names the expression reads (`a` in `a.b.c`), for `explain`.
    pub fn identifiers(&self) -> Vec<String> {
        let mut names = Vec::new();
        eval::collect_paths(&self.root, &mut names);
        names
    }
}

#[cfg(test)]
mod tests;
