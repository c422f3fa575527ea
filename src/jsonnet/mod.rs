//! Jsonnet evaluation for the expression function `jsonnet(path)`, with jrsonnet. The file sees the values
//! tree as the external variables `context` (Windsor's name) and `values`, and, when it evaluates
//! to a function, as its top-level argument `values`. Windsor's `helpers` library and `ociUrl`
//! are there too, so Windsor's Jsonnet files evaluate unchanged. Imports resolve relative to the importing file through [`Files`], so they
//! are confined to the package root like every other read.
//!
//! Recursion is bounded by jrsonnet's stack limit (200 frames). A loop that does not recurse
//! (`std.range(1, 1e9)`) or a value that grows without recursing (`std.repeat`) is not: jrsonnet
//! 0.5.0-pre98 has no interrupt, step or allocation hook (its only per-call check is the
//! stack-depth counter). So the caller may run each evaluation in an [`Isolate`] (the CLI uses a
//! child process with a memory limit, killed at the deadline); without one, it runs on a thread
//! of its own, abandoned at the deadline. One deadline covers the whole render ([`Session`]:
//! [`TIME_LIMIT`] for all files together). Time is the one limit that depends on the machine's
//! speed. Every evaluation is a step and its result's bytes are output charged to the budget.

use crate::doc::Value;
use crate::limits::{Budget, MAX_DEPTH};
use crate::package::{resolve, Files};
use jrsonnet_evaluator::{
    apply_tla, bail, error::ErrorKind, tla::TlaArg, trace::PathResolver, IStr, ImportResolver, State, Val,
};
use jrsonnet_gcmodule::Acyclic;
use jrsonnet_ir::{SourceFifo, SourceFile, SourcePath};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Resolves and loads imports by package-relative path.
#[derive(Acyclic)]
struct PackageImports(Arc<dyn Files>);

impl ImportResolver for PackageImports {
    fn resolve_from(
        &self,
        from: &SourcePath,
        path: &dyn jrsonnet_evaluator::AsPathLike,
    ) -> jrsonnet_evaluator::Result<SourcePath> {
        let from = from.path().map(|p| p.to_string_lossy().into_owned());
        let requested = path.as_path();
        let requested: &std::path::Path = requested.as_ref();
        match resolve(from.as_deref(), &requested.to_string_lossy()) {
            Ok(resolved) => Ok(SourcePath::new(SourceFile::new(PathBuf::from(resolved)))),
            Err(message) => bail!(ErrorKind::RuntimeError(message.into())),
        }
    }

    fn load_file_contents(&self, resolved: &SourcePath) -> jrsonnet_evaluator::Result<Vec<u8>> {
        // External code (`helpers`) arrives as a source that carries its own text.
        if let Some(SourceFifo(_, code)) = resolved.downcast_ref::<SourceFifo>() {
            return Ok(code.to_vec());
        }
        let path = resolved.path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        match self.0.read(&path) {
            Ok(text) => Ok(text.into_bytes()),
            Err(err) => bail!(ErrorKind::RuntimeError(format!("cannot read {:?}: {err}", self.0.shown(&path)).into())),
        }
    }
}

/// Windsor's `std.extVar('helpers')`: typed lookups by dotted path and two data helpers.
const HELPERS: &str = include_str!("helpers.libsonnet");

/// Windsor's `std.extVar('ociUrl')` in its unpinned builds: the core blueprint it pulls by default.
const WINDSOR_OCI_URL: &str = "oci://ghcr.io/windsorcli/core:latest";

/// How long all `jsonnet()` evaluations of one render may take together. Configuration programs
/// finish in milliseconds; this only stops a hostile or mistaken endless loop from hanging the
/// pipeline.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Memory one evaluation may use when it runs in an [`Isolate`] that can enforce it.
pub const MEMORY_LIMIT: u64 = 1 << 30;

/// Why an isolated evaluation gave no value of its own.
pub enum Stopped {
    /// The time given ran out; the evaluation was stopped.
    TimedOut,
    /// It needed more than [`MEMORY_LIMIT`].
    OutOfMemory,
    /// Anything else, said in a sentence (Jsonnet's own errors included).
    Failed(String),
    /// The isolate cannot run here (no /proc to find the binary in a bare chroot, say): the
    /// evaluation runs on a thread of this process instead.
    Unavailable,
}

/// Evaluates `path` with `values` somewhere it can be stopped: given the time left, it returns
/// the value or why there is none.
pub type Isolate = Arc<dyn Fn(&str, &Value, Duration) -> Result<Value, Stopped> + Send + Sync>;

/// One render's Jsonnet evaluations: its budget, the deadline they share, and where they run.
pub struct Session {
    budget: Arc<Budget>,
    deadline: Instant,
    isolate: Option<Isolate>,
}

