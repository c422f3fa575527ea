use std::fmt;

/// A mapping key as a JSON pointer segment (`~` → `~0`, `/` → `~1`).
pub fn pointer_segment(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The value at a dotted path (`cluster.workers.count`), each part a mapping key, as Windsor's
/// values and expressions name them.
pub fn dotted<'v>(value: &'v super::Value, path: &str) -> Option<&'v super::Value> {
    path.split('.').try_fold(value, |node, key| node.get(key))
}

/// `Value::pointer_mut` without its two new strings per segment: a segment decodes `~1` and
/// `~0` only when it holds a `~`. Rendering writes each templated field back by pointer.
pub fn pointer_mut<'v>(value: &'v mut super::Value, pointer: &str) -> Option<&'v mut super::Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').try_fold(value, |target, segment| {
        let decoded;
        let key = if segment.contains('~') {
            decoded = segment.replace("~1", "/").replace("~0", "~");
            decoded.as_str()
        } else {
            segment
        };
        match target {
            super::Value::Object(map) => map.get_mut(key),
            super::Value::Array(list) => {
                let index =
                    (key == "0" || !key.starts_with(['0', '+'])).then(|| key.parse::<usize>().ok()).flatten()?;
                list.get_mut(index)
            }
            _ => None,
        }
    })
}

/// A location inside a document, written the way kpt and kubectl print field paths:
/// `spec.valuesFrom[0].name`, with keys that contain dots or slashes in brackets
/// (`metadata.annotations["config.kubernetes.io/path"]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(Vec<Segment>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Segment {
    Key(String),
    Index(usize),
}

impl FieldPath {
    pub fn root() -> Self {
        Self::default()
    }

    /// Parses a dotted path such as `spec.values.a[0]`; used for paths reported by serde.
    pub fn parse(text: &str) -> Self {
        let mut path = Self::root();
        for part in text.split('.').filter(|p| !p.is_empty() && *p != "?") {
            let (key, rest) = part.split_once('[').unwrap_or((part, ""));
            if !key.is_empty() {
                path = path.key(key);
            }
            for index in rest.split('[') {
                if let Ok(i) = index.trim_end_matches(']').parse() {
                    path = path.index(i);
                }
            }
        }
        path
    }

    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.0.push(Segment::Key(key.into()));
        self
    }

    pub fn index(mut self, index: usize) -> Self {
        self.0.push(Segment::Index(index));
        self
    }

    pub(super) fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends another path below this one.
    pub fn join(mut self, other: &FieldPath) -> Self {
        self.0.extend(other.0.iter().cloned());
        self
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if key.contains(['.', '/', '[', ']', '"', ' ']) || key.is_empty() => {
                    write!(f, "[{key:?}]")?
                }
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_like_kpt() {
        let path = FieldPath::root().key("spec").key("valuesFrom").index(0).key("name");
        assert_eq!(path.to_string(), "spec.valuesFrom[0].name");
        let path = FieldPath::root().key("metadata").key("annotations").key("config.kubernetes.io/path");
        assert_eq!(path.to_string(), "metadata.annotations[\"config.kubernetes.io/path\"]");
    }

    #[test]
    fn parses_serde_paths() {
        assert_eq!(FieldPath::parse("spec.valuesFrom[0].nmae").to_string(), "spec.valuesFrom[0].nmae");
        assert!(FieldPath::parse(".").is_root());
    }
}
