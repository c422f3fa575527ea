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
//! child process with a memory and a CPU-time limit); without one, it runs on a thread of its
//! own, abandoned once the process has spent the CPU time left. One CPU-time budget covers the
//! whole render ([`Session`]: `--max-jsonnet-cpu` for all files together). It counts CPU time, never
//! the wall clock, so a busy machine cannot make a render fail; only a slower processor can move
//! a program near the limit across it. Every evaluation is a step and its result's bytes are
//! output charged to the budget.

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
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

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

/// Memory one evaluation may use when it runs in an [`Isolate`] that can enforce it.
pub const MEMORY_LIMIT: u64 = 1 << 30;

/// An isolated evaluation's value and the CPU time it spent.
pub struct Evaluated {
    pub value: Value,
    pub cpu: Duration,
}

/// Why an isolated evaluation gave no value of its own.
pub enum Stopped {
    /// The CPU time given ran out; the evaluation was stopped.
    OutOfTime,
    /// It needed more than [`MEMORY_LIMIT`].
    OutOfMemory,
    /// Anything else, said in a sentence (Jsonnet's own errors included).
    Failed(String),
    /// The isolate cannot run here (no /proc to find the binary in a bare chroot, say): the
    /// evaluation runs on a thread of this process instead.
    Unavailable,
}

/// Evaluates `path` with `values` somewhere it can be stopped: given the CPU time left, it
/// returns the value and the CPU time it spent, or why there is none.
pub type Isolate = Arc<dyn Fn(&str, &Value, Duration) -> Result<Evaluated, Stopped> + Send + Sync>;

/// One render's Jsonnet evaluations: its budget, the CPU time they have spent together, and
/// where they run.
pub struct Session {
    budget: Arc<Budget>,
    /// CPU time all evaluations of the render may spend together (`--max-jsonnet-cpu`).
    /// Configuration programs finish in milliseconds; this stops a hostile or mistaken endless
    /// loop from hanging the pipeline.
    cpu_limit: Duration,
    spent: Mutex<Duration>,
    isolate: Option<Isolate>,
}

impl Session {
    /// The budget's `jsonnet_cpu` for every evaluation of the render together.
    pub fn new(budget: Arc<Budget>, isolate: Option<Isolate>) -> Self {
        let cpu_limit = budget.limits().jsonnet_cpu;
        Self { budget, cpu_limit, spent: Mutex::new(Duration::ZERO), isolate }
    }

