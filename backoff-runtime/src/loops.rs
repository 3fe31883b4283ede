//! The loops the runtime runs itself: [`Policy::retry`] (blocking),
//! [`Policy::retry_async`] and [`Policy::retry_async_with_sleep`]. Each ends
//! an attempt in the [driver](crate::driver).

use core::convert::Infallible;
use core::future::Future;
use core::ops::ControlFlow;
use core::time::Duration;

use crate::cancel::{Cancel, Cancelled};
use crate::clock;
use crate::decision::Decision;
use crate::driver::{self, Lazy, NoTrace, Origin, Trace};
use crate::hooks::{Classify, Defaults, RetryAll};
use crate::policy::Policy;
use crate::record::{Recording, Records};
use crate::strategy::Strategy;

impl<S: Strategy> Policy<S> {
    /// Calls `op` until it succeeds or the policy gives up, sleeping with
    /// [`std::thread::sleep`] in between; returns the last error on giving
    /// up. Every error is retried.
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// let mut calls = 0;
    /// let result = Policy::constant(Duration::from_millis(1)).attempts(5).retry(|| {
    ///     calls += 1;
    ///     if calls < 3 { Err("flaky") } else { Ok(calls) }
    /// });
    /// assert_eq!(result, Ok(3));
    ///
    /// let result: Result<(), u32> = Policy::immediate().attempts(2).retry(|| Err(7));
    /// assert_eq!(result, Err(7));
    /// ```
    pub fn retry<T, E>(&self, op: impl FnMut() -> Result<T, E>) -> Result<T, E> {
        // As the attribute does: the state is built on the first failure.
        let clock = clock::system;
        let start = Origin::at(self, clock, driver::began(self, clock, false), None);
        blocking(&start, Some(self.name()), NoTrace, RetryAll, op)
    }

    /// [`retry`](Policy::retry) that stops when `token` is cancelled: the
    /// thread waits on the token between attempts (not in
    /// `std::thread::sleep`), so a cancel from another thread ends the
    /// sleep at once, and the call returns the last attempt's outcome. A
    /// token cancelled before the first attempt returns `E::from(Cancelled)`
    /// without calling `op`; an attempt in flight is never interrupted.
    /// With hooks: [`Retrying::cancel`](crate::Retrying::cancel).
    ///
    /// ```
    /// use backoff_runtime::{CancelToken, Policy};
    /// use std::time::Duration;
    ///
    /// let token = CancelToken::new();
    /// let (attempted, first) = std::sync::mpsc::channel();
    /// // A day between attempts; the other thread's cancel ends the wait.
    /// let result: std::io::Result<()> = std::thread::scope(|s| {
    ///     let canceller = &token;
    ///     s.spawn(move || {
    ///         first.recv().unwrap(); // (once the first attempt ran)
    ///         canceller.cancel();
    ///     });
    ///     Policy::constant(Duration::from_secs(86_400)).retry_cancellable(&token, || {
    ///         let _ = attempted.send(());
    ///         Err(std::io::Error::other("down"))
    ///     })
    /// });
    /// assert_eq!(result.unwrap_err().to_string(), "down"); // the last outcome
    /// ```
    pub fn retry_cancellable<T, E: From<Cancelled>>(
        &self,
        token: &(impl Cancel + ?Sized),
        op: impl FnMut() -> Result<T, E>,
    ) -> Result<T, E> {
        self.retrying(op).cancel(token).call()
    }

    /// The async loop: awaits `op()` until it succeeds or the policy gives
    /// up, sleeping with `tokio::time::sleep` in between. Dropping the future
    /// cancels it cleanly, at any await point.
    ///
    /// To `tokio::spawn` the loop, give it an `async move ||` closure that
    /// owns what it uses: an async closure that borrows a local makes the
    /// future fail the `Send` check ("implementation of `Send` is not
    /// general enough", rust-lang/rust#139475).
    ///
    /// ```
    /// use backoff_runtime::Policy;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let mut calls = 0;
    /// let policy = Policy::constant(Duration::from_secs(1)).attempts(5);
    /// let result = policy
    ///     .retry_async(async || {
    ///         calls += 1;
    ///         if calls < 3 { Err("flaky") } else { Ok(calls) }
    ///     })
    ///     .await;
    /// assert_eq!(result, Ok(3));
    /// # }
    /// ```
    #[cfg(feature = "tokio")]
    pub async fn retry_async<T, E>(&self, op: impl AsyncFnMut() -> Result<T, E>) -> Result<T, E> {
        self.retry_async_with_sleep(op, crate::sleep::tokio).await
    }

