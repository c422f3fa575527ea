//! `flux-build`: the objects kustomize-controller would apply for each Flux Kustomization of a
//! render, on the user's machine. The controller's own steps are followed, in its order
//! (fluxcd/kustomize-controller `internal/controller/kustomization_controller.go`, fluxcd/pkg
//! `kustomize/kustomize_generator.go` and `kustomize_varsub.go`): the Kustomization's `spec.path`
//! inside its source, the kustomization file Flux generates or amends there, the kustomize build,
//! post-build substitution, owner labels, `commonMetadata`.
//!
//! The kustomize build itself is real kustomize, which the CLI runs in a temporary copy of the
//! source; this module makes the decisions around it and does no I/O: which Kustomizations, in
//! which order, from which source, with which kustomization file, and what becomes of the objects
//! kustomize prints.

mod confine;
mod generate;
pub mod generator;
pub mod ignore;
pub mod plan;
mod post;
mod redact;

pub use confine::{config_files, named_paths, resolve};
pub use generate::{kustomization_file, GeneratedResources};
pub use post::{post_build, redact_secrets, variables, Variables};
pub use redact::{redact_message, secret_values};

use crate::diag::{Diagnostic, Kind};
use crate::doc::{FieldPath, Value};
use crate::krm::{name_of, namespace_of, Item};
use std::collections::HashMap;
use std::fmt;

/// The API group of Flux Kustomizations; also the prefix of the labels and annotations the
/// controller reads and writes.
pub const GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// A namespaced object name, as `dependsOn` and `--kustomization` name Kustomizations.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name {
    pub namespace: String,
    pub name: String,
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Objects that two Kustomizations both apply (two clusters' trees built together, an app
/// listed twice): in a cluster each reconcile overwrites the other's and pruning one deletes
/// what the other applied. A warning per repeat, naming the object and both Kustomizations.
pub fn applied_twice(built: &[(Name, Vec<Item>)]) -> Vec<Diagnostic> {
    let owners: Vec<&Name> = built.iter().flat_map(|(id, objects)| objects.iter().map(move |_| id)).collect();
    let objects: Vec<&Item> = built.iter().flat_map(|(_, objects)| objects.iter()).collect();
    crate::krm::repeated_identities(objects.iter().copied())
        .into_iter()
        .filter(|&(first, repeat)| owners[first] != owners[repeat])
        .map(|(first, repeat)| {
            let (api_version, kind) = objects[repeat].type_of();
            let identity = objects[repeat].identity();
            let object = match &*identity.namespace {
                "" => identity.name.to_string(),
                namespace => format!("{namespace}/{}", identity.name),
            };
            Diagnostic::warning(
                Kind::Render,
                format!(
                    "{kind} {object} ({api_version}) is applied by Kustomization {} and by Kustomization {}: in a \
                     cluster each reconcile overwrites the other's, and pruning one deletes it; keep it in one",
                    owners[first], owners[repeat]
                ),
            )
        })
        .collect()
}

/// A Kustomization's `spec.sourceRef`, its namespace defaulted to the Kustomization's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceRef {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl fmt::Display for SourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

/// One Flux Kustomization to build.
#[derive(Clone, Debug)]
pub struct Kustomization {
    pub id: Name,
    pub source: SourceRef,
    /// `spec.path`, as written (`./` when absent: the source's root).
    pub path: String,
    pub depends_on: Vec<Name>,
    /// The whole object: the generator and the post-build read their fields from it.
    pub object: Value,
}

impl Kustomization {
    /// An error result about this Kustomization.
    pub fn error(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(Kind::Render, message).about(&self.object)
    }
}

/// Whether an object is a Flux Kustomization (any served version of the API).
pub fn is_kustomization(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Kustomization")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|api| api.strip_prefix(GROUP))
            .is_some_and(|version| version.starts_with('/'))
}

/// The namespace an object without one is applied to: the default namespace, as `kubectl apply`
/// with a fresh context would.
const DEFAULT_NAMESPACE: &str = "default";

fn namespace_or_default(object: &Value) -> String {
    match namespace_of(object) {
        "" => DEFAULT_NAMESPACE.to_string(),
        namespace => namespace.to_string(),
    }
}

fn text<'v>(value: Option<&'v Value>, key: &str) -> Option<&'v str> {
    value.and_then(|v| v.get(key)).and_then(Value::as_str)
}

