//! What an expression's names reach while it runs: the values, the host, the render's budget,
//! the `let`s around the node, the innermost predicate's element, and how deep `yaml()` templates
//! are nested. It is passed to every node (as jaq passes its context and minijinja its state);
//! inner scopes are made on the stack, each pointing at its outer one, so binding a name or an
//! element allocates nothing and is undone when the scope goes out of use, however that ends.

use super::Host;
use crate::doc::Value;
use crate::limits::Budget;

#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub env: &'a Value,
    pub host: &'a dyn Host,
    pub budget: &'a Budget,
    /// The innermost `let` being evaluated.
    var: Option<&'a Var<'a>>,
    /// The innermost predicate's element (`#`, `#index`, `#acc`).
    element: Option<&'a Element<'a>>,
    /// How many `yaml()`/`yamlString()` templates this evaluation runs inside.
    yaml_depth: usize,
}

/// A `let`'s value, bound while its body is evaluated.
pub struct Var<'a> {
    pub name: &'a str,
    pub value: Value,
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
    pub fn new(env: &'a Value, host: &'a dyn Host, budget: &'a Budget) -> Self {
        Self { env, host, budget, var: None, element: None, yaml_depth: 0 }
    }

    /// The scope of a template that `yaml()` or `yamlString()` evaluates from inside this one:
    /// its own values, nothing bound, one level deeper.
    pub fn template<'b>(&self, env: &'b Value) -> Scope<'b>
    where
        'a: 'b,
    {
        Scope { env, host: self.host, budget: self.budget, var: None, element: None, yaml_depth: self.yaml_depth + 1 }
    }

    pub fn yaml_depth(&self) -> usize {
        self.yaml_depth
    }

    /// This scope with `name` bound to `value` (the caller keeps the binding alive).
    pub fn bind<'b>(&self, name: &'b str, value: Value) -> Var<'b>
    where
        'a: 'b,
    {
        Var { name, value, outer: self.var }
    }

    /// This scope inside `var`, made by [`Scope::bind`].
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

    /// The value of the innermost `let` named `name` (nil when none: the parser resolves names).
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

    pub fn element(&self) -> Option<&'a Element<'a>> {
        self.element
    }
}
