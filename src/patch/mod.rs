//! The patches step (compat: kustomize `patches`): RFC 6902 operations (json-patch
//! crate, atomic per resource), strategic merge patches for built-in kinds ([`strategic`], with
//! the generated [`merge_keys`] table, whose types are in [`schema`]) and RFC 7386 merge patches
//! plus directives for other kinds.
//!
//! It owns reading and compiling `spec.patches` and applying them to the items it is handed; the
//! pipeline decides which items those are.

#[rustfmt::skip]
mod merge_keys;
pub mod schema;
pub mod strategic;
mod target;

use crate::config::{PatchEntry, PatchOptions};
use crate::diag::{Diagnostic, Kind, Origin, Severity};
use crate::doc::{read_yaml_documents, FieldPath, Map, Value};
use crate::krm::{self, type_of};
use crate::limits::{Budget, Exhausted};
use crate::package::{resolve, Files};
use json_patch::PatchOperation;
use target::Target;

/// One patch document, parsed.
enum Document {
    Json6902(json_patch::Patch),
    Strategic(Map),
}

impl Document {
    /// A strategic merge patch whose top level is `$patch: delete`: kustomize removes the
    /// resources it selects.
    fn deletes(&self) -> bool {
        matches!(self, Document::Strategic(map) if map.get("$patch").and_then(Value::as_str) == Some("delete"))
    }
}

struct Patch {
    /// `spec.patches[i]`, for messages.
    field: FieldPath,
    /// What the patch targets and where its text is, for `explain` (see [`PatchReport`]).
    described: (String, String),
    /// The package path of its patch file: the file is read as an item too (local-config),
    /// and is not reported as a resource it matched.
    file: Option<String>,
    documents: Vec<Document>,
    target: Option<Target>,
    options: PatchOptions,
}

/// One `spec.patches` entry for `explain`: where it is, what it targets, what it matched.
#[derive(Clone, Debug)]
pub struct PatchReport {
    /// `spec.patches[0]`.
    pub field: String,
    /// `inline`, or `path <file>`.
    pub text: String,
    /// `target kind=Deployment, name=web`, or the untargeted patch's own identity.
    pub target: String,
    /// The resources it matched, in order, as `Kind/name` or `namespace/Kind/name`.
    pub matched: Vec<String>,
}

/// `Kind/name`, or `namespace/Kind/name`: how `explain` names a resource.
fn resource_name(item: &Value) -> String {
    match krm::namespace_of(item) {
        "" => format!("{}/{}", type_of(item).1, krm::name_of(item)),
        namespace => format!("{namespace}/{}/{}", type_of(item).1, krm::name_of(item)),
    }
}

impl Patch {
    /// Whether the item is this patch's own file (read as an item too, local-config).
    fn is_own_file(&self, item: &Value) -> bool {
        self.file.is_some() && krm::item_location(item).0 == self.file
    }

    /// Notes a resource this patch matched (before patching it: a patch may rename it); local-
    /// config items, which are not written out, say so; the patch's own file is not noted.
    fn note(&self, item: &Value, names: &mut Vec<String>) {
        if self.is_own_file(item) {
            return;
        }
        let suffix = if krm::is_local_config(item) { " (local-config)" } else { "" };
        names.push(format!("{}{suffix}", resource_name(item)));
    }
}

/// The target, or for an untargeted strategic patch its documents' own identities.
fn describe_target(entry: &PatchEntry, documents: &[Document]) -> String {
    if let Some(target) = &entry.target {
        let fields = [
            ("group", &target.group),
            ("version", &target.version),
            ("kind", &target.kind),
            ("name", &target.name),
            ("namespace", &target.namespace),
            ("labelSelector", &target.label_selector),
            ("annotationSelector", &target.annotation_selector),
        ];
        let set: Vec<String> =
            fields.iter().filter_map(|(key, value)| Some(format!("{key}: {}", value.as_deref()?))).collect();
        return format!("target {{{}}}", set.join(", "));
    }
    let own: Vec<String> = documents
        .iter()
        .filter_map(|document| match document {
            Document::Strategic(map) => {
                let item = Value::Object(map.clone());
                Some(format!("{} {}", type_of(&item).0, resource_name(&item)))
            }
            Document::Json6902(_) => None,
        })
        .collect();
    if own.is_empty() {
        return "nothing (the patch holds no document)".into();
    }
    format!("its own {}", own.join(", "))
}

/// The compiled patches of a functionConfig, and their text (for the idempotency fingerprint).
pub struct Patches {
    patches: Vec<Patch>,
    pub fingerprint: String,
    /// The config that declared them, for warnings that concern no single resource.
    config: Origin,
    /// Some patch deletes resources (`$patch: delete`).
    deletes: bool,
}

impl Patches {
    pub fn is_empty(&self) -> bool {
        self.patches.is_empty()
    }

    /// Whether some patch may apply to the item with this header (`apiVersion`, `kind`,
    /// `metadata`): the caller hands [`apply`] only those, so other items are never built.
    pub fn may_touch(&self, header: &Value, renamed_from: Option<&str>) -> bool {
        // Called for every item: nothing is allocated unless a previous run renamed it.
        let before = renamed_from.and_then(Before::parse);
        self.patches
            .iter()
            .any(|patch| patch.documents.iter().any(|document| selects(patch, document, header, before.as_ref())))
    }
}