    fn cpu_left(&self) -> Duration {
        self.cpu_limit.saturating_sub(*self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Adds an evaluation's CPU time; whether the render is still within its CPU limit.
    fn charge_cpu(&self, cpu: Duration) -> bool {
        let mut spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *spent = spent.saturating_add(cpu);
        *spent <= self.cpu_limit
    }
}

/// The evaluation thread's stack: jrsonnet's 200-frame limit, not the stack, should end recursion.
const STACK_BYTES: usize = 64 << 20;

/// Evaluates the package file `path` (already resolved and confined) to JSON, before the
/// session's deadline, charging one step and the result's size to the render's budget.
pub fn evaluate(session: &Session, files: &dyn Files, path: &str, values: &Value) -> Result<Value, String> {
    session.budget.charge_steps(1).map_err(|err| format!("jsonnet {path:?}: {err}"))?;
    let remaining = session.cpu_left();
    if remaining.is_zero() {
        return Err(too_long(session.cpu_limit, path));
    }
    let evaluated = match session.isolate.as_ref().map(|isolate| isolate(path, values, remaining)) {
        None | Some(Err(Stopped::Unavailable)) => evaluate_on_thread(Some(remaining), files, path, values),
        Some(result) => result,
    };
    let value = match evaluated {
        Ok(Evaluated { value, cpu }) if session.charge_cpu(cpu) => value,
        Ok(_) => return Err(too_long(session.cpu_limit, path)),
        Err(Stopped::OutOfTime) => {
            session.charge_cpu(session.cpu_limit);
            return Err(too_long(session.cpu_limit, path));
        }
        Err(Stopped::OutOfMemory) => {
            return Err(format!(
                "jsonnet {path:?}: the evaluation needed more than {} of memory: look for a value that grows \
                 without end (such as std.repeat or std.makeArray over a huge count)",
                crate::limits::human_bytes(MEMORY_LIMIT)
            ))
        }
        Err(Stopped::Failed(message)) => return Err(message),
        Err(Stopped::Unavailable) => return Err(format!("jsonnet {path:?}: cannot start the evaluation")),
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

fn too_long(limit: Duration, path: &str) -> String {
    format!(
        "jsonnet {path:?}: the render's Jsonnet evaluations used more than {} s of CPU time together \
         (--max-jsonnet-cpu): look for a loop that does not end (such as std.range over a huge count), or raise \
         the limit",
        limit.as_secs()
    )
}

/// Evaluates on a thread of this process with no limit: for an [`Isolate`]'s worker, whose CPU
/// time the kernel limits.
pub fn evaluate_unbounded(files: &dyn Files, path: &str, values: &Value) -> Result<Value, String> {
    match evaluate_on_thread(None, files, path, values) {
        Ok(Evaluated { value, .. }) => Ok(value),
        Err(Stopped::Failed(message)) => Err(message),
        Err(_) => Err(format!("jsonnet {path:?}: the evaluation was stopped")),
    }
}

/// How often the waiting thread reads the process's CPU clock. Only how soon a runaway
/// evaluation is abandoned depends on it, never whether.
const CPU_POLL: Duration = Duration::from_millis(20);

/// Evaluates on a thread of its own, abandoned once this process has spent `cpu_limit` of CPU
/// time since it started (the process's clock: a thread's cannot be read from another thread
/// without unsafe code; the waiting thread itself spends nothing).
fn evaluate_on_thread(
    cpu_limit: Option<Duration>,
    files: &dyn Files,
    path: &str,
    values: &Value,
) -> Result<Evaluated, Stopped> {
    let started = crate::limits::process_cpu_time();
    let (sender, receiver) = mpsc::sync_channel(1);
    let (files, owned_path, values) = (files.share(), path.to_string(), values.clone());
    let spawned = std::thread::Builder::new().name("jsonnet".into()).stack_size(STACK_BYTES).spawn(move || {
        let result = evaluate_here(files, &owned_path, values);
        // The receiver may have given up; nobody is left to tell.
        let _ = sender.send((result, crate::limits::thread_cpu_time()));
    });
    if let Err(err) = spawned {
        return Err(Stopped::Failed(format!("jsonnet {path:?}: cannot start the evaluation: {err}")));
    }
    loop {
        match receiver.recv_timeout(CPU_POLL) {
            Ok((Ok(value), cpu)) => return Ok(Evaluated { value, cpu }),
            Ok((Err(message), _)) => return Err(Stopped::Failed(message)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let spent = crate::limits::process_cpu_time().saturating_sub(started);
                if cpu_limit.is_some_and(|limit| spent > limit) {
                    return Err(Stopped::OutOfTime);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Stopped::Failed(format!("jsonnet {path:?}: the evaluation stopped abruptly")))
            }
        }
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

    /// The thread fallback (no isolate) stops on CPU time spent, not on time passed: a program
    /// that needs seconds of CPU time is abandoned at a 1 ms limit, however busy the machine (it
    /// would have to finish within the first 20 ms poll to pass unnoticed).
    #[test]
    fn thread_fallback_counts_cpu_time() {
        let package = files(&[("slow.jsonnet", "std.foldl(function(sum, x) sum + x, std.range(1, 3000000), 0)")]);
        let stopped = evaluate_on_thread(Some(Duration::from_millis(1)), &package, "slow.jsonnet", &json!({}));
        assert!(matches!(stopped, Err(Stopped::OutOfTime)));
        let quick = files(&[("quick.jsonnet", "1 + 1")]);
        let done = evaluate_on_thread(Some(Duration::from_secs(10)), &quick, "quick.jsonnet", &json!({}));
        assert!(matches!(done, Ok(Evaluated { ref value, .. }) if *value == json!(2)));
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
