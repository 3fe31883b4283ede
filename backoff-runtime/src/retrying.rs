//! The loops with everything `#[retry]` can say: [`Policy::retrying`] and
//! [`Policy::retrying_async`] build a [`Retrying`] call, to which you add a
//! `when` on errors, a `when_ok` on `Ok` values, `on_retry` and `on_giveup`
//! hooks, a shared [`RetryBudget`], a [`CircuitBreaker`], and (async) a
//! whole-call `timeout`; then run it.
//!
//! ```
//! use backoff_runtime::{Decision, GiveUpReason, Policy};
//! use std::cell::Cell;
//!
//! #[derive(Debug, PartialEq)]
//! struct Response { status: u16 }
//!
//! let calls = Cell::new(0);
//! let reason = Cell::new(None);
//! let result: Result<Response, std::io::Error> = Policy::immediate()
//!     .attempts(3)
//!     .retrying(|| {
//!         calls.set(calls.get() + 1);
//!         Ok(Response { status: 503 }) // a 503 comes back as `Ok`
//!     })
//!     .when_ok(|r| r.status == 503)
//!     .on_giveup(|_outcome, g| reason.set(Some(g.reason)))
//!     .call();
//! assert_eq!(result.unwrap(), Response { status: 503 }); // the last `Ok`, unchanged
//! assert_eq!(calls.get(), 3);
//! assert_eq!(reason.get(), Some(GiveUpReason::Attempts));
//! ```
//!
//! The hook traits and their defaults live in [`hooks`](crate::hooks),
//! shared with hedged calls.

use core::marker::PhantomData;
use core::time::Duration;

use core::ops::ControlFlow;

use crate::budget::RetryBudget;
use crate::cancel::{Cancel, Cancelled};
use crate::circuit::{CircuitBreaker, CircuitOpen};
use crate::clock::{self, Clock};
use crate::control::{Budget, Circuit, Throttle};
#[cfg(doc)]
use crate::decision::Decision;
use crate::decision::IntoDecision;
use crate::driver::{self, Hooks, Lazy, NoTrace, Origin};
use crate::event::{RetryEvent, SuccessEvent};
use crate::hooks::{Defaults, HookSet};
use crate::policy::Policy;
use crate::record::Recording;
use crate::report::GiveUp;
#[cfg(doc)]
use crate::report::GiveUpReason;
use crate::state::RetryState;
use crate::strategy::Strategy;
use crate::throttle::{AdaptiveThrottle, Rejected};
use crate::timeout::Elapsed;

use crate::hooks::{AcceptAll, Classify, Fallback, NoHook, OnGiveUp, OnRetry, OnSuccess, RetryAll};

/// A call to retry, with its hooks: built by [`Policy::retrying`] (a
/// blocking operation, run by [`call`](Retrying::call)) or
/// [`Policy::retrying_async`] (an async one, run by
/// [`call_async`](Retrying::call_async)).
///
/// The type parameters are the policy's strategy `S`, the operation `Op`,
/// its `Ok` and error types `T` and `E`, and the hooks given so far; you
/// never need to name them.
#[must_use = "a `Retrying` does nothing until you `call` it"]
pub struct Retrying<
    'p,
    S,
    Op,
    T,
    E,
    W = RetryAll,
    K = AcceptAll,
    N = NoHook,
    G = NoHook,
    L = NoHook,
    U = NoHook,
    C = NoCancel,
> {
    policy: &'p Policy<S>,
    op: Op,
    hooks: HookSet<W, K, N, NoHook, G, L>,
    budget: Option<&'p RetryBudget>,
    circuit: Option<Breaker<'p, E>>,
    throttle: Option<Throttling<'p, E>>,
    timeout: Option<Deadline<E>>,
    on_success: U,
    cancel: C,
    outcome: PhantomData<fn() -> Result<T, E>>,
}

/// The `cancel` of a [`Retrying`] call that was given none.
#[derive(Debug, Clone, Copy)]
pub struct NoCancel;

