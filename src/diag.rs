//! Problems as data. Every stage reports through [`Diagnostic`]; one renderer turns it into a
//! ResourceList `results[]` entry ([`Diagnostic::to_result`]) and another into the one line the
//! CLI prints ([`Diagnostic`]'s `Display`). Exit codes are decided by the CLI from severities.
//! Nothing here reads Kubernetes items: `Diagnostic::about` is defined in `krm`, above this module.

use crate::doc::{FieldPath, Map, Value};
use serde_json::json;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What went wrong, coarsely; becomes the result's tag so tools can filter on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The functionConfig (or a configuration item) does not match its schema.
    Config,
    /// A values source could not be read or merged.
    Values,
    /// Reading a file referenced from configuration failed.
    File,
    /// A step of the render decided something the user should know (info) or could not (error).
    Render,
}

impl Kind {
    pub fn tag(self) -> &'static str {
        match self {
            Kind::Config => "config",
            Kind::Values => "values",
            Kind::File => "file",
            Kind::Render => "render",
        }
    }
}

/// The object a diagnostic is about, as kpt's `resourceRef`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

/// Where the object came from: its package path and position in that file, and for errors inside
/// text (YAML, expressions) the 1-based line and column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub path: Option<String>,
    pub index: Option<u64>,
    pub line: Option<u64>,
    pub column: Option<u64>,
}

/// Where a declaration is: the object that holds it, that object's file, and the field inside
/// it. A step keeps one per declaration (a feature, a blueprint, a subinstallation) and makes
/// its diagnostics from it, instead of keeping a copy of the object only to name it later. Made
/// from an item by `Origin::of` in `krm`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub resource: Option<ResourceRef>,
    /// The object's file and its position there; no line or column.
    pub location: Location,
    pub field: FieldPath,
}

impl Origin {
    /// The same object, at `field` (relative to the object's root).
    pub fn at(&self, field: FieldPath) -> Origin {
        Origin { field, ..self.clone() }
    }

    /// The object's file, as the package names it.
    pub fn file(&self) -> Option<&str> {
        self.location.path.as_deref()
    }

    /// A diagnostic about this object at `field`, relative to this origin's field (`a.b[0]`;
    /// empty for the field itself).
    pub fn diagnostic(&self, severity: Severity, kind: Kind, message: impl Into<String>, field: &str) -> Diagnostic {
        let mut path = self.field.clone();
        if !field.is_empty() {
            path = path.join(&FieldPath::parse(field));
        }
        Diagnostic::new(severity, kind, message).at(path).about_origin(self)
    }
}

/// One problem or decision. Boxed, as minijinja boxes its error, so `Result<T, Diagnostic>`
/// stays one pointer wide on the paths that succeed.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic(Box<Details>);

#[derive(Clone, Debug, PartialEq)]
pub struct Details {
    pub severity: Severity,
    pub kind: Kind,
    pub message: String,
    pub resource: Option<ResourceRef>,
    pub field: Option<FieldPath>,
    pub location: Location,
}

impl std::ops::Deref for Diagnostic {
    type Target = Details;
    fn deref(&self) -> &Details {
        &self.0
    }
}

impl std::ops::DerefMut for Diagnostic {
    fn deref_mut(&mut self) -> &mut Details {
        &mut self.0
    }
}

impl Diagnostic {
    pub fn error(kind: Kind, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, kind, message)
    }

    pub fn warning(kind: Kind, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, kind, message)
    }

    pub fn new(severity: Severity, kind: Kind, message: impl Into<String>) -> Self {
        Self(Box::new(Details {
            severity,
            kind,
            message: message.into(),
            resource: None,
            field: None,
            location: Location::default(),
        }))
    }

    pub fn at(mut self, field: FieldPath) -> Self {
        self.field = Some(field);
        self
    }

    pub fn at_position(mut self, line: Option<u64>, column: Option<u64>) -> Self {
        self.location.line = line;
        self.location.column = column;
        self
    }

    /// Attaches the object `origin` names and its file, not its field (see `about` in `krm`).
    pub fn about_origin(mut self, origin: &Origin) -> Self {
        self.resource.clone_from(&origin.resource);
        if self.location.path.is_none() {
            self.location.path.clone_from(&origin.location.path);
        }
        self.location.index = self.location.index.or(origin.location.index);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The `results[]` entry (kpt function result shape).
    pub fn to_result(&self) -> Value {
        let mut result = Map::new();
        result.insert("message".into(), json!(self.message));
        result.insert("severity".into(), json!(self.severity.as_str()));
        if let Some(r) = &self.resource {
            let mut reference = Map::new();
            reference.insert("apiVersion".into(), json!(r.api_version));
            reference.insert("kind".into(), json!(r.kind));
            reference.insert("name".into(), json!(r.name));
            if let Some(ns) = &r.namespace {
                reference.insert("namespace".into(), json!(ns));
            }
            result.insert("resourceRef".into(), Value::Object(reference));
        }
        if let Some(field) = self.field.as_ref().filter(|f| !f.is_root()) {
            result.insert("field".into(), json!({ "path": field.to_string() }));
        }
        if let Some(path) = &self.location.path {
            let mut file = Map::new();
            file.insert("path".into(), json!(path));
            if let Some(index) = self.location.index {
                file.insert("index".into(), json!(index));
            }
            result.insert("file".into(), Value::Object(file));
        }
        result.insert("tags".into(), json!({ "kind": self.kind.tag() }));
        Value::Object(result)
    }
}

/// The CLI line: `error: path:line:col: Kind/name: field: message`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.severity.as_str())?;
        if let Some(path) = &self.location.path {
            f.write_str(path)?;
            match (self.location.line, self.location.column) {
                (Some(line), Some(column)) => write!(f, ":{line}:{column}")?,
                (Some(line), None) => write!(f, ":{line}")?,
                _ => {}
            }
            f.write_str(": ")?;
        } else if let (Some(line), Some(column)) = (self.location.line, self.location.column) {
            write!(f, "line {line} column {column}: ")?;
        }
        if let Some(r) = &self.resource {
            match (&r.namespace, r.name.as_str()) {
                (_, "") => write!(f, "{}: ", r.kind)?,
                (Some(ns), name) => write!(f, "{} {ns}/{name}: ", r.kind)?,
                (None, name) => write!(f, "{} {name}: ", r.kind)?,
            }
        }
        if let Some(field) = self.field.as_ref().filter(|p| !p.is_root()) {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Text for a terminal: control characters from the input (ESC, BEL, CR, C1 controls, DEL)
/// become visible escapes such as `\u{1b}`, so a resource name cannot recolour, retitle or
/// rewrite the operator's terminal. Newlines between the lines of a message and tabs stay.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let is_escaped = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(is_escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_escaped(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_from_the_input_are_made_visible() {
        assert_eq!(escape_controls("name \u{1b}[31mred\u{7}"), "name \\u{1b}[31mred\\u{7}");
        assert_eq!(escape_controls("a\r\u{85}\u{7f}"), "a\\u{d}\\u{85}\\u{7f}");
        assert_eq!(escape_controls("line 1\n\tline 2"), "line 1\n\tline 2");
    }
}
