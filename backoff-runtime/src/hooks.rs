//! The hooks, one vocabulary for every call that takes them: a
//! [`Retrying`](crate::Retrying) call ([`Policy::retrying`](crate::Policy::retrying)),
//! a hedged call ([`Hedge`](crate::Hedge), feature `tokio`) and, for
//! the verdicts, the `tower` policy.
//!
//! - [`Classify`]: `when`, the verdict on an error, and `when_ok`, the
//!   verdict on an `Ok` value; [`RetryAll`] and [`AcceptAll`] are their
//!   defaults.
//! - [`OnRetry`]: `on_retry`, told of each failed attempt that is retried
//!   (an error, or an `Ok` that `when_ok` rejected) with its
//!   [`RetryEvent`].
//! - [`OnHedge`]: `on_hedge`, told of each attempt a hedged call's delay
//!   started while the others were still running (no attempt had failed).
//! - [`OnGiveUp`]: `on_giveup`, told once when the call gives up, with the
//!   [`GiveUp`] report.
//! - [`Fallback`]: `fallback`, the call's result instead of the error it
//!   gives up with.
//! - [`NoHook`]: the default of `on_retry`, `on_hedge`, `on_giveup` and
//!   `fallback`: nothing is told, and nothing is paid for it.
//!
//! A call keeps the hooks it was given in a [`HookSet`], which is what its
//! loop calls.
//!
//! ```
//! use backoff_runtime::hooks::{AcceptAll, Classify, OnHedge, OnRetry, RetryAll};
//! use backoff_runtime::{AttemptKind, Decision, RetryEvent};
//! use std::time::Duration;
//!
//! assert_eq!(RetryAll.classify(&"timeout"), Decision::Retry);
//! assert_eq!(AcceptAll.classify(&200), Decision::Stop);
//!
//! let mut told = Vec::new();
//! let mut on_retry = |outcome: &Result<u32, &str>, e: &RetryEvent| told.push((outcome.is_err(), e.kind));
//! on_retry.on_retry(&Err("down"), &RetryEvent::new(1, Duration::ZERO, Duration::ZERO));
//! assert_eq!(told, [(true, AttemptKind::Retry)]);
//!
//! let mut hedges = 0;
//! let mut on_hedge = |_: &RetryEvent| hedges += 1;
//! on_hedge.on_hedge(&RetryEvent::new(1, Duration::from_millis(20), Duration::ZERO));
//! assert_eq!(hedges, 1);
//! ```

use crate::decision::{Decision, IntoDecision};
use crate::driver::Hooks;
use crate::event::{RetryEvent, SuccessEvent};
use crate::report::GiveUp;
#[cfg(doc)]
use crate::{event::AttemptKind, report::GiveUpReason};

/// A `when` or a `when_ok`: the verdict on an error, or on an `Ok` value
/// (where [`Decision::Stop`] accepts it). Implemented by closures and
/// functions `FnMut(&T) -> D` where `D` is `bool` or [`Decision`], and by
/// the defaults [`RetryAll`] (every error is retried) and [`AcceptAll`]
/// (every `Ok` is accepted). The hooked loops, the hedged calls and the
/// `tower` policy share it.
///
/// ```
/// use backoff_runtime::Decision;
/// use backoff_runtime::hooks::{AcceptAll, Classify, RetryAll};
///
/// assert_eq!(RetryAll.classify(&"any error"), Decision::Retry);
/// assert_eq!(AcceptAll.classify(&"any response"), Decision::Stop);
/// assert_eq!((|n: &u16| *n == 503).classify(&503), Decision::Retry);
/// ```
pub trait Classify<T> {
    /// The verdict on `value`.
    fn classify(&mut self, value: &T) -> Decision;
}

impl<T, D: IntoDecision, F: FnMut(&T) -> D> Classify<T> for F {
    #[inline]
    fn classify(&mut self, value: &T) -> Decision {
        self(value).into_decision()
    }
}