/// The Flux Kustomizations among a render's items, and a result for each that cannot be built.
pub fn kustomizations(items: &[Item]) -> (Vec<Kustomization>, Vec<Diagnostic>) {
    let mut found = Vec::new();
    let mut results = Vec::new();
    for item in items.iter().filter(|item| item.type_of().1 == "Kustomization") {
        let object: &Value = item;
        if !is_kustomization(object) {
            continue;
        }
        let namespace = namespace_or_default(object);
        let id = Name { namespace: namespace.clone(), name: name_of(object).to_string() };
        let spec = object.get("spec");
        let source_ref = spec.and_then(|spec| spec.get("sourceRef"));
        let (Some(kind), Some(name)) = (text(source_ref, "kind"), text(source_ref, "name")) else {
            let field = FieldPath::root().key("spec").key("sourceRef");
            results.push(
                Diagnostic::error(Kind::Render, "a Flux Kustomization needs spec.sourceRef with kind and name")
                    .about(object)
                    .at(field),
            );
            continue;
        };
        let source = SourceRef {
            kind: kind.to_string(),
            namespace: text(source_ref, "namespace").unwrap_or(&namespace).to_string(),
            name: name.to_string(),
        };
        let depends_on = spec
            .and_then(|spec| spec.get("dependsOn"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|dependency| {
                let name = dependency.get("name").and_then(Value::as_str)?;
                let namespace = dependency.get("namespace").and_then(Value::as_str).unwrap_or(&namespace);
                Some(Name { namespace: namespace.to_string(), name: name.to_string() })
            })
            .collect();
        let path = text(spec, "path").unwrap_or("./").to_string();
        found.push(Kustomization { id, source, path, depends_on, object: object.clone() });
    }
    (found, results)
}

/// The order to build in: each Kustomization after those it depends on, otherwise as rendered,
/// and why the others cannot be built. A dependency neither among them nor `elsewhere` (built
/// before: a nested round's parents), or a cycle, is an error naming the Kustomizations (Flux
/// would wait for them forever), and each Kustomization that depends on one of those is left out
/// with a warning; the rest are built, as the controller reconciles each on its own.
pub fn build_order(
    kustomizations: &[Kustomization],
    elsewhere: &dyn Fn(&Name) -> bool,
) -> (Vec<usize>, Vec<Diagnostic>) {
    let index: HashMap<&Name, usize> = kustomizations.iter().enumerate().map(|(i, k)| (&k.id, i)).collect();
    let mut results = Vec::new();
    let mut blocked = vec![false; kustomizations.len()];
    for (i, kustomization) in kustomizations.iter().enumerate() {
        for dependency in kustomization.depends_on.iter().filter(|d| !index.contains_key(d) && !elsewhere(d)) {
            blocked[i] = true;
            results.push(kustomization.error(format!(
                "depends on Kustomization {dependency}, which the render does not hold: add it, or remove it from \
                 spec.dependsOn"
            )));
        }
    }
    // Depth-first, visiting in render order, so that independent Kustomizations keep it.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut marks = vec![Mark::New; kustomizations.len()];
    let mut order = Vec::with_capacity(kustomizations.len());
    for start in 0..kustomizations.len() {
        if marks[start] != Mark::New {
            continue;
        }
        // The path from `start`; each entry is a Kustomization and the next dependency to visit.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        marks[start] = Mark::Open;
        while let Some(&mut (at, ref mut next)) = path.last_mut() {
            let dependencies = &kustomizations[at].depends_on;
            if let Some(dependency) = dependencies.get(*next) {
                *next += 1;
                // Built before, in an earlier round, or not held (an error above).
                let Some(&d) = index.get(dependency) else { continue };
                match marks[d] {
                    Mark::Done => {}
                    Mark::New => {
                        marks[d] = Mark::Open;
                        path.push((d, 0));
                    }
                    Mark::Open => {
                        let from = path.iter().position(|&(i, _)| i == d).unwrap_or(0);
                        let members: Vec<usize> = path[from..].iter().map(|&(i, _)| i).collect();
                        let cycle: Vec<String> =
                            members.iter().chain([&d]).map(|&i| kustomizations[i].id.to_string()).collect();
                        results.push(
                            kustomizations[d].error(format!(
                                "Kustomizations depend on each other in a cycle: {}",
                                cycle.join(" -> ")
                            )),
                        );
                        for member in members {
                            blocked[member] = true;
                        }
                    }
                }
            } else {
                marks[at] = Mark::Done;
                order.push(at);
                path.pop();
            }
        }
    }
    // In build order, a Kustomization after those it depends on: what they block, it inherits.
    for &i in &order {
        if blocked[i] {
            continue;
        }
        let kustomization = &kustomizations[i];
        if let Some(dependency) = kustomization.depends_on.iter().find(|d| index.get(d).is_some_and(|&d| blocked[d])) {
            blocked[i] = true;
            results.push(
                Diagnostic::warning(
                    Kind::Render,
                    format!("not built: it depends on Kustomization {dependency}, which cannot be built"),
                )
                .about(&kustomization.object),
            );
        }
    }
    order.retain(|&i| !blocked[i]);
    (order, results)
}

/// A `--source [KIND/][NAMESPACE/]NAME=DIR` flag, without its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePattern {
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: String,
}

