//! Flux 2.7's `ArtifactGenerator` (fluxcd/source-watcher v2.2.1, API
//! `source.extensions.fluxcd.io/v1beta1`): the ExternalArtifacts it makes from its sources, and
//! the decisions of its builder (`internal/builder/builder.go`, `merge.go`) and path pattern
//! (`internal/controller/artifactgenerator_pathpattern.go`) that read no file: how a copy
//! operation's `from` and `to` are read, where a match goes, which paths `exclude` leaves out
//! (doublestar patterns), how `strategy: Merge` merges YAML. The CLI does the copying.

use super::{namespace_or_default, Name, SourceRef};
use crate::doc::Value;
use crate::krm::name_of;

/// The API group of source-watcher's objects.
pub const GENERATOR_GROUP: &str = "source.extensions.fluxcd.io";

/// How a copy operation writes a file that is already in the artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Overwrite,
    Merge,
    Extract,
}

/// One `copy` entry of an output artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyOperation {
    pub from: String,
    pub to: String,
    pub exclude: Vec<String>,
    pub strategy: Strategy,
}

impl std::fmt::Display for CopyOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "from '{}' to '{}'", self.from, self.to)
    }
}

/// One entry of `spec.artifacts`: the ExternalArtifact `name` and how it is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputArtifact {
    pub name: String,
    pub copy: Vec<CopyOperation>,
}

/// One entry of `spec.sources`: a source-controller object, known as `@alias` in the copy
/// operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratorSource {
    pub alias: String,
    pub source: SourceRef,
}

/// An ArtifactGenerator, as read from its object.
#[derive(Clone, Debug)]
pub struct Generator {
    pub id: Name,
    pub sources: Vec<GeneratorSource>,
    pub path_pattern: Option<String>,
    pub artifacts: Vec<OutputArtifact>,
}

/// Whether an object is an ArtifactGenerator (any version of source-watcher's API).
pub fn is_generator(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("ArtifactGenerator")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|api| api.strip_prefix(GENERATOR_GROUP))
            .is_some_and(|version| version.starts_with('/'))
}