/// A verdict decided already: every value gets this [`Decision`] (the
/// attribute's `when` and `when_ok` are called in the function, and their
/// decision handed over as this).
///
/// ```
/// use backoff_runtime::Decision;
/// use backoff_runtime::hooks::Classify;
///
/// assert_eq!(Decision::Stop.classify(&"any error"), Decision::Stop);
/// ```
impl<T> Classify<T> for Decision {
    #[inline(always)]
    fn classify(&mut self, _: &T) -> Decision {
        *self
    }
}

/// The default `when`: every error is retried, as `#[retry]` without `when`
/// does.
///
/// ```
/// use backoff_runtime::Decision;
/// use backoff_runtime::hooks::{Classify, RetryAll};
///
/// assert_eq!(RetryAll.classify(&std::io::Error::other("down")), Decision::Retry);
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryAll;

impl<T> Classify<T> for RetryAll {
    #[inline]
    fn classify(&mut self, _: &T) -> Decision {
        Decision::Retry
    }
}

/// The default `when_ok`: every `Ok` is accepted, as `#[retry]` without
/// `when_ok` does.
///
/// ```
/// use backoff_runtime::Decision;
/// use backoff_runtime::hooks::{AcceptAll, Classify};
///
/// assert_eq!(AcceptAll.classify(&503u16), Decision::Stop);
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcceptAll;

impl<T> Classify<T> for AcceptAll {
    #[inline]
    fn classify(&mut self, _: &T) -> Decision {
        Decision::Stop
    }
}

/// An `on_retry` hook: closures and functions
/// `FnMut(&Result<T, E>, &RetryEvent)`, and [`NoHook`]. Called when a
/// failed attempt (an error, or an `Ok` that `when_ok` rejected) is
/// retried, with that outcome: in a retry loop before the sleep, in a
/// hedged call before the attempt it starts at once. (The attempts a hedged
/// call's delay starts are told to [`OnHedge`] instead.)
///
/// ```
/// use backoff_runtime::hooks::OnRetry;
/// use backoff_runtime::{Policy, RetryEvent};
///
/// let mut attempts = Vec::new();
/// let result: Result<(), &str> = Policy::immediate()
///     .attempts(3)
///     .retrying(|| Err("down"))
///     .on_retry(|outcome: &Result<(), &str>, e: &RetryEvent| attempts.push((*outcome, e.attempt)))
///     .call();
/// assert_eq!(result, Err("down"));
/// assert_eq!(attempts, [(Err("down"), 1), (Err("down"), 2)]);
///
/// fn uses_time<H: OnRetry<u32, ()>>(_: &H) -> bool { H::TIMED }
/// assert!(uses_time(&|_: &Result<u32, ()>, _: &RetryEvent| {}));
/// assert!(!uses_time(&backoff_runtime::hooks::NoHook));
/// ```
pub trait OnRetry<T, E> {
    /// Whether there is a hook: the event is built, and the clock read when
    /// the call begins (for the event's elapsed time), only if so.
    #[doc(hidden)]
    const TIMED: bool = true;
    /// Called when `outcome` is retried.
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent);
}

/// An `on_success` hook: closures and functions `FnOnce(&T, &SuccessEvent)`,
/// and [`NoHook`]. Called once, when the call returns an `Ok` it accepted,
/// with the value and the [`SuccessEvent`]; never when it gives up.
///
/// ```
/// use backoff_runtime::hooks::{NoHook, OnSuccess};
/// use backoff_runtime::SuccessEvent;
/// use std::time::Duration;
///
/// let mut told = None;
/// let hook = |value: &u32, e: &SuccessEvent| told = Some((*value, e.attempts));
/// hook.on_success(&7, &SuccessEvent::new(2, Duration::ZERO));
/// assert_eq!(told, Some((7, 2)));
///
/// fn given<H: OnSuccess<u32>>(_: &H) -> bool { H::GIVEN }
/// assert!(!given(&NoHook)); // none: the clock is not read for it
/// ```
pub trait OnSuccess<T> {
    /// Whether there is a hook: the clock is read when the call begins
    /// (for the event's elapsed time) only if so.
    #[doc(hidden)]
    const GIVEN: bool = true;
    /// Called with the accepted value.
    fn on_success(self, value: &T, event: &SuccessEvent);
}

