//! The package the function renders: how relative paths in configuration resolve, and the one
//! trait through which stages read files. Stages never touch the disk themselves; the CLI hands
//! them an implementation confined to the package root (tests hand them a map).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why a package file could not be read. Callers word their message around it (its `Display`
/// says what to change); the kind lets them treat a missing file otherwise than one that is too
/// large or outside the package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// No such file under the package root (`root` as the user gave it); `elsewhere` when the
    /// path names a file from the working directory, so the root is likely the wrong one.
    NotFound { root: String, elsewhere: bool, not_the_package: bool },
    /// Not in a package held in memory.
    NotInPackage,
    /// The path, or a symlink on it, leads out of the package root.
    Escapes { path: String },
    /// Files cannot be read at all from this root (why, and what to do).
    Root(String),
    /// A file in /proc or /sys.
    System { path: PathBuf },
    /// A directory, FIFO, socket or device.
    NotRegular { directory: bool },
    /// Larger than the file-size limit.
    TooLarge { limit: u64 },
    /// Not UTF-8 text: the offset of the first invalid byte.
    NotUtf8 { offset: usize },
    /// What the operating system said.
    Io(String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::NotFound { root, elsewhere: true, .. } => write!(
                f,
                "no such file in the package root {root} (there is one in the working directory): pass --root \
                 with the package's directory, or run from it (in the container image, mount the package at \
                 {IMAGE_WORKDIR})"
            ),
            FileError::NotFound { root, not_the_package: true, .. } => write!(
                f,
                "no such file in the package root {root}, which holds none of the package's files either: pass \
                 --root with the package's directory, or run from it (`kpt fn eval DIR --exec` runs the function in \
                 kpt's working directory: run `kpt fn eval . --exec …` from DIR, or give \
                 `--exec \"render-blueprint --root DIR\"`)"
            ),
            FileError::NotFound { root, .. } if root == IMAGE_WORKDIR => {
                write!(f, "no such file in the package root {root}: in the container image, mount the package there")
            }
            FileError::NotFound { root, .. } => write!(f, "no such file in the package root {root}"),
            FileError::NotInPackage => f.write_str("no such file in the package"),
            FileError::Escapes { path } => write!(f, "path {path:?} escapes the package root"),
            FileError::Root(why) => f.write_str(why),
            FileError::System { path } => {
                write!(f, "{} is a system file (/proc and /sys are never read)", path.display())
            }
            FileError::NotRegular { directory } => {
                let what = if *directory { "a directory" } else { "not a regular file (a FIFO, socket or device)" };
                write!(f, "it is {what}; only regular files are read")
            }
            FileError::TooLarge { limit } => write!(
                f,
                "the file is larger than {} (--max-file-size): keep large data out of the package, or raise the limit",
                crate::limits::human_bytes(*limit)
            ),
            FileError::NotUtf8 { offset } => write!(f, "the file is not UTF-8 text (invalid byte at offset {offset})"),
            FileError::Io(message) => f.write_str(message),
        }
    }
}

/// Most callers still word errors as text; `?` turns a file error into its message.
impl From<FileError> for String {
    fn from(err: FileError) -> String {
        err.to_string()
    }
}

/// Reads files by package-relative path (forward slashes, already normalised and confined).
pub trait Files: Send + Sync {
    fn read(&self, path: &str) -> Result<String, FileError>;
    /// `path` as messages name it: one convention for every path a message prints, the path
    /// to open from the working directory (the package path itself when the root is the working
    /// directory, or the files are not on disk).
    fn shown(&self, path: &str) -> String {
        path.to_owned()
    }
    /// An owned handle, for evaluators that keep their own (`'static`) file access, such as the
    /// Jsonnet import resolver, which runs on a thread of its own (see `jsonnet::evaluate`).
    fn share(&self) -> Arc<dyn Files>;
}

/// A package held in memory, for tests and for runs where no file access is wanted.
#[derive(Clone, Default)]
pub struct MemoryFiles(pub HashMap<String, String>);

impl Files for MemoryFiles {
    fn read(&self, path: &str) -> Result<String, FileError> {
        self.0.get(path).cloned().ok_or(FileError::NotInPackage)
    }
    fn share(&self) -> Arc<dyn Files> {
        Arc::new(self.clone())
    }
}

/// Where the container image runs the function: an empty directory, so a package mounted there
/// is the root and nothing else in the image can be read (Dockerfile's `WORKDIR`).
pub const IMAGE_WORKDIR: &str = "/package";

/// Directories whose files are never read, whatever the root: they hold the process's
/// environment, memory and the kernel's settings, not package files (checked on the canonical
/// path). Devices are refused wherever they are, as files that are not regular; `/dev/shm` is a
/// tmpfs whose regular files (a `TMPDIR` there) are files like any other.
const SYSTEM_DIRS: [&str; 2] = ["/proc", "/sys"];

/// Refuses a package path that could leave the root before any filesystem call, so the answer
/// never depends on (or reveals) whether a file outside the package exists.
pub fn check_inside(path: &str) -> Result<(), FileError> {
    let escapes = path.starts_with('/')
        || path.starts_with('\\')
        || path.contains(":\\")
        || path.split(['/', '\\']).any(|part| part == "..")
        || path.contains('\0');
    if escapes {
        return Err(FileError::Escapes { path: path.to_string() });
    }
    Ok(())
}

/// Whether a canonical path lies in `/proc` or `/sys`.
pub fn is_system_path(path: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|dir| path.starts_with(dir))
}