impl Generator {
    /// Reads an ArtifactGenerator object; the error names the field to fix.
    pub fn read(object: &Value) -> Result<Generator, String> {
        let id = Name { namespace: namespace_or_default(object), name: name_of(object).to_string() };
        let fail = |field: &str, what: &str| format!("ArtifactGenerator {id}: spec.{field} {what}");
        let spec = object.get("spec");
        let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        let list = |key: &str| spec.and_then(|s| s.get(key)).and_then(Value::as_array).cloned().unwrap_or_default();
        let mut sources = Vec::new();
        for (i, entry) in list("sources").iter().enumerate() {
            let (Some(alias), Some(kind), Some(name)) =
                (text(entry, "alias"), text(entry, "kind"), text(entry, "name"))
            else {
                return Err(fail(&format!("sources[{i}]"), "needs alias, kind and name"));
            };
            let namespace = text(entry, "namespace").unwrap_or_else(|| id.namespace.clone());
            sources.push(GeneratorSource { alias, source: SourceRef { kind, namespace, name } });
        }
        if sources.is_empty() {
            return Err(fail("sources", "lists no source: add one (alias, kind, name)"));
        }
        let mut artifacts = Vec::new();
        for (i, entry) in list("artifacts").iter().enumerate() {
            let Some(name) = text(entry, "name") else {
                return Err(fail(&format!("artifacts[{i}]"), "needs a name"));
            };
            let mut copy = Vec::new();
            let operations = entry.get("copy").and_then(Value::as_array).cloned().unwrap_or_default();
            for (j, op) in operations.iter().enumerate() {
                let at = format!("artifacts[{i}].copy[{j}]");
                let (Some(from), Some(to)) = (text(op, "from"), text(op, "to")) else {
                    return Err(fail(&at, "needs from and to"));
                };
                let exclude = op
                    .get("exclude")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|p| p.as_str().map(str::to_string).ok_or_else(|| fail(&at, "exclude holds a non-string")))
                    .collect::<Result<Vec<_>, _>>()?;
                let strategy = match op.get("strategy").and_then(Value::as_str) {
                    None | Some("Overwrite") => Strategy::Overwrite,
                    Some("Merge") => Strategy::Merge,
                    Some("Extract") => Strategy::Extract,
                    Some(other) => {
                        return Err(fail(
                            &format!("{at}.strategy"),
                            &format!("is {other:?}: write Overwrite, Merge or Extract"),
                        ))
                    }
                };
                copy.push(CopyOperation { from, to, exclude, strategy });
            }
            artifacts.push(OutputArtifact { name, copy });
        }
        let path_pattern = spec.and_then(|s| s.get("pathPattern")).and_then(Value::as_str);
        let path_pattern = path_pattern.filter(|p| !p.is_empty()).map(str::to_string);
        Ok(Generator { id, sources, path_pattern, artifacts })
    }

    /// Whether it may make the ExternalArtifact `name` in `namespace`: it lists that name, or its
    /// path pattern decides the names.
    pub fn may_make(&self, namespace: &str, name: &str) -> bool {
        self.id.namespace == namespace && (self.path_pattern.is_some() || self.artifacts.iter().any(|a| a.name == name))
    }

    /// The alias the path pattern walks and the pattern below it (`@alias/pattern`).
    pub fn pattern_alias(&self) -> Result<Option<(&str, &str)>, String> {
        let Some(pattern) = &self.path_pattern else { return Ok(None) };
        match pattern.split_once('/') {
            Some((alias, rest)) if alias.starts_with('@') => Ok(Some((&alias[1..], rest))),
            _ => Err(format!(
                "ArtifactGenerator {}: invalid pathPattern format: {pattern}: write @ALIAS/PATH with {{NAME}} captures",
                self.id
            )),
        }
    }

    /// The artifacts it makes: `spec.artifacts` as written, or, with a path pattern, each of
    /// them once per directory of the pattern's source the pattern matches (`dirs`: every
    /// directory below the source, relative with `/`, in walk order), its `{captures}` filled in
    /// (lower case in the name, as found in the copy operations), as source-watcher expands it.
    pub fn requests(&self, dirs: &[String]) -> Result<Vec<OutputArtifact>, String> {
        let Some((_, pattern)) = self.pattern_alias()? else { return Ok(self.artifacts.clone()) };
        let full = self.path_pattern.as_deref().unwrap_or_default();
        let fail = |what: String| format!("ArtifactGenerator {}: pathPattern {full:?}: {what}", self.id);
        let names = captures(pattern).map_err(fail)?;
        for name in &names {
            if !label_part(name) {
                return Err(fail(format!(
                    "capture variable {name:?} is not a valid Kubernetes label key: start and end it with a letter or \
                     digit"
                )));
            }
        }
        let mut regex = String::from("^");
        let mut rest = pattern;
        while let Some(open) = rest.find('{') {
            regex.push_str(&regex::escape(&rest[..open]));
            let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
            regex.push_str(&format!("(?P<{}>[^/]+)", &rest[open + 1..close]));
            rest = rest.get(close + 1..).unwrap_or("");
        }
        regex.push_str(&regex::escape(rest));
        regex.push('$');
        let matcher = regex::Regex::new(&regex).map_err(|err| fail(format!("cannot compile it: {err}")))?;
        let mut requests = Vec::new();
        let mut seen: Vec<(String, &str)> = Vec::new();
        for dir in dirs {
            let Some(found) = matcher.captures(dir) else { continue };
            let raw: Vec<(&str, &str)> =
                names.iter().map(|n| (n.as_str(), found.name(n).map_or("", |m| m.as_str()))).collect();
            let lower: Vec<(&str, String)> = raw.iter().map(|(n, v)| (*n, v.to_lowercase())).collect();
            for (name, value) in &lower {
                if !label_value(value) {
                    return Err(fail(format!(
                        "captured value {value:?} for variable {name:?} (directory {dir:?}) is not a valid Kubernetes \
                         label value: rename the directory, or narrow the pattern"
                    )));
                }
            }
            let lower: Vec<(&str, &str)> = lower.iter().map(|(n, v)| (*n, v.as_str())).collect();
            for artifact in &self.artifacts {
                let name = fill(&artifact.name, &lower).map_err(fail)?;
                if !dns_subdomain(&name) {
                    return Err(fail(format!(
                        "rendered artifact name {name:?} is not a valid Kubernetes object name (a DNS-1123 subdomain)"
                    )));
                }
                if let Some((_, before)) = seen.iter().find(|(n, _)| *n == name) {
                    return Err(fail(format!(
                        "directories {before:?} and {dir:?} both resolve to artifact name {name:?}: add a capture to the \
                         artifact name"
                    )));
                }
                seen.push((name.clone(), dir));
                let mut copy = Vec::new();
                for op in &artifact.copy {
                    copy.push(CopyOperation {
                        from: fill(&op.from, &raw).map_err(fail)?,
                        to: fill(&op.to, &raw).map_err(fail)?,
                        exclude: op.exclude.clone(),
                        strategy: op.strategy,
                    });
                }
                requests.push(OutputArtifact { name, copy });
            }
        }
        Ok(requests)
    }
}