/// An `on_hedge` hook of a hedged call: closures and functions
/// `FnMut(&RetryEvent)`, and [`NoHook`]. Called when the hedge delay ran
/// out with no attempt ended and starts another attempt (`event.kind` is
/// [`AttemptKind::Hedge`], `event.delay` the delay that ran out); never for
/// an attempt a failure started, which [`OnRetry`] is told of.
///
/// ```
/// use backoff_runtime::hooks::{NoHook, OnHedge};
/// use backoff_runtime::RetryEvent;
/// use std::time::Duration;
///
/// let mut delays = Vec::new();
/// let mut hook = |e: &RetryEvent| delays.push(e.delay);
/// hook.on_hedge(&RetryEvent::new(1, Duration::from_millis(20), Duration::ZERO));
/// assert_eq!(delays, [Duration::from_millis(20)]);
///
/// fn given<H: OnHedge>(_: &H) -> bool { H::TIMED }
/// assert!(!given(&NoHook)); // none: no event is built
/// ```
pub trait OnHedge {
    /// Whether there is a hook: the event is built, and the clock read when
    /// the call begins (for the event's elapsed time), only if so.
    #[doc(hidden)]
    const TIMED: bool = true;
    /// Called when the hedge delay starts another attempt.
    fn on_hedge(&mut self, event: &RetryEvent);
}

/// An `on_giveup` hook: closures and functions
/// `FnOnce(&Result<T, E>, &GiveUp)`, and [`NoHook`]. Called once when the
/// call ends with an outcome it did not accept, with the [`GiveUp`] report
/// (calls made, time since the call began, the [`GiveUpReason`]).
///
/// ```
/// use backoff_runtime::hooks::OnGiveUp;
/// use backoff_runtime::{GiveUp, GiveUpReason, Policy};
///
/// let mut reason = None;
/// let _: Result<(), &str> = Policy::immediate()
///     .attempts(2)
///     .retrying(|| Err("down"))
///     .on_giveup(|_: &Result<(), &str>, g: &GiveUp| reason = Some(g.reason))
///     .call();
/// assert_eq!(reason, Some(GiveUpReason::Attempts));
///
/// fn uses_time<H: OnGiveUp<u32, ()>>(_: &H) -> bool { H::TIMED }
/// assert!(!uses_time(&backoff_runtime::hooks::NoHook));
/// ```
pub trait OnGiveUp<T, E> {
    /// Whether there is a hook: the report is built, and the clock read
    /// when the call begins, only if so.
    #[doc(hidden)]
    const TIMED: bool = true;
    /// Called once on giving up.
    fn on_giveup(self, outcome: &Result<T, E>, report: &GiveUp);
}

/// A `fallback` hook ([`Retrying::fallback`](crate::Retrying::fallback)):
/// closures and functions `FnOnce(E, &GiveUp) -> Result<T, E>`, and
/// [`NoHook`] (none: the error is returned).
///
/// ```
/// use backoff_runtime::hooks::{Fallback, NoHook};
/// use backoff_runtime::{GiveUp, GiveUpReason};
/// use std::time::Duration;
///
/// let report = GiveUp::new(3, Duration::ZERO, GiveUpReason::Attempts);
/// let cached = |_: &str, _: &GiveUp| Ok::<u32, &str>(42);
/// assert_eq!(cached.fall_back("down", &report), Ok(42));
/// assert_eq!(Fallback::<u32, &str>::fall_back(NoHook, "down", &report), Err("down"));
/// ```
pub trait Fallback<T, E> {
    /// Whether there is one (the report is then built on giving up).
    #[doc(hidden)]
    const GIVEN: bool = true;
    /// The call's result instead of `Err(error)`.
    fn fall_back(self, error: E, report: &GiveUp) -> Result<T, E>;
}

