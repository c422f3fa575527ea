//! jrsonnet can be neither interrupted nor held to a memory limit from inside the process, so
//! each `jsonnet()` evaluation runs in a child process of this binary; both sides of that
//! exchange live here, because starting processes is the command line's business.

use super::output::write_stdout;
use super::Exit;
use crate::doc::Value;
use crate::jsonnet;
use crate::limits::Limits;
use crate::package::DiskFiles;
use serde_json::json;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

/// The hidden first argument that makes the binary a Jsonnet worker (see [`isolate`]).
pub(super) const JSONNET_WORKER: &str = "__jsonnet-worker";

/// Runs each `jsonnet()` evaluation in a child process of this binary, limited to
/// [`jsonnet::MEMORY_LIMIT`] of address space and to the render's CPU time left: jrsonnet cannot
/// be interrupted or limited in memory from inside the process, and an abandoned thread would go
/// on allocating. The child reads the package through the same root and limits, and reports the
/// CPU time it spent. It also dies with this process (a SIGKILL to the parent, as CI timeouts and
/// Go's `exec.CommandContext` send, leaves nobody to wait for it). No wall clock is involved: the
/// worker cannot block (it reads only its request and regular files, see
/// [`crate::package::read_regular_file`]), so its CPU limit ends every evaluation.
pub(super) fn isolate(root: PathBuf, max_file_bytes: u64, max_output_bytes: u64) -> jsonnet::Isolate {
    use jsonnet::{Evaluated, Stopped};
    Arc::new(move |path: &str, values: &Value, cpu_left: Duration| {
        // A root that is not UTF-8 cannot travel in JSON: evaluate here instead.
        let root = root.to_str().ok_or(Stopped::Unavailable)?;
        // Without the binary to start (a bare chroot has no /proc), the evaluation runs here.
        let exe = std::env::current_exe().map_err(|_| Stopped::Unavailable)?;
        let mut child = std::process::Command::new(exe)
            .arg(JSONNET_WORKER)
            .arg(std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|_| Stopped::Unavailable)?;
        // Whole seconds (the kernel's unit), rounded up; the time it reports is charged exactly.
        let cpu_seconds = cpu_left.as_secs() + u64::from(cpu_left.subsec_nanos() > 0);
        let request = json!({
            "root": root, "maxFileBytes": max_file_bytes, "cpuSeconds": cpu_seconds, "path": path, "values": values
        });
        if let Some(mut stdin) = child.stdin.take() {
            // A worker that already died says why below.
            let _ = stdin.write_all(request.to_string().as_bytes());
        }
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Stopped::Failed(format!("jsonnet {path:?}: cannot talk to the evaluation")));
        };
        // Both pipes at once, so that neither fills while the other is read.
        let errors = std::thread::spawn(move || {
            let mut err = Vec::new();
            let _ = stderr.take(1 << 16).read_to_end(&mut err);
            err
        });
        let mut out = Vec::new();
        // Output beyond the budget is refused anyway: read one byte more to know it was exceeded.
        let _ = stdout.take(max_output_bytes.saturating_add(1)).read_to_end(&mut out);
        if out.len() as u64 > max_output_bytes {
            let _ = child.kill();
        }
        let err = errors.join().unwrap_or_default();
        if stopped_by_cpu_limit(child.wait()) {
            return Err(Stopped::OutOfTime);
        }
        if String::from_utf8_lossy(&err).contains("memory allocation") {
            return Err(Stopped::OutOfMemory);
        }
        match crate::doc::from_own_json(&String::from_utf8_lossy(&out)) {
            Ok(Value::Object(mut answer)) => {
                let cpu = Duration::from_nanos(answer.get("cpuNanos").and_then(Value::as_u64).unwrap_or_default());
                match (answer.remove("value"), answer.remove("error")) {
                    (Some(value), None) => Ok(Evaluated { value, cpu }),
                    (_, Some(Value::String(message))) => Err(Stopped::Failed(message)),
                    _ => Err(Stopped::Failed(format!("jsonnet {path:?}: the evaluation gave no answer"))),
                }
            }
            _ if out.len() as u64 > max_output_bytes => Err(Stopped::Failed(format!(
                "jsonnet {path:?}: the result is larger than {} (--max-output-size)",
                crate::limits::human_bytes(max_output_bytes)
            ))),
            _ => Err(Stopped::Failed(format!("jsonnet {path:?}: the evaluation stopped abruptly"))),
        }
    })
}