/// Reads a regular file of at most `limit` bytes. The type is checked before opening (a FIFO
/// would block the open, a device never end), and the read stops one byte past the limit, so a
/// sparse or growing file cannot allocate more than that.
pub fn read_regular_file(path: &Path, limit: u64) -> Result<String, FileError> {
    let io = |err: std::io::Error| FileError::Io(err.to_string());
    let real = path.canonicalize().map_err(io)?;
    if is_system_path(&real) {
        return Err(FileError::System { path: real });
    }
    let meta = std::fs::metadata(&real).map_err(io)?;
    if !meta.is_file() {
        return Err(FileError::NotRegular { directory: meta.is_dir() });
    }
    let file = std::fs::File::open(&real).map_err(io)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|err| FileError::NotUtf8 { offset: err.utf8_error().valid_up_to() })
}

/// Files on disk, confined to the package root: no `..`, no absolute path, no symlink that
/// leads out, no system directory, only regular files up to the file-size limit. It remembers
/// what it read, so error reports reopen only those files.
#[derive(Clone)]
pub struct DiskFiles {
    /// The canonical root, or why files cannot be read at all (the root is `/`).
    root: Result<PathBuf, String>,
    /// The root as the user gave it, for messages (the canonical path differs per machine).
    shown: String,
    /// The root as the user gave it, to name package files from the working directory; `None`
    /// when it is the working directory.
    given: Option<PathBuf>,
    limit: u64,
    read: Arc<Mutex<HashSet<String>>>,
    /// The items name files (their path annotations) of which the root holds none: the
    /// function likely runs outside the package (`kpt fn eval DIR --exec` from elsewhere).
    not_the_package: bool,
}

impl DiskFiles {
    /// A root of `/` is refused for reads (not for the render): in a container whose working
    /// directory is `/`, every file of the image would be package content.
    pub fn new(root: &Path, limit: u64) -> Self {
        let given = root;
        let root = match root.canonicalize() {
            Ok(real) if real.parent().is_none() => Err(format!(
                "the package root is {} (the working directory), from where every file of the machine could be \
                 read: pass --root DIR, or run from the package directory (in the container image, mount the \
                 package at {IMAGE_WORKDIR})",
                real.display()
            )),
            Ok(real) if is_system_path(&real) => {
                Err(format!("the package root {} is a system directory: pass --root DIR", real.display()))
            }
            Ok(real) => Ok(real),
            Err(err) => Err(format!("package root {}: {err}", root.display())),
        };
        let (shown, given) = match given.as_os_str() {
            name if name == "." || name.is_empty() => ("(the working directory)".to_string(), None),
            _ => (given.display().to_string(), Some(given.to_path_buf())),
        };
        Self { root, shown, given, limit, read: Arc::default(), not_the_package: false }
    }

    /// Notes whether the root holds the items' own files, given their package paths: when it
    /// holds none of them, a file not found gets the advice to point at the package. A few
    /// are looked at, not all: one found settles it.
    pub fn check_items_are_here(&mut self, paths: impl Iterator<Item = String>) {
        let Ok(root) = &self.root else { return };
        let mut looked = 0;
        for path in paths.take(16) {
            if check_inside(&path).is_err() {
                continue;
            }
            if root.join(path).exists() {
                return;
            }
            looked += 1;
        }
        self.not_the_package = looked > 0;
    }

    /// The canonical root, when files can be read.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref().ok()
    }

    /// Records a package file the command line read, so error reports may reopen it.
    pub fn note(&self, path: &str) {
        if let Ok(mut read) = self.read.lock() {
            read.insert(path.to_string());
        }
    }

    /// Whether `path` was read during this run (by the command line or a step).
    pub fn was_read(&self, path: &str) -> bool {
        self.read.lock().is_ok_and(|read| read.contains(path))
    }
}

impl Files for DiskFiles {
    fn read(&self, path: &str) -> Result<String, FileError> {
        check_inside(path)?;
        let root = self.root.as_ref().map_err(|why| FileError::Root(why.clone()))?;
        let real = root.join(path).canonicalize().map_err(|err| match err.kind() {
            // Paths are package-relative, and the package is wherever the function was told it
            // is: say where that was and how to point elsewhere (kpt runs functions from the
            // directory it was started in, containers see only what is mounted).
            // The --root advice only where it helps: the path names a file from the working
            // directory, which is not the root; or the root holds none of the items' own files.
            std::io::ErrorKind::NotFound => FileError::NotFound {
                root: self.shown.clone(),
                elsewhere: Path::new(path).is_file()
                    && std::env::current_dir().ok().and_then(|dir| dir.canonicalize().ok()).as_deref() != Some(root),
                not_the_package: self.not_the_package,
            },
            _ => FileError::Io(err.to_string()),
        })?;
        if !real.starts_with(root) {
            return Err(FileError::Escapes { path: self.shown(path) });
        }
        let text = read_regular_file(&real, self.limit)?;
        self.note(path);
        Ok(text)
    }
    fn shown(&self, path: &str) -> String {
        match &self.given {
            Some(root) => root.join(path).display().to_string(),
            None => path.to_owned(),
        }
    }
    fn share(&self) -> Arc<dyn Files> {
        Arc::new(self.clone())
    }
}

/// Resolves `relative` against the directory of `from` (a package-relative file path, such as an
/// item's `internal.config.kubernetes.io/path`), without touching the disk. The result may not
/// leave the package root: `..` past the root and absolute paths are refused with
/// `path "<p>" escapes the package root`.
pub fn resolve(from: Option<&str>, relative: &str) -> Result<String, String> {
    if relative.starts_with('/') || relative.starts_with('\\') || relative.contains(":\\") {
        return Err(format!("path {relative:?} escapes the package root"));
    }
    if let Some(file) = from {
        // The declaring file's path is the item's own annotation: input, not a trusted path.
        check_inside(file).map_err(|_| format!("the item's path annotation {file:?} escapes the package root"))?;
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
