//! Go's call of a function: the arguments counted and converted as the function's signature
//! says, and errors in Go's words (`wrong number of args for F: want 1 got 2`, `error calling F:
//! …`). A function is registered once with its arity ([`define`]); the executor counts the
//! arguments before calling it, and the body reads each as its Go parameter type.

use super::fmt::go_type;
use super::value::{GoMap, GoValue, MapRef};
use crate::limits::Budget;
use gotmpl::TemplateError;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLockReadGuard};

/// A function's body.
pub type Func = Arc<dyn Fn(&Args<'_>) -> Result<GoValue, TemplateError> + Send + Sync>;

/// A function as a template calls it: its arity and its body.
#[derive(Clone)]
pub struct Function {
    pub arity: Arity,
    /// What a call costs the execution besides its arguments' evaluation.
    pub cost: Cost,
    pub body: Func,
}

/// What calling a function costs: registered with the function, read by the executor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cost {
    /// A step, and the size of what it returns.
    Call,
    /// Nothing: Go's builtins that build and write nothing (`len`, `index`, `lt`…).
    Free,
    /// As [`Cost::Call`], and its result is its arguments' text (printed, joined, quoted,
    /// encoded), one printed byte becoming at most this many: what printing the arguments writes
    /// must fit in the output budget before the call builds it.
    Writes(u64),
    /// `printf`: as [`Cost::Writes`], by 6 (an escape such as `\u00ad`) when the format has a verb
    /// that escapes (`%q`, `%x`, `%X`, `%#v`, `%U`), else by 1.
    Printf,
}

/// How many arguments a function takes and what a call costs: what it is registered with.
#[derive(Clone, Copy, Debug)]
pub struct Signature {
    pub arity: Arity,
    pub cost: Cost,
}

impl From<Arity> for Signature {
    fn from(arity: Arity) -> Self {
        Signature { arity, cost: Cost::Call }
    }
}

/// A result of escaped text may be six bytes per printed byte (`\u00ad`, `&#34;`).
pub const ESCAPES: u64 = 6;
/// A result of printed, joined or encoded text may be twice the printed size (base64, indents).
pub const TEXT: u64 = 2;

impl Arity {
    /// The signature of a function whose result is its arguments' text, `factor` bytes per byte
    /// at most ([`Cost::Writes`]).
    pub fn writes(self, factor: u64) -> Signature {
        Signature { arity: self, cost: Cost::Writes(factor) }
    }

    /// The signature of a function with a cost of `cost`.
    pub fn costs(self, cost: Cost) -> Signature {
        Signature { arity: self, cost }
    }
}

/// The functions by name.
pub type FuncMap = BTreeMap<String, Function>;

/// An error a function returns, in Go's words: `error calling F: …`.
pub fn fail(name: &str, text: impl std::fmt::Display) -> TemplateError {
    TemplateError::Exec(format!("error calling {name}: {text}"))
}

/// What a call may use of the execution that makes it: a function that runs a template (`include`)
/// charges the same budget and counts how deep executions nest.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub budget: &'a Budget,
    /// How many executions enclose this one (0 for a template a caller runs).
    pub nesting: usize,
}