/// A whole-call timeout and how it becomes the call's error.
type Deadline<E> = (Duration, fn(Elapsed) -> E);

/// A breaker and how a refusal becomes the call's error.
type Breaker<'p, E> = (&'p CircuitBreaker, fn(CircuitOpen) -> E);

/// A throttle and how a local rejection becomes the call's error.
type Throttling<'p, E> = (&'p AdaptiveThrottle, fn(Rejected) -> E);

impl<S> Policy<S> {
    /// A blocking call of `op` under this policy, to which you may add
    /// hooks before running it with [`call`](Retrying::call). Without
    /// hooks, the same as [`retry`](Policy::retry).
    ///
    /// ```
    /// use backoff_runtime::{Decision, Policy};
    ///
    /// let mut calls = 0;
    /// let result: Result<(), u32> = Policy::immediate()
    ///     .attempts(5)
    ///     .retrying(|| { calls += 1; Err(calls) })
    ///     .when(|e| if *e < 2 { Decision::Retry } else { Decision::Stop })
    ///     .call();
    /// assert_eq!(result, Err(2));
    /// ```
    pub fn retrying<T, E, Op>(&self, op: Op) -> Retrying<'_, S, Op, T, E>
    where
        Op: FnMut() -> Result<T, E>,
    {
        Retrying::new(self, op)
    }

    /// An async call of `op` under this policy, to which you may add hooks
    /// (and a [`timeout`](Retrying::timeout)) before running it with
    /// [`call_async`](Retrying::call_async). Sleeps with `tokio::time::sleep`.
    ///
    /// ```
    /// use backoff_runtime::{Elapsed, GiveUpReason, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let mut reason = None;
    /// let result: std::io::Result<()> = Policy::constant(Duration::from_secs(1))
    ///     .unlimited_attempts()
    ///     .retrying_async(async || Err(std::io::Error::other("down")))
    ///     .timeout(Duration::from_millis(2500))
    ///     .on_giveup(|_, g| reason = Some(g.reason))
    ///     .call_async()
    ///     .await;
    /// assert_eq!(result.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
    /// assert_eq!(reason, Some(GiveUpReason::Timeout));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    pub fn retrying_async<T, E, Op>(&self, op: Op) -> Retrying<'_, S, Op, T, E>
    where
        Op: AsyncFnMut() -> Result<T, E>,
    {
        Retrying::new(self, op)
    }
}

impl<'p, S, Op, T, E> Retrying<'p, S, Op, T, E> {
    fn new(policy: &'p Policy<S>, op: Op) -> Self {
        Retrying {
            policy,
            op,
            hooks: Defaults::new(),
            budget: None,
            circuit: None,
            throttle: None,
            timeout: None,
            on_success: NoHook,
            cancel: NoCancel,
            outcome: PhantomData,
        }
    }
}

