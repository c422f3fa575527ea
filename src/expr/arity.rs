//! How many arguments a builtin takes, and the messages for a call with another count: expr's
//! (`invalid number of arguments (expected 1, got 2)`) or Windsor's (`env() requires exactly 1
//! argument, got 2`), each as its own code words them.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    /// Exactly these parameters, which Windsor's message names.
    Named(&'static [&'static str]),
    Between(usize, usize),
    AtLeast(usize),
    /// The first `n` (expr's `get`): fewer is "expected n", more are not read.
    Leading(usize),
    /// Not counted: a missing argument reads as nil, a surplus one is not read.
    Any,
}

impl Arity {
    pub fn min(self) -> usize {
        match self {
            Arity::Exactly(n) | Arity::Between(n, _) | Arity::AtLeast(n) | Arity::Leading(n) => n,
            Arity::Named(params) => params.len(),
            Arity::Any => 0,
        }
    }

    /// `None` when there is no upper bound.
    pub fn max(self) -> Option<usize> {
        match self {
            Arity::Exactly(n) | Arity::Between(_, n) => Some(n),
            Arity::Named(params) => Some(params.len()),
            Arity::AtLeast(_) | Arity::Leading(_) | Arity::Any => None,
        }
    }

    pub fn admits(self, count: usize) -> bool {
        count >= self.min() && self.max().is_none_or(|max| count <= max)
    }

    /// expr-lang's message for `got` arguments.
    pub fn expr_message(self, got: usize) -> String {
        let expected = match self {
            Arity::AtLeast(n) => format!("at least {n}"),
            Arity::Between(a, b) => format!("{a} or {b}"),
            other => other.min().to_string(),
        };
        format!("invalid number of arguments (expected {expected}, got {got})")
    }

    /// Windsor's message for `name` called with `got` arguments.
    pub fn windsor_message(self, name: &str, got: usize) -> String {
        let expected = match self {
            Arity::Exactly(1) => "exactly 1 argument".to_string(),
            Arity::Named(params) => format!("exactly {} arguments ({})", params.len(), params.join(", ")),
            Arity::Between(a, b) => format!("{a} or {b} arguments"),
            Arity::AtLeast(n) => format!("at least {n} arguments"),
            other => format!("exactly {} arguments", other.min()),
        };
        format!("{name}() requires {expected}, got {got}")
    }
}