fn capture_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The capture names of a path pattern, each once, in order.
fn captures(pattern: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = pattern;
    loop {
        let open = rest.find('{');
        let close = rest.find('}');
        match (open, close) {
            (None, None) => return Ok(names),
            (None, Some(_)) => return Err("a capture is missing its opening brace".to_string()),
            (Some(o), Some(c)) if c < o => return Err("a capture is missing its opening brace".to_string()),
            (Some(o), Some(c)) => {
                let name = &rest[o + 1..c];
                if name.is_empty() {
                    return Err("empty capture variable".to_string());
                }
                if !capture_name(name) {
                    return Err(format!(
                        "capture variable {name:?} must be a valid capture name matching [A-Za-z_][A-Za-z0-9_]*"
                    ));
                }
                if names.iter().any(|n| n == name) {
                    return Err(format!("duplicate capture variable {name:?}"));
                }
                names.push(name.to_string());
                rest = &rest[c + 1..];
            }
            (Some(_), None) => return Err("a capture is missing its closing brace".to_string()),
        }
    }
}

/// A template with its `{captures}` filled in.
fn fill(template: &str, values: &[(&str, &str)]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        if rest[i..].starts_with('}') {
            return Err(format!("invalid template {template:?}: a capture is missing its opening brace"));
        }
        let Some(end) = rest[i..].find('}') else {
            return Err(format!("invalid template {template:?}: a capture is missing its closing brace"));
        };
        let name = &rest[i + 1..i + end];
        let Some((_, value)) = values.iter().find(|(n, _)| *n == name) else {
            return Err(format!(
                "invalid template {template:?}: capture variable {name:?} is not defined by pathPattern"
            ));
        };
        out.push_str(value);
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn alphanumeric(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// The name part of a label key (a capture name becomes one).
fn label_part(name: &str) -> bool {
    name.len() <= 63
        && name.starts_with(alphanumeric)
        && name.ends_with(alphanumeric)
        && name.chars().all(|c| alphanumeric(c) || matches!(c, '-' | '_' | '.'))
}

fn label_value(value: &str) -> bool {
    value.is_empty() || label_part(value)
}

fn dns_subdomain(name: &str) -> bool {
    let lower = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !name.is_empty()
        && name.len() <= 253
        && name
            .split('.')
            .all(|part| part.starts_with(lower) && part.ends_with(lower) && part.chars().all(|c| lower(c) || c == '-'))
}

/// A copy operation's `from`: the alias and the pattern below it (`@alias/pattern`).
pub fn parse_from(from: &str) -> Result<(&str, &str), String> {
    let rest = from.strip_prefix('@').ok_or("the source must start with '@': write @ALIAS/PATH")?;
    rest.split_once('/').ok_or_else(|| "the source format must be '@alias/pattern'".to_string())
}

/// A copy operation's `to`: the path inside the artifact (`@artifact/path`).
pub fn parse_to(to: &str) -> Result<&str, String> {
    to.strip_prefix("@artifact/").ok_or_else(|| "the destination must start with '@artifact/'".to_string())
}

/// Whether a `from` pattern is a glob (source-watcher's `containsGlobChars`).
pub fn has_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', ']'])
}