/// Builders that each give a [`Retrying`] call one hook: `name(F: bound)
/// -> [..]` takes an `F` and returns the call with the hook type
/// parameters listed (`F` in that hook's place), with the docs written
/// above it.
macro_rules! hook_builders {
    ($($(#[$a:meta])* $name:ident$(<$d:ident: $b:path>)?(F: $($f:tt)+) -> [$($p:ident),*];)*) => {$(
        $(#[$a])*
        pub fn $name<$($d,)? F>(self, f: F) -> Retrying<'p, S, Op, T, E, $($p),*>
        where
            F: $($f)+,
            $($d: $b,)?
        {
            self.with_hooks(|hooks| hooks.$name(f), |rest| rest)
        }
    )*};
}

impl<'p, S, Op, T, E, W, K, N, G, L, U, C> Retrying<'p, S, Op, T, E, W, K, N, G, L, U, C> {
    /// The same call with its hooks mapped by `f` and its `on_success` hook
    /// and token by `rest`: what each builder changes, the rest kept.
    #[inline]
    fn with_hooks<W2, K2, N2, G2, L2, U2, C2>(
        self,
        f: impl FnOnce(HookSet<W, K, N, NoHook, G, L>) -> HookSet<W2, K2, N2, NoHook, G2, L2>,
        rest: impl FnOnce((U, C)) -> (U2, C2),
    ) -> Retrying<'p, S, Op, T, E, W2, K2, N2, G2, L2, U2, C2> {
        let (on_success, cancel) = rest((self.on_success, self.cancel));
        Retrying {
            policy: self.policy,
            op: self.op,
            hooks: f(self.hooks),
            budget: self.budget,
            circuit: self.circuit,
            throttle: self.throttle,
            timeout: self.timeout,
            on_success,
            cancel,
            outcome: PhantomData,
        }
    }

    /// Stops the call when `token` is cancelled: a cancel during a sleep
    /// ends it at once (a blocking call waits on the token rather than in
    /// `std::thread::sleep`), no further attempt runs, and the call returns
    /// the last attempt's outcome (reason
    /// [`Cancelled`](GiveUpReason::Cancelled); `on_giveup` and `fallback`
    /// see it). A token cancelled before the first attempt fails the call
    /// with `E::from(Cancelled)` without running `op`. An attempt in flight
    /// is never interrupted. While a token is given, the outcome of a
    /// failed attempt is kept during the sleep (an async call's future
    /// holds it across the await).
    ///
    /// ```
    /// use backoff_runtime::{CancelToken, GiveUpReason, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let token = CancelToken::new();
    /// let canceller = token.clone();
    /// tokio::spawn(async move {
    ///     tokio::time::sleep(Duration::from_secs(5)).await;
    ///     canceller.cancel(); // a shutdown
    /// });
    /// let start = tokio::time::Instant::now();
    /// let mut reason = None;
    /// let result: std::io::Result<()> = Policy::constant(Duration::from_secs(60))
    ///     .retrying_async(async || Err(std::io::Error::other("down")))
    ///     .on_giveup(|_, g| reason = Some(g.reason))
    ///     .cancel(&token)
    ///     .call_async()
    ///     .await;
    /// assert_eq!(result.unwrap_err().to_string(), "down"); // the last outcome
    /// assert_eq!(reason, Some(GiveUpReason::Cancelled));
    /// assert_eq!(start.elapsed(), Duration::from_secs(5)); // not 60
    /// # }
    /// ```
    pub fn cancel<X: Cancel + ?Sized>(
        self,
        token: &'p X,
    ) -> Retrying<'p, S, Op, T, E, W, K, N, G, L, U, &'p X>
    where
        E: From<Cancelled>,
    {
        self.with_hooks(|hooks| hooks, |(on_success, _)| (on_success, token))
    }

    hook_builders! {
        /// Which errors to retry: `f` returns `bool` (`true` retries) or a
        /// [`Decision`]. Without it, every error is retried.
        when<D: IntoDecision>(F: FnMut(&E) -> D) -> [F, K, N, G, L, U, C];

        /// Which `Ok` values to retry like errors (a 503 an HTTP client returns
        /// as `Ok`): `true`, [`Decision::Retry`], `RetryAfter(d)` or `Throttled`
        /// retry it; `false` or [`Decision::Stop`] accept it. On giving up, the
        /// last `Ok` value is returned unchanged.
        when_ok<D: IntoDecision>(F: FnMut(&T) -> D) -> [W, F, N, G, L, U, C];

        /// Called after each failed attempt that will be retried, before
        /// sleeping, with the outcome (an error, or an `Ok` that `when_ok`
        /// rejected) and the [`RetryEvent`].
        on_retry(F: FnMut(&Result<T, E>, &RetryEvent)) -> [W, K, F, G, L, U, C];

        /// Called once when the call ends with an outcome it did not accept,
        /// just before returning it, with the [`GiveUp`] report (calls made,
        /// time since the call began, the [`GiveUpReason`]). Never called on
        /// success. Giving it reads the clock when the call begins.
        on_giveup(F: FnOnce(&Result<T, E>, &GiveUp)) -> [W, K, N, F, L, U, C];

        /// The call's result when it gives up with an error: `f` gets that
        /// error and the [`GiveUp`] report, after `on_giveup` has seen them,
        /// and returns the result (a cached value, a default, another error).
        /// Never called on success, nor on an `Ok` that `when_ok` rejected
        /// (which is returned unchanged). Called for every way of giving up:
        /// attempts spent, `Stop`, a budget or deadline, an open breaker, a
        /// throttle's rejection, a timeout.
        ///
        /// ```
        /// use backoff_runtime::{GiveUpReason, Policy};
        ///
        /// let price: Result<u32, &str> = Policy::immediate()
        ///     .attempts(3)
        ///     .retrying(|| Err("unavailable"))
        ///     .fallback(|e, g| {
        ///         assert_eq!((e, g.attempts, g.reason), ("unavailable", 3, GiveUpReason::Attempts));
        ///         Ok(42) // the last known price
        ///     })
        ///     .call();
        /// assert_eq!(price, Ok(42));
        /// ```
        fallback(F: FnOnce(E, &GiveUp) -> Result<T, E>) -> [W, K, N, G, F, U, C];
    }

    /// Called once when the call returns an `Ok` it accepted (that
    /// `when_ok`, if given, did not retry), with the value and a
    /// [`SuccessEvent`]: the attempts it took and the time since the call
    /// began. Never called when the call gives up, also not for a
    /// [`fallback`](Retrying::fallback)'s value. Giving it reads the clock
    /// when the call begins.
    pub fn on_success<F>(self, f: F) -> Retrying<'p, S, Op, T, E, W, K, N, G, L, F, C>
    where
        F: FnOnce(&T, &SuccessEvent),
    {
        self.with_hooks(|hooks| hooks, |(_, cancel)| (f, cancel))
    }

    /// Shares a [`RetryBudget`] (or any [`Budget`], such as a fleet's
    /// shared one): each retry spends a token, each success deposits; with
    /// none left the call gives up (reason [`Budget`](GiveUpReason::Budget)).
    pub fn budget(mut self, budget: &'p (impl Budget + ?Sized)) -> Self {
        self.budget = Some(budget.as_budget());
        self
    }

    /// Puts the call behind a [`CircuitBreaker`] (or any [`Circuit`], such
    /// as a fleet's shared one): while it is open, the call fails fast with
    /// `E::from(CircuitOpen)` without running `op`.
    pub fn circuit(mut self, circuit: &'p (impl Circuit + ?Sized)) -> Self
    where
        E: From<CircuitOpen>,
    {
        self.circuit = Some((circuit.as_circuit(), E::from));
        self
    }

    /// Puts the call behind client-side [`AdaptiveThrottle`]ing (or any
    /// [`Throttle`], such as a fleet's shared one): before each
    /// attempt the throttle may reject it locally, and the call then fails
    /// fast with `E::from(Rejected)` without running `op` (reason
    /// [`Rejected`](GiveUpReason::Rejected)). An attempt counts as accepted
    /// by the backend when it succeeds or `when` says
    /// [`Stop`](Decision::Stop).
    ///
    /// ```
    /// use backoff_runtime::{AdaptiveThrottle, Policy};
    /// use std::time::Duration;
    ///
    /// static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
    /// let policy = Policy::immediate().attempts(3);
    /// // A backend rejecting everything: 100 calls of up to 3 attempts
    /// // each, but the throttle keeps most of them local.
    /// let mut sent = 0;
    /// for _ in 0..100 {
    ///     let result: std::io::Result<()> = policy
    ///         .retrying(|| { sent += 1; Err(std::io::Error::other("overloaded")) })
    ///         .throttle(&THROTTLE)
    ///         .call();
    ///     assert!(result.is_err());
    /// }
    /// assert!(sent < 60, "{sent} attempts reached the backend, of up to 300");
    /// ```
    pub fn throttle(mut self, throttle: &'p (impl Throttle + ?Sized)) -> Self
    where
        E: From<Rejected>,
    {
        self.throttle = Some((throttle.as_throttle(), E::from));
        self
    }

    /// Bounds the whole call, the attempt in flight and the sleeps included
    /// (async only): when `limit` passes, the attempt is cancelled and the
    /// call returns `E::from(Elapsed)` (reason
    /// [`Timeout`](GiveUpReason::Timeout)).
    #[cfg(feature = "tokio")]
    pub fn timeout(mut self, limit: Duration) -> Self
    where
        E: From<Elapsed>,
        Op: AsyncFnMut() -> Result<T, E>,
    {
        self.timeout = Some((limit, E::from));
        self
    }
}

#[allow(private_bounds)] // (`Token`: none, or a `Cancel`)
impl<'p, S, Op, T, E, W, K, N, G, L, U, C> Retrying<'p, S, Op, T, E, W, K, N, G, L, U, C>
where
    L: Fallback<T, E>,
    S: Strategy,
    W: Classify<E>,
    K: Classify<T>,
    N: OnRetry<T, E>,
    G: OnGiveUp<T, E>,
    U: OnSuccess<T>,
    C: Token<T, E>,
{
    /// Runs a blocking call: calls `op` until it succeeds, the policy gives
    /// up or the token, if any, is cancelled, sleeping with
    /// [`std::thread::sleep`] in between (with a token, waiting on it: see
    /// [`cancel`](Retrying::cancel)).
    pub fn call(self) -> Result<T, E>
    where
        Op: FnMut() -> Result<T, E>,
    {
        let cancel = self.cancel;
        let (mut run, mut op, on_success) = self.run(clock::system);
        if let Some(error) = cancel.refused() {
            return run.give_up(true, Err(error));
        }
        loop {
            if let Err(refused) = run.before_attempt() {
                return refused;
            }
            run.recording.attempt_starts();
            match run.after::<C::Keep>(op()) {
                ControlFlow::Continue((delay, kept)) => {
                    if let Some(outcome) = cancel.wait(delay, kept) {
                        return run.give_up(true, outcome);
                    }
                }
                ControlFlow::Break(outcome) => return run.ended(outcome, on_success),
            }
        }
    }

    /// Runs an async call: awaits `op()` until it succeeds, the policy gives
    /// up, the [`timeout`](Retrying::timeout) passes or the token, if any, is
    /// cancelled, sleeping with `tokio::time::sleep` in between (with a
    /// token, racing it: see [`cancel`](Retrying::cancel)). Dropping the
    /// future cancels it cleanly, at any await point.
    #[cfg(feature = "tokio")]
    pub async fn call_async(self) -> Result<T, E>
    where
        Op: AsyncFnMut() -> Result<T, E>,
    {
        let (timeout, cancel) = (self.timeout, self.cancel);
        let (mut run, mut op, on_success) = self.run(clock::for_async());
        if let Some(error) = cancel.refused() {
            return run.give_up(true, Err(error));
        }
        let mut calls = 0u32;
        let attempts = async {
            loop {
                if let Err(refused) = run.before_attempt() {
                    return refused;
                }
                calls = calls.saturating_add(1);
                run.recording.attempt_starts();
                match run.after::<C::Keep>(op().await) {
                    ControlFlow::Continue((delay, kept)) => {
                        if let Some(outcome) = cancel.sleep(delay, kept).await {
                            return run.give_up(true, outcome);
                        }
                    }
                    ControlFlow::Break(outcome) => return outcome,
                }
            }
        };
        match bounded(timeout, attempts).await {
            Ok(outcome) => run.ended(outcome, on_success),
            Err(elapsed) => run.timed_out(calls, elapsed),
        }
    }

    /// The call's driver, built when it begins; and the operation.
    #[allow(clippy::type_complexity)] // (one type parameter per hook)
    fn run(self, clock: Clock) -> (Call<'p, S, T, E, W, K, N, G, L>, Op, U) {
        let timed =
            HookSet::<W, K, N, NoHook, G, L>::timed::<T, E>() || U::GIVEN || self.timeout.is_some();
        let began = driver::began(self.policy, clock, timed);
        let run = Run {
            slot: None,
            recording: Recording::begin(self.policy.name(), clock),
            start: Origin::at(self.policy, clock, began, self.budget),
            circuit: self.circuit,
            throttle: self.throttle,
            hooks: (self.hooks).map_on_retry(|hook| Within(hook, self.timeout.map(|(t, _)| t))),
            outcome: PhantomData,
        };
        (run, self.op, self.on_success)
    }
}

/// What a [`Retrying`] call waits on between attempts: nothing
/// ([`NoCancel`]), or the token given to [`cancel`](Retrying::cancel),
/// which is asked before the first attempt and waited on in each sleep.
pub(crate) trait Token<T, E>: Copy {
    /// What the call keeps of a retry's outcome across its sleep: nothing
    /// without a token; with one, the outcome, which a cancel returns.
    type Keep: driver::Keep<T, E>;
    /// The call's error if the token was cancelled before the first attempt.
    fn refused(self) -> Option<E>;
    /// Sleeps `delay` (blocking): the outcome `kept` if the token was
    /// cancelled.
    fn wait(self, delay: Duration, kept: Self::Keep) -> Option<Result<T, E>>;
    /// [`wait`](Token::wait), async.
    #[cfg(feature = "tokio")]
    fn sleep(
        self,
        delay: Duration,
        kept: Self::Keep,
    ) -> impl Future<Output = Option<Result<T, E>>>;
}

impl<T, E> Token<T, E> for NoCancel {
    type Keep = ();
    fn refused(self) -> Option<E> {
        None
    }
    fn wait(self, delay: Duration, (): ()) -> Option<Result<T, E>> {
        crate::sleep::blocking(delay);
        None
    }
    #[cfg(feature = "tokio")]
    async fn sleep(self, delay: Duration, (): ()) -> Option<Result<T, E>> {
        if !delay.is_zero() {
            ::tokio::time::sleep(delay).await;
        }
        None
    }
}

impl<T, E: From<Cancelled>, X: Cancel + ?Sized> Token<T, E> for &X {
    type Keep = Result<T, E>;
    fn refused(self) -> Option<E> {
        self.is_cancelled().then(|| E::from(Cancelled))
    }
    fn wait(self, delay: Duration, kept: Result<T, E>) -> Option<Result<T, E>> {
        // (A zero delay only asks.)
        (self.is_cancelled() || !delay.is_zero() && self.wait_timeout(delay)).then_some(kept)
    }
    #[cfg(feature = "tokio")]
    async fn sleep(self, delay: Duration, kept: Result<T, E>) -> Option<Result<T, E>> {
        let cancelled = if delay.is_zero() {
            self.is_cancelled()
        } else {
            crate::cancel::race(self.cancelled(), ::tokio::time::sleep(delay)).await
        };
        cancelled.then_some(kept)
    }
}

/// `attempts` under the whole call's `timeout`, if any: `Err` with the
/// call's error when it passed.
#[cfg(feature = "tokio")]
async fn bounded<T, E>(
    timeout: Option<Deadline<E>>,
    attempts: impl Future<Output = Result<T, E>>,
) -> Result<Result<T, E>, E> {
    let Some((limit, from)) = timeout else {
        return Ok(attempts.await);
    };
    ::tokio::time::timeout(limit, attempts)
        .await
        .map_err(|_| from(Elapsed))
}

/// A `Retrying` call's driver.
type Call<'p, S, T, E, W, K, N, G, L> = Run<'p, S, T, E, HookSet<W, K, Within<N>, NoHook, G, L>>;

/// An `on_retry` hook of a call under a whole-call `timeout` (if given):
/// its event's time left counts to the nearer of its end and the policy's
/// deadline.
struct Within<N>(N, Option<Duration>);

impl<T, E, N: OnRetry<T, E>> OnRetry<T, E> for Within<N> {
    const TIMED: bool = N::TIMED;
    #[inline]
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent) {
        let event = self.1.map_or(*event, |timeout| event.within(timeout));
        self.0.on_retry(outcome, &event);
    }
}

/// One call's driver: its state (built at its first failure, or before
/// its first attempt behind a breaker or throttle) and what it is built
/// from, its breaker and throttle and how their refusals become its error,
/// and its hooks.
struct Run<'p, S, T, E, H> {
    slot: Option<RetryState<'p, S>>,
    start: Origin<'p, S>,
    circuit: Option<Breaker<'p, E>>,
    throttle: Option<Throttling<'p, E>>,
    recording: Recording,
    hooks: H,
    outcome: PhantomData<fn() -> T>,
}

impl<'p, S: Strategy, T, E, H: Hooks<T, E>> Run<'p, S, T, E, H> {
    /// The call's result, `outcome`, which `on_success` is told of if it is
    /// an `Ok` the call accepted (a call that gave up has a state, done).
    fn ended(&self, outcome: Result<T, E>, on_success: impl OnSuccess<T>) -> Result<T, E> {
        let slot = self.slot.as_ref();
        if let Ok(value) = &outcome
            && !slot.is_some_and(RetryState::is_done)
        {
            on_success.on_success(value, &self.start.success(slot));
        }
        outcome
    }

    /// After an attempt that ended with `outcome`: the driver's rule, a
    /// retry's outcome kept beside its delay as `K` says (by a call with a
    /// token, for its wait; see [`driver::Keep`]).
    fn after<K: driver::Keep<T, E>>(
        &mut self,
        outcome: Result<T, E>,
    ) -> ControlFlow<Result<T, E>, (Duration, K)> {
        let mut progress = Lazy {
            slot: &mut self.slot,
            start: &self.start,
        };
        let (hooks, recording) = (&mut self.hooks, &mut self.recording);
        driver::after_attempt(&mut progress, outcome, hooks, &NoTrace, recording)
    }

    /// The call gives up with `outcome`: its token was cancelled
    /// (`cancelled`), or its breaker or throttle refused an attempt.
    #[cold]
    fn give_up(&mut self, cancelled: bool, outcome: Result<T, E>) -> Result<T, E> {
        let progress = Lazy {
            slot: &mut self.slot,
            start: &self.start,
        };
        let (hooks, recording) = (&mut self.hooks, &mut self.recording);
        let report = || {
            if cancelled {
                driver::Progress::cancelled(&progress)
            } else {
                driver::Progress::report(&progress)
            }
        };
        driver::give_up(report, outcome, hooks, &NoTrace, recording, None)
    }

    /// The call's `timeout` passed after `calls` attempts began: it gives
    /// up with `error`.
    #[cfg(feature = "tokio")]
    #[cold]
    fn timed_out(&mut self, calls: u32, error: E) -> Result<T, E> {
        let report = || driver::timeout_report(calls, self.start.clock, self.start.began);
        let (hooks, recording) = (&mut self.hooks, &mut self.recording);
        driver::give_up(report, Err(error), hooks, &NoTrace, recording, None)
    }

    /// Asks the breaker and the throttle, if any, before an attempt: `Err`
    /// is the refused call's outcome, already reported to `on_giveup`.
    fn before_attempt(&mut self) -> Result<(), Result<T, E>> {
        let (circuit, throttle) = (self.circuit, self.throttle);
        if circuit.is_none() && throttle.is_none() {
            return Ok(());
        }
        let gates = (circuit.map(|c| c.0), throttle.map(|t| t.0));
        let state = (self.slot).get_or_insert_with(|| self.start.gated(gates.0, gates.1));
        let refusal = match (circuit, throttle) {
            (Some((_, from)), _) if let Err(open) = state.before_attempt() => from(open),
            (_, Some((_, from))) if let Err(rejected) = state.ask_throttle() => from(rejected),
            _ => return Ok(()),
        };
        Err(self.give_up(false, Err(refusal)))
    }
}
