//! Go's call of a function: the arguments counted and converted as the function's signature
//! says, and errors in Go's words (`wrong number of args for F: want 1 got 2`, `error calling F:
//! …`). The crate hands a function an untyped slice; [`define`] puts the check in front of it.

use super::fmt::go_type;
use super::value::{GoMap, GoValue, ValueFunc};
use gotmpl::{FuncMap, TemplateError};
use std::sync::Arc;

/// An error a function returns, in Go's words: `error calling F: …`.
pub fn fail(name: &str, text: impl std::fmt::Display) -> TemplateError {
    TemplateError::Exec(format!("error calling {name}: {text}"))
}

/// A function's arguments, checked as Go checks them against the function's signature.
pub struct Args<'a> {
    name: &'a str,
    args: &'a [GoValue],
}

impl<'a> Args<'a> {
    /// Exactly `want` arguments.
    pub fn exact(name: &'a str, args: &'a [GoValue], want: usize) -> Result<Self, TemplateError> {
        if args.len() != want {
            return Err(TemplateError::Exec(format!(
                "wrong number of args for {name}: want {want} got {}",
                args.len()
            )));
        }
        Ok(Self { name, args })
    }

    /// At least `want` arguments (a variadic function).
    pub fn at_least(name: &'a str, args: &'a [GoValue], want: usize) -> Result<Self, TemplateError> {
        if args.len() < want {
            return Err(TemplateError::Exec(format!(
                "wrong number of args for {name}: want at least {want} got {}",
                args.len()
            )));
        }
        Ok(Self { name, args })
    }

    /// The function's name, for its error messages.
    pub fn name(&self) -> &'a str {
        self.name
    }

    pub fn len(&self) -> usize {
        self.args.len()
    }

    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    /// The argument as Go passes it to an `interface{}` parameter.
    pub fn any(&self, i: usize) -> &'a GoValue {
        self.args.get(i).unwrap_or(&GoValue::Nil)
    }

    /// The arguments from `i` on (a variadic tail).
    pub fn rest(&self, i: usize) -> &'a [GoValue] {
        self.args.get(i..).unwrap_or(&[])
    }

    fn wrong(&self, i: usize, expected: &str) -> TemplateError {
        TemplateError::Exec(format!(
            "wrong type for value; expected {expected}; got {} (argument {} of {})",
            go_type(self.any(i)),
            i + 1,
            self.name
        ))
    }

    /// A `string` parameter.
    pub fn string(&self, i: usize) -> Result<&'a str, TemplateError> {
        match self.any(i) {
            GoValue::String(s) => Ok(s),
            _ => Err(self.wrong(i, "string")),
        }
    }

    /// An `int`/`int64` parameter (Go converts any integer value that fits).
    pub fn int(&self, i: usize) -> Result<i64, TemplateError> {
        match self.any(i) {
            GoValue::Int(n) => Ok(*n),
            GoValue::Uint(n) => i64::try_from(*n).map_err(|_| self.wrong(i, "int")),
            _ => Err(self.wrong(i, "int")),
        }
    }

    /// A `float64` parameter (integers convert).
    pub fn float(&self, i: usize) -> Result<f64, TemplateError> {
        match self.any(i) {
            GoValue::Float(f) => Ok(*f),
            #[allow(clippy::cast_precision_loss)]
            GoValue::Int(n) => Ok(*n as f64),
            #[allow(clippy::cast_precision_loss)]
            GoValue::Uint(n) => Ok(*n as f64),
            _ => Err(self.wrong(i, "float64")),
        }
    }

    /// A `uint64` parameter (non-negative integers convert).
    pub fn uint(&self, i: usize) -> Result<u64, TemplateError> {
        match self.any(i) {
            GoValue::Uint(n) => Ok(*n),
            GoValue::Int(n) => u64::try_from(*n).map_err(|_| self.wrong(i, "uint64")),
            _ => Err(self.wrong(i, "uint64")),
        }
    }

    /// A `[]interface{}` parameter (nil is the empty slice, as Go passes it).
    pub fn list(&self, i: usize) -> Result<&'a [GoValue], TemplateError> {
        match self.any(i) {
            GoValue::List(items) => Ok(items),
            GoValue::Nil => Ok(&[]),
            _ => Err(self.wrong(i, "[]interface {}")),
        }
    }

    /// A `map[string]interface{}` parameter (nil is the empty map, as Go passes it).
    pub fn map(&self, i: usize) -> Result<&'a GoMap, TemplateError> {
        static EMPTY: GoMap = GoMap::new();
        match self.any(i) {
            GoValue::Map(map) => Ok(map),
            GoValue::Nil => Ok(&EMPTY),
            _ => Err(self.wrong(i, "map[string]interface {}")),
        }
    }

    /// A `bool` parameter.
    pub fn bool(&self, i: usize) -> Result<bool, TemplateError> {
        match self.any(i) {
            GoValue::Bool(b) => Ok(*b),
            _ => Err(self.wrong(i, "bool")),
        }
    }
}

/// How many arguments a function takes, as its Go signature says.
#[derive(Clone, Copy, Debug)]
pub enum Arity {
    /// Exactly this many.
    Exact(usize),
    /// At least this many (a variadic tail).
    AtLeast(usize),
}

/// A function body: it receives its arguments already counted.
pub type Body = fn(&Args<'_>) -> Result<GoValue, TemplateError>;

/// Registers `body` as `name`, counting its arguments as Go would before calling it.
pub fn define(funcs: &mut FuncMap, name: &'static str, arity: Arity, body: Body) {
    let func: ValueFunc = Arc::new(move |args: &[GoValue]| {
        let args = match arity {
            Arity::Exact(n) => Args::exact(name, args, n)?,
            Arity::AtLeast(n) => Args::at_least(name, args, n)?,
        };
        body(&args)
    });
    funcs.insert(name.to_string(), func);
}