/// A hook's two impls: for the closures and functions `F` of its
/// signature, which it calls, and for [`NoHook`], whose const says there is
/// none and which does `$none` instead.
macro_rules! hook {
    (
        impl<$($g:ident),*> $hook:ty, $given:ident, [$($f:tt)+],
        fn $method:ident($($recv:tt)*)($($arg:ident: $ty:ty),*) $(-> $ret:ty)? = $none:expr
    ) => {
        impl<$($g,)* F: $($f)+> $hook for F {
            #[inline]
            fn $method($($recv)* self, $($arg: $ty),*) $(-> $ret)? {
                self($($arg),*)
            }
        }

        impl<$($g),*> $hook for NoHook {
            const $given: bool = false;
            #[inline]
            #[allow(unused_variables)]
            fn $method($($recv)* self, $($arg: $ty),*) $(-> $ret)? {
                $none
            }
        }
    };
}

hook!(
    impl<T, E> OnRetry<T, E>, TIMED, [FnMut(&Result<T, E>, &RetryEvent)],
    fn on_retry(&mut)(outcome: &Result<T, E>, event: &RetryEvent) = ()
);
hook!(
    impl<T> OnSuccess<T>, GIVEN, [FnOnce(&T, &SuccessEvent)],
    fn on_success()(value: &T, event: &SuccessEvent) = ()
);
hook!(
    impl<> OnHedge, TIMED, [FnMut(&RetryEvent)],
    fn on_hedge(&mut)(event: &RetryEvent) = ()
);
hook!(
    impl<T, E> OnGiveUp<T, E>, TIMED, [FnOnce(&Result<T, E>, &GiveUp)],
    fn on_giveup()(outcome: &Result<T, E>, report: &GiveUp) = ()
);
hook!(
    impl<T, E> Fallback<T, E>, GIVEN, [FnOnce(E, &GiveUp) -> Result<T, E>],
    fn fall_back()(error: E, report: &GiveUp) -> Result<T, E> = Err(error)
);

/// No hook: the default `on_retry`, `on_hedge`, `on_giveup` and
/// `fallback`. Its consts say there is none, so nothing is built or timed
/// for it.
///
/// ```
/// use backoff_runtime::hooks::{NoHook, OnHedge, OnRetry};
///
/// assert!(!<NoHook as OnHedge>::TIMED);
/// assert!(!<NoHook as OnRetry<u32, ()>>::TIMED);
/// ```
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHook;

/// The hooks a call was given, as its loop calls them: `when` (`W`),
/// `when_ok` (`K`), `on_retry` (`N`), `on_hedge` (`H`), `on_giveup` (`G`)
/// and `fallback` (`L`), each [`NoHook`] (or [`RetryAll`], [`AcceptAll`])
/// unless given. A [`Retrying`](crate::Retrying) call and a
/// [hedged call](crate::Hedge) both keep theirs in one (a hedged
/// call's beside its `on_success`); you never build it or name it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct HookSet<W, K, N, H, G, L>(
    /// `when`.
    W,
    /// `when_ok`.
    K,
    /// `on_retry`.
    N,
    /// `on_hedge`.
    H,
    /// `on_giveup`, taken by the one call that gives up.
    Option<G>,
    /// `fallback`, the same.
    Option<L>,
);

/// No hooks given yet.
pub(crate) type Defaults = HookSet<RetryAll, AcceptAll, NoHook, NoHook, NoHook, NoHook>;

impl Defaults {
    /// The defaults: every error retried, every `Ok` accepted, nothing told.
    pub(crate) const fn new() -> Self {
        HookSet::of(RetryAll, AcceptAll, NoHook, NoHook)
    }
}

impl<W, K, N, G> HookSet<W, K, N, NoHook, G, NoHook> {
    /// The hooks of a call that is not hedged and has no `fallback` (or
    /// runs it itself, as the attribute's function does after its loop).
    #[inline(always)]
    pub(crate) const fn of(when: W, when_ok: K, on_retry: N, on_giveup: G) -> Self {
        HookSet(
            when,
            when_ok,
            on_retry,
            NoHook,
            Some(on_giveup),
            Some(NoHook),
        )
    }
}

