//! A compiled expression: parsed and checked once with a table of builtins, evaluated against any
//! number of values in a [`Scope`] of that table.

use super::error::ExprError;
use super::eval;
use super::host::Host;
use super::scope::{Builtin, Scope};
use super::semantics::Semantics;
use super::{check, parse, value};
use crate::doc::Value;
use crate::limits::Budget;
use std::borrow::Cow;

pub use super::check::Dialect;

#[derive(Clone, Debug)]
pub struct Expression {
    source: String,
    root: super::ast::Node,
    /// The builtins its calls are rows of.
    functions: &'static [Builtin],
    semantics: Semantics,
}

impl Expression {
    pub(super) fn compile_in(source: &str, dialect: Dialect, functions: &'static [Builtin]) -> Result<Self, ExprError> {
        let root = parse::parse(source, functions)?;
        check::check(&root, dialect, functions)?;
        Ok(Self { source: source.to_string(), root, functions, semantics: Semantics::Expr })
    }

    /// The same expression, meaning what `semantics`' release means.
    pub(super) fn with_semantics(self, semantics: Semantics) -> Self {
        Self { semantics, ..self }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates against `env` (the values tree), charging the render's `budget` (as in current
    /// Windsor, missing keys and member access on nil are nil).
    pub fn eval(&self, env: &Value, host: &dyn Host, budget: &Budget) -> Result<Value, ExprError> {
        self.eval_in(&Scope::new(env, host, budget, self.functions, self.semantics))
    }

    /// As [`Expression::eval`], inside `scope` (which holds the table it was compiled with).
    pub(super) fn eval_in(&self, scope: &Scope<'_>) -> Result<Value, ExprError> {
        let value = self.eval_borrowed(scope)?;
        value::owned(value, scope.budget, self.root.span)
    }

    /// As [`Expression::eval_in`], without copying a value read from the values.
    pub(super) fn eval_borrowed<'a>(&self, scope: &Scope<'a>) -> Result<Cow<'a, Value>, ExprError> {
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
