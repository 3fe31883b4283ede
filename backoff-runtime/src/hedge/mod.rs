use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use core::task::{Context, Poll};
use core::time::Duration;
use pin_project_lite::pin_project;

use crate::budget::RetryBudget;
use crate::circuit::{CircuitBreaker, CircuitOpen};
use crate::clock;
use crate::control::{Budget, Circuit};
use crate::decision::Decision;
use crate::driver::{self, Hooks, Lazy, NoTrace, Origin, Progress, Trace, verdict};
use crate::event::{AttemptContext, AttemptKind, RetryEvent, SuccessEvent};
use crate::hooks::{
    AcceptAll, Classify, Defaults, HookSet, NoHook, OnGiveUp, OnHedge, OnRetry, OnSuccess, RetryAll,
};
use crate::policy::Policy;
use crate::record::{HedgedRecording, Recording, Records};
use crate::report::GiveUpReason;
use crate::state::RetryState;
use crate::strategy::Strategy;
#[cfg(doc)]
use crate::{GiveUp, decision::IntoDecision};

mod call;
mod delay;
mod op;
mod slots;

use call::*;
pub use delay::{HedgeDelay, Latency};
#[doc(hidden)]
pub use op::{Cancellable, WithContext};
use op::{HedgeOp, NoCircuit, Refuse};
use slots::*;

