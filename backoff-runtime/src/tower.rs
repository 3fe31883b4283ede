//! Retries as [tower](https://docs.rs/tower/0.5) middleware: [`RetryPolicy`]
//! implements [`tower::retry::Policy`] from a
//! [`Policy`] (feature `tower`).
//!
//! The same `static` policy serves a `#[retry]` function and a
//! [`ServiceBuilder`](::tower::ServiceBuilder) stack (axum and tonic
//! services, hyper and reqwest clients, job runners): strategy, jitter,
//! attempt limit, `max_elapsed`, `retry_after_max` and a throttled schedule
//! all come from the [`Policy`]; [`when`](RetryPolicy::when) classifies
//! errors and [`when_ok`](RetryPolicy::when_ok) responses (a 503 is an `Ok`
//! to most HTTP clients), as the attribute's arguments of the same names do;
//! [`budget`](RetryPolicy::budget) shares a [`RetryBudget`]. Sleeps use
//! `tokio::time::sleep`.
//!
//! ```
//! use backoff_runtime::{Jitter, Policy, retry, tower::RetryPolicy};
//! use std::time::Duration;
//! use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
//!
//! #[derive(Debug)]
//! struct Unavailable;
//!
//! // One policy...
//! static POLICY: Policy = Policy::exponential(Duration::from_millis(100))
//!     .jitter(Jitter::None)
//!     .attempts(4);
//!
//! // ...for a function,
//! #[retry(policy = &POLICY)]
//! async fn ping(up: bool) -> Result<&'static str, Unavailable> {
//!     if up { Ok("pong") } else { Err(Unavailable) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! // ...and for a service stack.
//! let mut service = ServiceBuilder::new()
//!     .retry(RetryPolicy::new(&POLICY))
//!     .service(service_fn(|up: bool| async move {
//!         if up { Ok("pong") } else { Err(Unavailable) }
//!     }));
//!
//! assert_eq!(ping(true).await.unwrap(), "pong");
//! assert_eq!(service.ready().await.unwrap().call(true).await.unwrap(), "pong");
//!
//! // Both give up after 4 calls, sleeping 100, 200, 400 ms in between.
//! let start = tokio::time::Instant::now();
//! assert!(service.ready().await.unwrap().call(false).await.is_err());
//! assert_eq!(start.elapsed(), Duration::from_millis(700));
//! # }
//! ```
//!
//! # Lifetimes: a `static` policy
//!
//! A [`RetryPolicy`] borrows its [`Policy`] (and budget): tower clones it
//! for every request, and each clone keeps that request's progress in a
//! [`RetryState`], which borrows the policy. A service that outlives the
//! current function (a server's, a client stored in a struct) needs
//! `'static` borrows: declare the policy as a `static`, or, for one built at
//! run time from configuration, leak it once at start-up:
//!
//! ```
//! use backoff_runtime::{Policy, tower::RetryPolicy};
//! use std::time::Duration;
//!
//! # let attempts_from_config = 5;
//! let policy: &'static Policy = Box::leak(Box::new(
//!     Policy::exponential(Duration::from_millis(50)).attempts(attempts_from_config),
//! ));
//! let retry: RetryPolicy<'static> = RetryPolicy::new(policy);
//! ```
//!
//! # Requests are cloned
//!
//! As each attempt starts, tower keeps a copy of the request for the next
//! one, made by [`tower::retry::Policy::clone_request`]. [`RetryPolicy`]
//! copies requests with [`Clone`] by default; for request types that are not
//! `Clone`, such as `reqwest::Request` (whose streaming body may not be
//! replayable), give [`clone_request_with`](RetryPolicy::clone_request_with)
//! a function such as `reqwest::Request::try_clone`. A request that cannot
//! be copied is sent once and not retried. No copy is made when the attempt
//! limit makes the attempt starting the last (unless the policy has a
//! budget, which must hear of that attempt's success).
//!
//! # What is not here
//!
//! A [`CircuitBreaker`](crate::CircuitBreaker) must be asked before each
//! attempt and must be able to fail a request without calling the service,
//! which `tower::retry::Policy` cannot do; put the breaker in its own layer,
//! or use `#[retry(circuit = ...)]`. There is no `on_retry` or `on_giveup`
//! hook: wrap the inner service to observe each attempt.

