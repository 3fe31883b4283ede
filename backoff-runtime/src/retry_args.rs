//! The traits `#[retry]` checks its arguments against, under the names a
//! compile error gives them.
//!
//! When a value given to the attribute has the wrong type (a `when` that
//! takes `&String` where the error is `u32`, a `sleep` that returns a
//! value), the compiler's message is the attribute's own (`#[retry]:
//! `when` must take `&E`...`), and its `help:` line names one of these
//! traits: each is named after the argument and what it checks
//! (`WhenParameter`, `OnRetryFn`, `SleepParameter`, `FromElapsed`, ...).
//! You never implement or name them: they are implemented for exactly the
//! values the attribute accepts, and their documentation says which.
//! (`budget`, `circuit` and `throttle` are checked against the public
//! traits of [`crate::control`], which a type of your own may implement.)
//!
//! ```compile_fail
//! use backoff_runtime::retry;
//!
//! // `when` takes `&E`, here `&u32`: the help line names `WhenParameter`.
//! #[retry(when = |e: &String| e.is_empty())]
//! fn f() -> Result<(), u32> { Err(1) }
//! ```

use core::future::Future;
use core::time::Duration;

use crate::Cancelled;
use crate::circuit::CircuitOpen;
use crate::decision::{Decision, IntoDecision};
use crate::driver::{Origin, Trace};
use crate::policy::Policy;
use crate::report::GiveUp;
use crate::strategy::Strategy;
use crate::throttle::Rejected;
use crate::timeout::Elapsed;

// The loop's entry, the default sleep and the timer the expansion runs
// through, defined here so that their messages name them here; what they
// do (their impls) is the expansion's support, `__private`'s `dispatch`.

/// The return type of a function under `#[retry]`: implemented for
/// `Result` alone (behind an alias too, such as `std::io::Result<T>`).
/// `#[retry]` dispatches a call to the runtime's loops through it.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns `Result`, but this one returns `{Self}`",
    label = "not a `Result`",
    note = "`#[retry]` retries on `Err`; wrap the value in `Result<{Self}, E>` or return an alias such as `std::io::Result<T>`"
)]
pub trait ReturnsResult: Sized {
    /// The success type.
    #[doc(hidden)]
    type Ok;
    /// The error type.
    #[doc(hidden)]
    type Err;
    /// Splits the outcome.
    #[doc(hidden)]
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
    /// Rebuilds the outcome.
    #[doc(hidden)]
    fn from_result(r: Result<Self::Ok, Self::Err>) -> Self;
    /// The blocking loop of a plain fn under `#[retry]`, from `start` (its
    /// policy and clock: a `Fixed::<..>::ORIGIN` or the `start` the
    /// function builds, for a deadline or a start time): `op` is the body,
    /// returning the function's own type, `FnMut` so that the loop can live
    /// out of line. The first attempt runs here, inline; the rest, the retry
    /// state and the sleeps, out of line, so that a call that succeeds at
    /// once pays only for its test of the outcome. The call is recorded for
    /// the installed recorder as `function` (the expansion's
    /// `concat!(module_path!(), "::", name)`).
    ///
    /// (A method of this trait, not a function bounded by it: a return type
    /// that is not a `Result` is then reported once, at the expansion's
    /// call, spanned on that type, and never as a bound of the runtime's.)
    #[doc(hidden)]
    fn retry_blocking<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<Self::Err>,
        op: impl FnMut() -> Self,
    ) -> Self;
    /// [`retry_blocking`](Self::retry_blocking) with `when`, the verdict on
    /// each error: a plain fn whose only hook is a `when` that borrows
    /// nothing of the function's (a path to a function, or a closure that
    /// names no parameter), so that it can live beside the attempts for the
    /// whole loop. Every attempt runs behind a pointer (the body is
    /// compiled once).
    #[doc(hidden)]
    fn retry_blocking_when<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<Self::Err>,
        when: impl FnMut(&Self::Err) -> Decision,
        op: impl FnMut() -> Self,
    ) -> Self;
    /// The trace of a function named `name` whose attempts are `attempts`,
    /// showing an error with `show`.
    #[cfg(feature = "tracing")]
    #[doc(hidden)]
    fn traced<A: FnMut() -> Self>(
        name: &'static str,
        attempts: &A,
        show: for<'a> fn(&'a Self::Err) -> &'a dyn core::fmt::Display,
    ) -> impl Trace<Self::Err> + use<Self, A>;
}

