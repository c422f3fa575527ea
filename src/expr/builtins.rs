//! The builtins, one row each (name, whose it is, arity, what the checker knows of its types,
//! function), as jaq-std lists its own. Their order is the one the parser's "unknown func"
//! message lists them in: Windsor's and expr-lang's typed functions, expr-lang's other
//! builtins, then its predicates.

use super::arity::Arity::{self, Any, AtLeast, Between, Exactly, Leading, Named};
use super::functions as f;
use super::predicates as p;
use super::scope::Kind::{self, Expr, ExprAndWindsor, Predicate, Windsor, WindsorValue};
use super::scope::{Builtin, Run};
use super::ty::Sig::{self, Dialects, Overloads, Returns, Validate, Yaml};
use super::ty::{Overload, T};
use super::yaml;
use Run::{Closure, Sized, Values};

const fn row(name: &'static str, kind: Kind, arity: Arity, sig: Sig, run: Run) -> Builtin {
    Builtin { name, kind, arity, sig, run }
}

const TEXT_TO_TEXT: &[Overload] = &[(&[T::Str], T::Str)];
const ANY_TO_TEXT: &[Overload] = &[(&[T::Any], T::Str)];
const TRIM: &[Overload] = &[(&[T::Str], T::Str), (&[T::Str, T::Str], T::Str)];
/// expr's `split(string, string[, int]) []string` in a `when`; Windsor's `split(string, string)
/// []any` in a `${…}`.
const SPLIT_WHEN: &[Overload] = &[(&[T::Str, T::Str], T::Strings), (&[T::Str, T::Str, T::Int], T::Strings)];
const SPLIT_VALUE: &[Overload] = &[(&[T::Str, T::Str], T::AnyArray)];
const JOIN: &[Overload] = &[
    (&[T::Strings, T::Str], T::Str),
    (&[T::AnyArray, T::Str], T::Str),
    (&[T::AnyArray], T::Str),
    (&[T::Strings, T::Str], T::Str),
    (&[T::Strings], T::Str),
];
/// Windsor v0.9's `env(string) any`.
const TEXT_TO_ANY: &[Overload] = &[(&[T::Str], T::Any)];
/// Windsor v0.9's `cidrhost(string, int) string`, `cidrsubnet(string, int, int) string`.
const CIDRHOST: &[Overload] = &[(&[T::Str, T::Int], T::Str)];
const CIDRSUBNET: &[Overload] = &[(&[T::Str, T::Int, T::Int], T::Str)];
/// Windsor v0.9's `yamlString(any) string` or `yamlString(string, any) string`.
const YAML_STRING: &[Overload] = &[(&[T::Any], T::Str), (&[T::Str, T::Any], T::Str)];
/// Windsor's `terraform_output(string, string) any`.
const TERRAFORM_OUTPUT: &[Overload] = &[(&[T::Str, T::Str], T::Any)];
/// Windsor's `secret(string, string, string) any` (pkg/runtime/runtime.go registerSecretHelper).
const SECRET: &[Overload] = &[(&[T::Str, T::Str, T::Str], T::Any)];

