//! Sprig's text functions (Masterminds/sprig v3 `TxtFuncMap`), the library KOTS and Landscaper
//! put under their Go templates. To be written.

use super::go::FuncMap;

/// The hermetic Sprig functions.
pub fn functions() -> FuncMap {
    FuncMap::new()
}