impl SourcePattern {
    /// Splits `[KIND/][NAMESPACE/]NAME=DIR` into the pattern and the directory.
    pub fn parse(flag: &str) -> Result<(SourcePattern, &str), String> {
        let usage = || {
            format!("--source {flag:?}: write [KIND/][NAMESPACE/]NAME=DIR, e.g. GitRepository/flux-system/core=../core")
        };
        let (reference, dir) = flag.split_once('=').ok_or_else(usage)?;
        if dir.is_empty() {
            return Err(usage());
        }
        let parts: Vec<&str> = reference.split('/').collect();
        if parts.iter().any(|part| part.is_empty()) {
            return Err(usage());
        }
        let owned = |part: &str| Some(part.to_string());
        let pattern = match parts.as_slice() {
            [name] => SourcePattern { kind: None, namespace: None, name: name.to_string() },
            [namespace, name] => SourcePattern { kind: None, namespace: owned(namespace), name: name.to_string() },
            [kind, namespace, name] => {
                SourcePattern { kind: owned(kind), namespace: owned(namespace), name: name.to_string() }
            }
            _ => return Err(usage()),
        };
        Ok((pattern, dir))
    }

    /// Whether it names `source`.
    pub fn matches(&self, source: &SourceRef) -> bool {
        self.name == source.name
            && self.namespace.as_ref().is_none_or(|ns| *ns == source.namespace)
            && self.kind.as_ref().is_none_or(|kind| *kind == source.kind)
    }
}

impl fmt::Display for SourcePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in [&self.kind, &self.namespace].into_iter().flatten() {
            write!(f, "{part}/")?;
        }
        f.write_str(&self.name)
    }
}

/// The API group of Flux's sources.
pub const SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";

/// How source-controller makes a source's artifact from its files: whether it filters them
/// (a GitRepository's checkout, a Bucket's objects: [`ignore`]), and the source's own
/// `spec.ignore` patterns, read from the source object when the render holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRules {
    pub filtered: bool,
    pub ignore: Option<String>,
}

/// The [`ArtifactRules`] of `source`, with its object among `objects` (the render's, then what
/// builds so far apply) when there is one.
pub fn artifact_rules<'a>(mut objects: impl Iterator<Item = &'a Value>, source: &SourceRef) -> ArtifactRules {
    let object = objects.find(|object| {
        object.get("kind").and_then(Value::as_str) == Some(source.kind.as_str())
            && object
                .get("apiVersion")
                .and_then(Value::as_str)
                .and_then(|api| api.strip_prefix(SOURCE_GROUP))
                .is_some_and(|version| version.starts_with('/'))
            && name_of(object) == source.name
            && namespace_or_default(object) == source.namespace
    });
    let ignore = object.and_then(|o| o.get("spec")).and_then(|spec| spec.get("ignore")).and_then(Value::as_str);
    ArtifactRules {
        filtered: matches!(source.kind.as_str(), "GitRepository" | "Bucket"),
        ignore: ignore.map(str::to_string),
    }
}

/// `spec.path` inside the source, as Flux joins it (`securejoin.SecureJoin`): `.` is dropped and
/// `..` never climbs above the source's root. Returns the relative components.
pub fn path_in_source(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts
}

/// The labels kustomize-controller sets on every object it applies (`SetOwnerLabels`).
pub fn owner_labels(id: &Name) -> [(String, String); 2] {
    [(format!("{GROUP}/name"), id.name.clone()), (format!("{GROUP}/namespace"), id.namespace.clone())]
}

#[cfg(test)]
mod tests;

/// The file `--output-dir` writes a Kustomization's objects to, `NAMESPACE_NAME.yaml`, or why it
/// cannot: the namespace and name come from the package, so they are checked as the API server
/// checks them (a namespace is a DNS-1123 label, a name a DNS-1123 subdomain) before they become
/// a file name. Valid names hold no `/`, `_`, `..` or capitals, so no two Kustomizations share a
/// file and none is written outside the directory.
pub fn output_file_name(id: &Name) -> Result<String, String> {
    let label = |text: &str| {
        let bytes = text.as_bytes();
        let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        !bytes.is_empty()
            && bytes.len() <= 63
            && bytes.first().is_some_and(alphanumeric)
            && bytes.last().is_some_and(alphanumeric)
            && bytes.iter().all(|b| alphanumeric(b) || *b == b'-')
    };
    if !label(&id.namespace) {
        return Err(format!(
            "Kustomization {id}: namespace {:?} is not a DNS-1123 label (at most 63 lower case letters, digits and \
             '-', starting and ending with a letter or digit), so --output-dir cannot name a file after it: change \
             metadata.namespace",
            id.namespace
        ));
    }
    if id.name.len() > 253 || !id.name.split('.').all(label) {
        return Err(format!(
            "Kustomization {id}: name {:?} is not a DNS-1123 subdomain (at most 253 lower case letters, digits, '-' \
             and '.', each '.'-separated part starting and ending with a letter or digit), so --output-dir cannot \
             name a file after it: change metadata.name",
            id.name
        ));
    }
    Ok(format!("{}_{}.yaml", id.namespace, id.name))
}