#[rustfmt::skip]
pub static TABLE: [Builtin; 65] = [
    row("len", Expr, Exactly(1), Validate, Sized(f::len)),
    row("lower", Expr, Exactly(1), Overloads(TEXT_TO_TEXT), Values(f::lower)),
    row("upper", Expr, Exactly(1), Overloads(TEXT_TO_TEXT), Values(f::upper)),
    row("trim", Expr, Between(1, 2), Overloads(TRIM), Values(f::trim)),
    row("split", ExprAndWindsor, Between(2, 3), Dialects { when: SPLIT_WHEN, value: SPLIT_VALUE }, Values(f::split)),
    row("join", Expr, Between(1, 2), Overloads(JOIN), Values(f::join)),
    row("keys", Expr, Exactly(1), Validate, Values(f::keys)),
    row("values", Expr, Exactly(1), Validate, Values(f::keys)),
    row("abs", Expr, Exactly(1), Validate, Sized(f::abs)),
    row("int", Expr, Exactly(1), Validate, Sized(f::int)),
    row("float", Expr, Exactly(1), Validate, Sized(f::to_float)),
    row("string", ExprAndWindsor, Exactly(1), Overloads(ANY_TO_TEXT), Values(f::string)),
    row("file", Windsor, Exactly(1), Overloads(TEXT_TO_TEXT), Sized(f::file)),
    row("jsonnet", Windsor, Exactly(1), Overloads(TEXT_TO_ANY), Sized(f::jsonnet)),
    row("toJSON", Expr, Exactly(1), Overloads(ANY_TO_TEXT), Values(f::to_json)),
    row("cidrhost", WindsorValue, Exactly(2), Overloads(CIDRHOST), Values(f::cidr)),
    row("cidrsubnet", WindsorValue, Exactly(3), Overloads(CIDRSUBNET), Values(f::cidr)),
    row("cidrsubnets", WindsorValue, AtLeast(2), Returns(T::Unknown), Values(f::cidr)),
    row("cidrnetmask", WindsorValue, Exactly(1), Overloads(TEXT_TO_TEXT), Values(f::cidr)),
    row("terraform_output", WindsorValue, Named(&["component", "key"]), Overloads(TERRAFORM_OUTPUT), Values(f::terraform_output)),
    row("env", WindsorValue, Exactly(1), Overloads(TEXT_TO_ANY), Values(f::env)),
    row("yaml", WindsorValue, Between(1, 2), Yaml, Sized(yaml::yaml)),
    row("yamlString", WindsorValue, Between(1, 2), Overloads(YAML_STRING), Sized(yaml::yaml_string)),
    row("jsonString", WindsorValue, Exactly(1), Overloads(ANY_TO_TEXT), Values(f::json_string)),
    row("secret", WindsorValue, Named(&["vault", "item", "field"]), Overloads(SECRET), Values(f::secret)),
    row("max", Expr, Any, Returns(T::Unknown), Values(f::max)),
    row("min", Expr, Any, Returns(T::Unknown), Values(f::max)),
    row("floor", Expr, Exactly(1), Returns(T::Float), Values(f::floor)),
    row("ceil", Expr, Exactly(1), Returns(T::Float), Values(f::floor)),
    row("round", Expr, Exactly(1), Returns(T::Float), Values(f::floor)),
    row("get", Expr, Leading(2), Returns(T::Unknown), Values(f::get)),
    row("take", Expr, Exactly(2), Returns(T::Unknown), Values(f::take)),
    row("concat", Expr, AtLeast(1), Returns(T::Unknown), Values(f::concat)),
    row("toPairs", Expr, Exactly(1), Returns(T::Unknown), Values(f::to_pairs)),
    row("fromPairs", Expr, Exactly(1), Returns(T::Unknown), Values(f::from_pairs)),
    row("trimPrefix", Expr, Any, Returns(T::Str), Values(f::trim_prefix)),
    row("trimSuffix", Expr, Any, Returns(T::Str), Values(f::trim_prefix)),
    row("first", Expr, Any, Returns(T::Unknown), Values(f::first)),
    row("last", Expr, Any, Returns(T::Unknown), Values(f::last)),
    row("flatten", Expr, Any, Returns(T::Unknown), Values(f::flatten)),
    row("uniq", Expr, Any, Returns(T::Unknown), Values(f::uniq)),
    row("reverse", Expr, Any, Returns(T::Unknown), Values(f::reverse)),
    row("hasPrefix", Expr, Any, Returns(T::Bool), Values(f::has_prefix)),
    row("hasSuffix", Expr, Any, Returns(T::Bool), Values(f::has_suffix)),
    row("indexOf", Expr, Any, Returns(T::Int), Values(f::index_of)),
    row("lastIndexOf", Expr, Any, Returns(T::Int), Values(f::index_of)),
    row("replace", Expr, Any, Returns(T::Str), Values(f::replace)),
    row("repeat", Expr, Any, Returns(T::Str), Values(f::repeat)),
    row("type", Expr, Any, Returns(T::Str), Values(f::type_of)),
    row("mean", Expr, Any, Returns(T::Float), Values(f::mean)),
    row("all", Predicate, Exactly(2), Returns(T::Bool), Closure(p::quantifier)),
    row("none", Predicate, Exactly(2), Returns(T::Bool), Closure(p::quantifier)),
    row("any", Predicate, Exactly(2), Returns(T::Bool), Closure(p::quantifier)),
    row("one", Predicate, Exactly(2), Returns(T::Bool), Closure(p::quantifier)),
    row("filter", Predicate, Exactly(2), Returns(T::Unknown), Closure(p::filter)),
    row("map", Predicate, Exactly(2), Returns(T::Unknown), Closure(p::map)),
    row("count", Predicate, Between(1, 2), Returns(T::Int), Closure(p::count)),
    row("sum", Predicate, Between(1, 2), Returns(T::Unknown), Closure(p::sum)),
    row("find", Predicate, Exactly(2), Returns(T::Unknown), Closure(p::find)),
    row("findIndex", Predicate, Exactly(2), Returns(T::Int), Closure(p::find)),
    row("findLast", Predicate, Exactly(2), Returns(T::Unknown), Closure(p::find)),
    row("findLastIndex", Predicate, Exactly(2), Returns(T::Int), Closure(p::find)),
    row("groupBy", Predicate, Exactly(2), Returns(T::Unknown), Closure(p::group_by)),
    row("sortBy", Predicate, Between(2, 3), Returns(T::Unknown), Closure(p::sort_by)),
    row("reduce", Predicate, Between(2, 3), Returns(T::Unknown), Closure(p::reduce)),
];