/// Go's `path.Clean`, as Sprig's `clean` has it (`/`-separated, as on Linux).
pub use crate::template::sprig::path_clean as clean;

/// Go's `path.Join`: the non-empty parts joined and cleaned (empty for none).
pub fn join(parts: &[&str]) -> String {
    let kept: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    match kept.is_empty() {
        true => String::new(),
        false => clean(&kept.join("/")),
    }
}

/// A cleaned path's components inside a root, or `None` when it leads out (`..`, absolute), as
/// Go's `os.Root` refuses it.
pub fn inside(path: &str) -> Option<Vec<&str>> {
    if path.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    (!parts.contains(&"..")).then_some(parts)
}

/// Where a glob match goes (`calculateGlobDestination`): below `dest`, without the pattern's
/// directory when it ends in `/**`, else with the whole matched path.
pub fn glob_destination(pattern: &str, matched: &str, dest: &str) -> String {
    if let Some(prefix) = pattern.strip_suffix("/**") {
        if let Some(rest) = matched.strip_prefix(&format!("{prefix}/")) {
            return join(&[dest, rest]);
        }
    }
    join(&[dest, matched])
}

/// The literal part of a pattern before its first glob component (`sourceSelectionRoot`).
pub fn selection_root(pattern: &str) -> String {
    let cleaned = clean(pattern);
    let root: Vec<&str> = cleaned.split('/').take_while(|part| !has_glob(part)).collect();
    match root.is_empty() {
        true => ".".to_string(),
        false => join(&root),
    }
}

/// Whether `exclude` leaves a path out (`shouldExcludePath`): a pattern matched against the path
/// from the source's root and from `base`; one without `/` also against the file name.
pub fn excluded(path: &str, base: &str, exclude: &[String]) -> bool {
    if excluded_path(path, exclude) {
        return true;
    }
    let (base, path) = (clean(base), clean(path));
    let relative = match base.as_str() {
        "." | "" => Some(path.clone()),
        _ => path.strip_prefix(&format!("{base}/")).map(str::to_string).or_else(|| (path == base).then(|| ".".into())),
    };
    match relative {
        Some(relative) if relative != "." && relative != path => excluded_path(&relative, exclude),
        _ => false,
    }
}

fn excluded_path(path: &str, exclude: &[String]) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    exclude.iter().any(|pattern| {
        doublestar_match(pattern, path) == Some(true)
            || (!pattern.contains('/') && doublestar_match(pattern, file) == Some(true))
    })
}

/// At most this many alternatives a `{a,b}` pattern expands to: each is matched against every
/// copied path, and a few braces would otherwise make thousands.
const MAX_ALTERNATIVES: usize = 64;

/// Whether an `exclude` pattern is well formed (doublestar's `ValidatePattern`).
pub fn valid_exclude(pattern: &str) -> bool {
    alternatives(pattern).is_some_and(|all| {
        all.iter().all(|p| p.split('/').all(|part| super::ignore::name_matches(&class_syntax(part), "").is_some()))
    })
}