use core::fmt;

use ::tower::retry::Policy as TowerPolicy;

use crate::budget::RetryBudget;
use crate::clock;
use crate::decision::{Decision, IntoDecision};
use crate::driver;
use crate::hooks::{AcceptAll, Classify, RetryAll};
use crate::policy::Policy;
use crate::record::{Recording, Records};
use crate::report::GiveUpReason;
use crate::state::RetryState;
use crate::strategy::{Builtin, Strategy};
use cloner::{ByClone, RequestCloner};

/// A [`tower::retry::Policy`] that follows a
/// [`Policy`]: give it to [`ServiceBuilder::retry`](::tower::ServiceBuilder::retry)
/// or [`RetryLayer::new`](::tower::retry::RetryLayer::new).
///
/// By default every error is retried, every response accepted, and requests
/// are cloned with [`Clone`]; change that with [`when`](RetryPolicy::when),
/// [`when_ok`](RetryPolicy::when_ok) and
/// [`clone_request_with`](RetryPolicy::clone_request_with). The type
/// parameters after `S` are those three functions' types; you rarely write
/// them.
///
/// Each request tower sends gets its own clone of this value (tower clones
/// the policy per request), and with it a fresh count of attempts, schedule
/// and deadline; [`Clone`] starts a new request's progress. The deadline of
/// [`Policy::max_elapsed`] runs from the moment the request entered the
/// retry layer.
///
/// A retry that is granted spends a token of the [`budget`](RetryPolicy::budget),
/// if any, and a response that is accepted is a success, which refills the
/// budget by its token ratio. A request that gives up returns the inner
/// service's last outcome unchanged: its error, or the response `when_ok`
/// rejected.
///
/// # Examples
///
/// A service that answers like an HTTP server: errors for broken
/// connections, responses with a status.
///
/// ```
/// use backoff_runtime::{Decision, Jitter, Policy, tower::RetryPolicy};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
///
/// #[derive(Debug)]
/// enum Error { Refused, BadRequest }
///
/// #[derive(Debug)]
/// struct Response { status: u16 }
///
/// static POLICY: Policy = Policy::constant(Duration::from_secs(1)).jitter(Jitter::None).attempts(5);
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// static CALLS: AtomicU32 = AtomicU32::new(0);
/// let flaky = service_fn(|path: &'static str| async move {
///     match CALLS.fetch_add(1, Ordering::SeqCst) {
///         _ if path == "/bad" => Err(Error::BadRequest),
///         0 => Err(Error::Refused),
///         1 => Ok(Response { status: 503 }),
///         _ => Ok(Response { status: 200 }),
///     }
/// });
/// let retry = RetryPolicy::new(&POLICY)
///     .when(|e: &Error| matches!(e, Error::Refused))
///     .when_ok(|r: &Response| r.status == 503);
/// let mut service = ServiceBuilder::new().retry(retry).service(flaky);
///
/// let response = service.ready().await.unwrap().call("/").await.unwrap();
/// assert_eq!((response.status, CALLS.load(Ordering::SeqCst)), (200, 3));
///
/// // `when` said stop: no retry.
/// assert!(service.ready().await.unwrap().call("/bad").await.is_err());
/// assert_eq!(CALLS.load(Ordering::SeqCst), 4);
/// # }
/// ```
pub struct RetryPolicy<'p, S = Builtin, W = RetryAll, O = AcceptAll, C = ByClone> {
    policy: &'p Policy<S>,
    budget: Option<&'p RetryBudget>,
    when: W,
    when_ok: O,
    clone: C,
    /// This request's progress: built when the request starts if a deadline
    /// or a budget needs it from the start, else on the first failure.
    state: Option<RetryState<'p, S>>,
    /// This request's recording (begun when tower clones the policy for it).
    recording: Recording,
}

impl<'p, S> RetryPolicy<'p, S> {
    /// A tower policy following `policy`: every error retried, every
    /// response accepted, requests cloned with [`Clone`].
    ///
    /// ```
    /// use backoff_runtime::{Policy, tower::RetryPolicy};
    ///
    /// static POLICY: Policy = Policy::immediate().attempts(2);
    /// let retry: RetryPolicy<'static> = RetryPolicy::new(&POLICY);
    /// ```
    pub const fn new(policy: &'p Policy<S>) -> Self {
        RetryPolicy {
            policy,
            budget: None,
            when: RetryAll,
            when_ok: AcceptAll,
            clone: ByClone,
            state: None,
            recording: Recording::OFF,
        }
    }
}