impl Session {
    /// The deadline starts now: [`TIME_LIMIT`] for every evaluation of the render together.
    pub fn new(budget: Arc<Budget>, isolate: Option<Isolate>) -> Self {
        Self { budget, deadline: Instant::now() + TIME_LIMIT, isolate }
    }
}

/// The evaluation thread's stack: jrsonnet's 200-frame limit, not the stack, should end recursion.
const STACK_BYTES: usize = 64 << 20;

/// Evaluates the package file `path` (already resolved and confined) to JSON, before the
/// session's deadline, charging one step and the result's size to the render's budget.
pub fn evaluate(session: &Session, files: &dyn Files, path: &str, values: &Value) -> Result<Value, String> {
    session.budget.charge_steps(1).map_err(|err| format!("jsonnet {path:?}: {err}"))?;
    let remaining = session.deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return Err(too_long(path));
    }
    let value = match session.isolate.as_ref().map(|isolate| isolate(path, values, remaining)) {
        None | Some(Err(Stopped::Unavailable)) => evaluate_by(session.deadline, files, path, values)?,
        Some(Ok(value)) => value,
        Some(Err(Stopped::TimedOut)) => return Err(too_long(path)),
        Some(Err(Stopped::OutOfMemory)) => {
            return Err(format!(
                "jsonnet {path:?}: the evaluation needed more than {} of memory: look for a value that grows \
                 without end (such as std.repeat or std.makeArray over a huge count)",
                crate::limits::human_bytes(MEMORY_LIMIT)
            ))
        }
        Some(Err(Stopped::Failed(message))) => return Err(message),
    };
    if crate::doc::deeper_than(&value, MAX_DEPTH) {
        return Err(format!("jsonnet {path:?}: the result nests deeper than {MAX_DEPTH} levels: flatten it"));
    }
    let size = crate::doc::output_size(&value);
    session
        .budget
        .charge_output(usize::try_from(size).unwrap_or(usize::MAX))
        .map_err(|err| format!("jsonnet {path:?}: {err}"))?;
    Ok(value)
}

fn too_long(path: &str) -> String {
    format!(
        "jsonnet {path:?}: the render's Jsonnet evaluations did not finish within {} s together: look for a loop \
         that does not end (such as std.range over a huge count)",
        TIME_LIMIT.as_secs()
    )
}

/// Evaluates on a thread of this process, with no deadline: for an [`Isolate`]'s worker, which
/// its caller stops from outside.
pub fn evaluate_unbounded(files: &dyn Files, path: &str, values: &Value) -> Result<Value, String> {
    evaluate_by(Instant::now() + Duration::from_secs(365 * 24 * 3600), files, path, values)
}

fn evaluate_by(deadline: Instant, files: &dyn Files, path: &str, values: &Value) -> Result<Value, String> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return Err(too_long(path));
    }
    let (sender, receiver) = mpsc::sync_channel(1);
    let (files, owned_path, values) = (files.share(), path.to_string(), values.clone());
    let spawned = std::thread::Builder::new().name("jsonnet".into()).stack_size(STACK_BYTES).spawn(move || {
        // The receiver may have given up; nobody is left to tell.
        let _ = sender.send(evaluate_here(files, &owned_path, values));
    });
    if let Err(err) = spawned {
        return Err(format!("jsonnet {path:?}: cannot start the evaluation: {err}"));
    }
    match receiver.recv_timeout(remaining) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(too_long(path)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(format!("jsonnet {path:?}: the evaluation stopped abruptly")),
    }
}