/// doublestar's `Match`: `**` as a whole component matches any number of components (none
/// too), `*`, `?` and `[…]` (`^` or `!` negates) within one, `{a,b}` alternatives, `\` escapes.
/// `None`: malformed.
pub fn doublestar_match(pattern: &str, path: &str) -> Option<bool> {
    let names: Vec<&str> = path.split('/').collect();
    for alternative in alternatives(pattern)? {
        let parts: Vec<String> = alternative.split('/').map(class_syntax).collect();
        // reach[i][j]: the first i pattern components match the first j path components.
        let mut reach = vec![vec![false; names.len() + 1]; parts.len() + 1];
        reach[0][0] = true;
        for i in 0..parts.len() {
            for j in 0..=names.len() {
                if !reach[i][j] {
                    continue;
                }
                if parts[i] == "**" {
                    for cell in &mut reach[i + 1][j..] {
                        *cell = true;
                    }
                } else if j < names.len() && super::ignore::name_matches(&parts[i], names[j])? {
                    reach[i + 1][j + 1] = true;
                }
            }
        }
        if reach[parts.len()][names.len()] {
            return Some(true);
        }
    }
    Some(false)
}

/// doublestar's `[!…]` is Go's `[^…]`.
fn class_syntax(part: &str) -> String {
    part.replace("[!", "[^")
}

/// The patterns `{a,b}` stands for; `None` when a brace is not closed or there are too many.
fn alternatives(pattern: &str) -> Option<Vec<String>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut depth = 0usize;
    let mut open = None;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let start = open?;
                    let prefix: String = chars[..start].iter().collect();
                    let suffix: String = chars[i + 1..].iter().collect();
                    let mut options = Vec::new();
                    let (mut nest, mut from) = (0usize, start + 1);
                    let mut k = start + 1;
                    while k < i {
                        match chars[k] {
                            '\\' => k += 1,
                            '{' => nest += 1,
                            '}' => nest = nest.saturating_sub(1),
                            ',' if nest == 0 => {
                                options.push(chars[from..k].iter().collect::<String>());
                                from = k + 1;
                            }
                            _ => {}
                        }
                        k += 1;
                    }
                    options.push(chars[from..i].iter().collect::<String>());
                    let mut all = Vec::new();
                    for option in options {
                        for expanded in alternatives(&format!("{prefix}{option}{suffix}"))? {
                            all.push(expanded);
                            if all.len() > MAX_ALTERNATIVES {
                                return None;
                            }
                        }
                    }
                    return Some(all);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then(|| vec![pattern.to_string()])
}

/// Go's `path.Match` on one component, for the CLI's walk of a glob (`fs.Glob`).
pub fn component_matches(pattern: &str, name: &str) -> Option<bool> {
    super::ignore::name_matches(pattern, name)
}

/// `strategy: Merge` (`mergeMap`, Helm's values merge): maps merged key by key, the overlay's
/// value winning, anything else replaced whole.
pub fn merge(base: Value, overlay: Value) -> Value {
    match (base, overlay) {
        (Value::Object(mut base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                let merged = match (base.remove(&key), value) {
                    (Some(old @ Value::Object(_)), new @ Value::Object(_)) => merge(old, new),
                    (_, new) => new,
                };
                base.insert(key, merged);
            }
            Value::Object(base)
        }
        (_, overlay) => overlay,
    }
}

