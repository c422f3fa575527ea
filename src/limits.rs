//! The budgets of one render. Hostile or mistaken input must end in a clear error, never in a
//! crash, an exhausted machine or a run whose outcome depends on the machine's load.
//!
//! Every evaluator (templates, expressions, substitution, Jsonnet, patches, KOTS clones) charges
//! what it produces to one [`Budget`] shared by the whole render, so ten small evaluations cannot
//! together do what one large one may not. Steps are counted rather than seconds measured, so
//! the same input fails or succeeds the same way on every machine. The limits are the operator's
//! (command-line flags), never the package's: a package may not raise its own budget.
//!
//! This module sits below every step and knows nothing about them.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The deepest nesting any recursive walk accepts: the YAML reader's limit, so a walk never meets
/// input deeper than what could be read (dotted keys, templates, expressions, schemas, merges).
pub const MAX_DEPTH: usize = 256;

/// The operator's limits for one render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest file a blueprint may read, and the longest string any input or output holds:
    /// one limit, so a file read into a value never makes output that the next run refuses.
    pub max_file_bytes: u64,
    /// Bytes that evaluators may produce in one render (templates, expressions, substitution,
    /// Jsonnet, patches, clones). Items that pass through unchanged do not count.
    pub max_output_bytes: u64,
    /// Evaluation steps in one render (template blocks and loop rounds, expression nodes,
    /// substitution expansions, patch operations, Jsonnet evaluations).
    pub max_steps: u64,
    /// Bytes read from stdin (a ResourceList, or the legacy exec plugin's items), counted while
    /// reading, so an endless or huge stream stops before it fills memory.
    pub max_input_bytes: u64,
    /// CPU time every `jsonnet()` evaluation of one render may spend together.
    pub jsonnet_cpu: std::time::Duration,
}

/// The YAML reader takes at most this much text in one stream, whatever `--max-input-size` says.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 8 << 20,
            max_output_bytes: 256 << 20,
            max_steps: 10_000_000,
            max_input_bytes: MAX_INPUT_BYTES,
            jsonnet_cpu: std::time::Duration::from_secs(10),
        }
    }
}

/// Which budget ran out, for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Output,
    Steps,
}

/// A budget that ran out. Its message names the limit and the flag that raises it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exhausted {
    pub resource: Resource,
    pub limit: u64,
}

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.resource {
            Resource::Output => write!(
                f,
                "the render would produce more than {} of evaluated output (--max-output-size): look for a \
                 template, expression or patch that repeats a large value, or raise the limit",
                human_bytes(self.limit)
            ),
            Resource::Steps => write!(
                f,
                "the render would take more than {} evaluation steps (--max-steps): look for nested loops, \
                 recursion or a very large repeat count, or raise the limit",
                self.limit
            ),
        }
    }
}

impl std::error::Error for Exhausted {}

/// One render's budget, shared by every evaluator (and the threads they run on).
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    output: AtomicU64,
    steps: AtomicU64,
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

impl Budget {
    pub fn new(limits: Limits) -> Self {
        Self { limits, output: AtomicU64::new(0), steps: AtomicU64::new(0) }
    }

    /// A budget to share with an evaluator running on another thread.
    pub fn shared(limits: Limits) -> Arc<Self> {
        Arc::new(Self::new(limits))
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Counts `bytes` of produced output; fails once the render's total passes the limit.
    pub fn charge_output(&self, bytes: usize) -> Result<(), Exhausted> {
        charge(&self.output, bytes as u64, self.limits.max_output_bytes, Resource::Output)
    }

    /// Counts `steps` evaluation steps; fails once the render's total passes the limit.
    pub fn charge_steps(&self, steps: u64) -> Result<(), Exhausted> {
        charge(&self.steps, steps, self.limits.max_steps, Resource::Steps)
    }

    /// Whether `bytes` more output would still fit, without counting them (to refuse before
    /// allocating, e.g. an indent width or a repeat count).
    pub fn output_fits(&self, bytes: u64) -> Result<(), Exhausted> {
        let used = self.output.load(Ordering::Relaxed);
        if used.saturating_add(bytes) > self.limits.max_output_bytes {
            return Err(Exhausted { resource: Resource::Output, limit: self.limits.max_output_bytes });
        }
        Ok(())
    }

    /// Output bytes and steps used so far (for tests and `explain`).
    pub fn used(&self) -> (u64, u64) {
        (self.output.load(Ordering::Relaxed), self.steps.load(Ordering::Relaxed))
    }
}

fn charge(counter: &AtomicU64, amount: u64, limit: u64, resource: Resource) -> Result<(), Exhausted> {
    let before = counter.fetch_add(amount, Ordering::Relaxed);
    if before.saturating_add(amount) > limit {
        // Keep the counter past the limit, so every later charge fails too.
        counter.store(limit.saturating_add(1), Ordering::Relaxed);
        return Err(Exhausted { resource, limit });
    }
    Ok(())
}

/// CPU time this process has spent, all its threads together. Time limits count CPU time, never
/// the wall clock, so a busy machine (a CI runner with parallel jobs) cannot make a render fail.
pub fn process_cpu_time() -> std::time::Duration {
    cpu_clock::read(cpu_clock::Clock::Process)
}

/// CPU time the calling thread has spent (see [`process_cpu_time`]).
pub fn thread_cpu_time() -> std::time::Duration {
    cpu_clock::read(cpu_clock::Clock::Thread)
}

#[cfg(target_os = "linux")]
mod cpu_clock {
    use nix::time::{clock_gettime, ClockId};
    use std::time::Duration;

