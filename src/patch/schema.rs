//! The shape of the generated strategic-merge schema ([`super::merge_keys`]): a module of its
//! own so the table and the merge that reads it ([`super::strategic`]) each use it without
//! using each other both ways.

/// One field of a definition in the generated table.
pub struct Field {
    pub name: &'static str,
    /// The definition of the value (or of the list's items), when it matters for merging.
    pub schema: Option<usize>,
    pub list: bool,
    /// kyaml's merge keys: the list map keys, else the patch merge key; none for scalar sets.
    pub keys: &'static [&'static str],
    pub merge: bool,
    pub retain_keys: bool,
}

/// A top-level kind and its root definition.
pub struct Kind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub schema: usize,
}