/// Reads and compiles every patch; all problems are reported, none is half-compiled.
pub fn prepare(entries: &[PatchEntry], config_item: &Value, files: &dyn Files) -> Result<Patches, Vec<Diagnostic>> {
    let config_path = krm::item_location(config_item).0;
    let mut patches = Vec::new();
    let mut errors = Vec::new();
    let mut fingerprint = String::new();
    for (i, entry) in entries.iter().enumerate() {
        let field = FieldPath::root().key("spec").key("patches").index(i);
        let error = |message: String, at: FieldPath| Diagnostic::error(Kind::Config, message).at(at).about(config_item);
        let file = entry.path.as_ref().and_then(|path| resolve(config_path.as_deref(), path).ok());
        let text = match (&entry.patch, &entry.path) {
            // kustomize refuses blank inline text, but takes a file with no document (blank,
            // or only comments) as a patch that changes nothing.
            (Some(text), None) if text.trim().is_empty() => {
                errors.push(error(EMPTY.into(), field.clone().key("patch")));
                continue;
            }
            (Some(text), None) => text.clone(),
            (None, Some(path)) => match resolve(config_path.as_deref(), path).and_then(|p| {
                files.read(&p).map_err(|err| format!("cannot read patch file {:?}: {err}", files.shown(&p)))
            }) {
                // A patch file is marked local-config as configuration; that (and any other
                // bookkeeping annotation) must not be patched onto the targets.
                Ok(text) => krm::annotations::without_bookkeeping(&text).into_owned(),
                Err(message) => {
                    errors.push(error(message, field.clone().key("path")));
                    continue;
                }
            },
            _ => {
                errors.push(error("a patch has either patch (inline text) or path (a file)".into(), field.clone()));
                continue;
            }
        };
        let target = match entry.target.as_ref().map(Target::compile).transpose() {
            Ok(target) => target,
            Err((target_field, message)) => {
                errors.push(error(message, field.clone().key("target").key(target_field)));
                continue;
            }
        };
        let documents = match parse_documents(&text) {
            Ok(documents) => documents,
            Err(message) => {
                errors.push(error(message, field.clone()));
                continue;
            }
        };
        let json6902 = documents.iter().any(|d| matches!(d, Document::Json6902(_)));
        if json6902 && target.is_none() {
            errors.push(error(
                "a JSON 6902 patch needs a target: add target with at least a kind and name".into(),
                field,
            ));
            continue;
        }
        if target.is_none() {
            if let Some(message) = documents.iter().find_map(untargeted_identity_problem) {
                errors.push(error(message, field));
                continue;
            }
        }
        fingerprint.push_str(&text);
        fingerprint.push_str(&serde_json::to_string(&entry.target).unwrap_or_default());
        let place = entry.path.as_ref().map_or_else(|| "inline".to_string(), |path| format!("path {path}"));
        let described = (place, describe_target(entry, &documents));
        let options = entry.options.clone().unwrap_or_default();
        patches.push(Patch { field, described, file, documents, target, options });
    }
    if errors.is_empty() {
        let deletes = patches.iter().any(|patch| patch.documents.iter().any(Document::deletes));
        Ok(Patches { patches, fingerprint, config: Origin::of(config_item), deletes })
    } else {
        Err(errors)
    }
}

/// Checks patch text that this function passes on rather than applies (Windsor kustomization
/// patches, which Flux applies): it must parse as we would parse it, and JSON 6902 needs a target.
pub fn check(text: &str, has_target: bool) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(EMPTY.into());
    }
    let documents = parse_documents(text)?;
    if !has_target && documents.iter().any(|d| matches!(d, Document::Json6902(_))) {
        return Err("a JSON 6902 patch needs a target".into());
    }
    Ok(())
}

const EMPTY: &str = "patch is empty: write the patch, or remove this entry";

/// A list of operations is RFC 6902; a mapping is a strategic merge patch. Several YAML
/// documents are several patches, as in kustomize; text with no document (only comments, or
/// `---`) is no patch at all, which kustomize ignores.
fn parse_documents(text: &str) -> Result<Vec<Document>, String> {
    let documents = read_yaml_documents(text).map_err(|err| match (err.line, err.column) {
        (Some(line), Some(column)) => format!("patch is not valid YAML (line {line} column {column}): {}", err.message),
        _ => format!("patch is not valid YAML: {}", err.message),
    })?;
    documents
        .into_iter()
        .map(|document| match document {
            Value::Array(_) => {
                // json-patch reads an operation through serde's buffer for tagged enums, which
                // holds no integer beyond 64 bits: such operations are read from their JSON text,
                // where serde_json hands those numbers over as their digits.
                let read = if crate::doc::holds_wide_integer(&document) {
                    let text = document.to_string();
                    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(&text))
                } else {
                    serde_path_to_error::deserialize(&document)
                };
                match read {
                    Ok(patch) => Ok(Document::Json6902(patch)),
                    Err(err) => Err(explain_6902_error(&document, &err)),
                }
            }
            Value::Object(map) => Ok(Document::Strategic(map)),
            _ => Err("a patch is a list of JSON 6902 operations or a strategic merge patch object".into()),
        })
        .collect()
}

const OPS: &str = "add, remove, replace, move, copy or test";

