//! The types expr-lang's checker knows without a declared environment, and what a builtin's row
//! says of its arguments and result in them ([`Sig`]).

use std::fmt;

/// expr's `Nature`, reduced to the types that can occur without a declared environment.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Nothing known: a variable (a nature without a type, printed `unknown`).
    Unknown,
    /// `interface {}`: an element of a map or of a mixed list, `jsonnet()`; unknown as well.
    Any,
    /// The `nil` literal: not unknown, but printed `unknown` all the same.
    Nil,
    Bool,
    Int,
    Float,
    String,
    /// `[]interface {}` with what is known of its elements.
    Array(Box<Ty>),
    /// `[]string`, from the builtin `split`.
    Strings,
    /// `map[string]interface {}`.
    Map,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ty::Unknown | Ty::Nil => "unknown",
            Ty::Any => "interface {}",
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Float => "float64",
            Ty::String => "string",
            Ty::Array(_) => "[]interface {}",
            Ty::Strings => "[]string",
            Ty::Map => "map[string]interface {}",
        })
    }
}

impl Ty {
    pub fn is_unknown(&self) -> bool {
        matches!(self, Ty::Unknown | Ty::Any)
    }
    pub fn is_number(&self) -> bool {
        matches!(self, Ty::Int | Ty::Float)
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Ty::Array(_) | Ty::Strings)
    }
    /// Go's reflect kind, which list literals compare to type their elements.
    pub fn kind(&self) -> u8 {
        match self {
            Ty::Unknown | Ty::Nil => 0,
            Ty::Any => 1,
            Ty::Bool => 2,
            Ty::Int => 3,
            Ty::Float => 4,
            Ty::String => 5,
            Ty::Array(_) | Ty::Strings => 6,
            Ty::Map => 7,
        }
    }
    pub fn elem(&self) -> Ty {
        match self {
            Ty::Array(elem) => (**elem).clone(),
            Ty::Strings => Ty::String,
            Ty::Map => Ty::Any,
            _ => Ty::Unknown,
        }
    }
    /// Go's `AssignableTo` on the underlying types: `nil` only to `interface {}`.
    pub fn assignable_to(&self, to: &Ty) -> bool {
        match (self, to) {
            (Ty::Nil, Ty::Any) => true,
            (Ty::Unknown | Ty::Nil, _) | (_, Ty::Unknown | Ty::Nil) => false,
            (Ty::Array(_), Ty::Array(_)) => true,
            (_, Ty::Any) => true,
            (a, b) => a == b,
        }
    }
    /// The name a builtin's `Validate` prints: a nil type is Go's `%s` of nil.
    pub fn validated(&self) -> String {
        match self {
            Ty::Nil => "%!s(<nil>)".into(),
            other => other.to_string(),
        }
    }
}

/// A parameter's or a result's type as a row writes it down: a [`Ty`] without allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum T {
    Unknown,
    Any,
    Bool,
    Int,
    Float,
    Str,
    /// `[]string`.
    Strings,
    /// `[]interface {}`.
    AnyArray,
}

impl T {
    pub fn ty(self) -> Ty {
        match self {
            T::Unknown => Ty::Unknown,
            T::Any => Ty::Any,
            T::Bool => Ty::Bool,
            T::Int => Ty::Int,
            T::Float => Ty::Float,
            T::Str => Ty::String,
            T::Strings => Ty::Strings,
            T::AnyArray => Ty::Array(Box::new(Ty::Any)),
        }
    }
}

/// A typed overload: parameters and result.
pub type Overload = (&'static [T], T);

/// What the checker knows of a builtin (expr's checker.go).
#[derive(Clone, Copy, Debug)]
pub enum Sig {
    /// Its arguments are not typed here (expr's builtins that take `interface {}`, its
    /// predicates, Windsor's variadic `cidrsubnets(string, ...int)`): only the result's type.
    Returns(T),
    /// expr's `Validate` on its one argument (`len`, `abs`, `int`, `float`, `keys`, `values`).
    Validate,
    /// Typed overloads, tried in expr's order; the last failure is reported.
    Overloads(&'static [Overload]),
    /// Overloads that differ between a `when` (expr's) and a `${…}` (Windsor's): `split`.
    Dialects { when: &'static [Overload], value: &'static [Overload] },
    /// Windsor v0.9's variadic `yaml(string, ...any) any`.
    Yaml,
}
