//! Which release's meaning an expression is compiled with. Windsor v0.9 changed how values turn
//! into text, so the same source means two things; it is decided when the expression or template
//! is compiled, and the scope carries it to every node (and to the templates `yaml()` runs).

/// How values become text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Semantics {
    /// expr's (and Windsor v0.8.1's): `string()` is expr's `%v`.
    #[default]
    Expr,
    /// Windsor v0.9's: `string()` gives maps and lists as YAML and nil as ""; in interpolation an
    /// expression with only blanks around it keeps its type, and text of several lines is put in
    /// indented (`indentForEmbeddedYAML`).
    WindsorV09,
}