/// A hedged call, before its operation is given: built by
/// [`Policy::hedge_async`], with the hooks of [`Retrying`](crate::Retrying)
/// (`when`, `when_ok`, `on_retry`, `on_giveup`, `on_success`; see [`hooks`](crate::hooks)),
/// its own `on_hedge`, a budget and a breaker; [`call`](Hedge::call) gives
/// the operation and makes the future.
///
/// Under a [breaker](Hedge::circuit), dropping the call unfinished counts
/// at most one failure (the attempt running first's, as an unhedged call's
/// cancellation), whatever the attempts in flight; a loser dropped because
/// another attempt won counts nothing.
///
/// The rule: attempt 1 starts at once; while no attempt has given an
/// accepted outcome, attempt k+1 starts the hedge delay after attempt k
/// (an [`AttemptKind::Hedge`]), or at once when an attempt in flight fails
/// with an error `when` would retry (an [`AttemptKind::Retry`]). The
/// policy's attempt limit bounds all the attempts started. The first
/// accepted outcome is returned and the attempts still in flight are
/// dropped (cancelled). A [`Decision::Stop`] ends the call at once, with
/// its error. When every attempt failed, the last error is returned.
///
/// Each attempt after the first is a step of the call's [`RetryState`],
/// through the same driver as every retry loop of this crate: it needs the
/// attempt limit and `max_elapsed` to allow it, an open [`CircuitBreaker`]
/// refuses it (and each attempt holds a permit of its own: a cancelled
/// loser's permit is released, it counts as nothing), and a [`RetryBudget`]
/// must pay a token for it (a success deposits). Once a hedge is refused,
/// no other starts: the call waits for the attempts in flight. The
/// policy's schedule is not slept: give [`Policy::immediate`] with the
/// attempt limit (a schedule's delay still counts against `max_elapsed`).
///
/// The hooks are every call's ([`hooks`](crate::hooks)): `when`,
/// `when_ok`, `on_giveup`, [`on_success`](Hedge::on_success) (once, on the
/// accepted `Ok`, with the attempts started), and two told of the attempts
/// after the first:
/// [`on_retry`](Hedge::on_retry), with the outcome, when a failure (or an
/// `Ok` that `when_ok` rejected) starts the next attempt at once, and
/// [`on_hedge`](Hedge::on_hedge) when the delay starts one.
///
/// A verdict of [`Decision::RetryAfter`] or [`Decision::Throttled`] is
/// taken as [`Decision::Retry`] would be, its delay not slept: the next
/// attempt starts at once (within the throttled schedule's limit, if the
/// policy has one). The recorder (feature `record`) is told each
/// attempt that ended by its [`AttemptKind`] (`attempt.type`: `original`,
/// `retry`, `hedge`); an attempt cancelled because another won has no
/// outcome and is not counted, but the call's `attempts` counts every
/// attempt started. No `tracing` events are emitted for hedged calls yet.
///
/// Dropping the call unfinished (the caller's timeout, a `select!`) counts
/// what dropping an unhedged call counts: one breaker failure, for the
/// attempt that was running first; the attempts started while another was
/// in flight release their permits and count as nothing. So a cancelled
/// 3-attempt call adds one failure, not three (it does not open a
/// threshold-3 breaker by itself).
///
/// With a learned delay ([`HedgeDelay::P95`], [`HedgeDelay::Quantile`]),
/// every attempt teaches the [`Latency`]: one that answered `Ok` after `t`
/// is a sample `t`; one that failed, lost the race or was dropped with
/// the call after running `t` is a censored sample, "at least `t`". The
/// learned delay is readable with [`Latency::quantile`].
///
/// The attempts run concurrently inside the call's own future: no task is
/// spawned and nothing is allocated. The future holds `N` slots (a const
/// generic, at most 8: a larger `N` does not compile), is
/// `Send` when the attempts' futures and the hooks are, and dropping it
/// drops every attempt in flight.
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_runtime::HedgeDelay;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use tokio::time::{sleep, Instant};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let calls = AtomicU32::new(0);
/// let began = Instant::now();
/// let policy = Policy::immediate().attempts(3);
/// let result: Result<u32, &str> = policy
///     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
///     .call(|| async {
///         let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
///         // The first attempt is stuck for a second, the hedge takes 10 ms.
///         sleep(Duration::from_millis(if n == 1 { 1000 } else { 10 })).await;
///         Ok(n)
///     })
///     .await;
/// assert_eq!(result, Ok(2));
/// assert_eq!(began.elapsed(), Duration::from_millis(30));
/// # }
/// ```
///
/// ```
/// use backoff_runtime::HedgeDelay;
/// use backoff_runtime::{AttemptKind, CircuitBreaker, GiveUp, Policy, RetryBudget, RetryEvent};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
///
/// #[derive(Debug, PartialEq)]
/// enum Error { Down, Open }
///
/// static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);
/// static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(10));
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let calls = AtomicU32::new(0);
/// let mut kinds = Vec::new();
/// let mut retried = 0;
/// let mut gave_up = None;
/// let result: Result<u32, Error> = Policy::immediate()
///     .attempts(3)
///     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
///     .when(|e: &Error| *e == Error::Down)
///     .budget(&BUDGET)
///     .circuit(&BREAKER, |_| Error::Open)
///     .on_retry(|_: &Result<u32, Error>, _: &RetryEvent| retried += 1)
///     .on_hedge(|e: &RetryEvent| kinds.push(e.kind))
///     .on_giveup(|_: &Result<u32, Error>, g: &GiveUp| gave_up = Some(g.attempts))
///     .call(|| async {
///         calls.fetch_add(1, Ordering::Relaxed);
///         tokio::time::sleep(Duration::from_millis(50)).await;
///         Err(Error::Down)
///     })
///     .await;
/// assert_eq!(result, Err(Error::Down));
/// assert_eq!(kinds, [AttemptKind::Hedge, AttemptKind::Hedge]);
/// assert_eq!(retried, 0); // every attempt hung 50 ms: the delay started both others
/// assert_eq!(gave_up, Some(3));
/// assert_eq!(BUDGET.tokens(), 8.0);
/// # }
#[must_use = "a `Hedge` does nothing until you `call` it and await the result"]
pub struct Hedge<
    'p,
    S,
    const N: usize,
    C = NoCircuit,
    W = RetryAll,
    K = AcceptAll,
    R = NoHook,
    H = NoHook,
    G = NoHook,
    U = NoHook,
