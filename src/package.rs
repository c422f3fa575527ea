//! The package the function renders: how relative paths in configuration resolve, and the one
//! trait through which stages read files. Stages never touch the disk themselves; the CLI hands
//! them an implementation confined to the package root (tests hand them a map).

use std::collections::HashMap;
use std::sync::Arc;

/// Reads files by package-relative path (forward slashes, already normalised and confined).
pub trait Files: Send + Sync {
    fn read(&self, path: &str) -> Result<String, String>;
    /// An owned handle, for evaluators that keep their own (`'static`) file access, such as the
    /// Jsonnet import resolver, which runs on a thread of its own (see `jsonnet::evaluate`).
    fn share(&self) -> Arc<dyn Files>;
}

/// A package held in memory, for tests and for runs where no file access is wanted.
#[derive(Clone, Default)]
pub struct MemoryFiles(pub HashMap<String, String>);

impl Files for MemoryFiles {
    fn read(&self, path: &str) -> Result<String, String> {
        self.0.get(path).cloned().ok_or_else(|| "no such file in the package".to_string())
    }
    fn share(&self) -> Arc<dyn Files> {
        Arc::new(self.clone())
    }
}

/// Resolves `relative` against the directory of `from` (a package-relative file path, such as an
/// item's `internal.config.kubernetes.io/path`), without touching the disk. The result may not
/// leave the package root: `..` past the root and absolute paths are refused with the error text
/// of SPEC §7.1.
pub fn resolve(from: Option<&str>, relative: &str) -> Result<String, String> {
    if relative.starts_with('/') || relative.starts_with('\\') || relative.contains(":\\") {
        return Err(format!("path {relative:?} escapes the package root"));
    }
    let mut parts: Vec<&str> = match from {
        Some(file) => {
            let mut parts: Vec<&str> = file.split('/').collect();
            parts.pop();
            parts
        }
        None => Vec::new(),
    };
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!("path {relative:?} escapes the package root"));
                }
            }
            part => parts.push(part),
        }
    }
    parts.retain(|p| !p.is_empty() && *p != ".");
    if parts.is_empty() {
        return Err(format!("path {relative:?} names the package root, not a file"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_from_the_declaring_file() {
        assert_eq!(resolve(Some("config/fn.yaml"), "values.yaml"), Ok("config/values.yaml".into()));
        assert_eq!(resolve(Some("config/fn.yaml"), "../v/values.yaml"), Ok("v/values.yaml".into()));
        assert_eq!(resolve(None, "./a/./b.yaml"), Ok("a/b.yaml".into()));
    }

    #[test]
    fn refuses_to_leave_the_root() {
        let err = Err("path \"../x\" escapes the package root".to_string());
        assert_eq!(resolve(Some("fn.yaml"), "../x"), err);
        assert!(resolve(None, "/etc/passwd").is_err());
    }
}