/// The default sleep and timer of an `async fn`, which the `tokio` feature
/// provides.
pub struct TokioFeature;

/// An async sleep the attribute can use by default: the `tokio` feature's.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` on an `async fn` needs a way to sleep",
    label = "no default async sleep",
    note = "enable the `tokio` feature of `backoff-runtime`, or pass `sleep = path::to::async_sleep` (a `fn(Duration) -> impl Future<Output = ()>`)"
)]
pub trait DefaultAsyncSleep {
    /// Sleeps for `d`, which is not zero (the loop skips zero sleeps itself,
    /// so the future holds nothing but the timer: a timer that may be
    /// absent costs 26 instructions per retry, measured).
    #[doc(hidden)]
    fn sleep(d: Duration) -> impl Future<Output = ()> + Send;
}

/// Runs an attempt under `attempt_timeout`, or the whole call under
/// `timeout`: the `tokio` feature's timer.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `timeout` and `attempt_timeout` need the `tokio` feature of `backoff-runtime`",
    label = "no timer without the `tokio` feature"
)]
pub trait TimeoutTimer {
    /// `f`, cancelled after `d` with [`Elapsed`].
    #[doc(hidden)]
    fn timeout<F: Future>(d: Duration, f: F) -> impl Future<Output = Result<F::Output, Elapsed>>;
}

// The checks of `when`, `when_ok`, `on_retry`, `on_giveup` and `sleep`.
//
// The generated code calls the user's function itself, with each argument
// passed through a trait of its own, `<_ as WhenParameter<_>>::pass(error)`, and
// its result through another. A mistake is then one unimplemented trait,
// reported with the trait's text in the argument's terms ("`when` must take
// the error as `&u32`, not `&String`"): not a signature mismatch (E0631,
// E0271, whose text cannot be changed), and, being a trait method's own
// bound, with no "required by a bound in" note naming this module. Each impl
// is `do_not_recommend`, so that no list of implementations points here
// either; the traits carry lifetimes, not bounds, so a closure annotated
// `&E` still takes any borrow.

/// The impl of a two-impl check that holds when the value fits.
///
/// rustc takes a trait's only impl on the shape of its type alone, and
/// reports a bound of that impl which fails (a function of two parameters
/// where one is called for: "this function takes 2 arguments but 1
/// argument was supplied", with a fix that edits the attribute). With a
/// second impl, told apart by a parameter the call leaves to inference, it
/// weighs both impls against the type: when neither holds, the error is the
/// check's own trait, with its message, and what the call returns stays
/// unknown, so its uses add no error of their own.
#[doc(hidden)]
pub struct Fits;

/// The impl of a two-impl check that holds for no type (see [`Fits`]).
#[doc(hidden)]
pub struct Misfits;

/// Implemented by no type.
#[doc(hidden)]
pub trait Never {}

/// The checks that call the user's function, each of two impls (see
/// [`Fits`]): `$name` calls a function `$Fn($A, ..)` through `&mut self`
/// or `self`, and holds for no other type.
macro_rules! fn_check {
    ($($(#[$doc:meta])* $name:ident: $Fn:ident($(&$mut:ident)? $self:ident, $($arg:ident: $A:ident),+),
        $message:literal, $label:literal, $note:literal;)*) => {$(
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = $label, note = $note)]
        pub trait $name<M, $($A),+> {
            /// What it returns.
            #[doc(hidden)]
            type Output;
            /// Calls it.
            #[doc(hidden)]
            fn call($(&$mut)? $self, $($arg: $A),+) -> Self::Output;
        }

        #[diagnostic::do_not_recommend]
        impl<F: $Fn($($A),+) -> O, $($A,)+ O> $name<Fits, $($A),+> for F {
            type Output = O;
            #[inline(always)]
            fn call($(&$mut)? $self, $($arg: $A),+) -> O {
                $self($($arg),+)
            }
        }

        #[diagnostic::do_not_recommend]
        impl<F: Never, $($A),+> $name<Misfits, $($A),+> for F {
            type Output = ();
            #[inline(always)]
            fn call($(&$mut)? $self, $(_: $A),+) {}
        }
    )*};
}