    /// [`retry_async`](Policy::retry_async) with your own sleep, for another
    /// executor or a test that records the delays.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy};
    /// use std::cell::RefCell;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let slept = RefCell::new(Vec::new());
    /// let policy = Policy::exponential(Duration::from_millis(10)).jitter(Jitter::None).attempts(3);
    /// let result: Result<(), &str> = policy
    ///     .retry_async_with_sleep(async || Err("down"), |d| {
    ///         slept.borrow_mut().push(d);
    ///         std::future::ready(())
    ///     })
    ///     .await;
    /// assert_eq!(result, Err("down"));
    /// assert_eq!(*slept.borrow(), [Duration::from_millis(10), Duration::from_millis(20)]);
    /// # }
    /// ```
    pub async fn retry_async_with_sleep<T, E, Fut>(
        &self,
        mut op: impl AsyncFnMut() -> Result<T, E>,
        mut sleep: impl FnMut(Duration) -> Fut,
    ) -> Result<T, E>
    where
        Fut: Future<Output = ()>,
    {
        let clock = clock::for_async();
        let start = Origin::at(self, clock, driver::began(self, clock, false), None);
        let mut recording = Recording::begin(self.name(), clock);
        let mut slot = None;
        loop {
            let outcome = op().await;
            let mut progress = Lazy {
                slot: &mut slot,
                start: &start,
            };
            match driver::after_attempt(
                &mut progress,
                outcome,
                &mut Defaults::new(),
                &NoTrace,
                &mut recording,
            ) {
                // (The error was dropped in there, before this sleep.)
                ControlFlow::Continue((delay, ())) => {
                    sleep(delay).await;
                    recording.attempt_starts();
                }
                ControlFlow::Break(outcome) => return outcome,
            }
        }
    }
}

/// The blocking loop, of [`Policy::retry`] and of a plain fn under
/// `#[retry]`, with `when` the verdict on each error ([`RetryAll`]: none).
///
/// Without a `when`: the first attempt inline, and on its failure the rest
/// of the loop out of line ([`blocking_after`]), so that a call that
/// succeeds at once pays for its test of the outcome alone (the retry
/// state, the sleep and the registers they need are the failure path's).
/// While a recorder is installed (`record::set_recorder`), a call recorded
/// as `function` (`None`: not recorded) runs out of line instead: the call
/// that does not record pays one atomic load and its test.
///
/// With a `when` (that borrows nothing of the function's, so that it lives
/// beside the attempts for the whole loop): every attempt behind the
/// pointer, so that a function's body is compiled once in all (not inline
/// for the first attempt and once more behind the pointer; nor in a loop
/// of its own, which the optimizer peels and unswitches into copies), and
/// the loop is compiled once per strategy and outcome types. A success
/// pays for that call and the attempt's indirect call.
#[inline(always)]
pub(crate) fn blocking<S: Strategy, T, E, W: When<E>>(
    start: &Origin<'_, S>,
    function: Option<&'static str>,
    trace: impl Trace<E>,
    mut when: W,
    mut op: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    if W::GIVEN {
        let hooks = Defaults::new().when(WhenBehind(&mut when));
        return blocking_first(start, function, trace, hooks, &mut op, None);
    }
    if let Some(function) = function
        && crate::record::on()
    {
        return blocking_after(start, Some(function), trace, Defaults::new(), op, None);
    }
    match op() {
        Ok(v) => Ok(v),
        Err(e) => blocking_after(start, None, trace, Defaults::new(), op, Some(e)),
    }
}

/// A `when` of [`blocking`]: a closure, or [`RetryAll`] for none.
pub(crate) trait When<E>: Classify<E> {
    /// Whether a `when` was given.
    const GIVEN: bool = true;
}

impl<E, F: FnMut(&E) -> Decision> When<E> for F {}

impl<E> When<E> for RetryAll {
    const GIVEN: bool = false;
}

/// `when` behind a pointer, as the attempts are ([`Attempts`]).
struct WhenBehind<'a, E>(&'a mut dyn Classify<E>);

impl<E> Classify<E> for WhenBehind<'_, E> {
    #[inline(always)]
    fn classify(&mut self, error: &E) -> Decision {
        self.0.classify(error)
    }
}

/// The attempts of a blocking loop, as the shared loop calls them: a trait
/// of one method, so that the pointer's table holds the attempts alone
/// (`dyn FnMut` would hold a by-value `call_once` as well, into which the
/// optimizer copies the body once more).
trait Attempts<T, E> {
    /// One attempt.
    fn attempt(&mut self) -> Result<T, E>;
}

impl<T, E, F: FnMut() -> Result<T, E>> Attempts<T, E> for F {
    #[inline]
    fn attempt(&mut self) -> Result<T, E> {
        self()
    }
}