> {
    policy: &'p Policy<S>,
    delay: HedgeDelay<'p>,
    budget: Option<&'p RetryBudget>,
    circuit: Option<(&'p CircuitBreaker, C)>,
    hooks: HookSet<W, K, R, H, G, NoHook>,
    on_success: U,
}

impl<S> Policy<S> {
    /// A hedged call under this policy, holding `N` attempts (at most
    /// 8), hedging after `delay`; see [`Hedge`](crate::Hedge)
    /// for the rule. Add hooks, a budget or a breaker, then give the
    /// operation to [`call`](Hedge::call).
    ///
    /// The policy's attempt limit bounds the attempts started: give
    /// `attempts(N)` (the attribute passes the same literal to both).
    ///
    /// # Panics
    ///
    /// If the policy's attempts are unlimited or above `N` (the call could
    /// not hold them), or `delay` is a [`HedgeDelay::Quantile`] outside
    /// `(0, 1)` or NaN.
    ///
    /// ```
    /// use backoff_runtime::{HedgeDelay, Latency};
    /// use backoff_runtime::{Decision, Policy};
    ///
    /// static LATENCY: Latency = Latency::new();
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let result: Result<u32, String> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::P95(&LATENCY))
    ///     .when(|e: &String| if e == "bad request" { Decision::Stop } else { Decision::Retry })
    ///     .call(|| async { Err("bad request".to_string()) })
    ///     .await;
    /// assert_eq!(result.unwrap_err(), "bad request"); // `Stop`: one attempt
    /// # }
    /// ```
    #[track_caller]
    pub fn hedge_async<'p, const N: usize>(&'p self, delay: HedgeDelay<'p>) -> Hedge<'p, S, N> {
        match self.attempt_limit() {
            Some(limit) => assert!(
                limit as usize <= N,
                "the policy allows {limit} attempts but the hedged call holds {N}"
            ),
            None => panic!("a hedged call needs an attempt limit, at most {N}"),
        }
        if let HedgeDelay::Quantile(_, q) = delay {
            assert!(q > 0.0 && q < 1.0, "a hedge quantile is in (0, 1), not {q}");
        }
        Hedge {
            policy: self,
            delay,
            budget: None,
            circuit: None,
            hooks: Defaults::new(),
            on_success: NoHook,
        }
    }
}

/// What a [`Hedge`] changes as it is built: its breaker, its hooks and its
/// `on_success`.
type Parts<'p, C, W, K, R, H, G, U> = (
    Option<(&'p CircuitBreaker, C)>,
    HookSet<W, K, R, H, G, NoHook>,
    U,
);

impl<'p, S, const N: usize, C, W, K, R, H, G, U> Hedge<'p, S, N, C, W, K, R, H, G, U> {
    /// The same hedged call with what it changes mapped by `f`, the rest
    /// kept.
    #[inline]
    fn with<C2, W2, K2, R2, H2, G2, U2>(
        self,
        f: impl FnOnce(Parts<'p, C, W, K, R, H, G, U>) -> Parts<'p, C2, W2, K2, R2, H2, G2, U2>,
    ) -> Hedge<'p, S, N, C2, W2, K2, R2, H2, G2, U2> {
        let (circuit, hooks, on_success) = f((self.circuit, self.hooks, self.on_success));
        Hedge {
            policy: self.policy,
            delay: self.delay,
            budget: self.budget,
            circuit,
            hooks,
            on_success,
        }
    }

