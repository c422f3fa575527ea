//! Temporary copies removed on SIGINT and SIGTERM. `flux-build` and `diff --git` copy sources
//! (Secrets included) under `$TMPDIR`; a `TempDir` is removed when it is dropped, but a signal
//! ends the process without dropping anything. So, while such a command runs, the two signals
//! are blocked in every thread and one thread waits for them: it removes the registered
//! directories, kills the registered child processes (kustomize, git: they inherit the blocked
//! signals, so they would not stop on their own), and ends the process by the signal, as it
//! would have ended without us. Elsewhere signals keep their default action.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static DIRECTORIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Set when a signal came: a child the signal thread killed is then not reported as failing.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Takes SIGINT and SIGTERM over for the rest of the process. Called before the command starts
/// any thread or process, so that all of them inherit the blocked signals.
pub(super) fn on_signals_remove_temporaries() {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{SigSet, Signal};
        let mut signals = SigSet::empty();
        signals.add(Signal::SIGINT);
        signals.add(Signal::SIGTERM);
        if signals.thread_block().is_err() {
            return;
        }
        let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
            let Ok(signal) = signals.wait() else { return };
            SIGNALLED.store(true, Ordering::SeqCst);
            let children = std::mem::take(&mut *CHILDREN.lock().unwrap_or_else(|p| p.into_inner()));
            for pid in children {
                let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
                let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
            }
            let directories = std::mem::take(&mut *DIRECTORIES.lock().unwrap_or_else(|p| p.into_inner()));
            for dir in directories {
                let _ = std::fs::remove_dir_all(dir);
            }
            // End as the signal would have ended the process: its default action, here on the
            // one thread that lets it through; 128 + its number should that not end it.
            let _ = signals.thread_unblock();
            let _ = nix::sys::signal::raise(signal);
            std::process::exit(128 + signal as i32);
        });
        if spawned.is_err() {
            // No thread to take them: the signals get their default action back.
            let _ = signals.thread_unblock();
        }
    }
}

/// A temporary directory to remove on a signal, for as long as the value lives.
pub(super) struct Temporary(PathBuf);

/// Makes a temporary directory `$TMPDIR/<prefix>…`, removed when the values are dropped and on a
/// signal. Made and registered under the lock the signal thread takes the list with, and not at
/// all once a signal came: a directory made between the two would be left behind.
pub(super) fn temp_dir(prefix: &str) -> Result<(tempfile::TempDir, Temporary), String> {
    let mut directories = DIRECTORIES.lock().unwrap_or_else(|p| p.into_inner());
    if SIGNALLED.load(Ordering::SeqCst) {
        drop(directories);
        loop {
            // The signal thread is ending the process.
            std::thread::park();
        }
    }
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(|err| format!("cannot make a temporary directory: {err}"))?;
    directories.push(dir.path().to_path_buf());
    let registered = Temporary(dir.path().to_path_buf());
    Ok((dir, registered))
}

impl Drop for Temporary {
    /// Removes the directory before it stops being registered, so that no signal falls between.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        DIRECTORIES.lock().unwrap_or_else(|p| p.into_inner()).retain(|dir| *dir != self.0);
    }
}

/// Runs `command` to its end as [`std::process::Command::output`] does, killed on a signal.
pub(super) fn output(command: &mut std::process::Command) -> std::io::Result<std::process::Output> {
    use std::process::Stdio;
    // Started and registered under the lock the signal thread takes the list with, and not at
    // all once a signal came: a child started between the signal thread's taking the list and
    // the process's end would outlive it (it ignores the blocked signals), computing on.
    let child = {
        let mut children = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
        if SIGNALLED.load(Ordering::SeqCst) {
            drop(children);
            loop {
                // The signal thread is ending the process.
                std::thread::park();
            }
        }
        let child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        children.push(child.id());
        child
    };
    let pid = child.id();
    let output = child.wait_with_output();
    CHILDREN.lock().unwrap_or_else(|p| p.into_inner()).retain(|p| *p != pid);
    while SIGNALLED.load(Ordering::SeqCst) {
        // The signal thread is ending the process.
        std::thread::park();
    }
    output
}
