//! What an expression's names reach while it runs: the values, the host, the render's budget,
//! the builtins it was compiled with, the `let`s around the node, the innermost predicate's
//! element, and how deep `yaml()` templates are nested. It is passed to every node (as jaq passes
//! its context and minijinja its state); inner scopes are made on the stack, each pointing at its
//! outer one, so binding a name or an element allocates nothing and is undone when the scope goes
//! out of use, however that ends.
//!
//! A builtin is one row ([`Builtin`]: name, kind, arity, types, function), as jaq-std's are; the
//! parser resolves a call to its row, the checker reads its arity and types, the functions its
//! arity. The table
//! itself is `builtins.rs`; it is handed to compilation and from there to the scope, so that
//! `yaml()`, which compiles templates, needs no module above it.

use super::arity::Arity;
use super::ast::Node;
use super::error::{ExprError, Span};
use super::host::Host;
use super::semantics::Semantics;
use super::ty::Sig;
use crate::doc::Value;
use crate::limits::Budget;
use std::borrow::Cow;

#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub env: &'a Value,
    pub host: &'a dyn Host,
    pub budget: &'a Budget,
    /// The table the expression was compiled with: its calls are indexes into it.
    pub functions: &'static [Builtin],
    /// The innermost `let` being evaluated.
    var: Option<&'a Var<'a>>,
    /// The innermost predicate's element (`#`, `#index`, `#acc`).
    element: Option<&'a Element<'a>>,
    /// How many `yaml()`/`yamlString()` templates this evaluation runs inside.
    yaml_depth: usize,
    /// The release whose meaning the expression or template was compiled with.
    pub semantics: Semantics,
}

/// A `let`'s value, bound while its body is evaluated.
pub struct Var<'a> {
    name: &'a str,
    value: Value,
    outer: Option<&'a Var<'a>>,
}

/// One element of a predicate in progress.
pub struct Element<'a> {
    pub item: &'a Value,
    pub index: usize,
    pub acc: Value,
}

impl<'a> Scope<'a> {
    /// The scope of an expression evaluated on its own: no `let`, no element.
    pub fn new(
        env: &'a Value,
        host: &'a dyn Host,
        budget: &'a Budget,
        functions: &'static [Builtin],
        semantics: Semantics,
    ) -> Self {
        Self { env, host, budget, functions, var: None, element: None, yaml_depth: 0, semantics }
    }

    /// The scope of a template that `yaml()` or `yamlString()` evaluates from inside this one:
    /// its own values, nothing bound, one level deeper.
    pub fn template<'b>(&self, env: &'b Value) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { env, var: None, element: None, yaml_depth: self.yaml_depth + 1, ..*self }
    }

    pub fn yaml_depth(&self) -> usize {
        self.yaml_depth
    }

    /// `name` bound to `value` around this scope; [`Scope::with_var`] enters it.
    pub fn bind<'b>(&self, name: &'b str, value: Value) -> Var<'b>
    where
        'a: 'b,
    {
        Var { name, value, outer: self.var }
    }

    pub fn with_var<'b>(&self, var: &'b Var<'b>) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { var: Some(var), ..*self }
    }

    /// This scope inside a predicate's closure, for one element.
    pub fn with_element<'b>(&self, element: &'b Element<'b>) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { element: Some(element), ..*self }
    }

    /// The value of the innermost `let` named `name` (the parser resolves names, so there is one).
    pub fn var(&self, name: &str) -> Option<&'a Value> {
        let mut var = self.var;
        while let Some(current) = var {
            if current.name == name {
                return Some(&current.value);
            }
            var = current.outer;
        }
        None
    }

    /// `#`, `#index`, `#acc` of the innermost predicate.
    pub fn pointer(&self, name: &str, span: Span) -> Result<Value, ExprError> {
        let Some(element) = self.element else {
            return Err(ExprError::new("cannot use pointer accessor outside predicate", span));
        };
        match name {
            "" => Ok(element.item.clone()),
            "index" => Ok(Value::from(element.index)),
            "acc" => Ok(element.acc.clone()),
            other => Err(ExprError::new(format!("unknown pointer #{other}"), span)),
        }
    }
}

/// One builtin: a row of `builtins.rs`'s table.
pub struct Builtin {
    pub name: &'static str,
    pub kind: Kind,
    pub arity: Arity,
    /// What the checker knows of its arguments and result.
    pub sig: Sig,
    pub run: Run,
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Whose a builtin is, which decides where it may be called, what a `let` may not redeclare,
/// and whose words its messages use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// expr-lang's, in a `when` and a `${…}` alike.
    Expr,
    /// expr-lang's, which Windsor registers again for a `${…}` (`split`, `string`).
    ExprAndWindsor,
    /// Windsor's, which ours lets a `when` call too (`file`, `jsonnet`).
    Windsor,
    /// Windsor v0.9's, for a `${…}` only.
    WindsorValue,
    /// expr-lang's predicate: a collection and a closure evaluated per element.
    Predicate,
}

/// How a builtin runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// On its arguments' values. What it makes is at most about their size, charged before it
    /// runs.
    Values(fn(&Call<'_, '_>, &[Cow<'_, Value>]) -> Result<Value, ExprError>),
    /// On its arguments' values; it charges what it makes itself (a number, or what it read).
    Sized(fn(&Call<'_, '_>, &[Cow<'_, Value>]) -> Result<Value, ExprError>),
    /// On its argument nodes, evaluating the closure per element.
    Closure(fn(&Call<'_, '_>, &[Node]) -> Result<Value, ExprError>),
}

/// One call being evaluated: the builtin's row, the scope it is called in, the call's span.
pub struct Call<'s, 'a> {
    pub row: &'static Builtin,
    pub scope: &'s Scope<'a>,
    pub span: Span,
}

impl Call<'_, '_> {
    pub fn name(&self) -> &'static str {
        self.row.name
    }

    /// An error of this call, located at it.
    pub fn error(&self, message: impl Into<String>) -> ExprError {
        ExprError::new(message, self.span)
    }

    /// Whether `count` arguments are what the row takes; if not, the message of whose the
    /// builtin is. A function counts where its messages put the count (Windsor's `cidr…`
    /// helpers after their prefix's type); a count the checker fixed is not counted again.
    pub fn count(&self, count: usize) -> Result<(), ExprError> {
        if self.row.arity.admits(count) {
            return Ok(());
        }
        Err(self.error(match self.row.kind {
            Kind::Windsor | Kind::WindsorValue => self.row.arity.windsor_message(self.row.name, count),
            Kind::Expr | Kind::ExprAndWindsor | Kind::Predicate => self.row.arity.expr_message(count),
        }))
    }
}
