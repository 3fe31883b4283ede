//! What a hedged call runs and calls: its operation ([`HedgeOp`]), its
//! hooks ([`HedgeHooks`], [`OnAttempt`]) and a breaker's refusal
//! ([`Refuse`], [`NoCircuit`]).

use super::*;

/// What a hedged call runs for each attempt: a closure `Fn() -> Fut`, or,
/// given to [`Hedge::call_with_context`], `Fn(AttemptContext) -> Fut`
/// (wrapped in a [`WithContext`]).
///
/// ```
/// use backoff_runtime::hedge::{HedgeOp, WithContext};
/// use backoff_runtime::{AttemptContext, AttemptKind};
///
/// let plain = || 7;
/// assert_eq!(plain.attempt(AttemptContext::new(1, false)), 7);
/// let told = WithContext(|c: AttemptContext| c.kind);
/// let hedge = AttemptContext::new(2, true).with_kind(AttemptKind::Hedge);
/// assert_eq!(told.attempt(hedge), AttemptKind::Hedge);
/// ```
pub trait HedgeOp<Fut> {
    /// Makes attempt `context.attempt`'s future.
    fn attempt(&self, context: AttemptContext) -> Fut;
}

impl<F: Fn() -> Fut, Fut> HedgeOp<Fut> for F {
    #[inline]
    fn attempt(&self, _: AttemptContext) -> Fut {
        self()
    }
}

/// An operation told each attempt's [`AttemptContext`] (its number, whether
/// it is the last, and whether a hedge started it): see
/// [`Hedge::call_with_context`].
#[derive(Debug, Clone, Copy)]
pub struct WithContext<F>(pub F);

impl<F: Fn(AttemptContext) -> Fut, Fut> HedgeOp<Fut> for WithContext<F> {
    #[inline]
    fn attempt(&self, context: AttemptContext) -> Fut {
        (self.0)(context)
    }
}

/// An `on_retry` hook of a hedged call: closures and functions
/// `FnMut(Option<&Result<T, E>>, &RetryEvent)` (the outcome that started
/// the next attempt, `None` when the hedge delay did; `event.kind` says
/// which), and [`NoHook`].
///
/// ```
/// use backoff_runtime::hedge::OnAttempt;
/// use backoff_runtime::{AttemptKind, RetryEvent};
/// use std::time::Duration;
///
/// let mut hedges = 0;
/// let mut hook = |outcome: Option<&Result<u32, u32>>, event: &RetryEvent| {
///     if event.kind == AttemptKind::Hedge {
///         assert!(outcome.is_none());
///         hedges += 1;
///     }
/// };
/// let event = RetryEvent::new(1, Duration::from_millis(20), Duration::ZERO);
/// hook.on_attempt(None, &event.with_kind(AttemptKind::Hedge));
/// hook.on_attempt(Some(&Err(5)), &event);
/// assert_eq!(hedges, 1);
/// ```
pub trait OnAttempt<T, E> {
    /// Whether there is a hook (the event is built only if so).
    const ON: bool = true;
    /// Called before each attempt after the first starts.
    fn on_attempt(&mut self, outcome: Option<&Result<T, E>>, event: &RetryEvent);
}

impl<T, E, F: FnMut(Option<&Result<T, E>>, &RetryEvent)> OnAttempt<T, E> for F {
    #[inline]
    fn on_attempt(&mut self, outcome: Option<&Result<T, E>>, event: &RetryEvent) {
        self(outcome, event)
    }
}

impl<T, E> OnAttempt<T, E> for NoHook {
    const ON: bool = false;
    #[inline]
    fn on_attempt(&mut self, _: Option<&Result<T, E>>, _: &RetryEvent) {}
}

/// How a breaker's refusal becomes a hedged call's error: the
/// `fn(CircuitOpen) -> E` given to [`Hedge::circuit`], or [`NoCircuit`].
///
/// ```
/// use backoff_runtime::CircuitOpen;
/// use backoff_runtime::hedge::Refuse;
///
/// let from: fn(CircuitOpen) -> &'static str = |_| "open";
/// assert_eq!(from.refuse(CircuitOpen::new()), "open");
/// ```
pub trait Refuse<E> {
    /// The call's error for a refusal.
    fn refuse(&self, open: CircuitOpen) -> E;
}

impl<E> Refuse<E> for fn(CircuitOpen) -> E {
    fn refuse(&self, open: CircuitOpen) -> E {
        self(open)
    }
}

/// No breaker (a [`Hedge`] before [`circuit`](Hedge::circuit)): never
/// refuses, it has no value.
///
/// ```
/// use backoff_runtime::hedge::{Hedge, NoCircuit};
/// use backoff_runtime::Policy;
/// use std::time::Duration;
///
/// let policy = Policy::immediate().attempts(2);
/// let _: Hedge<'_, _, 2, NoCircuit> =
///     policy.hedge_async::<2>(backoff_runtime::hedge::HedgeDelay::After(Duration::ZERO));
/// ```
#[derive(Debug, Clone, Copy)]
pub enum NoCircuit {}

impl<E> Refuse<E> for NoCircuit {
    fn refuse(&self, _: CircuitOpen) -> E {
        match *self {}
    }
}

/// A hedged call's hooks (`when`, `when_ok`, `on_retry`, `on_giveup`), as
/// its [`Hedge`] was given them. You never name it: it is a type
/// parameter of [`Hedged`] (see [`Hedge`]'s example for every hook).
#[derive(Debug)]
pub struct HedgeHooks<W, K, R, G> {
    pub(super) when: W,
    pub(super) when_ok: K,
    pub(super) on_retry: R,
    pub(super) on_giveup: Option<G>,
}

impl<T, E, W, K, R, G> Hooks<T, E> for HedgeHooks<W, K, R, G>
where
    W: Classify<E>,
    K: Classify<T>,
    R: OnAttempt<T, E>,
    G: OnGiveUp<T, E>,
{
    const ON_RETRY: bool = R::ON;
    const REPORTS: bool = G::TIMED;

    #[inline]
    fn when(&mut self, error: &E) -> Decision {
        self.when.classify(error)
    }

    #[inline]
    fn when_ok(&mut self, value: &T) -> Decision {
        self.when_ok.classify(value)
    }

    #[inline]
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent) {
        self.on_retry.on_attempt(Some(outcome), event);
    }

    #[inline]
    fn on_hedge(&mut self, event: &RetryEvent) {
        self.on_retry.on_attempt(None, event);
    }

    #[inline]
    fn on_give_up(&mut self, outcome: &Result<T, E>, report: &GiveUp) {
        if let Some(hook) = self.on_giveup.take() {
            hook.on_giveup(outcome, report);
        }
    }
}