    /// Which errors to retry (and hedge after at once): `bool` or
    /// [`Decision`]; [`Decision::Stop`] ends the call at once.
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let result: Result<(), u16> = Policy::immediate()
    ///     .attempts(3)
    ///     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .when(|status: &u16| *status >= 500) // a 404 stops at once
    ///     .call(|| async { Err(404) })
    ///     .await;
    /// assert_eq!(result, Err(404));
    /// # }
    /// ```
    pub fn when<F>(self, when: F) -> Hedge<'p, S, N, C, F, K, R, H, G, U> {
        self.with(|(c, hooks, u)| (c, hooks.when(when), u))
    }

    /// Which `Ok` values to treat like errors (see
    /// [`Retrying::when_ok`](crate::Retrying::when_ok)).
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::sync::atomic::{AtomicU16, Ordering};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let status = AtomicU16::new(503);
    /// let result: Result<u16, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .when_ok(|s: &u16| *s == 503)
    ///     .call(|| async { Ok(status.swap(200, Ordering::Relaxed)) })
    ///     .await;
    /// assert_eq!(result, Ok(200)); // the 503 started the next attempt at once
    /// # }
    /// ```
    pub fn when_ok<F>(self, when_ok: F) -> Hedge<'p, S, N, C, W, F, R, H, G, U> {
        self.with(|(c, hooks, u)| (c, hooks.when_ok(when_ok), u))
    }

    /// Called when a failed attempt (an error `when` retries, or an `Ok`
    /// that `when_ok` rejected) starts the next attempt at once, with that
    /// outcome and the [`RetryEvent`] (of kind [`AttemptKind::Retry`], its
    /// delay zero): the [`OnRetry`] hook of every call, as
    /// [`Retrying::on_retry`](crate::Retrying::on_retry) takes it. The
    /// attempts the hedge delay starts are told to
    /// [`on_hedge`](Hedge::on_hedge) instead.
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{AttemptKind, Policy, RetryEvent};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let calls = AtomicU32::new(0);
    /// let mut seen = Vec::new();
    /// let result: Result<u32, u16> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .on_retry(|outcome: &Result<u32, u16>, e: &RetryEvent| seen.push((*outcome, e.kind)))
    ///     .call(|| async {
    ///         // The first attempt fails at once: the second starts then.
    ///         match calls.fetch_add(1, Ordering::Relaxed) {
    ///             0 => Err(503),
    ///             n => Ok(n + 1),
    ///         }
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(2));
    /// assert_eq!(seen, [(Err(503), AttemptKind::Retry)]);
    /// # }
    /// ```
    pub fn on_retry<F>(self, on_retry: F) -> Hedge<'p, S, N, C, W, K, F, H, G, U> {
        self.with(|(c, hooks, u)| (c, hooks.on_retry(on_retry), u))
    }

    /// Called when the hedge delay runs out with no attempt ended and
    /// starts another attempt, with the [`RetryEvent`] (of kind
    /// [`AttemptKind::Hedge`], its delay the one that ran out): an
    /// [`OnHedge`] hook. Never called for an attempt a failure started
    /// (see [`on_retry`](Hedge::on_retry)).
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{AttemptKind, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let mut seen = Vec::new();
    /// let result: Result<u32, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .on_hedge(|e| seen.push((e.attempt, e.kind, e.delay)))
    ///     .call(|| async {
    ///         tokio::time::sleep(Duration::from_millis(30)).await;
    ///         Ok(1)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(1));
    /// assert_eq!(seen, [(1, AttemptKind::Hedge, Duration::from_millis(20))]);
    /// # }
    /// ```
    pub fn on_hedge<F>(self, on_hedge: F) -> Hedge<'p, S, N, C, W, K, R, F, G, U>
    where
        F: FnMut(&RetryEvent),
    {
        self.with(|(c, hooks, u)| (c, hooks.on_hedge(on_hedge), u))
    }

    /// Called once when the call gives up, with the outcome returned and
    /// the report ([`GiveUp::hedges`] counts the hedges).
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{GiveUp, GiveUpReason, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let mut report = None;
    /// let result: Result<(), &str> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .on_giveup(|_: &Result<(), &str>, g: &GiveUp| report = Some((g.attempts, g.reason)))
    ///     .call(|| async { Err("down") })
    ///     .await;
    /// assert_eq!(result, Err("down"));
    /// assert_eq!(report, Some((2, GiveUpReason::Attempts)));
    /// # }
    /// ```
    pub fn on_giveup<F>(self, on_giveup: F) -> Hedge<'p, S, N, C, W, K, R, H, F, U> {
        self.with(|(c, hooks, u)| (c, hooks.on_giveup(on_giveup), u))
    }

    /// Called once when the call returns an `Ok` it accepted (the first
    /// accepted, the losers already dropped), with the value and the
    /// [`SuccessEvent`]: the attempts started, the winner and the losers
    /// included, and the time since the call began. Never when it gives
    /// up: an [`OnSuccess`] hook, as
    /// [`Retrying::on_success`](crate::Retrying::on_success) takes it.
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{Policy, SuccessEvent};
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let calls = AtomicU32::new(0);
    /// let mut told = None;
    /// let result: Result<u32, ()> = Policy::immediate()
    ///     .attempts(3)
    ///     .hedge_async::<3>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .on_success(|v: &u32, e: &SuccessEvent| told = Some((*v, e.attempts, e.elapsed)))
    ///     .call(|| async {
    ///         let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
    ///         // The first attempt hangs; the hedge answers after 10 ms.
    ///         tokio::time::sleep(Duration::from_millis(if n == 1 { 1000 } else { 10 })).await;
    ///         Ok(n)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(2));
    /// assert_eq!(told, Some((2, 2, Duration::from_millis(30))));
    /// # }
    /// ```
    pub fn on_success<F>(self, on_success: F) -> Hedge<'p, S, N, C, W, K, R, H, G, F> {
        self.with(|(c, hooks, _)| (c, hooks, on_success))
    }

    /// Shares a retry budget: each attempt after the first spends a token
    /// (with none left, no other starts), each success deposits.
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{Policy, RetryBudget};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let budget = RetryBudget::new(0, 0.0); // empty: never hedge
    /// let result: Result<u32, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .budget(&budget)
    ///     .call(|| async {
    ///         tokio::time::sleep(Duration::from_secs(1)).await;
    ///         Ok(1)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(1));
    /// # }
    /// ```
    pub fn budget(mut self, budget: &'p (impl Budget + ?Sized)) -> Self {
        self.budget = Some(budget.as_budget());
        self
    }

    /// Puts every attempt behind a breaker (any [`Circuit`]: a
    /// [`CircuitBreaker`], or a fleet's shared one): an open breaker refuses the
    /// first attempt (the call returns `from(CircuitOpen)`) and every
    /// hedge; each attempt's outcome is reported to it. A loser dropped
    /// because another attempt won counts as nothing; a call its caller
    /// drops counts at most one failure (for the attempt running first,
    /// as an unhedged call's cancellation), never one per attempt in
    /// flight: see [`Hedge`](crate::Hedge).
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{CircuitBreaker, Policy};
    /// use std::time::{Duration, Instant};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let breaker = CircuitBreaker::new(1, 1, Duration::from_secs(60));
    /// breaker.acquire(Instant::now()).unwrap().failure(Instant::now()); // open
    /// let result: Result<u32, &str> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .circuit(&breaker, |_| "circuit open")
    ///     .call(|| async { Ok(1) })
    ///     .await;
    /// assert_eq!(result, Err("circuit open"));
    /// # }
    /// ```
    pub fn circuit<E>(
        self,
        breaker: &'p (impl Circuit + ?Sized),
        from: fn(CircuitOpen) -> E,
    ) -> Hedge<'p, S, N, FromOpen<E>, W, K, R, H, G, U> {
        self.with(|(_, hooks, u)| (Some((breaker.as_circuit(), from)), hooks, u))
    }

    /// [`call`](Hedge::call) with an operation that is told each attempt's
    /// [`AttemptContext`]: its number, whether it is the last, and its
    /// [`AttemptKind`] (a hedge, or a retry after a failure).
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::{AttemptContext, AttemptKind, Policy};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let result: Result<AttemptKind, ()> = Policy::immediate()
    ///     .attempts(2)
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .call_with_context(|c: AttemptContext| async move {
    ///         // The first attempt hangs; the hedge answers.
    ///         if c.attempt == 1 {
    ///             std::future::pending::<()>().await;
    ///         }
    ///         Ok(c.kind)
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(AttemptKind::Hedge));
    /// # }
    /// ```
    pub fn call_with_context<T, E, Op, Fut>(self, op: Op) -> impl Future<Output = Result<T, E>>
    where
        C: Refuse<E>,
        S: Strategy,
        Op: Fn(AttemptContext) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Capacity<N>: Holds<'p, Fut>,
        W: Classify<E>,
        K: Classify<T>,
        R: OnRetry<T, E>,
        H: OnHedge,
        G: OnGiveUp<T, E>,
        U: OnSuccess<T>,
    {
        self.call_op(WithContext(op), NoTrace)
    }

    /// The hedged call of `op`, which makes one attempt's future each time
    /// it is called (it must be runnable several times at once, so it is
    /// `Fn`, and its futures may borrow what it borrows, not itself).
    ///
    /// ```
    /// use backoff_runtime::HedgeDelay;
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// fn assert_send<F: Send>(f: F) -> F { f }
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// static POLICY: Policy = Policy::immediate().attempts(2);
    /// let key = String::from("k1");
    /// let future = POLICY
    ///     .hedge_async::<2>(HedgeDelay::After(Duration::from_millis(20)))
    ///     .call(|| async { Ok::<usize, ()>(key.len()) }); // borrows `key`
    /// assert_eq!(assert_send(future).await, Ok(2));
    /// # }
    /// ```
    #[inline(always)]
    pub fn call<T, E, Op, Fut>(self, op: Op) -> impl Future<Output = Result<T, E>>
    where
        C: Refuse<E>,
        S: Strategy,
        Op: Fn() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        Capacity<N>: Holds<'p, Fut>,
        W: Classify<E>,
        K: Classify<T>,
        R: OnRetry<T, E>,
        H: OnHedge,
        G: OnGiveUp<T, E>,
        U: OnSuccess<T>,
    {
        self.call_op(op, NoTrace)
    }

    /// The future of a call of `op`, either kind of operation: `call`'s
    /// and `call_with_context`'s, and the attribute's (beside `cancel`, `op`
    /// a [`Cancellable`], see there), reporting its retries and its giving
    /// up to `trace` (the attribute's `tracing` events).
    #[doc(hidden)]
    #[allow(clippy::type_complexity)]
    #[inline(always)]
    pub fn call_op<T, E, Op, Fut, Tr>(
        self,
        op: Op,
        trace: Tr,
    ) -> Hedged<'p, S, Op, Fut, T, E, C, HookSet<W, K, R, H, G, NoHook>, U, SlotsOf<'p, N, Fut>, Tr>
    where
        S: Strategy,
        Op: HedgeOp<Fut>,
        Fut: Future<Output = Result<T, E>>,
        Capacity<N>: Holds<'p, Fut>,
        R: OnRetry<T, E>,
        H: OnHedge,
        G: OnGiveUp<T, E>,
        U: OnSuccess<T>,
    {
        let clock = clock::for_async();
        let timed = HookSet::<W, K, R, H, G, NoHook>::timed::<T, E>() || U::GIVEN;
        let began = driver::began(self.policy, clock, timed);
        let start = Origin::at(self.policy, clock, began, self.budget);
        // (Behind a breaker the state is built now: its first attempt asks it.)
        let state = self
            .circuit
            .as_ref()
            .map(|(c, _)| start.gated(Some(c), None));
        // (Begun before the future is built: read in the literal, its branch
        // made the compiler build the 200-byte state aside and copy it in.)
        let recording = Recording::begin(self.policy.name(), clock);
        // (The delay is read now, a quantile of the latency so far, which
        // learns from the call's attempts.)
        let (hedge_after, learn) = match self.delay {
            HedgeDelay::After(d) => (d, None),
            HedgeDelay::P95(latency) => (latency.quantile(0.95), Some(latency)),
            HedgeDelay::Quantile(latency, q) => (latency.quantile(q), Some(latency)),
        };
        Hedged {
            slots: <SlotsOf<'p, N, Fut> as Slots<'p, Fut>>::empty(),
            timer: None,
            trace,
            call: Call {
                op,
                start,
                state,
                hooks: self.hooks,
                on_success: Some(self.on_success),
                recording,
                hedge_after,
                learn,
                refused: self.circuit.map(|(_, from)| from),
                started: 0,
                in_flight: 0,
                hedges: 0,
                armed: false,
                arm: false,
                done: false,
                outcome: PhantomData,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::delay::{BUCKETS, UNIT};
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn buckets_are_log_spaced_by_root_two_from_the_floor() {
        assert_eq!(Latency::edge(0), MS(1));
        assert_eq!(Latency::edge(1), Duration::from_nanos(1_414_213));
        assert_eq!(Latency::edge(2), MS(2));
        assert_eq!(Latency::edge(7), Duration::from_nanos(11_313_708));
        assert_eq!(Latency::edge(20), MS(1024));
        assert_eq!(Latency::bucket(Duration::ZERO), 0);
        assert_eq!(Latency::bucket(Duration::from_micros(999)), 0);
        assert_eq!(Latency::bucket(MS(1)), 1);
        assert_eq!(Latency::bucket(MS(10)), 7);
        assert_eq!(Latency::bucket(MS(1000)), 20);
        assert_eq!(Latency::bucket(Duration::MAX), BUCKETS - 1);
    }

    /// Whether `d` is inside bucket `i` (`[edge(i - 1), edge(i)]`).
    fn in_bucket(d: Duration, i: usize) -> bool {
        Latency::edge(i - 1) <= d && d <= Latency::edge(i)
    }

    #[test]
    fn cold_until_warm_then_inside_the_bucket() {
        let latency = Latency::new();
        for _ in 0..Latency::WARM - 1 {
            latency.record(MS(10));
        }
        assert_eq!(latency.quantile(0.95), Latency::DEFAULT);
        latency.record(MS(10));
        assert!(
            in_bucket(latency.quantile(0.95), 7),
            "{:?}",
            latency.quantile(0.95)
        );
    }

    #[test]
    fn percentiles_of_a_heavy_tail() {
        let latency = Latency::new();
        for i in 0..1000 {
            // 98 % at 10 ms, 2 % at a second.
            latency.record(MS(if i % 50 == 0 { 1000 } else { 10 }));
        }
        assert!(in_bucket(latency.quantile(0.5), 7));
        assert!(in_bucket(latency.quantile(0.95), 7));
        assert!(in_bucket(latency.quantile(0.98), 7));
        assert!(in_bucket(latency.quantile(0.99), 20));
        assert_eq!(latency.quantile(1.0), MS(1024));
        assert_eq!(latency.quantile(2.0), MS(1024));
        assert!(in_bucket(latency.quantile(-1.0), 7));
        assert!(latency.quantile(0.5) < latency.quantile(0.95));
    }

    #[test]
    #[should_panic(expected = "NaN")]
    fn a_nan_quantile_panics() {
        let _ = Latency::new().quantile(f64::NAN);
    }

    #[test]
    fn censored_samples_keep_the_tail() {
        // The true latency: 90 % at 10 ms, 10 % at a second. The slow ones
        // lose to a hedge and are dropped after 30 ms: only "at least".
        let winners = Latency::new();
        let every = Latency::new();
        for i in 0..1000 {
            if i % 10 == 0 {
                every.record_at_least(MS(30));
                winners.record(MS(20)); // the hedge that won
            } else {
                every.record(MS(10));
                winners.record(MS(10));
            }
        }
        // The winners say p95 is 20 ms; the truth is "over 30 ms".
        assert!(winners.quantile(0.95) < MS(23));
        assert!(
            every.quantile(0.95) >= Duration::from_nanos(22_627_417),
            "{:?}",
            every.quantile(0.95)
        );
        // p50 is unmoved.
        assert!(in_bucket(every.quantile(0.5), 7));
    }

    #[test]
    fn a_censored_sample_below_the_quantile_changes_little() {
        let latency = Latency::new();
        for _ in 0..500 {
            latency.record(MS(10));
            latency.record(MS(100));
            latency.record_at_least(MS(2));
        }
        // Half the answers are 10 ms, half 100 ms: the median sits between.
        let p50 = latency.quantile(0.5);
        assert!(p50 > MS(8) && p50 <= MS(91), "{p50:?}");
        assert!(in_bucket(latency.quantile(0.9), 14));
    }

    #[test]
    fn never_under_the_floor() {
        let latency = Latency::new();
        for _ in 0..100 {
            latency.record(Duration::from_micros(10));
        }
        assert_eq!(latency.quantile(0.95), Latency::FLOOR);
    }

    #[test]
    fn a_window_of_samples_halves_every_bucket() {
        let latency = Latency::new();
        for _ in 0..Latency::WINDOW - 1 {
            latency.record(MS(10));
        }
        latency.record_at_least(MS(10));
        // Halved: 511.5 answered and 0.5 censored at 10 ms.
        assert_eq!(latency.answered[7].load(Ordering::Relaxed), 1023 * UNIT / 2);
        assert_eq!(latency.censored[7].load(Ordering::Relaxed), UNIT / 2);
        assert_eq!(latency.samples(), 1024);
        for _ in 0..500 {
            latency.record(MS(100));
        }
        // The median is still among the 10 ms ones.
        assert!(in_bucket(latency.quantile(0.5), 7));
        for _ in 0..100 {
            latency.record(MS(100));
        }
        // 600 at 100 ms against 512: the median has moved to them.
        assert!(in_bucket(latency.quantile(0.5), 14));
        assert_eq!(latency.answered[14].load(Ordering::Relaxed), 600 * UNIT);
    }
}
