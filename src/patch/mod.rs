//! The patches step (compat: kustomize `patches`): RFC 6902 operations (json-patch
//! crate, atomic per resource), strategic merge patches for built-in kinds ([`strategic`], with
//! the generated [`merge_keys`] table) and RFC 7386 merge patches plus directives for other kinds.
//!
//! It owns reading and compiling `spec.patches` and applying them to the items it is handed; the
//! pipeline decides which items those are.

#[rustfmt::skip]
mod merge_keys;
pub mod strategic;
mod target;

use crate::config::{PatchEntry, PatchOptions};
use crate::diag::{Diagnostic, Kind, Severity};
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
    /// Notes a resource this patch matched (before patching it: a patch may rename it); local-
    /// config items, which are not written out, say so; the patch's own file is not noted.
    fn note(&self, item: &Value, names: &mut Vec<String>) {
        let (path, _) = krm::item_location(item);
        if self.file.is_some() && path == self.file {
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
    format!("its own {}", own.join(", "))
}

/// The compiled patches of a functionConfig, and their text (for the idempotency fingerprint).
pub struct Patches {
    patches: Vec<Patch>,
    pub fingerprint: String,
    /// The config that declared them, for warnings that concern no single resource.
    config_item: Value,
}

impl Patches {
    pub fn is_empty(&self) -> bool {
        self.patches.is_empty()
    }

    /// Whether some patch may apply to the item with this header (`apiVersion`, `kind`,
    /// `metadata`): the caller hands [`apply`] only those, so other items are never built.
    pub fn may_touch(&self, header: &Value) -> bool {
        self.patches.iter().any(|patch| patch.documents.iter().any(|document| selects(patch, document, header)))
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
            (Some(text), None) => text.clone(),
            (None, Some(path)) => match resolve(config_path.as_deref(), path)
                .and_then(|p| files.read(&p).map_err(|err| format!("cannot read patch file {p:?}: {err}")))
            {
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
        Ok(Patches { patches, fingerprint, config_item: config_item.clone() })
    } else {
        Err(errors)
    }
}

/// Checks patch text that this function passes on rather than applies (Windsor kustomization
/// patches, which Flux applies): it must parse as we would parse it, and JSON 6902 needs a target.
pub fn check(text: &str, has_target: bool) -> Result<(), String> {
    let documents = parse_documents(text)?;
    if !has_target && documents.iter().any(|d| matches!(d, Document::Json6902(_))) {
        return Err("a JSON 6902 patch needs a target".into());
    }
    Ok(())
}

/// A list of operations is RFC 6902; a mapping is a strategic merge patch. Several YAML
/// documents are several patches, as in kustomize.
fn parse_documents(text: &str) -> Result<Vec<Document>, String> {
    let documents = read_yaml_documents(text).map_err(|err| match (err.line, err.column) {
        (Some(line), Some(column)) => format!("patch is not valid YAML (line {line} column {column}): {}", err.message),
        _ => format!("patch is not valid YAML: {}", err.message),
    })?;
    if documents.is_empty() {
        return Err("patch is empty".into());
    }
    documents
        .into_iter()
        .map(|document| match document {
            Value::Array(_) => match serde_path_to_error::deserialize(&document) {
                Ok(patch) => Ok(Document::Json6902(patch)),
                Err(err) => Err(explain_6902_error(&document, &err)),
            },
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
/// matched and the errors it caused, so results read patch by patch as if applied list-wide.
pub struct Tally {
    matched: Vec<usize>,
    /// Per patch, the resources it matched (once each), for `explain`.
    names: Vec<Vec<String>>,
    errors: Vec<Vec<Diagnostic>>,
    /// Set once the render's budget ran out: reported once, and nothing more is patched.
    exhausted: bool,
}

impl Patches {
    pub fn tally(&self) -> Tally {
        let count = self.patches.len();
        Tally {
            matched: vec![0; count],
            names: vec![Vec::new(); count],
            errors: vec![Vec::new(); count],
            exhausted: false,
        }
    }

    /// Counts the patches that select an item a previous run already patched (marked applied),
    /// so the second run warns about exactly what the first did.
    pub fn count_matches(&self, item: &Value, tally: &mut Tally) {
        for (p, patch) in self.patches.iter().enumerate() {
            let matched = patch.documents.iter().filter(|document| selects(patch, document, item)).count();
            tally.matched[p] += matched;
            if matched > 0 {
                patch.note(item, &mut tally.names[p]);
            }
        }
    }

    /// Applies every patch that selects `item`, in order (items of kinds without a strategic
    /// schema get merge-patch semantics). Items are independent, so applying them one at a time
    /// gives what applying each patch to the whole list would, while only one item is built.
    /// Returns whether applying again would change the item again.
    pub fn apply_to(&self, item: &mut Value, tally: &mut Tally, budget: &Budget) -> bool {
        let mut repeatable = false;
        for (p, patch) in self.patches.iter().enumerate() {
            let mut named = false;
            for document in &patch.documents {
                if !selects(patch, document, item) {
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
                let (message, pointer) = match apply_document(document, patch, item, budget) {
                    Ok(repeat) => {
                        repeatable |= repeat;
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
                tally.errors[p].push(diagnostic);
            }
        }
        repeatable
    }

    /// The errors, patch by patch, each followed by a warning when the patch matched nothing;
    /// and what each patch matched, for `explain`.
    pub fn finish(&self, tally: Tally) -> (Vec<Diagnostic>, Vec<PatchReport>) {
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
        let mut results = Vec::new();
        for ((patch, matched), errors) in self.patches.iter().zip(tally.matched).zip(tally.errors) {
            results.extend(errors);
            if matched == 0 {
                let message = match &patch.target {
                    Some(_) => "target matches no resource",
                    None => "no resource has the patch's apiVersion, kind, name and namespace",
                };
                results.push(
                    Diagnostic::new(Severity::Warning, Kind::Render, message)
                        .at(patch.field.clone())
                        .about(&self.config_item),
                );
            }
        }
        (results, report)
    }
}

/// Whether `document` of `patch` applies to `item`: by target, or (an untargeted strategic
/// patch) by the patch's own apiVersion, kind, name and namespace.
fn selects(patch: &Patch, document: &Document, item: &Value) -> bool {
    match (&patch.target, document) {
        (Some(target), _) => target.matches(item),
        (None, Document::Strategic(map)) => {
            let field = |map: Option<&Map>, key: &str| {
                map.and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or_default().to_string()
            };
            let metadata = map.get("metadata").and_then(Value::as_object);
            (field(Some(map), "apiVersion").as_str(), field(Some(map), "kind").as_str()) == type_of(item)
                && field(metadata, "name") == krm::name_of(item)
                && same_namespace(&field(metadata, "namespace"), krm::namespace_of(item))
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

/// Applies one document to one item, all or nothing. `Ok(true)` when applying it again would
/// change the item again (an `add` to the end of a list, a `remove`…).
fn apply_document(document: &Document, patch: &Patch, item: &mut Value, budget: &Budget) -> Result<bool, Failure> {
    budget.charge_steps(1)?;
    match document {
        Document::Json6902(operations) => apply_6902(&operations.0, patch, item, budget),
        Document::Strategic(map) => {
            let mut patch_map = map.clone();
            if patch.target.is_some() {
                // With a target the patch's own identity is not applied (kustomize renames it to
                // each target first).
                strip_identity(&mut patch_map);
            }
            let (api_version, kind) = type_of(item);
            let schema = strategic::schema_of(api_version, kind);
            // In place, not on a copy: a copy per patch made 10 000 patches on one item
            // quadratic. A failed patch is an error, so the render writes nothing and a
            // half-patched item is never seen; only its identity is kept to compare.
            let before = identity(item);
            let Value::Object(target) = item else {
                return Err(Failure::Patch("resource is not a mapping".into(), None));
            };
            strategic::apply(target, &patch_map, schema).map_err(|err| locate_strategic_error(&err))?;
            check_identity(&before, item, &patch.options)?;
            Ok(false)
        }
    }
}

/// RFC 6902 in place when it can neither copy (amplify) nor change the resource's identity: the
/// crate undoes a failed patch itself, so the item is not cloned per patch (10 000 patches on one
/// item stay linear). Otherwise operation by operation on a copy, charging each copied value
/// before it is made, so doubling copies end at the output budget rather than in memory.
fn apply_6902(
    operations: &[PatchOperation],
    patch: &Patch,
    item: &mut Value,
    budget: &Budget,
) -> Result<bool, Failure> {
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
    if idempotent(operations) {
        return Ok(false);
    }
    // Whether a second run would change the item again: applied once more to a copy, within
    // the same budget (a copy doubles again there).
    let mut again = item.clone();
    match apply_one_by_one(&mut again, operations, budget) {
        Ok(()) => Ok(again != *item),
        Err(Failure::Budget(exhausted)) => Err(Failure::Budget(exhausted)),
        Err(Failure::Patch(..)) => Ok(true),
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

/// One step per operation, and the bytes it would add: its value, or the copied value.
fn charge_operation(operation: &PatchOperation, value: &Value, budget: &Budget) -> Result<(), Exhausted> {
    budget.charge_steps(1)?;
    let added = match operation {
        PatchOperation::Add(op) => Some(&op.value),
        PatchOperation::Replace(op) => Some(&op.value),
        PatchOperation::Copy(op) => value.pointer(op.from.as_str()),
        _ => None,
    };
    match added {
        Some(added) => budget.charge_output(serialized_len(added)),
        None => Ok(()),
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

/// Operations that a second application leaves as they are, known without applying them: adds
/// and replaces of constant values at fixed places (no list insertion), none inside another's.
fn idempotent(operations: &[PatchOperation]) -> bool {
    let mut paths = std::collections::HashSet::new();
    for operation in operations {
        match operation {
            PatchOperation::Replace(op) => paths.insert(op.path.as_str()),
            PatchOperation::Add(op) => {
                let last = op.path.as_str().rsplit('/').next().unwrap_or_default();
                if op.path.as_str().is_empty() || last == "-" || last.bytes().all(|b| b.is_ascii_digit()) {
                    return false;
                }
                paths.insert(op.path.as_str())
            }
            _ => return false,
        };
    }
    let root_and_more = paths.contains("") && paths.len() > 1;
    !root_and_more
        && paths.iter().all(|path| path.match_indices('/').skip(1).all(|(at, _)| !paths.contains(&path[..at])))
}

/// A strategic merge error reads `/spec/template/spec/$setElementOrder/containers: …`: its plain
/// leading keys are a place in the resource (the result's field); the rest stays in the message.
fn locate_strategic_error(err: &str) -> (String, Option<String>) {
    let Some((path, message)) = err.split_once(": ").filter(|(path, _)| path.starts_with('/')) else {
        return (err.to_string(), None);
    };
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let plain = segments.iter().take_while(|s| !s.is_empty() && !s.contains(['$', '=', '"'])).count();
    if plain == 0 {
        return (err.to_string(), None);
    }
    let pointer = format!("/{}", segments[..plain].join("/"));
    let message = match &segments[plain..] {
        [] => message.to_string(),
        rest => format!("{}: {message}", rest.join("/")),
    };
    (message, Some(pointer))
}

fn strip_identity(patch: &mut Map) {
    patch.shift_remove("apiVersion");
    patch.shift_remove("kind");
    if let Some(Value::Object(metadata)) = patch.get_mut("metadata") {
        metadata.shift_remove("name");
        metadata.shift_remove("namespace");
    }
}

/// The fields [`check_identity`] compares, copied out of a resource.
fn identity(item: &Value) -> Value {
    let (api_version, kind) = type_of(item);
    serde_json::json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": krm::name_of(item)}})
}

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