fn_check! {
    /// Calls `when`: a function of one parameter.
    WhenFn: FnMut(&mut self, error: A),
        "`#[retry]`: `when` must be a function of one parameter, the error, not `{Self}`",
        "expected a function of one parameter",
        "`when` is called with a reference to each error and returns `true` to retry it (or a `Decision`): declare it as `fn(&E) -> bool`";
    /// Calls `when_ok`: a function of one parameter.
    WhenOkFn: FnMut(&mut self, value: A),
        "`#[retry]`: `when_ok` must be a function of one parameter, the `Ok` value, not `{Self}`",
        "expected a function of one parameter",
        "`when_ok` is called with a reference to each `Ok` value and returns `true` to retry it (or a `Decision`): declare it as `fn(&T) -> bool`";
    /// Calls `on_retry`: a function of two parameters.
    OnRetryFn: FnMut(&mut self, first: A, event: B),
        "`#[retry]`: `on_retry` must be a function of two parameters, not `{Self}`",
        "expected a function of two parameters",
        "`on_retry` is called before each sleep with the error (beside `when_ok`, the whole outcome) and the event: declare it as `fn(&E, &RetryEvent)`, or beside `when_ok` as `fn(&Result<T, E>, &RetryEvent)`";
    /// Calls `on_giveup`, once: a function of two parameters.
    OnGiveUpFn: FnOnce(self, outcome: A, report: B),
        "`#[retry]`: `on_giveup` must be a function of two parameters, not `{Self}`",
        "expected a function of two parameters",
        "`on_giveup` is called once, on giving up, with the outcome the call returns and the give-up record: declare it as `fn(&Result<T, E>, &GiveUp)`";
    /// Calls `sleep`: a function of one parameter.
    SleepFn: FnMut(&mut self, delay: A),
        "`#[retry]`: `sleep` must be a function of one parameter, the delay, not `{Self}`",
        "expected a function of one parameter",
        "`sleep` is called with each delay, a `std::time::Duration`: name a function such as `std::thread::sleep` (a plain fn) or `tokio::time::sleep` (an `async fn`)";
}

