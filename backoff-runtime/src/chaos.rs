use core::future::Future;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use core::time::Duration;

use crate::jobs::{GOLDEN_GAMMA, mix64};

/// Faults and latency to inject into a function's attempts, to see a
/// configuration act before production does (feature `chaos`, meant for
/// `[dev-dependencies]`): a `Chaos` makes a
/// share of attempts fail with an error of yours, or answer late, and
/// `#[retry(chaos = CHAOS)]` draws from it inside each attempt, before the
/// body. Every control and record after the attempt sees an injected
/// outcome as a real one: `when`, the kinds of `on(..)`, `attempt_timeout`
/// and `timeout`, the breaker, the budget, the throttle, hedging, the hooks
/// and the metrics.
///
/// ```
/// use backoff_runtime::{Chaos, retry};
/// use std::time::Duration;
///
/// #[derive(Debug, PartialEq)]
/// enum Error {
///     Unavailable,
/// }
///
/// /// A third of attempts fail; a tenth answer 50 ms late.
/// static CHAOS: Chaos<Error> = Chaos::new(7)
///     .fault(0.33, || Error::Unavailable)
///     .latency(0.1, Duration::from_millis(50));
///
/// #[retry(immediate, attempts = 10, chaos = CHAOS)]
/// async fn read() -> Result<u32, Error> {
///     Ok(1)
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// for _ in 0..100 {
///     assert_eq!(read().await, Ok(1)); // the retries absorb the faults
/// }
/// assert!(CHAOS.faults() > 20, "{}", CHAOS.faults());
/// # }
/// ```
///
/// # Repeatable
///
/// A `Chaos` draws from a counter-based generator seeded by
/// [`Chaos::new`]: the `n`-th draw of two `Chaos` of the same seed is the
/// same, so a sequence of calls meets the same injections on every run
/// (calls that run at once take their draws in the order they reach
/// them). A draw decides the latency and, apart, the fault: an attempt may
/// be delayed and then fail.
///
/// # Cost
///
/// Without `chaos = ..` nothing is drawn. With it, each attempt pays a
/// relaxed load of the switch, and while it is on an atomic add and a few
/// multiplications; a blocking function's latency is
/// `std::thread::sleep`, an `async fn`'s tokio's sleep (so tokio's paused
/// clock skips it in tests).
///
/// # Building one
///
/// Built in a `static` (every builder is `const`), given to `#[retry(chaos = NAME)]`, or wrapped around an
/// operation by hand with [`call`](Chaos::call) and
/// [`call_async`](Chaos::call_async).
///
/// ```
/// use backoff_runtime::{Chaos, Policy};
/// use std::time::Duration;
///
/// static CHAOS: Chaos<&'static str> = Chaos::new(1).fault(1.0, || "injected");
///
/// let policy = Policy::immediate().attempts(3);
/// let result: Result<u32, _> = policy.retry(|| CHAOS.call(|| Ok(1)));
/// assert_eq!(result, Err("injected"));
/// assert_eq!(CHAOS.faults(), 3);
/// ```
pub struct Chaos<E> {
    seed: u64,
    draws: AtomicU64,
    on: AtomicBool,
    /// The fault's share (of 2³²) and its error.
    fault: Option<(u64, fn() -> E)>,
    /// The latency's share (of 2³²) and its delay.
    latency: Option<(u64, Duration)>,
    faults: AtomicU64,
    delays: AtomicU64,
}

/// `rate` (0 to 1; anything else is clamped, NaN is 0) as a share of 2³².
const fn share(rate: f64) -> u64 {
    if rate >= 1.0 {
        1 << 32
    } else if rate > 0.0 {
        (rate * 4_294_967_296.0) as u64
    } else {
        0 // (NaN too)
    }
}

impl<E> Chaos<E> {
    /// Injects nothing yet, its draws seeded by `seed`; enabled.
    ///
    /// ```
    /// use backoff_runtime::Chaos;
    ///
    /// static QUIET: Chaos<()> = Chaos::new(42);
    /// assert_eq!(QUIET.call(|| Ok::<_, ()>(1)), Ok(1));
    /// ```
    pub const fn new(seed: u64) -> Self {
        Chaos {
            seed,
            draws: AtomicU64::new(0),
            on: AtomicBool::new(true),
            fault: None,
            latency: None,
            faults: AtomicU64::new(0),
            delays: AtomicU64::new(0),
        }
    }

    /// A share `rate` (0 to 1) of attempts fail with `make_error()`,
    /// without running the body.
    ///
    /// ```
    /// use backoff_runtime::Chaos;
    ///
    /// static HALF: Chaos<String> = Chaos::new(3).fault(0.5, || "down".to_string());
    /// let failed = (0..1000).filter(|_| HALF.call(|| Ok(())).is_err()).count();
    /// assert!((400..600).contains(&failed), "{failed}");
    /// ```
    pub const fn fault(mut self, rate: f64, make_error: fn() -> E) -> Self {
        self.fault = Some((share(rate), make_error));
        self
    }

    /// A share `rate` (0 to 1) of attempts start `delay` late (then run,
    /// or fail if [`fault`](Chaos::fault) draws them too).
    ///
    /// ```
    /// use backoff_runtime::Chaos;
    /// use std::time::Duration;
    ///
    /// static SLOW: Chaos<()> = Chaos::new(3).latency(1.0, Duration::from_millis(1));
    /// assert_eq!(SLOW.call(|| Ok::<_, ()>(1)), Ok(1)); // 1 ms late
    /// assert!(format!("{SLOW:?}").contains("delays: 1"));
    /// ```
    pub const fn latency(mut self, rate: f64, delay: Duration) -> Self {
        self.latency = Some((share(rate), delay));
        self
    }

