//! The expression language of `when` and `${…}` (Windsor's): an expr-lang compatible subset,
//! written here because the `expr-lang` crate breaks rules we must keep (it has no `??` mixing
//! error, fails on `nil.b` instead of yielding nil, and reports no columns for runtime errors).
//!
//! `lex` → `parse` (AST with spans) → `check` (expr's compile-time type errors, from literals) →
//! `eval`. An [`Expression`] is compiled once and evaluated against any number of environments.
//! Errors are data ([`ExprError`]) with a byte span; [`ExprError::render`] formats them as expr
//! does: `message (line:col)` and a caret snippet.
//! This module knows nothing about features or files: `file()`/`jsonnet()` go through [`Host`].
//!
//! The modules are layers (docs/development.md); this one, on top, hands the builtins' table
//! (`builtins`) to compilation, and `interpolate` does so for templates.

mod arity;
mod ast;
mod builtins;
mod check;
mod cidr;
mod error;
mod eval;
mod expression;
mod functions;
mod host;
pub mod interpolate;
mod lex;
mod parse;
mod predicates;
mod scope;
pub mod secret;
mod semantics;
mod template;
mod ty;
mod value;
mod yaml;

pub use error::{ExprError, Span};
pub use expression::Expression;
pub use host::{Host, NoFiles};
pub use semantics::Semantics;
pub use value::{go_float, go_format, size_of, to_text, type_name};

use expression::Dialect;

pub use crate::doc::excerpt;

impl Expression {
    /// Compiles a condition (`when`), as Windsor does: with expr's builtins only.
    pub fn compile(source: &str) -> Result<Self, ExprError> {
        Self::compile_in(source, Dialect::Builtins, &builtins::TABLE)
    }

    /// Compiles a value (`${…}`), as Windsor does: with its `file`, `jsonnet` and `split`.
    pub fn compile_value(source: &str) -> Result<Self, ExprError> {
        Self::compile_in(source, Dialect::Windsor, &builtins::TABLE)
    }

    /// [`Expression::compile_value`] with a release's meaning (Windsor v0.9 evaluates `when` as
    /// a value).
    pub fn compile_value_as(source: &str, semantics: Semantics) -> Result<Self, ExprError> {
        Self::compile_in(source, Dialect::Windsor, &builtins::TABLE).map(|e| e.with_semantics(semantics))
    }
}

#[cfg(test)]
mod tests;