/// The checks of one impl: `$name[generics]`, implemented for `$ty` alone
/// (with the impl's generics in brackets), whose method gives the value
/// the generated code passes on (unchanged, or converted).
macro_rules! check {
    ($($(#[$doc:meta])* $name:ident[$($g:tt)*] for [$($ig:tt)*] $ty:ty:
        fn $method:ident($($param:tt)*) $(-> $ret:ty)? $body:block,
        $message:literal, $label:literal, $note:literal;)*) => {$(
        $(#[$doc])*
        #[diagnostic::on_unimplemented(message = $message, label = $label, note = $note)]
        pub trait $name<$($g)*> {
            /// The value, as the generated code passes it on.
            #[doc(hidden)]
            fn $method($($param)*) $(-> $ret)?;
        }

        #[diagnostic::do_not_recommend]
        impl<$($ig)*> $name<$($g)*> for $ty {
            #[inline(always)]
            fn $method($($param)*) $(-> $ret)? $body
        }
    )*};
}

check! {
    /// Calls `fallback`, once: `FnOnce(E, &GiveUp) -> Result<T, E>`.
    FallbackFn[T, E] for [T, E, F: FnOnce(E, &GiveUp) -> Result<T, E>] F:
        fn call(self, error: E, report: &GiveUp) -> Result<T, E> { self(error, report) },
        "`#[retry]`: `fallback` must be a function `fn(E, &GiveUp) -> Result<T, E>` of the function's own `T` and `E`, here `fn({E}, &GiveUp) -> Result<{T}, {E}>`, not `{Self}`",
        "expected `fn({E}, &GiveUp) -> Result<{T}, {E}>`",
        "`fallback` is called once, when the call gives up with an error: it gets that error and the give-up record, and its result is the call's result";
    /// `when`'s parameter: the error, `&E`.
    WhenParameter['a, E] for ['a, E] &'a E: fn pass(error: &'a E) -> Self { error },
        "`#[retry]`: `when` must take the error as `&{E}`, not `{Self}`",
        "this takes `{Self}`",
        "`when` is called with a reference to each error and returns `true` to retry it (or a `Decision`): declare its parameter as `&{E}`; a `when` of another crate's error, inside `backoff_runtime::Error<E>`, is `when = |e| e.decision(that_when)`";
    /// `when_ok`'s parameter: the `Ok` value, `&T`.
    WhenOkParameter['a, T] for ['a, T] &'a T: fn pass(value: &'a T) -> Self { value },
        "`#[retry]`: `when_ok` must take the `Ok` value as `&{T}`, not `{Self}`",
        "this takes `{Self}`",
        "`when_ok` is called with a reference to each `Ok` value and returns `true` to retry it (or a `Decision`): declare its parameter as `&{T}`";
    /// What `when_ok` returns. (`when` returns an [`IntoDecision`], whose own
    /// message names `when`.)
    WhenOkReturn[] for [D: IntoDecision] D: fn decision(self) -> Decision { self.into_decision() },
        "`#[retry]`: `when_ok` must return `bool` or `backoff_runtime::Decision`, not `{Self}`",
        "this returns `{Self}`",
        "return `true` to retry the `Ok` value and `false` to accept it, or a `Decision` for finer control";
    /// `on_retry`'s first parameter without `when_ok`: the error, `&E`.
    OnRetryParameter['a, E] for ['a, E] &'a E: fn pass(error: &'a E) -> Self { error },
        "`#[retry]`: `on_retry` must take the error as `&{E}` first, not `{Self}`",
        "this takes `{Self}` first",
        "`on_retry` is called before each sleep with the error and the event: declare it as `fn(&{E}, &RetryEvent)`";
    /// `on_retry`'s first parameter beside `when_ok`: the outcome,
    /// `&Result<T, E>`.
    OnRetryOutcomeParameter['a, T, E] for ['a, T, E] &'a Result<T, E>:
        fn pass(outcome: &'a Result<T, E>) -> Self { outcome },
        "`#[retry]`: beside `when_ok`, `on_retry` must take the outcome as `&Result<{T}, {E}>` first, not `{Self}`",
        "this takes `{Self}` first",
        "with `when_ok`, an `Ok` value may be retried too, so `on_retry` sees the whole outcome: declare it as `fn(&Result<{T}, {E}>, &RetryEvent)`";
    // (Generic in `V`, which is `RetryEvent`, so that rustc does not point
    // at this impl as one for `&RetryEvent` when the event is taken by value.)
    /// `on_retry`'s second parameter: `&RetryEvent`.
    OnRetryEventParameter['a, V] for ['a, V] &'a V: fn pass(event: &'a V) -> Self { event },
        "`#[retry]`: `on_retry` must take the event as `&RetryEvent` second, not `{Self}`",
        "this takes `{Self}` second",
        "declare the second parameter as `&RetryEvent`: `backoff_runtime::RetryEvent` tells the attempt that failed, the delay before the next one and the time elapsed";
    /// What `on_retry` returns: nothing.
    OnRetryReturn[] for [] (): fn done(self) {},
        "`#[retry]`: `on_retry` must return `()`, not `{Self}`",
        "this returns `{Self}`",
        "`on_retry` is called before each sleep and what it returns is dropped: make it a plain function that returns nothing (the future of an `async fn` would never run)";
    /// `on_giveup`'s first parameter: the outcome, `&Result<T, E>`.
    OnGiveUpParameter['a, T, E] for ['a, T, E] &'a Result<T, E>:
        fn pass(outcome: &'a Result<T, E>) -> Self { outcome },
        "`#[retry]`: `on_giveup` must take the outcome as `&Result<{T}, {E}>` first, not `{Self}`",
        "this takes `{Self}` first",
        "`on_giveup` is called once, on giving up, with the outcome the call returns and the give-up record: declare it as `fn(&Result<{T}, {E}>, &GiveUp)`";
    // (Generic in `V`, which is `GiveUp`: see `OnRetryEventParameter`.)
    /// `on_giveup`'s second parameter: `&GiveUp`.
    OnGiveUpRecordParameter['a, V] for ['a, V] &'a V: fn pass(report: &'a V) -> Self { report },
        "`#[retry]`: `on_giveup` must take the give-up record as `&GiveUp` second, not `{Self}`",
        "this takes `{Self}` second",
        "declare the second parameter as `&GiveUp`: `backoff_runtime::GiveUp` tells the calls made, the time elapsed and why the call gave up";
    /// What `on_giveup` returns: nothing.
    OnGiveUpReturn[] for [] (): fn done(self) {},
        "`#[retry]`: `on_giveup` must return `()`, not `{Self}`",
        "this returns `{Self}`",
        "`on_giveup` is called once, on giving up, and what it returns is dropped: make it a plain function that returns nothing (the future of an `async fn` would never run)";
    /// `sleep`'s parameter: the delay, a [`Duration`].
    SleepParameter[] for [] Duration: fn pass(delay: Duration) -> Self { delay },
        "`#[retry]`: `sleep` must take a `Duration`, not `{Self}`",
        "this takes `{Self}`",
        "`sleep` is called with each delay, a `std::time::Duration`";
    /// What a plain fn's `sleep` returns: nothing (it blocks).
    BlockingSleepReturn[] for [] (): fn done(self) {},
        "`#[retry]`: `sleep` of a plain fn must block and return `()`, not `{Self}`",
        "this returns `{Self}`",
        "this function is not `async`, so it sleeps by blocking, as `std::thread::sleep` does: make it an `async fn` to use an async sleep such as `tokio::time::sleep`";
}