/// A JSON 6902 operation that does not parse, named by its index, op and path, with what to write.
fn explain_6902_error(document: &Value, err: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let index = err.path().iter().find_map(|segment| match segment {
        serde_path_to_error::Segment::Seq { index } => Some(*index),
        _ => None,
    });
    let operation = index.and_then(|i| document.get(i));
    let text = |key: &str| operation.and_then(|o| o.get(key)).and_then(Value::as_str).unwrap_or_default();
    let (op, path) = (text("op"), text("path"));
    let inner = err.inner().to_string();
    let detail = if !operation.is_some_and(Value::is_object) {
        format!("an operation is a mapping {{op: …, path: /json/pointer, value: …}}, got {}", {
            operation.map_or("nothing", crate::krm::shape_of)
        })
    } else if inner.starts_with("missing field `op`") {
        format!("missing op: use {OPS}")
    } else if inner.starts_with("unknown variant") {
        format!("unknown op {op:?}: use {OPS}")
    } else if inner.starts_with("missing field `path`") {
        "missing path: a JSON pointer such as /spec/replicas".into()
    } else if inner.starts_with("missing field `value`") {
        format!("{op} needs a value")
    } else if inner.starts_with("missing field `from`") {
        format!("{op} needs from: the JSON pointer to {op} from")
    } else if inner.contains("does not start with a slash") {
        let bad = if operation.and_then(|o| o.get("from")).and_then(Value::as_str).is_some_and(|f| !f.starts_with('/'))
        {
            text("from")
        } else {
            path
        };
        format!("{bad:?} is not a JSON pointer: it must start with '/', e.g. \"/{bad}\"")
    } else {
        crate::config::explain_serde_error(&inner)
    };
    let described = match (index, op, path) {
        (Some(i), "", _) => format!("operation {i}"),
        (Some(i), op, "") => format!("operation {i} ({op})"),
        (Some(i), op, path) => format!("operation {i} ({op} {path})"),
        (None, _, _) => "operation".into(),
    };
    format!("invalid JSON 6902 patch: {described}: {detail}")
}

fn untargeted_identity_problem(document: &Document) -> Option<String> {
    let Document::Strategic(map) = document else { return None };
    let item = Value::Object(map.clone());
    let (api_version, kind) = type_of(&item);
    (api_version.is_empty() || kind.is_empty() || krm::name_of(&item).is_empty()).then(|| {
        "a strategic merge patch without target needs apiVersion, kind and metadata.name to find its resource".into()
    })
}

fn same_namespace(a: &str, b: &str) -> bool {
    let normal = |ns: &str| if ns.is_empty() { "default".to_string() } else { ns.to_string() };
    normal(a) == normal(b)
}

/// What applying the patches item by item has found so far: per patch, how many items it
/// matched and the results it caused, so results read patch by patch as if applied list-wide.
pub struct Tally {
    matched: Vec<usize>,
    /// Per patch, the resources it matched (once each), for `explain`.
    names: Vec<Vec<String>>,
    results: Vec<Vec<Diagnostic>>,
    /// Items whose identity the patches changed: their identity key ([`id_key`]) and the error
    /// to report, about the patch that changed it last, should another resource have that key.
    renamed: Vec<(String, usize, Diagnostic)>,
    /// Set once the render's budget ran out: reported once, and nothing more is patched.
    exhausted: bool,
    /// A name or kind a targeted patch holds and does not apply is reported once per patch
    /// (kustomize's documentation writes such names into patches that select many resources).
    not_applied: Vec<NotApplied>,
}

/// One warning about a field a patch holds and does not apply, and how many more resources
/// it stands for.
#[derive(Clone, Copy)]
struct NotApplied {
    patch: usize,
    document: usize,
    /// The field, as a JSON pointer into the patch.
    pointer: &'static str,
    /// Where the warning is in its patch's results.
    at: usize,
    more: usize,
}

impl NotApplied {
    fn is(&self, patch: usize, document: usize, pointer: &str) -> bool {
        (self.patch, self.document, self.pointer) == (patch, document, pointer)
    }
}

impl Tally {
    /// Records document `d` of patch `p`'s warnings (message, pointer) about `item`, each once
    /// per patch ([`Tally::not_applied`]).
    fn warn(&mut self, p: usize, d: usize, patch: &Patch, item: &Value, warnings: Vec<(String, &'static str)>) {
        for (message, pointer) in warnings {
            if let Some(seen) = self.not_applied.iter_mut().find(|seen| seen.is(p, d, pointer)) {
                seen.more += 1;
                continue;
            }
            let at = self.results[p].len();
            self.not_applied.push(NotApplied { patch: p, document: d, pointer, at, more: 0 });
            let mut warning =
                Diagnostic::warning(Kind::Render, format!("patch {}: {message}", patch.field)).about(item);
            if !pointer.is_empty() {
                warning = warning.at(pointer_to_field(pointer));
            }
            self.results[p].push(warning);
        }
    }
}

impl Tally {
    /// Whether the render's budget ran out while patching.
    pub fn is_exhausted(&self) -> bool {
        self.exhausted
    }

    /// Adds what the patches found on one more item, in its tally of its own (see
    /// [`Patches::item_tally`]), as if it had been counted here: items changed on several
    /// threads are absorbed in their order, so results and names read as one pass.
    pub fn absorb(&mut self, item: Tally) {
        for (total, matched) in self.matched.iter_mut().zip(item.matched) {
            *total += matched;
        }
        for (all, names) in self.names.iter_mut().zip(item.names) {
            all.extend(names);
        }
        if self.exhausted {
            // One pass patches nothing after the budget ran out, so it reports nothing more.
            return;
        }
        for (p, results) in item.results.into_iter().enumerate() {
            for (at, result) in results.into_iter().enumerate() {
                let Some(results) = self.results.get_mut(p) else { continue };
                let Some(&warning) = item.not_applied.iter().find(|n| (n.patch, n.at) == (p, at)) else {
                    results.push(result);
                    continue;
                };
                match self.not_applied.iter_mut().find(|seen| seen.is(p, warning.document, warning.pointer)) {
                    Some(seen) => seen.more += 1 + warning.more,
                    None => {
                        self.not_applied.push(NotApplied { at: results.len(), ..warning });
                        results.push(result);
                    }
                }
            }
        }
        self.renamed.extend(item.renamed);
        self.exhausted |= item.exhausted;
    }
}

/// What the patches did to one item.
#[derive(Default)]
pub struct Applied {
    /// A `$patch: delete` patch removed it: it leaves the output.
    pub deleted: bool,
    /// The patches changed its apiVersion, kind, name or namespace: what they were before, as
    /// [`Before::text`] writes it. A second run would not select it as this one did, so the
    /// caller marks it applied with this identity (see [`Patches::count_matches`]).
    pub renamed_from: Option<String>,
}

/// An item's identity before the patches: kustomize still selects a renamed resource by it (its
/// original id), so later patches may use the old name or the new one.
struct Before {
    api_version: String,
    kind: String,
    name: String,
    namespace: String,
}

impl Before {
    fn of(item: &Value) -> Self {
        let (api_version, kind) = type_of(item);
        Self {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            name: krm::name_of(item).to_string(),
            namespace: krm::namespace_of(item).to_string(),
        }
    }