/// The value with every map's keys sorted, as Go writes a map.
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    //! Expectations from fluxcd/source-watcher v2.2.1 (Apache-2.0): `internal/builder/builder_test.go`
    //! (`TestBuildWithExcludes`), bmatcuk/doublestar v4's `doublestar_test.go` and Go's `path`.
    use super::*;

    fn list(patterns: &[&str]) -> Vec<String> {
        patterns.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn excludes_as_the_builder_tests_say() {
        // "exclude single file extension", `@source/**`: the pattern matches the file name.
        assert!(excluded("notes.md", ".", &list(&["*.md"])));
        assert!(excluded("docs/guide.md", ".", &list(&["*.md"])));
        assert!(!excluded("app.yaml", ".", &list(&["*.md"])));
        // "exclude directory recursively".
        assert!(excluded("testdata", ".", &list(&["**/testdata/**"])));
        assert!(!excluded("configs/prod.yaml", ".", &list(&["**/testdata/**"])));
        // "exclude nested directory by full path from source root", `@source/infrastructure/**`.
        let nested = list(&["infrastructure/controllers/descheduler/**"]);
        assert!(excluded("infrastructure/controllers/descheduler", "infrastructure", &nested));
        assert!(!excluded("infrastructure/controllers/sealed-secrets", "infrastructure", &nested));
        // Relative to the selection root too.
        assert!(excluded("base/testdata/bad.yaml", "base", &list(&["testdata/**"])));
    }

    #[test]
    fn doublestar() {
        assert_eq!(doublestar_match("a/**", "a"), Some(true));
        assert_eq!(doublestar_match("a/**", "a/b/c"), Some(true));
        assert_eq!(doublestar_match("**/c", "a/b/c"), Some(true));
        assert_eq!(doublestar_match("a/*", "a/b/c"), Some(false));
        assert_eq!(doublestar_match("{a,b}/x", "b/x"), Some(true));
        assert_eq!(doublestar_match("[!a]", "b"), Some(true));
        assert_eq!(doublestar_match("[", "a"), None);
        assert!(!valid_exclude("{a,b"));
        assert!(!valid_exclude("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"));
        assert!(valid_exclude("**/testdata/**"));
    }

    #[test]
    fn paths_as_go_cleans_them() {
        assert_eq!(clean(""), ".");
        assert_eq!(clean("a/./b/../c/"), "a/c");
        assert_eq!(clean("../x"), "../x");
        assert_eq!(join(&["", "x"]), "x");
        assert_eq!(inside("../one.yaml"), None);
        assert_eq!(inside("/etc/passwd"), None);
        assert_eq!(inside("a/b"), Some(vec!["a", "b"]));
        // `dir/**` strips the directory; other globs keep the whole match.
        assert_eq!(glob_destination("base/**", "base/cm.yaml", "base"), "base/cm.yaml");
        assert_eq!(glob_destination("config/*.yaml", "config/one.yaml", "config"), "config/config/one.yaml");
        assert_eq!(selection_root("infrastructure/**"), "infrastructure");
        assert_eq!(selection_root("*.yaml"), ".");
    }

    #[test]
    fn merge_as_helm_values() {
        let base = serde_json::json!({"data": {"a": "1", "b": "2"}, "list": [1, 2]});
        let overlay = serde_json::json!({"data": {"b": "3"}, "list": [3]});
        let merged = merge(base, overlay);
        assert_eq!(merged, serde_json::json!({"data": {"a": "1", "b": "3"}, "list": [3]}));
    }

    #[test]
    fn path_pattern_requests() {
        let object = serde_json::json!({
            "apiVersion": "source.extensions.fluxcd.io/v1beta1",
            "kind": "ArtifactGenerator",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {
                "sources": [{"alias": "repo", "kind": "GitRepository", "name": "platform"}],
                "pathPattern": "@repo/apps/{app}/envs/{env}",
                "artifacts": [{"name": "{app}-{env}", "copy": [{"from": "@repo/apps/{app}/envs/{env}/**", "to": "@artifact/"}]}]
            }
        });
        let generator = Generator::read(&object).expect("a generator");
        let dirs = list(&["apps", "apps/Shop", "apps/Shop/envs", "apps/Shop/envs/dev", "apps/Shop/envs/dev/x"]);
        let requests = generator.requests(&dirs).expect("requests");
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].name, "shop-dev");
        assert_eq!(requests[0].copy[0].from, "@repo/apps/Shop/envs/dev/**");
        let clash = list(&["apps/shop/envs/dev", "apps/SHOP/envs/dev"]);
        assert!(generator.requests(&clash).is_err());
    }
}
