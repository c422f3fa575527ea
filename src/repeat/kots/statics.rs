//! KOTS's static template context (the functions that need no config, license or cluster). To
//! be written.

use crate::template::go::FuncMap;

/// KOTS's static functions over Sprig's.
pub fn functions() -> FuncMap {
    crate::template::sprig::functions()
}