impl<'p, S, W, O, C> RetryPolicy<'p, S, W, O, C> {
    /// Classifies the inner service's errors: `true` or
    /// [`Decision::Retry`] retries on the policy's schedule,
    /// [`Decision::RetryAfter`] waits exactly as long (up to the policy's
    /// [`retry_after_max`](Policy::retry_after_max); a longer wait gives up
    /// at once), [`Decision::Throttled`] uses its
    /// [`throttled`](Policy::throttled) schedule, and `false` or
    /// [`Decision::Stop`] returns the error at once. The default retries
    /// every error.
    ///
    /// The error type is the service's `Error`. Annotate a closure's
    /// parameter (`|e: &MyError| ...`): it cannot be inferred from the
    /// service, which is only known later. A `fn` item needs no annotation.
    ///
    /// ```
    /// use backoff_runtime::{Policy, tower::RetryPolicy};
    /// use std::io;
    /// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
    ///
    /// static POLICY: Policy = Policy::immediate().attempts(3);
    ///
    /// fn transient(e: &io::Error) -> bool {
    ///     e.kind() == io::ErrorKind::ConnectionRefused
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// static CALLS: AtomicU32 = AtomicU32::new(0);
    /// let mut service = ServiceBuilder::new()
    ///     .retry(RetryPolicy::new(&POLICY).when(transient))
    ///     .service(service_fn(|()| async {
    ///         match CALLS.fetch_add(1, SeqCst) {
    ///             0 => Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)),
    ///             _ => Err(io::Error::from(io::ErrorKind::PermissionDenied)),
    ///         }
    ///     }));
    /// let error = service.ready().await.unwrap().call(()).await.unwrap_err();
    /// assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
    /// assert_eq!(CALLS.load(SeqCst), 2); // refused, then denied: not transient, not retried
    /// # }
    /// ```
    pub fn when<E, D, W2>(self, when: W2) -> RetryPolicy<'p, S, W2, O, C>
    where
        W2: Fn(&E) -> D,
        D: IntoDecision,
    {
        self.with(|(_, when_ok, clone)| (when, when_ok, clone))
    }

    /// Classifies the inner service's responses (its `Ok` values): `true`,
    /// [`Decision::Retry`], [`Decision::RetryAfter`] or
    /// [`Decision::Throttled`] retries the request as [`when`](RetryPolicy::when)
    /// would an error; `false` or [`Decision::Stop`] accepts the response.
    /// When the request gives up, the last response is returned unchanged.
    /// The default accepts every response.
    ///
    /// This is how an HTTP client's 503 (an `Ok` to `reqwest` and `hyper`)
    /// is retried; with the `http` feature,
    /// [`http::decision_from_headers`](crate::http::decision_from_headers)
    /// also honours its `Retry-After`. Annotate a closure's parameter, as for
    /// `when`.
    ///
    /// ```
    /// use backoff_runtime::{Policy, tower::RetryPolicy};
    /// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
    ///
    /// static POLICY: Policy = Policy::immediate().attempts(3);
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// static CALLS: AtomicU32 = AtomicU32::new(0);
    /// let mut service = ServiceBuilder::new()
    ///     .retry(RetryPolicy::new(&POLICY).when_ok(|status: &u16| *status == 503))
    ///     .service(service_fn(|()| async {
    ///         CALLS.fetch_add(1, SeqCst);
    ///         Ok::<u16, std::io::Error>(503)
    ///     }));
    /// // Three 503s: the last is returned as it came.
    /// assert_eq!(service.ready().await.unwrap().call(()).await.unwrap(), 503);
    /// assert_eq!(CALLS.load(SeqCst), 3);
    /// # }
    /// ```
    pub fn when_ok<T, D, O2>(self, when_ok: O2) -> RetryPolicy<'p, S, W, O2, C>
    where
        O2: Fn(&T) -> D,
        D: IntoDecision,
    {
        self.with(|(when, _, clone)| (when, when_ok, clone))
    }