/// Whether the worker was stopped for its CPU time: the kernel's SIGXCPU at the soft limit (the
/// SIGKILL at the hard one, a second later, only follows a worker that survived it).
fn stopped_by_cpu_limit(status: std::io::Result<std::process::ExitStatus>) -> bool {
    use std::os::unix::process::ExitStatusExt;
    const SIGXCPU: i32 = 24;
    status.ok().and_then(|status| status.signal()) == Some(SIGXCPU)
}

/// The child side of [`isolate`]: one request on stdin, one answer on stdout. `parent` is the
/// process id the parent passed as the argument after [`JSONNET_WORKER`].
pub(super) fn run(parent: Option<&std::ffi::OsStr>) -> Exit {
    if let Err(message) = die_with_parent(parent) {
        return Exit::Unusable(message);
    }
    // Address space rather than resident memory: the kernel enforces it on every allocation.
    let limit = jsonnet::MEMORY_LIMIT;
    if let Err(err) = rlimit::setrlimit(rlimit::Resource::AS, limit, limit) {
        return Exit::Unusable(format!("cannot limit the Jsonnet worker's memory: {err}"));
    }
    let mut text = String::new();
    if let Err(err) = std::io::stdin().read_to_string(&mut text) {
        return Exit::Unusable(format!("cannot read the Jsonnet request: {err}"));
    }
    let request: Value = match serde_json::from_str(&text) {
        Ok(request) => request,
        Err(err) => return Exit::Unusable(format!("the Jsonnet request is not JSON: {err}")),
    };
    // The kernel sends SIGXCPU at the soft limit and SIGKILL a second later.
    let cpu = request["cpuSeconds"].as_u64().unwrap_or(Limits::default().jsonnet_cpu.as_secs());
    if let Err(err) = rlimit::setrlimit(rlimit::Resource::CPU, cpu, cpu.saturating_add(1)) {
        return Exit::Unusable(format!("cannot limit the Jsonnet worker's CPU time: {err}"));
    }
    let root = PathBuf::from(request["root"].as_str().unwrap_or("."));
    let files = DiskFiles::new(&root, request["maxFileBytes"].as_u64().unwrap_or(Limits::default().max_file_bytes));
    let path = request["path"].as_str().unwrap_or_default();
    let mut answer = match jsonnet::evaluate_unbounded(&files, path, &request["values"]) {
        Ok(value) => json!({ "value": value }),
        Err(message) => json!({ "error": message }),
    };
    // Everything this worker spent, its start included: the render's budget is charged with it.
    let cpu = u64::try_from(crate::limits::process_cpu_time().as_nanos()).unwrap_or(u64::MAX);
    answer["cpuNanos"] = json!(cpu);
    write_stdout(&answer.to_string())
}

/// Asks Linux to kill this worker when its parent dies (the parent-death signal), then checks
/// that the parent is still the one that started it: had it died before the request, the worker
/// would already have been handed to another process and no signal would come. The signal
/// follows the parent's thread that spawned the worker, which waits for it to finish.
#[cfg(target_os = "linux")]
fn die_with_parent(parent: Option<&std::ffi::OsStr>) -> Result<(), String> {
    use nix::sys::{prctl, signal::Signal};
    prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|err| format!("cannot tie the Jsonnet worker to its parent: {err}"))?;
    let expected = parent.and_then(|pid| pid.to_str()).and_then(|pid| pid.parse::<i32>().ok());
    match expected {
        Some(pid) if nix::unistd::getppid().as_raw() != pid => {
            Err("the Jsonnet worker's parent ended before it started".to_owned())
        }
        _ => Ok(()),
    }
}

/// Elsewhere there is no parent-death signal: the CPU-time limit alone ends an orphaned worker.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_parent: Option<&std::ffi::OsStr>) -> Result<(), String> {
    Ok(())
}
