//! KOTS's static template context (the functions that need no config, license or cluster). To
//! be written.

use crate::template::go::FuncMap;

/// Settings of the static functions.
#[derive(Clone, Debug, Default)]
pub struct Statics {
    pub now: Option<String>,
    pub namespace: Option<String>,
}

/// KOTS's static functions over Sprig's.
pub fn functions(_options: &Statics) -> FuncMap {
    crate::template::sprig::functions()
}