    pub enum Clock {
        Process,
        Thread,
    }

    pub fn read(clock: Clock) -> Duration {
        let id = match clock {
            Clock::Process => ClockId::CLOCK_PROCESS_CPUTIME_ID,
            Clock::Thread => ClockId::CLOCK_THREAD_CPUTIME_ID,
        };
        // Linux always has both clocks; were one refused, no time would be counted rather
        // than all of it.
        clock_gettime(id).map(Duration::from).unwrap_or_default()
    }
}

/// Elsewhere the wall clock since the first reading stands in: the project builds and tests on
/// Linux, and its image is Linux.
#[cfg(not(target_os = "linux"))]
mod cpu_clock {
    use std::sync::OnceLock;
    use std::time::{Duration, Instant};

    pub enum Clock {
        Process,
        Thread,
    }

    pub fn read(_clock: Clock) -> Duration {
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed()
    }
}

/// `8 MiB`, `300 KiB`, `12 bytes`: sizes as the flags take them.
pub fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// Reads `--max-input-size`: a size no larger than what the YAML reader takes.
pub fn parse_input_size(text: &str) -> Result<u64, String> {
    let size = parse_size(text)?;
    if size > MAX_INPUT_BYTES {
        return Err(format!(
            "{text:?} is more than the YAML reader takes in one stream ({}): split the package",
            human_bytes(MAX_INPUT_BYTES)
        ));
    }
    Ok(size)
}

/// Reads a CPU time flag: `10s`, `90s`, `2m`, or seconds alone (`10`).
pub fn parse_cpu_time(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let number: u64 = number.parse().map_err(|_| format!("{text:?} is not a CPU time: write e.g. 10s or 2m"))?;
    let seconds = match unit.trim() {
        "" | "s" => Some(number),
        "m" => number.checked_mul(60),
        other => return Err(format!("{other:?} is not a time unit: use s or m")),
    };
    match seconds {
        Some(0) => Err("a CPU time must be at least 1s".into()),
        Some(seconds) => Ok(std::time::Duration::from_secs(seconds)),
        None => Err(format!("{text:?} is too large")),
    }
}

/// Reads a size flag: `8Mi`, `8MiB`, `512Ki`, `1Gi`, `100000` (bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("{text:?} is not a size: write e.g. 8Mi, 512Ki or 1Gi"))?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "Ki" | "KiB" | "K" | "k" => 10,
        "Mi" | "MiB" | "M" => 20,
        "Gi" | "GiB" | "G" => 30,
        other => return Err(format!("{other:?} is not a size unit: use Ki, Mi or Gi")),
    };
    number.checked_mul(1 << shift).ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_clocks_are_monotonic() {
        let (process, thread) = (process_cpu_time(), thread_cpu_time());
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(x != 1);
        assert!(process_cpu_time() >= process && thread_cpu_time() >= thread);
    }

    #[test]
    fn one_budget_counts_every_charge() {
        let budget = Budget::new(Limits { max_output_bytes: 10, max_steps: 3, ..Limits::default() });
        assert!(budget.charge_output(6).is_ok());
        assert!(budget.charge_output(4).is_ok());
        assert_eq!(budget.charge_output(1).unwrap_err().resource, Resource::Output);
        assert!(budget.charge_output(0).is_err(), "once exhausted, always exhausted");
        assert!(budget.charge_steps(3).is_ok());
        assert!(budget.charge_steps(1).is_err());
    }

    #[test]
    fn sizes_read_as_the_flags_write_them() {
        assert_eq!(parse_size("8Mi"), Ok(8 << 20));
        assert_eq!(parse_size("512Ki"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("8 parsecs").is_err());
        assert_eq!(human_bytes(8 << 20), "8 MiB");
    }
}