/// What an `async fn`'s `sleep` returns: a future of `()`.
///
/// Two impls (see [`Fits`]): for a value that is no future of `()`, the
/// type of [`sleeping`](AsyncSleepReturn::sleeping) stays unknown, so the
/// `.await` of it adds no error of its own.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `sleep` of an `async fn` must return a future of `()`, not `{Self}`",
    label = "this returns `{Self}`",
    note = "an `async fn` sleeps by awaiting: pass an async sleep such as `tokio::time::sleep` or an `async fn(Duration)` (a blocking sleep such as `std::thread::sleep` would block the executor's thread)"
)]
pub trait AsyncSleepReturn<M> {
    /// The future to await.
    #[doc(hidden)]
    type Sleep;
    /// The future, to await.
    #[doc(hidden)]
    fn sleeping(self) -> Self::Sleep;
}

/// The output of an async sleep: `()`.
#[doc(hidden)]
pub trait Unit {}

impl Unit for () {}

#[diagnostic::do_not_recommend]
impl<F> AsyncSleepReturn<Fits> for F
where
    F: Future,
    F::Output: Unit,
{
    type Sleep = F;
    #[inline(always)]
    fn sleeping(self) -> F {
        self
    }
}

#[diagnostic::do_not_recommend]
impl<F: Never> AsyncSleepReturn<Misfits> for F {
    type Sleep = F;
    #[inline(always)]
    fn sleeping(self) -> F {
        self
    }
}

check! {
    /// What `policy = EXPR` may give: a [`Policy`] or a reference to one. The
    /// strategy is a parameter, not an associated type, so that a value of
    /// another type is one error: the policy's uses after it are left
    /// ambiguous, which rustc does not report beside an error.
    PolicyArgument[S] for [S: Strategy] Policy<S>: fn as_policy(&self) -> &Policy<S> { self },
        "`#[retry]`: `policy` must be a `backoff_runtime::Policy` or `&Policy`, not `{Self}`",
        "expected a `Policy`",
        "build one with `Policy::exponential(..)` or another constructor, in a `static` or in a value the function can reach, such as `policy = self.policy`";
}