    /// See [`id_key`].
    fn key(&self) -> String {
        let namespace = if self.namespace.is_empty() { "default" } else { &self.namespace };
        format!("{}\n{}\n{namespace}\n{}", self.api_version, self.kind, self.name)
    }

    /// `apps/v1 Deployment web shop` (the namespace only when there is one).
    fn text(&self) -> String {
        let text = format!("{} {} {}", self.api_version, self.kind, self.name);
        match self.namespace.as_str() {
            "" => text,
            namespace => format!("{text} {namespace}"),
        }
    }

    /// Reads [`Before::text`]; `None` for anything else (a hand-edited mark is ignored).
    fn parse(text: &str) -> Option<Self> {
        let mut words = text.split_whitespace();
        let (api_version, kind, name) = (words.next()?, words.next()?, words.next()?);
        let namespace = words.next().unwrap_or_default();
        words.next().is_none().then(|| Self {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            namespace: namespace.into(),
        })
    }

    /// A copy of the item's header with this identity instead of its own.
    fn put_on(&self, item: &Value) -> Value {
        let mut header = item.clone();
        if let Value::Object(map) = &mut header {
            map.insert("apiVersion".into(), Value::String(self.api_version.clone()));
            map.insert("kind".into(), Value::String(self.kind.clone()));
            if !map.get("metadata").is_some_and(Value::is_object) {
                map.insert("metadata".into(), Value::Object(Map::new()));
            }
            if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
                metadata.insert("name".into(), Value::String(self.name.clone()));
                match self.namespace.as_str() {
                    "" => metadata.shift_remove("namespace"),
                    namespace => metadata.insert("namespace".into(), Value::String(namespace.into())),
                };
            }
        }
        header
    }
}

/// A resource's identity as kustomize's resource ids compare it: apiVersion, kind, namespace
/// (none meaning `default`) and name. Two resources with the same key cannot both be output.
fn id_key(item: &Value) -> String {
    Before::of(item).key()
}

impl Patches {
    pub fn tally(&self) -> Tally {
        self.item_tally(false)
    }

    /// An empty tally for one item, to [`Tally::absorb`] later; `exhausted` when the budget ran
    /// out on an earlier item.
    pub fn item_tally(&self, exhausted: bool) -> Tally {
        let count = self.patches.len();
        Tally {
            matched: vec![0; count],
            names: vec![Vec::new(); count],
            results: vec![Vec::new(); count],
            renamed: Vec::new(),
            exhausted,
            not_applied: Vec::new(),
        }
    }

    /// Counts the patches that select an item a previous run already patched (marked applied),
    /// so the second run warns about exactly what the first did. `renamed_from` is the identity
    /// the mark recorded, when those patches renamed it: a patch counts when it selects the item
    /// as it is or as it was.
    pub fn count_matches(&self, item: &Value, renamed_from: Option<&str>, tally: &mut Tally) {
        let now = Before::of(item);
        let before = renamed_from.and_then(Before::parse);
        let old = before.as_ref().map(|before| before.put_on(item));
        for (p, patch) in self.patches.iter().enumerate() {
            let selected = |document: &&Document| match (&before, &old) {
                (Some(before), Some(old)) => {
                    selects(patch, document, item, Some(before)) || selects(patch, document, old, Some(&now))
                }
                _ => selects(patch, document, item, None),
            };
            let mut matched = 0;
            for (d, document) in patch.documents.iter().enumerate().filter(|(_, document)| selected(document)) {
                matched += 1;
                // What the item's identity makes a strategic merge warn about: the first run's.
                tally.warn(p, d, patch, item, document.warnings(patch, item));
            }
            tally.matched[p] += matched;
            if matched > 0 {
                patch.note(item, &mut tally.names[p]);
            }
        }
    }