impl<W, K, N, H, G, L> HookSet<W, K, N, H, G, L> {
    /// The same hooks with `when`.
    #[inline]
    pub(crate) fn when<F>(self, when: F) -> HookSet<F, K, N, H, G, L> {
        HookSet(when, self.1, self.2, self.3, self.4, self.5)
    }

    /// The same hooks with `when_ok`.
    #[inline]
    pub(crate) fn when_ok<F>(self, when_ok: F) -> HookSet<W, F, N, H, G, L> {
        HookSet(self.0, when_ok, self.2, self.3, self.4, self.5)
    }

    /// The same hooks with `on_retry`.
    #[inline]
    pub(crate) fn on_retry<F>(self, on_retry: F) -> HookSet<W, K, F, H, G, L> {
        self.map_on_retry(|_| on_retry)
    }

    /// The same hooks with `on_retry` mapped by `f`.
    #[inline]
    pub(crate) fn map_on_retry<F>(self, f: impl FnOnce(N) -> F) -> HookSet<W, K, F, H, G, L> {
        HookSet(self.0, self.1, f(self.2), self.3, self.4, self.5)
    }

    /// The same hooks with `on_hedge`.
    #[cfg(feature = "tokio")]
    #[inline]
    pub(crate) fn on_hedge<F>(self, on_hedge: F) -> HookSet<W, K, N, F, G, L> {
        HookSet(self.0, self.1, self.2, on_hedge, self.4, self.5)
    }

    /// The same hooks with `on_giveup`.
    #[inline]
    pub(crate) fn on_giveup<F>(self, on_giveup: F) -> HookSet<W, K, N, H, F, L> {
        HookSet(self.0, self.1, self.2, self.3, Some(on_giveup), self.5)
    }

    /// The same hooks with `fallback`.
    #[inline]
    pub(crate) fn fallback<F>(self, fallback: F) -> HookSet<W, K, N, H, G, F> {
        HookSet(self.0, self.1, self.2, self.3, self.4, Some(fallback))
    }

    /// Whether a hook reads the call's elapsed time (the clock is then
    /// read when the call begins).
    #[inline]
    pub(crate) const fn timed<T, E>() -> bool
    where
        N: OnRetry<T, E>,
        H: OnHedge,
        G: OnGiveUp<T, E>,
    {
        N::TIMED || H::TIMED || G::TIMED
    }
}

impl<T, E, W, K, N, H, G, L> Hooks<T, E> for HookSet<W, K, N, H, G, L>
where
    W: Classify<E>,
    K: Classify<T>,
    N: OnRetry<T, E>,
    H: OnHedge,
    G: OnGiveUp<T, E>,
    L: Fallback<T, E>,
{
    const ON_RETRY: bool = N::TIMED;
    #[cfg(feature = "tokio")]
    const ON_HEDGE: bool = H::TIMED;
    const REPORTS: bool = G::TIMED || L::GIVEN;

    #[inline]
    fn when(&mut self, error: &E) -> Decision {
        self.0.classify(error)
    }

    #[inline]
    fn when_ok(&mut self, value: &T) -> Decision {
        self.1.classify(value)
    }

    #[inline]
    fn on_retry(&mut self, outcome: &Result<T, E>, event: &RetryEvent) {
        self.2.on_retry(outcome, event);
    }

    #[cfg(feature = "tokio")]
    #[inline]
    fn on_hedge(&mut self, event: &RetryEvent) {
        self.3.on_hedge(event);
    }

    #[inline]
    fn on_give_up(&mut self, outcome: &Result<T, E>, report: &GiveUp) {
        if let Some(hook) = self.4.take() {
            hook.on_giveup(outcome, report);
        }
    }

    #[inline]
    fn fall_back(&mut self, outcome: Result<T, E>, report: &GiveUp) -> Result<T, E> {
        match (outcome, self.5.take()) {
            (Err(error), Some(hook)) => hook.fall_back(error, report),
            (outcome, _) => outcome,
        }
    }
}