/// A function's arguments, checked as Go checks them against the function's signature, and the
/// execution's context.
pub struct Args<'a> {
    name: &'a str,
    args: &'a [GoValue],
    /// Bit `i`: argument `i` is a whole float constant (`2.0`, `1e3`), which Go converts for an
    /// `int` parameter.
    whole_constants: u64,
    context: Option<Context<'a>>,
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
        Ok(Self { name, args, whole_constants: 0, context: None })
    }

    /// At least `want` arguments (a variadic function).
    pub fn at_least(name: &'a str, args: &'a [GoValue], want: usize) -> Result<Self, TemplateError> {
        if args.len() < want {
            return Err(TemplateError::Exec(format!(
                "wrong number of args for {name}: want at least {want} got {}",
                args.len()
            )));
        }
        Ok(Self { name, args, whole_constants: 0, context: None })
    }

    /// The arguments as counted by `arity`.
    pub fn counted(name: &'a str, args: &'a [GoValue], arity: Arity) -> Result<Self, TemplateError> {
        match arity {
            Arity::Exact(n) => Args::exact(name, args, n),
            Arity::AtLeast(n) => Args::at_least(name, args, n),
        }
    }

    /// Marks the arguments that are whole float constants in the template's text.
    pub fn with_constants(mut self, whole_constants: u64) -> Self {
        self.whole_constants = whole_constants;
        self
    }

    /// Gives the call its execution's context.
    pub fn in_context(mut self, context: Context<'a>) -> Self {
        self.context = Some(context);
        self
    }

    /// The execution's context: its budget and nesting (a call made outside an execution has a
    /// budget of its own).
    pub fn context(&self) -> Context<'a> {
        static UNLIMITED: std::sync::LazyLock<Budget> = std::sync::LazyLock::new(Budget::default);
        self.context.unwrap_or_else(|| Context { budget: &UNLIMITED, nesting: 0 })
    }

    /// All the arguments.
    pub fn all(&self) -> &'a [GoValue] {
        self.args
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

    /// An `int` parameter: an `int` (or a `uint64` that fits), or a whole constant; Go refuses an
    /// `int64` there.
    pub fn int(&self, i: usize) -> Result<i64, TemplateError> {
        match self.any(i) {
            GoValue::Int(n) => Ok(*n),
            GoValue::Uint(n) => i64::try_from(*n).map_err(|_| self.wrong(i, "int")),
            #[allow(clippy::cast_possible_truncation)]
            GoValue::Float(f) if i < 64 && self.whole_constants & (1 << i) != 0 => Ok(*f as i64),
            _ => Err(self.wrong(i, "int")),
        }
    }

    /// A `float64` parameter (integers convert).
    pub fn float(&self, i: usize) -> Result<f64, TemplateError> {
        match self.any(i) {
            GoValue::Float(f) => Ok(*f),
            #[allow(clippy::cast_precision_loss)]
            GoValue::Int(n) | GoValue::Int64(n) => Ok(*n as f64),
            #[allow(clippy::cast_precision_loss)]
            GoValue::Uint(n) => Ok(*n as f64),
            _ => Err(self.wrong(i, "float64")),
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

    /// A `map[string]interface{}` parameter (nil is the empty map, as Go passes it), for
    /// reading.
    pub fn map(&self, i: usize) -> Result<MapRead<'a>, TemplateError> {
        Ok(match self.map_ref(i)? {
            Some(map) => MapRead::Map(map.read()),
            None => MapRead::Empty,
        })
    }

    /// A `map[string]interface{}` parameter as the shared map (`None`: nil).
    pub fn map_ref(&self, i: usize) -> Result<Option<&'a MapRef>, TemplateError> {
        match self.any(i) {
            GoValue::Map(map) if !map.is_strings() => Ok(Some(map)),
            GoValue::Nil => Ok(None),
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

/// A map parameter's entries, read.
pub enum MapRead<'a> {
    Map(RwLockReadGuard<'a, GoMap>),
    Empty,
}

impl std::ops::Deref for MapRead<'_> {
    type Target = GoMap;
    fn deref(&self) -> &GoMap {
        static EMPTY: GoMap = GoMap::new();
        match self {
            MapRead::Map(map) => map,
            MapRead::Empty => &EMPTY,
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

/// Registers `body` as `name`, its arguments counted as Go would before it is called.
pub fn define(funcs: &mut FuncMap, name: &'static str, signature: impl Into<Signature>, body: Body) {
    let Signature { arity, cost } = signature.into();
    funcs.insert(name.to_string(), Function { arity, cost, body: Arc::new(body) });
}

/// Registers a closure (a function with state of its own) as `name`.
pub fn define_closure(
    funcs: &mut FuncMap,
    name: &str,
    signature: impl Into<Signature>,
    body: impl Fn(&Args<'_>) -> Result<GoValue, TemplateError> + Send + Sync + 'static,
) {
    let Signature { arity, cost } = signature.into();
    funcs.insert(name.to_string(), Function { arity, cost, body: Arc::new(body) });
}