    /// Applies every patch that selects `item`, in order (items of kinds without a strategic
    /// schema get merge-patch semantics). Items are independent, so applying them one at a time
    /// gives what applying each patch to the whole list would, while only one item (per thread)
    /// is built.
    /// A `$patch: delete` patch ends the item's patching: later patches do not see it, as in
    /// kustomize, and the caller takes it out of the output. `renamed_from` is the identity a
    /// previous run's mark recorded (the patches have changed since): the item is still selected
    /// by it, as by its original id within one run.
    pub fn apply_to(
        &self,
        item: &mut Value,
        renamed_from: Option<&str>,
        tally: &mut Tally,
        budget: &Budget,
    ) -> Applied {
        let mut applied = Applied::default();
        // A deleted item is kept as it came (see the pipeline), without what earlier patches did:
        // the next run patches and deletes it again.
        let original = self.deletes.then(|| item.clone());
        let first = renamed_from.and_then(Before::parse).unwrap_or_else(|| Before::of(item));
        let first_key = first.key();
        let mut renamed_by = None;
        for (p, patch) in self.patches.iter().enumerate() {
            let mut named = false;
            for (d, document) in patch.documents.iter().enumerate() {
                if !selects(patch, document, item, Some(&first)) {
                    continue;
                }
                // An untargeted patch file has its resource's identity, so it selects itself:
                // it is the patch, not a resource to delete.
                if document.deletes() && patch.is_own_file(item) {
                    continue;
                }
                tally.matched[p] += 1;
                if !named {
                    patch.note(item, &mut tally.names[p]);
                    named = true;
                }
                if tally.exhausted {
                    continue;
                }
                if document.deletes() {
                    if let Some(original) = original {
                        *item = original;
                    }
                    let message = format!("patch {}: deleted {} ($patch: delete)", patch.field, resource_name(item));
                    tally.results[p].push(Diagnostic::new(Severity::Info, Kind::Render, message).about(item));
                    applied.deleted = true;
                    return applied;
                }
                let before = id_key(item);
                let (message, pointer) = match apply_document(document, patch, item, budget) {
                    Ok(outcome) => {
                        tally.warn(p, d, patch, item, outcome.warnings);
                        if id_key(item) != before {
                            renamed_by = Some(p);
                        }
                        continue;
                    }
                    Err(Failure::Patch(message, pointer)) => (message, pointer),
                    Err(Failure::Budget(exhausted)) => {
                        tally.exhausted = true;
                        (exhausted.to_string(), None)
                    }
                };
                let mut diagnostic =
                    Diagnostic::error(Kind::Render, format!("patch {}: {message}", patch.field)).about(item);
                if let Some(pointer) = pointer {
                    diagnostic = diagnostic.at(pointer_to_field(&pointer));
                }
                tally.results[p].push(diagnostic);
            }
        }
        let key = id_key(item);
        if key != first_key {
            applied.renamed_from = Some(first.text());
        }
        if let (Some(p), true) = (renamed_by, key != first_key) {
            let (api_version, kind) = type_of(item);
            let message = format!(
                "patch {}: it turns {} {} into {kind} {}, which another resource already is (apiVersion \
                 {api_version}): two resources cannot share apiVersion, kind, namespace and name; change the name \
                 the patch gives",
                self.patches[p].field,
                first.kind,
                first.name,
                krm::name_of(item)
            );
            let diagnostic =
                Diagnostic::error(Kind::Render, message).about(item).at(FieldPath::root().key("metadata").key("name"));
            tally.renamed.push((key, p, diagnostic));
        }
        applied
    }

    /// The results, patch by patch, each followed by a warning when the patch matched nothing;
    /// and what each patch matched, for `explain`. `live` are the items left in the output after
    /// patching (not local-config): a renamed item whose identity another of them has is an
    /// error, as kustomize refuses two resources with one id.
    pub fn finish(&self, tally: Tally, live: &mut dyn Iterator<Item = &Value>) -> (Vec<Diagnostic>, Vec<PatchReport>) {
        let report = self
            .patches
            .iter()
            .zip(tally.names)
            .map(|(patch, matched)| PatchReport {
                field: patch.field.to_string(),
                text: patch.described.0.clone(),
                target: patch.described.1.clone(),
                matched,
            })
            .collect();
        let mut collisions: Vec<Vec<Diagnostic>> = vec![Vec::new(); self.patches.len()];
        if !tally.renamed.is_empty() {
            let mut count: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
            for item in live {
                *count.entry(id_key(item)).or_default() += 1;
            }
            for (key, p, diagnostic) in tally.renamed {
                if count.get(&key).is_some_and(|n| *n > 1) {
                    collisions[p].push(diagnostic);
                }
            }
        }
        let mut own_results = tally.results;
        for NotApplied { patch: p, at, more, .. } in tally.not_applied {
            if let Some(warning) = own_results[p].get_mut(at).filter(|_| more > 0) {
                let s = if more == 1 { "" } else { "s" };
                warning.message.push_str(&format!(" (the same for {more} more resource{s} the patch selects)"));
            }
        }
        let mut results = Vec::new();
        let per_patch = self.patches.iter().zip(tally.matched).zip(own_results).zip(collisions);
        for (((patch, matched), own), collided) in per_patch {
            results.extend(own);
            results.extend(collided);
            // A patch with no document (only comments) changes nothing, as in kustomize.
            if matched == 0 && !patch.documents.is_empty() {
                let message = match &patch.target {
                    Some(_) => "target matches no resource",
                    None => "no resource has the patch's apiVersion, kind, name and namespace",
                };
                results.push(
                    Diagnostic::new(Severity::Warning, Kind::Render, message)
                        .at(patch.field.clone())
                        .about_origin(&self.config),
                );
            }
        }
        (results, report)
    }
}