// (`on_hedge` is a hedged call's, feature `tokio`.)
#[cfg(all(test, feature = "tokio"))]
mod tests {
    use super::*;
    use core::time::Duration;

    type Set<N, H, G, L> = HookSet<RetryAll, AcceptAll, N, H, G, L>;
    type Told = fn(&Result<u32, u32>, &RetryEvent);
    type Hedged = fn(&RetryEvent);
    type GaveUp = fn(&Result<u32, u32>, &GiveUp);
    type Fell = fn(u32, &GiveUp) -> Result<u32, u32>;

    /// What the driver builds for a set: each const says whether that hook
    /// was given, and nothing else does.
    #[test]
    fn each_const_says_whether_its_hook_was_given() {
        fn consts<H: Hooks<u32, u32>>() -> (bool, bool, bool) {
            (H::ON_RETRY, H::ON_HEDGE, H::REPORTS)
        }
        assert_eq!(consts::<Defaults>(), (false, false, false));
        assert_eq!(
            consts::<Set<Told, NoHook, NoHook, NoHook>>(),
            (true, false, false)
        );
        assert_eq!(
            consts::<Set<NoHook, Hedged, NoHook, NoHook>>(),
            (false, true, false)
        );
        assert_eq!(
            consts::<Set<NoHook, NoHook, GaveUp, NoHook>>(),
            (false, false, true)
        );
        assert_eq!(
            consts::<Set<NoHook, NoHook, NoHook, Fell>>(),
            (false, false, true)
        );
        assert!(!Defaults::timed::<u32, u32>());
        assert!(Set::<NoHook, Hedged, NoHook, NoHook>::timed::<u32, u32>());
    }

    /// `on_retry` hears only retried outcomes and `on_hedge` only hedges;
    /// `on_giveup` and `fallback` run once.
    #[test]
    fn one_set_calls_each_hook_it_was_given() {
        use std::cell::RefCell;
        let log = RefCell::new(Vec::new());
        let mut set = Defaults::new()
            .when(|e: &u32| *e < 10)
            .on_retry(|o: &Result<u32, u32>, _: &RetryEvent| {
                log.borrow_mut().push(format!("retry {o:?}"))
            })
            .on_hedge(|e: &RetryEvent| log.borrow_mut().push(format!("hedge {:?}", e.kind)))
            .on_giveup(|o: &Result<u32, u32>, _: &GiveUp| {
                log.borrow_mut().push(format!("gave up {o:?}"))
            })
            .fallback(|e: u32, _: &GiveUp| Ok(e + 1));
        let event = RetryEvent::new(1, Duration::ZERO, Duration::ZERO);
        assert_eq!(Hooks::<u32, u32>::when(&mut set, &3), Decision::Retry);
        assert_eq!(Hooks::<u32, u32>::when(&mut set, &30), Decision::Stop);
        assert_eq!(Hooks::<u32, u32>::when_ok(&mut set, &3), Decision::Stop);
        Hooks::<u32, u32>::on_retry(&mut set, &Err(3), &event);
        Hooks::<u32, u32>::on_hedge(
            &mut set,
            &RetryEvent {
                kind: crate::AttemptKind::Hedge,
                ..event
            },
        );
        let report = GiveUp::new(2, Duration::ZERO, crate::GiveUpReason::Attempts);
        Hooks::<u32, u32>::on_give_up(&mut set, &Err(4), &report);
        Hooks::<u32, u32>::on_give_up(&mut set, &Err(5), &report); // taken: once
        assert_eq!(
            Hooks::<u32, u32>::fall_back(&mut set, Err(4), &report),
            Ok(5)
        );
        assert_eq!(
            Hooks::<u32, u32>::fall_back(&mut set, Err(4), &report),
            Err(4)
        );
        assert_eq!(
            *log.borrow(),
            ["retry Err(3)", "hedge Hedge", "gave up Err(4)"]
        );
    }
}