    /// Copies requests with `clone` instead of [`Clone`]: for request types
    /// that are not `Clone`, or that cannot always be copied. `None` makes
    /// the attempt starting the last: its outcome is returned as it is.
    ///
    /// ```
    /// use backoff_runtime::{Policy, tower::RetryPolicy};
    /// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
    ///
    /// /// A request that may carry a one-shot body.
    /// struct Request { body: Option<String> }
    ///
    /// impl Request {
    ///     fn try_clone(&self) -> Option<Request> {
    ///         Some(Request { body: Some(self.body.clone()?) })
    ///     }
    /// }
    ///
    /// static POLICY: Policy = Policy::immediate().attempts(3);
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// static CALLS: AtomicU32 = AtomicU32::new(0);
    /// let mut service = ServiceBuilder::new()
    ///     .retry(RetryPolicy::new(&POLICY).clone_request_with(Request::try_clone))
    ///     .service(service_fn(|_: Request| async {
    ///         CALLS.fetch_add(1, SeqCst);
    ///         Err::<(), _>("unavailable")
    ///     }));
    /// let replayable = Request { body: Some("payload".into()) };
    /// assert!(service.ready().await.unwrap().call(replayable).await.is_err());
    /// assert_eq!(CALLS.load(SeqCst), 3);
    /// let one_shot = Request { body: None };
    /// assert!(service.ready().await.unwrap().call(one_shot).await.is_err());
    /// assert_eq!(CALLS.load(SeqCst), 3 + 1);
    /// # }
    /// ```
    pub fn clone_request_with<R, C2>(self, clone: C2) -> RetryPolicy<'p, S, W, O, C2>
    where
        C2: Fn(&R) -> Option<R>,
    {
        self.with(|(when, when_ok, _)| (when, when_ok, clone))
    }

    /// The same policy with its classifiers and cloner mapped by `f`: what
    /// each builder changes, the rest kept.
    fn with<W2, O2, C2>(
        self,
        f: impl FnOnce((W, O, C)) -> (W2, O2, C2),
    ) -> RetryPolicy<'p, S, W2, O2, C2> {
        let (when, when_ok, clone) = f((self.when, self.when_ok, self.clone));
        RetryPolicy {
            policy: self.policy,
            budget: self.budget,
            when,
            when_ok,
            clone,
            state: self.state,
            recording: self.recording,
        }
    }

    /// Shares a [`RetryBudget`] across requests (and with `#[retry(budget =
    /// ...)]` functions naming the same one): each granted retry spends a
    /// token, each accepted response gives back the budget's token ratio, and
    /// when the bucket is empty, requests return their outcome without
    /// retrying.
    ///
    /// ```
    /// use backoff_runtime::{Policy, RetryBudget, tower::RetryPolicy};
    /// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
    ///
    /// static POLICY: Policy = Policy::immediate().attempts(10);
    /// static BUDGET: RetryBudget = RetryBudget::new(3, 0.1);
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// static CALLS: AtomicU32 = AtomicU32::new(0);
    /// let mut service = ServiceBuilder::new()
    ///     .retry(RetryPolicy::new(&POLICY).budget(&BUDGET))
    ///     .service(service_fn(|()| async {
    ///         CALLS.fetch_add(1, SeqCst);
    ///         Err::<(), _>("down")
    ///     }));
    /// // The service is down: the first request spends the three tokens...
    /// assert!(service.ready().await.unwrap().call(()).await.is_err());
    /// assert_eq!((CALLS.load(SeqCst), BUDGET.tokens()), (4, 0.0));
    /// // ...and the next ones are not retried at all.
    /// assert!(service.ready().await.unwrap().call(()).await.is_err());
    /// assert_eq!(CALLS.load(SeqCst), 5);
    /// # }
    /// ```
    pub const fn budget(mut self, budget: &'p RetryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// A request's progress, from its first failure (or from its start, see
    /// [`Clone`]).
    fn start(policy: &'p Policy<S>, budget: Option<&'p RetryBudget>) -> RetryState<'p, S> {
        let clock = clock::for_async();
        driver::Origin::at(policy, clock, Some(clock()), budget).state()
    }
}