fn evaluate_here(files: Arc<dyn Files>, path: &str, values: Value) -> Result<Value, String> {
    let values: Val =
        serde_json::from_value(values).map_err(|err| format!("values are not valid Jsonnet input: {err}"))?;
    let mut builder = State::builder();
    builder.import_resolver(PackageImports(files));
    let context = jrsonnet_stdlib::ContextInitializer::new(PathResolver::Relative(PathBuf::new()));
    context.add_ext_var("values".into(), values.clone());
    context.add_ext_var("context".into(), values.clone());
    context.add_ext_str("ociUrl".into(), WINDSOR_OCI_URL.into());
    context
        .add_ext_code("helpers", HELPERS)
        .map_err(|err| format!("jsonnet {path:?}: the helpers library does not parse: {err}"))?;
    builder.context_initializer(context);
    let state = builder.build();
    let _entered = state.enter();
    let first_line = |err: jrsonnet_evaluator::Error| {
        let text = err.to_string();
        let line = text.lines().next().unwrap_or_default().trim();
        // jrsonnet's advice names its own CLI flag (--max-stack); ours has none, and the limit is fixed.
        let line = if line.starts_with("stack overflow") {
            "stack overflow: a function recursed more than 200 calls deep: make the recursion end sooner, or \
             loop with std.foldl or std.map instead of recursing"
                .to_string()
        } else {
            line.to_string()
        };
        format!("jsonnet {path:?}: {line}")
    };
    let result = state
        .import(path)
        .and_then(|val| {
            // jrsonnet's API takes this map; IStr's interior mutability is its reference count,
            // not its hash, so the key is stable.
            #[allow(clippy::mutable_key_type)]
            let mut args: HashMap<IStr, TlaArg> = HashMap::new();
            args.insert("values".into(), TlaArg::Val(values));
            apply_tla(&args, val)
        })
        .map_err(first_line)?;
    serde_json::to_value(&result).map_err(|err| {
        if !err.to_string().starts_with("stack overflow") {
            return format!("jsonnet {path:?}: {err}");
        }
        // Converting stops at jrsonnet's 200-level limit, but dropping the value (and the import
        // cache holding it) recurses once per level: a million levels overflow any stack. The
        // evaluation's memory is leaked instead; the process ends soon after.
        std::mem::forget(result);
        std::mem::forget(state.clone());
        format!("jsonnet {path:?}: the result nests deeper than 200 levels: flatten it")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::MemoryFiles;
    use serde_json::json;

    fn files(entries: &[(&str, &str)]) -> MemoryFiles {
        MemoryFiles(entries.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn values_as_ext_var_and_top_level_argument() {
        let package = files(&[
            ("f/a.jsonnet", "local lib = import 'lib.libsonnet'; { region: std.extVar('values').region + lib.suffix }"),
            ("f/lib.libsonnet", "{ suffix: '-1' }"),
            ("f/b.jsonnet", "function(values) { replicas: values.n * 2 }"),
        ]);
        let values = json!({"region": "eu", "n": 2});
        assert_eq!(
            evaluate(&Session::new(Arc::default(), None), &package, "f/a.jsonnet", &values),
            Ok(json!({"region": "eu-1"}))
        );
        assert_eq!(
            evaluate(&Session::new(Arc::default(), None), &package, "f/b.jsonnet", &values),
            Ok(json!({"replicas": 4}))
        );
    }

    /// Windsor's bindings (`feature_evaluator.go`: `ExtCode("context")`, `"helpers"`, `"ociUrl"`).
    #[test]
    fn windsor_context_helpers_and_oci_url() {
        let program = "local h = std.extVar('helpers'); local ctx = std.extVar('context'); {
            region: ctx.region,
            port: h.getInt(ctx, 'cluster.port'),
            missing: h.getString(ctx, 'cluster.name', 'dflt'),
            nullLeaf: h.get(ctx, 'gone'),
            nested: h.get(ctx, 'cluster.tags'),
            has: [h.has(ctx, 'cluster.port'), h.has(ctx, 'cluster.nope'), h.has(ctx, 'region.x')],
            flags: [h.getBool(ctx, 'cluster.on'), h.getObject(ctx, 'x'), h.getArray(ctx, 'x')],
            hosts: [h.baseUrl('https://api.example.com:6443'), h.baseUrl('http://a.b'), h.baseUrl('c:1'), h.baseUrl('')],
            clean: h.removeEmptyKeys({a: null, b: '', c: {d: {}, e: [null, '', 1, {}]}, f: 0, g: false}),
            oci: std.extVar('ociUrl'),
        }";
        let package =
            files(&[("f/w.jsonnet", program), ("f/bad.jsonnet", "std.extVar('helpers').getString({a: 3}, 'a')")]);
        let values = json!({"region": "eu", "gone": null, "cluster": {"port": 6443.7, "on": true, "tags": {"t": 1}}});
        let session = Session::new(Arc::default(), None);
        assert_eq!(
            evaluate(&session, &package, "f/w.jsonnet", &values),
            Ok(json!({
                "region": "eu", "port": 6443, "missing": "dflt", "nullLeaf": null, "nested": {"t": 1},
                "has": [true, false, false], "flags": [true, {}, []],
                "hosts": ["api.example.com", "a.b", "c", ""],
                "clean": {"c": {"e": [1]}, "f": 0, "g": false},
                "oci": "oci://ghcr.io/windsorcli/core:latest",
            }))
        );
        let err = evaluate(&session, &package, "f/bad.jsonnet", &values).err().unwrap_or_default();
        assert!(err.contains("Expected string for 'a' but got number: 3"), "{err}");
    }

    #[test]
    fn imports_stay_in_the_package_and_recursion_is_bounded() {
        let package =
            files(&[("a.jsonnet", "import '../../etc/passwd'"), ("loop.jsonnet", "local f(x) = f(x + 1); f(0)")]);
        let err =
            evaluate(&Session::new(Arc::default(), None), &package, "a.jsonnet", &json!({})).err().unwrap_or_default();
        assert!(err.contains("escapes the package root"), "{err}");
        let err = evaluate(&Session::new(Arc::default(), None), &package, "loop.jsonnet", &json!({}))
            .err()
            .unwrap_or_default();
        assert!(err.contains("stack overflow"), "{err}");
    }
}