/// [`blocking`] out of line, from the first attempt's failure `first` (or,
/// `None`, from the first attempt, behind the pointer, recorded as
/// `function`): the one piece of the failure path that is compiled once per
/// function, and all it does is take the attempts by value (so that the
/// success path keeps their captures in registers, not in a frame of its
/// own) and hand them on as a pointer. (The recording's start and the first
/// attempt behind the pointer were here, about 70 lines of LLVM IR per
/// function: 6 % of the compile bench's release build.)
#[inline(never)]
fn blocking_after<S: Strategy, T, E>(
    start: &Origin<'_, S>,
    function: Option<&'static str>,
    trace: impl Trace<E>,
    hooks: impl driver::Hooks<Infallible, E>,
    mut op: impl FnMut() -> Result<T, E>,
    first: Option<E>,
) -> Result<T, E> {
    blocking_first(start, function, trace, hooks, &mut op, first)
}

/// From the first attempt's failure `first`, or (`None`) from the first
/// attempt behind the pointer, recorded as `function` if given, the shared
/// loop: for a `when` ([`blocking`] calls it itself), while a recorder is
/// installed, and after a failed first attempt. (Apart from the loop, so
/// that a success here saves and restores no more registers than it needs:
/// one function cost a plain fn with a `when` 5 instructions per call,
/// measured.)
#[inline(never)]
fn blocking_first<S: Strategy, T, E>(
    start: &Origin<'_, S>,
    function: Option<&'static str>,
    trace: impl Trace<E>,
    hooks: impl driver::Hooks<Infallible, E>,
    op: &mut dyn Attempts<T, E>,
    first: Option<E>,
) -> Result<T, E> {
    let mut recording = match function {
        Some(function) => Recording::begin(function, start.clock),
        None => Recording::OFF,
    };
    // (A `match`, not `map_or_else(|| op.attempt(), Err)`: that instantiated
    // `map_or_else`, a closure and `Err` as a function in every plain fn.)
    let outcome = match first {
        Some(error) => Err(error),
        None => op.attempt(),
    };
    match outcome {
        Ok(value) => {
            recording.succeeded();
            Ok(value)
        }
        Err(error) => blocking_shared(start, recording, trace, hooks, op, error),
    }
}

/// The loop of [`blocking_after`] and [`blocking_first`].
///
/// It takes the attempts as `&mut dyn Attempts`, so that it is generic over
/// the strategy, the outcome's types, the trace and its hooks only (none,
/// or a `when` behind a pointer): the functions of a crate that share them
/// share one copy of this loop, and a function's body is compiled twice in
/// all (inline for the first attempt, and once behind the pointer; once
/// with a `when`), not once more per function and per peeled iteration.
/// The price is an indirect call per retry.
#[inline(never)]
fn blocking_shared<S: Strategy, T, E>(
    start: &Origin<'_, S>,
    mut recording: Recording,
    trace: impl Trace<E>,
    mut hooks: impl driver::Hooks<Infallible, E>,
    op: &mut dyn Attempts<T, E>,
    mut error: E,
) -> Result<T, E> {
    // (No budget or breaker here, so an `Ok` tells no one: the loop keeps
    // the error alone, as `Result<Infallible, E>`, the layout of `E`.)
    let mut state = start.state();
    loop {
        match driver::after_attempt(
            &mut state,
            Err::<Infallible, E>(error),
            &mut hooks,
            &trace,
            &mut recording,
        ) {
            // (The error was dropped in there, before this sleep.)
            ControlFlow::Continue((delay, ())) => crate::sleep::blocking(delay),
            ControlFlow::Break(Err(error)) => return Err(error),
            ControlFlow::Break(Ok(never)) => match never {},
        }
        recording.attempt_starts();
        error = match op.attempt() {
            Ok(value) => {
                recording.succeeded();
                return Ok(value);
            }
            Err(error) => error,
        };
    }
}

/// The state of a blocking loop after its first failure, built then (its
/// own impl, not a [`Lazy`] with a full slot: `Lazy`'s building and empty
/// branches, instantiated per strategy in every plain fn, made a crate of
/// 200 `#[retry]` fns 1.5% dearer to build in release).
impl<S: Strategy> driver::Progress for crate::state::RetryState<'_, S> {
    #[inline(always)]
    fn step(&mut self, decision: Decision) -> Option<Duration> {
        self.next_delay_for(decision)
    }

    #[inline]
    fn succeeded(&mut self) {
        self.on_success();
    }

    fn event(&self, delay: Duration) -> crate::RetryEvent {
        Self::event(self, delay)
    }

    fn report(&self) -> crate::GiveUp {
        Self::report(self)
    }
}
