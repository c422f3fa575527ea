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

/// Runs `work` on each of `items` with its index, the second half on another thread when there
/// are two cores and more than one item (the order of the work is not kept, only each item's
/// own).
pub fn on_two_threads<T: Send>(items: &mut [T], work: impl Fn(usize, &mut T) + Sync) {
    let each = |first: usize, items: &mut [T]| (first..).zip(items).for_each(|(i, item)| work(i, item));
    if !two_cores() || items.len() < 2 || one_thread() {
        return each(0, items);
    }
    let half = items.len() / 2;
    let (first, second) = items.split_at_mut(half);
    // Whichever thread takes the second half does it: the spawned one, or this one after it if
    // no thread could be had.
    let second = std::sync::Mutex::new(Some(second));
    let take = || second.lock().ok().and_then(|mut half| half.take());
    let each = &each;
    std::thread::scope(|scope| {
        let spawned = spawn(scope, || take().into_iter().for_each(|second| each(half, second)));
        each(0, first);
        if let Ok(Err(panic)) = spawned.map(|handle| handle.join()) {
            std::panic::resume_unwind(panic);
        }
    });
    take().into_iter().for_each(|second| each(half, second));
}

/// Whether the process may use two cores, asked once: on Linux the answer reads cgroup files.
pub(super) fn two_cores() -> bool {
    static TWO_CORES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO_CORES.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}

/// Whether [`on_two_threads`] keeps to this thread (tests; never otherwise).
fn one_thread() -> bool {
    #[cfg(test)]
    return ONE_THREAD.with(std::cell::Cell::get);
    #[cfg(not(test))]
    false
}

#[cfg(test)]
thread_local! {
    /// Tests set it to run [`on_two_threads`] on this thread only, the reference of two.
    pub(crate) static ONE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