/// Whether `document` of `patch` applies to `item`: by target, or (an untargeted strategic
/// patch) by the patch's own apiVersion, kind, name and namespace. As in kustomize, the name and
/// namespace may be the item's current ones or those it had before the patches (`first`; `None`
/// when they are the current ones). Runs for every item and patch, so it compares borrowed text.
fn selects(patch: &Patch, document: &Document, item: &Value, first: Option<&Before>) -> bool {
    let (name, namespace) = (krm::name_of(item), krm::namespace_of(item));
    match (&patch.target, document) {
        (Some(target), _) => match first {
            Some(first) => target.matches(item, &first.name, &first.namespace),
            None => target.matches(item, name, namespace),
        },
        (None, Document::Strategic(map)) => {
            fn text<'m>(map: Option<&'m Map>, key: &str) -> &'m str {
                map.and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or_default()
            }
            let metadata = map.get("metadata").and_then(Value::as_object);
            let own = (text(Some(map), "apiVersion"), text(Some(map), "kind"), text(metadata, "name"));
            let own_namespace = text(metadata, "namespace");
            let is = |identity: (&str, &str, &str), namespace: &str| {
                own == identity && same_namespace(own_namespace, namespace)
            };
            let (api_version, kind) = type_of(item);
            is((api_version, kind, name), namespace)
                || first.is_some_and(|first| is((&first.api_version, &first.kind, &first.name), &first.namespace))
        }
        (None, Document::Json6902(_)) => false,
    }
}

/// Why a document was not applied: its own failure (message, pointer), or the render's budget.
enum Failure {
    Patch(String, Option<String>),
    Budget(Exhausted),
}

impl From<(String, Option<String>)> for Failure {
    fn from((message, pointer): (String, Option<String>)) -> Self {
        Failure::Patch(message, pointer)
    }
}

impl From<Exhausted> for Failure {
    fn from(exhausted: Exhausted) -> Self {
        Failure::Budget(exhausted)
    }
}

/// What applying one document did besides patching: warnings (message, pointer).
#[derive(Default)]
struct Outcome {
    warnings: Vec<(String, &'static str)>,
}

/// Applies one document to one item, all or nothing.
fn apply_document(document: &Document, patch: &Patch, item: &mut Value, budget: &Budget) -> Result<Outcome, Failure> {
    budget.charge_steps(1)?;
    match document {
        Document::Json6902(operations) => {
            apply_6902(&operations.0, patch, item, budget)?;
            Ok(Outcome::default())
        }
        Document::Strategic(map) => {
            if top_level_replace(map) {
                // kyaml returns the patch as a new node and kustomize keeps the resource's own.
                return Ok(Outcome { warnings: vec![(TOP_LEVEL_REPLACE.into(), "")] });
            }
            let before = Identity::of(item);
            // kustomize gives the patch the resource's apiVersion (with the patch's kind), and
            // kyaml merges with the schema of the resource's type, else of the patch's.
            let (api_version, kind) = type_of(item);
            let own_kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
            let schema =
                strategic::schema_of(api_version, kind).or_else(|| strategic::schema_of(api_version, own_kind));
            // In place, not on a copy: a copy per patch made 10 000 patches on one item
            // quadratic. A failed patch is an error, so the render writes nothing and a
            // half-patched item is never seen.
            let Value::Object(target) = item else {
                return Err(Failure::Patch("resource is not a mapping".into(), None));
            };
            strategic::apply(target, map, schema).map_err(|err| locate_strategic_error(&err))?;
            let warnings = before.settle(target, map, patch);
            Ok(Outcome { warnings })
        }
    }
}

const TOP_LEVEL_REPLACE: &str = "$patch: replace at the top of a patch is ignored, as kustomize ignores it: \
                                 the resource is unchanged; to replace a field, put $patch: replace in it (spec: \
                                 {$patch: replace, …})";

fn top_level_replace(map: &Map) -> bool {
    map.get("$patch").and_then(Value::as_str) == Some("replace")
}

impl Document {
    /// The warnings applying this document to `item` gives that its identity alone decides: what
    /// a run that leaves an already patched item as it is reports, as the run that patched it did.
    fn warnings(&self, patch: &Patch, item: &Value) -> Vec<(String, &'static str)> {
        match self {
            Document::Json6902(_) => Vec::new(),
            Document::Strategic(map) if top_level_replace(map) => vec![(TOP_LEVEL_REPLACE.into(), "")],
            Document::Strategic(map) => {
                let (api_version, kind) = type_of(item);
                identity_warnings(map, patch, api_version, krm::name_of(item), kind)
            }
        }
    }
}

/// The identity fields of a resource as they were before a strategic merge patch, verbatim.
struct Identity {
    api_version: Option<Value>,
    kind: Option<Value>,
    name: Option<Value>,
    namespace: Option<Value>,
}

impl Identity {
    fn of(item: &Value) -> Self {
        let metadata = |key: &str| item.get("metadata").and_then(|m| m.get(key)).cloned();
        Self {
            api_version: item.get("apiVersion").cloned(),
            kind: item.get("kind").cloned(),
            name: metadata("name"),
            namespace: metadata("namespace"),
        }
    }

