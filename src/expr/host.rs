//! What an expression reads besides its values: files, the environment, terraform's outputs.

use crate::doc::Value;

/// Where `file()` and `jsonnet()` read from; the caller resolves paths and confines them.
pub trait Host {
    fn file(&self, path: &str) -> Result<String, String>;
    fn jsonnet(&self, path: &str) -> Result<Value, String>;
    /// The file `yaml()`/`yamlString()` read for `path`: `Ok(None)` only when there is no such
    /// file (the argument is then YAML text itself, as Windsor reads it); a file that exists but
    /// is refused (outside the package, too large) is `file()`'s error, never read as text.
    fn yaml_file(&self, path: &str) -> Result<Option<String>, String> {
        Ok(self.file(path).ok())
    }
    /// Windsor's `env(name)`: the variable from the environment the render was given (the
    /// command line's snapshot; nothing here reads the process environment), `None` when unset.
    fn env(&self, _name: &str) -> Option<String> {
        None
    }
    /// `terraform_output(component, key)`: `None` while terraform has not run (the expression is
    /// deferred), else the output (nil when the component has no such key).
    fn terraform_output(&self, _component: &str, _key: &str) -> Option<Value> {
        None
    }
}

/// A host that refuses file access, for contexts without a package.
pub struct NoFiles;

impl Host for NoFiles {
    fn file(&self, path: &str) -> Result<String, String> {
        Err(format!("file({path:?}) is not available here"))
    }
    fn jsonnet(&self, path: &str) -> Result<Value, String> {
        Err(format!("jsonnet({path:?}) is not available here"))
    }
}