#[diagnostic::do_not_recommend]
impl<S, P: PolicyArgument<S> + ?Sized> PolicyArgument<S> for &P {
    #[inline]
    fn as_policy(&self) -> &Policy<S> {
        (**self).as_policy()
    }
}

/// What a call given to `budget`, `circuit` or `throttle` returns (`budget =
/// self.budget()`, `circuit = breakers.get("db").unwrap()`).
#[derive(Debug)]
pub struct ReturnedValue;

/// A call given to `budget`, `circuit` or `throttle` must return a handle
/// to one kept elsewhere (a reference, an `Arc`, an `Rc`): one it builds
/// and returns by value is new for every call of the function.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: this call gives a new `{T}` for every call of the function, which remembers nothing between calls",
    label = "a new `{T}` for each call",
    note = "make the call return a reference to one kept elsewhere (`-> &{T}`) or an `Arc<{T}>`, or name the field or `static` that keeps it, as in `self.field`"
)]
pub trait KeptAcrossCalls<T> {
    /// The handle, unchanged.
    #[inline(always)]
    #[doc(hidden)]
    fn check(handle: T) -> T {
        handle
    }
}

macro_rules! kept_across_calls {
    ($($handle:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl<U: ?Sized> KeptAcrossCalls<$handle> for ReturnedValue {}
    )*};
}

kept_across_calls!(&U, &mut U, Option<&U>, std::sync::Arc<U>, std::rc::Rc<U>);

check! {
    /// The error type of a function behind `circuit = ...`.
    FromCircuitOpen[] for [E: From<CircuitOpen>] E: fn from_circuit_open(e: CircuitOpen) -> Self { E::from(e) },
        "`#[retry]`: with `circuit`, the error type `{Self}` must implement `From<backoff_runtime::CircuitOpen>`",
        "no `From<CircuitOpen>` for `{Self}`",
        "an open breaker fails calls fast with `E::from(CircuitOpen)`: give your error type an `impl From<CircuitOpen>` (`std::io::Error`, `Box<dyn Error + Send + Sync>` and `backoff_runtime::Error<E>` have one); another crate's error type cannot get one in your crate, so return `backoff_runtime::Error<ThatError>` (see its docs for `?` on the client's errors)";
    /// The error type of a function with `cancel = ...`.
    FromCancelled[] for [E: From<Cancelled>] E: fn from_cancelled(e: Cancelled) -> Self { E::from(e) },
        "`#[retry]`: with `cancel`, the error type `{Self}` must implement `From<backoff_runtime::Cancelled>`",
        "no `From<Cancelled>` for `{Self}`",
        "a call whose token is cancelled before its first attempt returns `E::from(Cancelled)` without running the body: give your error type an `impl From<Cancelled>` (`std::io::Error` and `backoff_runtime::Error<E>` have one); another crate's error type cannot get one in your crate, so return `backoff_runtime::Error<ThatError>`";
    /// The error type of a function behind `throttle = ...`.
    FromRejected[] for [E: From<Rejected>] E: fn from_rejected(e: Rejected) -> Self { E::from(e) },
        "`#[retry]`: with `throttle`, the error type `{Self}` must implement `From<backoff_runtime::Rejected>`",
        "no `From<Rejected>` for `{Self}`",
        "an attempt the throttle rejects locally fails fast with `E::from(Rejected)`: give your error type an `impl From<Rejected>` (`std::io::Error`, `Box<dyn Error + Send + Sync>` and `backoff_runtime::Error<E>` have one); another crate's error type cannot get one in your crate, so return `backoff_runtime::Error<ThatError>` (see its docs for `?` on the client's errors)";
    /// The error type of a function with `attempt_timeout = ...`.
    FromElapsed[] for [E: From<Elapsed>] E: fn from_elapsed(e: Elapsed) -> Self { E::from(e) },
        "`#[retry]`: with `timeout` or `attempt_timeout`, the error type `{Self}` must implement `From<backoff_runtime::Elapsed>`",
        "no `From<Elapsed>` for `{Self}`",
        "a timed-out call fails with `E::from(Elapsed)`: give your error type an `impl From<Elapsed>` (`std::io::Error`, `Box<dyn Error + Send + Sync>` and `backoff_runtime::Error<E>` have one); another crate's error type cannot get one in your crate, so return `backoff_runtime::Error<ThatError>` (see its docs for `?` on the client's errors)";
}