    /// kustomize's rule after a strategic merge (`Resource.ApplySmPatch`): the resource keeps its
    /// apiVersion and namespace; it takes the patch's name and kind only when
    /// `options.allowNameChange` / `allowKindChange` are set. kustomize drops a targeted patch's
    /// other name or kind silently; here that is a warning, as it is seldom what was meant.
    fn settle(self, item: &mut Map, patch_map: &Map, patch: &Patch) -> Vec<(String, &'static str)> {
        let text = |value: &Option<Value>| value.as_ref().and_then(Value::as_str).unwrap_or_default().to_string();
        let (old_api, old_name, old_kind) = (text(&self.api_version), text(&self.name), text(&self.kind));
        let options = &patch.options;
        restore(item, "apiVersion", self.api_version);
        // An item without metadata gets none: only a name or namespace to restore needs it.
        let restores = self.name.is_some() || self.namespace.is_some();
        if restores && !item.get("metadata").is_some_and(Value::is_object) {
            item.insert("metadata".into(), Value::Object(Map::new()));
        }
        let kept = |map: &Map, key: &str| map.get(key).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        if let Some(Value::Object(metadata)) = item.get_mut("metadata") {
            restore(metadata, "namespace", self.namespace);
            if !(options.allow_name_change && kept(metadata, "name")) {
                restore(metadata, "name", self.name);
            }
        }
        if !(options.allow_kind_change && kept(item, "kind")) {
            restore(item, "kind", self.kind);
        }
        identity_warnings(patch_map, patch, &old_api, &old_name, &old_kind)
    }
}

/// Puts a field back as it was: its old value, or no field.
fn restore(map: &mut Map, key: &str, value: Option<Value>) {
    match value {
        Some(value) => {
            map.insert(key.to_string(), value);
        }
        None => {
            map.shift_remove(key);
        }
    }
}

/// RFC 6902 in place when it can neither copy (amplify) nor change the resource's identity: the
/// crate undoes a failed patch itself, so the item is not cloned per patch (10 000 patches on one
/// item stay linear). Otherwise operation by operation on a copy, charging each copied value
/// before it is made, so doubling copies end at the output budget rather than in memory.
fn apply_6902(operations: &[PatchOperation], patch: &Patch, item: &mut Value, budget: &Budget) -> Result<(), Failure> {
    let tracking = Tracking::of(item);
    let copies = operations.iter().any(|op| matches!(op, PatchOperation::Copy(_)));
    if !copies && !operations.iter().any(touches_identity) {
        for operation in operations {
            charge_operation(operation, item, budget)?;
        }
        json_patch::patch(item, operations).map_err(|err| describe_6902_error(operations, err.operation, &err))?;
    } else {
        let mut result = item.clone();
        apply_one_by_one(&mut result, operations, budget)?;
        check_identity(item, &result, &patch.options)?;
        *item = result;
    }
    tracking.put_back(item);
    Ok(())
}

/// The annotations kpt and kustomize track an item's file with (`internal.config.kubernetes.io/…`,
/// `config.kubernetes.io/path` and `index`, `config.k8s.io/id`), as they were before a JSON 6902
/// patch. kustomize puts them back after the patch (its PatchTransformer, issue #4111), so an
/// operation on `/metadata/annotations` as a whole does not lose the item's file.
struct Tracking(Vec<(String, Value)>);

impl Tracking {
    fn of(item: &Value) -> Self {
        let annotations = item.get("metadata").and_then(|m| m.get("annotations")).and_then(Value::as_object);
        let tracked = |key: &str| {
            key.starts_with("internal.config.kubernetes.io/")
                || [krm::annotations::LEGACY_PATH, krm::annotations::LEGACY_INDEX, "config.k8s.io/id"].contains(&key)
        };
        Self(
            annotations
                .map(|map| map.iter().filter(|(key, _)| tracked(key)).map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
        )
    }

    /// Sets them again, over whatever the patch made of them.
    fn put_back(&self, item: &mut Value) {
        if self.0.is_empty() {
            return;
        }
        let Value::Object(object) = item else { return };
        let metadata = object.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(metadata) = metadata else { return };
        let annotations = metadata.entry("annotations").or_insert_with(|| Value::Object(Map::new()));
        if !annotations.is_object() {
            *annotations = Value::Object(Map::new());
        }
        if let Value::Object(annotations) = annotations {
            for (key, value) in &self.0 {
                annotations.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Applies the operations one at a time to `value` (a copy: a failure leaves it half-patched).
fn apply_one_by_one(value: &mut Value, operations: &[PatchOperation], budget: &Budget) -> Result<(), Failure> {
    for (i, operation) in operations.iter().enumerate() {
        charge_operation(operation, value, budget)?;
        json_patch::patch(value, std::slice::from_ref(operation))
            .map_err(|err| describe_6902_error(operations, i, &err))?;
    }
    Ok(())
}

/// One step per operation, and the bytes it would add: its value's length, or, for a copy, the
/// memory the copy takes ([`crate::doc::memory_size`]): doubling copies of small nodes grow in
/// memory many times faster than in text, and must end at the budget, not in gigabytes.
fn charge_operation(operation: &PatchOperation, value: &Value, budget: &Budget) -> Result<(), Exhausted> {
    budget.charge_steps(1)?;
    match operation {
        PatchOperation::Add(op) => budget.charge_output(serialized_len(&op.value)),
        PatchOperation::Replace(op) => budget.charge_output(serialized_len(&op.value)),
        PatchOperation::Copy(op) => match value.pointer(op.from.as_str()) {
            Some(copied) => {
                budget.charge_output(usize::try_from(crate::doc::memory_size(copied)).unwrap_or(usize::MAX))
            }
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// The JSON length of a value, counted without building the text.
fn serialized_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn describe_6902_error(operations: &[PatchOperation], index: usize, err: &json_patch::PatchError) -> Failure {
    let op_name = match operations.get(index) {
        Some(PatchOperation::Add(_)) => "add",
        Some(PatchOperation::Remove(_)) => "remove",
        Some(PatchOperation::Replace(_)) => "replace",
        Some(PatchOperation::Move(_)) => "move",
        Some(PatchOperation::Copy(_)) => "copy",
        Some(PatchOperation::Test(_)) => "test",
        None => "",
    };
    Failure::Patch(
        format!("operation {index} ({op_name} {}) failed: {}", err.path, err.kind),
        Some(err.path.to_string()),
    )
}

/// Whether an operation may change `metadata.name` or `kind` (then the item is patched on a copy,
/// so a refused identity change leaves it as it was).
fn touches_identity(operation: &PatchOperation) -> bool {
    let hits = |pointer: &str| {
        let under =
            |prefix: &str| pointer == prefix || pointer.strip_prefix(prefix).is_some_and(|r| r.starts_with('/'));
        pointer.is_empty() || pointer == "/metadata" || under("/metadata/name") || under("/kind")
    };
    match operation {
        PatchOperation::Test(_) => false,
        PatchOperation::Move(op) => hits(op.from.as_str()) || hits(op.path.as_str()),
        other => hits(other.path().as_str()),
    }
}

/// A targeted strategic merge patch's name and kind that are not applied (see
/// [`Identity::settle`]), about a resource of `old_api`, `old_name` and `old_kind`.
fn identity_warnings(
    patch_map: &Map,
    patch: &Patch,
    old_api: &str,
    old_name: &str,
    old_kind: &str,
) -> Vec<(String, &'static str)> {
    let options = &patch.options;
    let mut warnings = Vec::new();
    if patch.target.is_none() {
        // An untargeted patch's name and kind are how it found the resource, not a change.
        return warnings;
    }
    let own_name = patch_map.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str);
    if let Some(name) = own_name.filter(|name| !options.allow_name_change && *name != old_name) {
        warnings.push((
            format!(
                "its metadata.name {name:?} is not applied: the resource keeps the name {old_name:?} (as in \
                 kustomize); set options.allowNameChange: true to rename it, or leave metadata.name out of \
                 the patch"
            ),
            "/metadata/name",
        ));
    }
    let own_kind = patch_map.get("kind").and_then(Value::as_str);
    if let Some(kind) = own_kind.filter(|kind| !options.allow_kind_change && *kind != old_kind) {
        let own_api = patch_map.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
        // Which schema the merge used (see `apply_document`) is part of what the kind did.
        let how = if strategic::schema_of(old_api, old_kind).is_some() {
            String::new()
        } else if strategic::schema_of(old_api, kind).is_some() {
            format!(", merged with the schema of {old_api} {kind}")
        } else if strategic::schema_of(own_api, kind).is_some() {
            format!(
                ", and its lists are replaced, not merged by key: the patch takes the resource's apiVersion, \
                 and {old_api} {kind} has no schema ({own_api} {kind} has)"
            )
        } else {
            String::new()
        };
        warnings.push((
            format!(
                "its kind {kind:?} is not applied: the resource stays a {old_kind} (as in kustomize){how}; set \
                 options.allowKindChange: true to change the kind, or leave kind out of the patch"
            ),
            "/kind",
        ));
    }
    warnings
}

/// A strategic merge error's place reads `/spec/template/spec/$setElementOrder/containers`: its
/// plain leading keys are a place in the resource (the result's field); the rest stays in the
/// message.
fn locate_strategic_error(err: &strategic::MergeError) -> (String, Option<String>) {
    // An error at the patch's top level has an empty path.
    if err.path.is_empty() {
        return (err.message.clone(), None);
    }
    let segments: Vec<&str> = err.path.split('/').skip(1).collect();
    let plain = segments.iter().take_while(|s| !s.is_empty() && !s.contains(['$', '=', '"'])).count();
    if plain == 0 {
        return (err.to_string(), None);
    }
    let pointer = format!("/{}", segments[..plain].join("/"));
    let message = match &segments[plain..] {
        [] => err.message.clone(),
        rest => format!("{}: {}", rest.join("/"), err.message),
    };
    (message, Some(pointer))
}

/// JSON 6902 may change a resource's name or kind only when the options allow it (kustomize applies
/// such an operation whatever the options say; here the options guard every patch kind).
fn check_identity(before: &Value, after: &Value, options: &PatchOptions) -> Result<(), Failure> {
    if !options.allow_name_change && krm::name_of(before) != krm::name_of(after) {
        return Err((
            format!(
                "it changes metadata.name from {:?} to {:?}; set options.allowNameChange: true if that is intended",
                krm::name_of(before),
                krm::name_of(after)
            ),
            Some("/metadata/name".into()),
        )
            .into());
    }
    if !options.allow_kind_change && type_of(before).1 != type_of(after).1 {
        return Err((
            format!(
                "it changes kind from {:?} to {:?}; set options.allowKindChange: true if that is intended",
                type_of(before).1,
                type_of(after).1
            ),
            Some("/kind".into()),
        )
            .into());
    }
    Ok(())
}

/// `/spec/template/0/name` as `spec.template[0].name`.
fn pointer_to_field(pointer: &str) -> FieldPath {
    pointer.split('/').skip(1).fold(FieldPath::root(), |path, token| {
        let token = token.replace("~1", "/").replace("~0", "~");
        match token.parse::<usize>() {
            Ok(i) => path.index(i),
            Err(_) => path.key(token),
        }
    })
}

#[cfg(test)]
mod copy_charge_tests {
    use super::*;
    use crate::limits::{Budget, Limits};

    /// A copy is charged what it takes in memory: `[{}, {}, …]` is three bytes of JSON per
    /// element but a tree node each, and 24 doubling copies of 50 of them once ran for seconds
    /// into gigabytes before the JSON length reached the budget.
    #[test]
    fn a_copy_is_charged_its_memory() {
        let value = serde_json::json!({"s": vec![serde_json::json!({}); 1000]});
        let copy: PatchOperation =
            serde_json::from_value(serde_json::json!({"op": "copy", "from": "/s", "path": "/t"}))
                .unwrap_or_else(|_| unreachable!("a valid operation"));
        let budget = Budget::new(Limits::default());
        assert!(charge_operation(&copy, &value, &budget).is_ok());
        let (charged, _) = budget.used();
        assert!(charged >= 1000 * std::mem::size_of::<Value>() as u64, "charged {charged}");
    }
}