    /// Whether it injects at first (see [`set_enabled`](Chaos::set_enabled)).
    ///
    /// ```
    /// use backoff_runtime::Chaos;
    ///
    /// static OFF: Chaos<()> = Chaos::new(3).fault(1.0, || ()).enabled(false);
    /// assert_eq!(OFF.call(|| Ok::<_, ()>(1)), Ok(1));
    /// OFF.set_enabled(true);
    /// assert_eq!(OFF.call(|| Ok::<_, ()>(1)), Err(()));
    /// ```
    pub const fn enabled(mut self, on: bool) -> Self {
        self.on = AtomicBool::new(on);
        self
    }

    /// Turns injection on or off from now on (a switch a test flips to see
    /// the configuration recover).
    pub fn set_enabled(&self, on: bool) {
        self.on.store(on, Relaxed);
    }

    /// The faults injected so far.
    pub fn faults(&self) -> u64 {
        self.faults.load(Relaxed)
    }

    /// The latencies injected so far. (For the crate's tests.)
    #[doc(hidden)]
    pub fn delays(&self) -> u64 {
        self.delays.load(Relaxed)
    }

    /// The next draw: the latency to add, and the fault to fail with
    /// (`None` while disabled: nothing drawn).
    fn draw(&self) -> Option<(Option<Duration>, Option<E>)> {
        if !self.on.load(Relaxed) {
            return None;
        }
        let n = self.draws.fetch_add(1, Relaxed);
        let x = mix64(self.seed ^ mix64(n.wrapping_add(GOLDEN_GAMMA)));
        let drawn = |share: u64, bits: u64| (bits >> 32) < share;
        let late = self.latency.filter(|(share, _)| drawn(*share, x));
        let fault = self.fault.filter(|(share, _)| drawn(*share, mix64(x)));
        self.delays.fetch_add(u64::from(late.is_some()), Relaxed);
        self.faults.fetch_add(u64::from(fault.is_some()), Relaxed);
        Some((late.map(|(_, delay)| delay), fault.map(|(_, make)| make())))
    }

    /// Runs `f` as an attempt under chaos: after the drawn latency
    /// (`std::thread::sleep`), fails with the drawn fault without running
    /// `f`, or runs it.
    pub fn call<T>(&self, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        self.blocking().map_or_else(f, Err)
    }

    /// [`call`](Chaos::call) for a future: the latency is tokio's sleep.
    ///
    /// ```
    /// use backoff_runtime::Chaos;
    ///
    /// static CHAOS: Chaos<()> = Chaos::new(3).fault(1.0, || ());
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// assert_eq!(CHAOS.call_async(async { Ok::<u32, ()>(1) }).await, Err(()));
    /// # }
    /// ```
    pub async fn call_async<T>(&self, f: impl Future<Output = Result<T, E>>) -> Result<T, E> {
        match self.attempt().await {
            Some(error) => Err(error),
            None => f.await,
        }
    }

    /// Draws for a blocking attempt: sleeps the latency, returns the fault.
    pub(crate) fn blocking(&self) -> Option<E> {
        let (late, fault) = self.draw()?;
        if let Some(delay) = late {
            std::thread::sleep(delay);
        }
        fault
    }

    /// Draws for an async attempt: sleeps the latency, returns the fault.
    pub(crate) async fn attempt(&self) -> Option<E> {
        let (late, fault) = self.draw()?;
        if let Some(delay) = late {
            tokio::time::sleep(delay).await;
        }
        fault
    }
}

impl<E> core::fmt::Debug for Chaos<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Chaos")
            .field("seed", &self.seed)
            .field("enabled", &self.on.load(Relaxed))
            .field(
                "fault",
                &self.fault.map(|(share, _)| share as f64 / 4_294_967_296.0),
            )
            .field("latency", &self.latency)
            .field("faults", &self.faults())
            .field("delays", &self.delays())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(chaos: &Chaos<u32>) -> Vec<Result<(), u32>> {
        (0..64).map(|_| chaos.call(|| Ok(()))).collect()
    }

    /// The same seed gives the same injections; another seed others; the
    /// shares are what was asked.
    #[test]
    fn a_seed_gives_one_sequence() {
        let chaos = || Chaos::new(11).fault(0.5, || 7);
        let (a, b) = (outcomes(&chaos()), outcomes(&chaos()));
        assert_eq!(a, b);
        assert_ne!(a, outcomes(&Chaos::new(12).fault(0.5, || 7)));
        let many = Chaos::new(5).fault(0.2, || 1).latency(0.1, Duration::ZERO);
        for _ in 0..10_000 {
            let _ = many.call(|| Ok::<(), u32>(()));
        }
        assert!((1_800..2_200).contains(&many.faults()), "{many:?}");
        assert!((800..1_200).contains(&many.delays()), "{many:?}");
    }

    #[test]
    fn shares_clamp() {
        assert_eq!(
            [share(-1.0), share(f64::NAN), share(0.5), share(2.0)],
            [0, 0, 1 << 31, 1 << 32]
        );
        let never = Chaos::new(1).fault(0.0, || 1);
        let always = Chaos::new(1).fault(1.0, || 1);
        assert!(outcomes(&never).iter().all(Result::is_ok));
        assert!(outcomes(&always).iter().all(Result::is_err));
    }
}