// `when` beside `on(..)`: it returns the user's own type, which the
// expansion matches against the arms' patterns, through
// `<_ as WhenClassification<W>>::classified(value)`: the result's type is
// the patterns' (inferred from them), and only the identity is
// implemented, so `when` returning a `bool` or a `Decision` is one error,
// in the attribute's terms, at `when`'s value (not a "mismatched types"
// per arm). The second impl, for a type no one names, keeps rustc from
// taking the identity as the only impl before it has seen the patterns.

check! {
    /// The type of the `on(..)` arms' patterns, given `when`'s value of type
    /// `W`: implemented for `W` itself.
    WhenClassification[W] for [W] W: fn classified(value: W) -> Self { value },
        "`#[retry]`: beside `on(..)`, `when` must return your own classification type, such as `{Self}`, not `{W}`",
        "this returns `{W}`",
        "each `on(PATTERN, ..)` arm matches `when`'s value: make `when` return the type of the patterns, or remove the `on(..)` arms and return `{W}`";
}

/// A type no one names (see [`WhenClassification`]).
#[doc(hidden)]
pub struct Unclassified(());

#[diagnostic::do_not_recommend]
impl WhenClassification<Unclassified> for () {
    fn classified(_: Unclassified) {}
}

// `chaos = CHAOS`: a draw through `ChaosInjection`, implemented only with the
// feature `chaos`, so that the argument without it is one error that names
// the feature.

/// The feature `chaos`, as the attribute's draw names it.
#[derive(Debug)]
pub struct ChaosFeature;

/// Each attempt's draw of `chaos = CHAOS` (a `backoff_runtime::Chaos<E>`):
/// implemented with the feature `chaos` alone.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `chaos` needs the `chaos` feature of `backoff-runtime`",
    label = "no fault injection without the `chaos` feature",
    note = "turn it on where faults are injected, as in `backoff-runtime = {{ version = \"0.1\", features = [\"chaos\"] }}` under `[dev-dependencies]`"
)]
pub trait ChaosInjection<C> {
    /// The error a fault is.
    #[doc(hidden)]
    type Error;
    /// A blocking attempt's draw: sleeps the latency, returns the fault.
    #[doc(hidden)]
    fn blocking(chaos: &C) -> Option<Self::Error>;
    /// An async attempt's draw: sleeps the latency, returns the fault.
    #[doc(hidden)]
    fn attempt(chaos: &C) -> impl Future<Output = Option<Self::Error>>;
}

#[cfg(feature = "chaos")]
impl<E> ChaosInjection<crate::chaos::Chaos<E>> for ChaosFeature {
    type Error = E;
    #[inline]
    fn blocking(chaos: &crate::chaos::Chaos<E>) -> Option<E> {
        chaos.blocking()
    }
    #[inline]
    fn attempt(chaos: &crate::chaos::Chaos<E>) -> impl Future<Output = Option<E>> {
        chaos.attempt()
    }
}

// `budget`, `circuit` and `throttle` given a control of another kind
// (`budget = PAYMENTS`, a breaker): the expansion calls `pick` on
// `&&&&BudgetValue(&value)`, and method resolution takes the first impl
// whose bound holds, by the number of references: the argument's own
// control (the value, unchanged), then each other control (its kind, which
// the expansion's check refuses with "did you mean `circuit = PAYMENTS`?",
// and a control of the right type that is never used, so that the
// argument's own check adds no second error), then anything (the value,
// for the argument's own check and its message).