/// A new request's policy: the same settings, a fresh count; a state at
/// once if a deadline (timed from now) or a budget (which hears of a
/// first-attempt success) needs it, else none until the first failure.
impl<S, W: Clone, O: Clone, C: Clone> Clone for RetryPolicy<'_, S, W, O, C> {
    fn clone(&self) -> Self {
        RetryPolicy {
            policy: self.policy,
            budget: self.budget,
            when: self.when.clone(),
            when_ok: self.when_ok.clone(),
            clone: self.clone.clone(),
            state: (self.budget.is_some() || self.policy.elapsed_limit().is_some())
                .then(|| Self::start(self.policy, self.budget)),
            recording: Recording::begin(self.policy.name(), clock::for_async()),
        }
    }
}

impl<S: fmt::Debug, W, O, C> fmt::Debug for RetryPolicy<'_, S, W, O, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("policy", self.policy)
            .field("budget", &self.budget)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<Req, Res, E, S, W, O, C> TowerPolicy<Req, Res, E> for RetryPolicy<'_, S, W, O, C>
where
    S: Strategy,
    W: Classify<E>,
    O: Classify<Res>,
    C: RequestCloner<Req>,
{
    type Future = tokio::time::Sleep;

    fn retry(&mut self, _: &mut Req, result: &mut Result<Res, E>) -> Option<Self::Future> {
        let decision = match result {
            Ok(response) => match self.when_ok.classify(response) {
                Decision::Stop => {
                    driver::succeeded(&mut self.state, self.budget);
                    self.recording.succeeded();
                    return None;
                }
                retry => retry,
            },
            Err(error) => self.when.classify(error),
        };
        let rejected_ok = result.is_ok();
        let state = (self.state).get_or_insert_with(|| Self::start(self.policy, self.budget));
        let Some(delay) = state.next_delay_for(decision) else {
            let reason = state.give_up_reason().unwrap_or(GiveUpReason::Attempts);
            self.recording.gave_up(Some(rejected_ok), reason, None);
            return None;
        };
        self.recording.retried(rejected_ok, delay);
        Some(tokio::time::sleep(delay))
    }

    fn clone_request(&mut self, req: &Req) -> Option<Req> {
        // The copy is for the attempt after the one about to start; none can
        // follow the last (a budget must still hear of that one's outcome,
        // which tower reports only for a request it could have retried).
        // (Nor must the recorder, while one is installed.)
        let next = self.state.as_ref().map_or(0, RetryState::attempt);
        let about_to_start = next.saturating_add(1);
        if self.budget.is_none()
            && !crate::record::on()
            && self.policy.is_last_attempt(about_to_start)
        {
            return None;
        }
        self.recording.attempt_starts();
        self.clone.clone_request(req)
    }
}

/// How [`RetryPolicy`] copies requests: [`ByClone`](cloner::ByClone) (the
/// default) or the function given to
/// [`clone_request_with`](RetryPolicy::clone_request_with). Users never name
/// them (the type parameter `C` has its default or is inferred), so they live
/// in a private module, which also seals the trait.
mod cloner {
    /// A copy of a request for another attempt, or `None` if it cannot be
    /// sent again: the bound of [`RetryPolicy`](super::RetryPolicy)'s
    /// `tower::retry::Policy` implementation.
    pub trait RequestCloner<Req> {
        /// A copy of `req` for another attempt, or `None` if it cannot be
        /// sent again.
        fn clone_request(&self, req: &Req) -> Option<Req>;
    }

    /// Requests are copied with [`Clone`]: the default of
    /// [`RetryPolicy`](super::RetryPolicy).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct ByClone;

    impl<Req: Clone> RequestCloner<Req> for ByClone {
        #[inline]
        fn clone_request(&self, req: &Req) -> Option<Req> {
            Some(req.clone())
        }
    }

    impl<Req, F> RequestCloner<Req> for F
    where
        F: Fn(&Req) -> Option<Req>,
    {
        #[inline]
        fn clone_request(&self, req: &Req) -> Option<Req> {
            self(req)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::{ByClone, RequestCloner};

        #[test]
        fn by_clone_copies_and_a_function_decides() {
            assert_eq!(ByClone.clone_request(&vec![1, 2]), Some(vec![1, 2]));
            let refuse = |_: &String| None::<String>;
            assert_eq!(refuse.clone_request(&String::from("POST /")), None);
        }
    }
}
