//! The second thread the reader, the steps and the writer share their work with.
//!
//! The work is short (a few milliseconds per batch), so a thread that starts late costs as much
//! as the work itself. Linux puts a new thread on its parent's core; with the other core idle,
//! the scheduler may not move it there before its next balancing tick, up to 4 ms later (seen
//! on virtual machines: half the time, two threads of 4 ms each took 8 ms). A new thread
//! therefore first moves itself off the core it was spawned from, by leaving that core out of
//! its affinity for a moment, and the spawning thread yields once so the new thread runs at
//! once. Both are hints: where the calls fail, or off Linux, the thread runs where the
//! scheduler puts it.

use std::thread::{Scope, ScopedJoinHandle};

/// Stack of the threads that read and write items: the main thread's, so that an item nested
/// as deep as the reader allows reads and writes the same on either thread.
const THREAD_STACK: usize = 8 << 20;

/// Runs `work` on a new thread in `scope`, on another core than this thread's when it can.
pub fn spawn<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    work: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<ScopedJoinHandle<'scope, T>> {
    let here = cores::current();
    let handle = std::thread::Builder::new().stack_size(THREAD_STACK).spawn_scoped(scope, move || {
        cores::leave(here);
        work()
    })?;
    std::thread::yield_now();
    Ok(handle)
}

#[cfg(target_os = "linux")]
mod cores {
    use nix::sched::{sched_getaffinity, sched_getcpu, sched_setaffinity};
    use nix::unistd::Pid;

    /// The core this thread runs on.
    pub fn current() -> Option<usize> {
        sched_getcpu().ok()
    }

    /// Moves this thread off `core` (the scheduler moves it at once when the core is not in its
    /// affinity), then lets it run anywhere it could before.
    pub fn leave(core: Option<usize>) {
        let this = Pid::from_raw(0);
        let (Some(core), Ok(allowed)) = (core, sched_getaffinity(this)) else { return };
        let mut elsewhere = allowed;
        if elsewhere.unset(core).is_err() || sched_setaffinity(this, &elsewhere).is_err() {
            return;
        }
        let _ = sched_setaffinity(this, &allowed);
    }
}

#[cfg(not(target_os = "linux"))]
mod cores {
    pub fn current() -> Option<usize> {
        None
    }

    pub fn leave(_: Option<usize>) {}
}