/// A circuit breaker given to `budget` or `throttle`, as rustc names it in
/// the help line of `#[retry]`'s "did you mean `circuit = ..`?".
///
/// ```compile_fail
/// use backoff_runtime::{retry, CircuitBreaker};
/// use std::time::Duration;
///
/// static PAYMENTS: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));
///
/// // "`PAYMENTS` is a circuit breaker, not a retry budget; did you mean
/// // `circuit = PAYMENTS`?"
/// #[retry(budget = PAYMENTS)]
/// fn f() -> std::io::Result<()> { Ok(()) }
/// ```
#[derive(Debug)]
pub struct ACircuitBreaker;

/// A retry budget given to `circuit` or `throttle`, as rustc names it in
/// the help line of `#[retry]`'s "did you mean `budget = ..`?".
#[derive(Debug)]
pub struct ARetryBudget;

/// A throttle given to `budget` or `circuit`, as rustc names it in the
/// help line of `#[retry]`'s "did you mean `throttle = ..`?".
#[derive(Debug)]
pub struct AnAdaptiveThrottle;

/// A value given to the control argument it belongs to, or no control.
#[doc(hidden)]
#[derive(Debug)]
pub struct Own;

macro_rules! control_value {
    // (The value itself, or for another control an unused one of the right
    // type.)
    (@pick [$($refs:tt)*] $value:ident $(: $bound:ident)?, $kind:ident, $out:ty, |$v:ident| $picked:expr) => {
        impl<'a, T: ?Sized $(+ crate::control::$bound)?> Pick<'a> for $($refs)* $value<'a, T> {
            type Kind = $kind;
            type Out = $out;
            #[inline(always)]
            fn pick(&self) -> ($kind, &'a $out) {
                let $v = self;
                ($kind, $picked)
            }
        }
    };
    (@other [$($refs:tt)*] $value:ident: $other:ident, $kind:ident, $lent:ty = $unused:expr) => {
        control_value!(@pick [$($refs)*] $value: $other, $kind, $lent, |_v| {
            static UNUSED: $lent = $unused;
            &UNUSED
        });
    };
    ($(#[$doc:meta] $value:ident, $own:ident, $lent:ty = $unused:expr,
        $first:ident: $first_kind:ident, $second:ident: $second_kind:ident;)*) => {
        /// Which control a value is: implemented for the argument's own
        /// control under three references, each other control under two
        /// and one, anything under none (see the impls).
        #[doc(hidden)]
        pub trait Pick<'a> {
            /// What it is.
            type Kind;
            /// What the argument's check is given.
            type Out: ?Sized + 'a;
            /// Tells it apart.
            fn pick(&self) -> (Self::Kind, &'a Self::Out);
        }
        $(
            #[$doc]
            #[doc(hidden)]
            #[derive(Debug)]
            pub struct $value<'a, T: ?Sized>(pub &'a T);
            control_value!(@pick [&&&] $value: $own, Own, T, |v| v.0);
            control_value!(@other [&&] $value: $first, $first_kind, $lent = $unused);
            control_value!(@other [&] $value: $second, $second_kind, $lent = $unused);
            control_value!(@pick [] $value, Own, T, |v| v.0);
        )*
    };
}

control_value! {
    /// The value of `budget = ..`.
    BudgetValue, Budget, crate::budget::RetryBudget = crate::budget::RetryBudget::new(1, 1.0),
        Circuit: ACircuitBreaker, Throttle: AnAdaptiveThrottle;
    /// The value of `circuit = ..`.
    CircuitValue, Circuit, crate::circuit::CircuitBreaker = crate::circuit::CircuitBreaker::new(1, 1, Duration::ZERO),
        Budget: ARetryBudget, Throttle: AnAdaptiveThrottle;
    /// The value of `throttle = ..`.
    ThrottleValue, Throttle, crate::throttle::AdaptiveThrottle = crate::throttle::AdaptiveThrottle::new(2.0, Duration::from_secs(1)),
        Circuit: ACircuitBreaker, Budget: ARetryBudget;
}
