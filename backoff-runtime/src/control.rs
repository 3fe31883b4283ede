//! What `circuit`, `budget` and `throttle` accept: one trait per control.
//!
//! `#[retry(circuit = EXPR)]`, [`Retrying::circuit`](crate::Retrying::circuit)
//! and [`Hedge::circuit`](crate::Hedge::circuit) take any value whose
//! type implements [`Circuit`]; `budget` takes a [`Budget`] and `throttle` a
//! [`Throttle`]. The core's own controls implement them
//! ([`CircuitBreaker`], [`RetryBudget`], [`AdaptiveThrottle`]), and so do
//! references, `Box`es, `Arc`s and `LazyLock`s of any implementor (so a
//! `static` in a `LazyLock` is named as it is).
//!
//! A type of your own implements one by lending the control it owns: the
//! retry loops call the lent control directly, so a call through your type
//! costs what a call through the control itself costs. What the type adds
//! is its own: a name, a registry, or another process's view of the same
//! dependency. A fleet (crate `backoff-redis`) is such a type; it
//! consults and drives its local controls through one public extension
//! point per control, which any other coordinator may use the same way:
//! [`circuit::Remote`](crate::circuit::Remote) and
//! [`circuit::RemoteView`](crate::circuit::RemoteView) (what a remote may do
//! to a breaker, in one file), [`budget::Remote`](crate::budget::Remote)
//! and [`budget::RemoteView`](crate::budget::RemoteView),
//! [`throttle::Remote`](crate::throttle::Remote) and
//! [`throttle::RemoteView`](crate::throttle::RemoteView).
//!
//! ```
//! use backoff_runtime::circuit::RemoteView;
//! use backoff_runtime::control::Circuit;
//! use backoff_runtime::{CircuitBreaker, CircuitOpen, CircuitState, retry};
//! use std::sync::LazyLock;
//! use std::time::Duration;
//!
//! /// A breaker an operator can hold open by hand (a maintenance window).
//! struct Maintained {
//!     breaker: CircuitBreaker,
//! }
//!
//! impl Maintained {
//!     fn new() -> Self {
//!         let breaker = CircuitBreaker::new(3, 1, Duration::from_secs(30));
//!         // A remote: the hold below needs one (nothing to wake here).
//!         RemoteView::attach(&breaker, Box::new(|| {})).expect("its first remote");
//!         Maintained { breaker }
//!     }
//!     fn hold_open(&self) {
//!         RemoteView::of(&self.breaker).hold(std::time::Instant::now());
//!     }
//! }
//!
//! impl Circuit for Maintained {
//!     fn as_circuit(&self) -> &CircuitBreaker {
//!         &self.breaker
//!     }
//! }
//!
//! static DB: LazyLock<Maintained> = LazyLock::new(Maintained::new);
//!
//! #[derive(Debug, PartialEq)]
//! enum E {
//!     Down,
//!     Open,
//! }
//! impl From<CircuitOpen> for E {
//!     fn from(_: CircuitOpen) -> Self {
//!         E::Open
//!     }
//! }
//!
//! #[retry(attempts = 1, circuit = DB)]
//! fn query(ok: bool) -> Result<u32, E> {
//!     if ok { Ok(1) } else { Err(E::Down) }
//! }
//!
//! assert_eq!(query(true), Ok(1));
//! DB.hold_open();
//! assert_eq!(DB.as_circuit().state(), CircuitState::Open);
//! assert_eq!(query(true), Err(E::Open)); // refused: the body does not run
//! ```

use std::sync::{Arc, LazyLock};

/// What `cancel` accepts (the attribute's, [`Retrying::cancel`](crate::Retrying::cancel)'s):
/// see [`CancelToken`](crate::CancelToken).
pub use crate::cancel::Cancel;

use crate::budget::RetryBudget;
use crate::circuit::CircuitBreaker;
use crate::throttle::AdaptiveThrottle;

/// What `circuit = EXPR` accepts: a value that lends a [`CircuitBreaker`].
///
/// Implemented by [`CircuitBreaker`] itself, by `&T`, `Box<T>`, `Arc<T>`
/// and `LazyLock<T>` of an implementor, and by a fleet's shared breaker
/// (`backoff_redis::SharedBreaker`). See the [module](self) for a type of
/// your own.
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `circuit` must give a `backoff_runtime::CircuitBreaker`, not `{Self}`",
    label = "not a `CircuitBreaker`",
    note = "name a `static BREAKER: CircuitBreaker = CircuitBreaker::new(5, 1, Duration::from_secs(30));`, or give one owned elsewhere, such as `circuit = self.breaker` or `circuit = &*self.shared_breaker` (an `Arc`); a type of your own that owns a breaker can implement `backoff_runtime::control::Circuit`; a budget goes to `budget = ..`, a throttle to `throttle = ..`"
)]
pub trait Circuit {
    /// The breaker every call through this value acquires and reports to.
    fn as_circuit(&self) -> &CircuitBreaker;
}

/// What `budget = EXPR` accepts: a value that lends a [`RetryBudget`].
///
/// Implemented by [`RetryBudget`] itself, by `&T`, `Box<T>`, `Arc<T>` and
/// `LazyLock<T>` of an implementor, and by a fleet's shared budget
/// (`backoff_redis::SharedBudget`).
///
/// ```
/// use backoff_runtime::RetryBudget;
/// use backoff_runtime::control::Budget;
///
/// /// A budget per tenant, kept in a registry of the caller's.
/// struct Tenant {
///     budget: RetryBudget,
/// }
/// impl Budget for Tenant {
///     fn as_budget(&self) -> &RetryBudget {
///         &self.budget
///     }
/// }
///
/// let tenant = Tenant { budget: RetryBudget::new(1, 0.0) };
/// let policy = backoff_runtime::Policy::immediate().attempts(5);
/// let mut calls = 0;
/// let result: Result<(), &str> = policy
///     .retrying(|| {
///         calls += 1;
///         Err("down")
///     })
///     .budget(&tenant)
///     .call();
/// assert!(result.is_err());
/// assert_eq!(calls, 2, "one token: one retry");
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `budget` must give a `backoff_runtime::RetryBudget`, not `{Self}`",
    label = "not a `RetryBudget`",
    note = "name a `static BUDGET: RetryBudget = RetryBudget::new(10, 0.1);`, or give one owned elsewhere, such as `budget = self.budget` or `budget = &*self.shared_budget` (an `Arc`); a type of your own that owns a budget can implement `backoff_runtime::control::Budget`; a breaker goes to `circuit = ..`, a throttle to `throttle = ..`"
)]
pub trait Budget {
    /// The bucket every retry through this value spends from.
    fn as_budget(&self) -> &RetryBudget;
}

/// What `throttle = EXPR` accepts: a value that lends an
/// [`AdaptiveThrottle`].
///
/// Implemented by [`AdaptiveThrottle`] itself, by `&T`, `Box<T>`, `Arc<T>`
/// and `LazyLock<T>` of an implementor, and by a fleet's shared throttle
/// (`backoff_redis::SharedThrottle`).
#[diagnostic::on_unimplemented(
    message = "`#[retry]`: `throttle` must give a `backoff_runtime::AdaptiveThrottle`, not `{Self}`",
    label = "not an `AdaptiveThrottle`",
    note = "name a `static THROTTLE: AdaptiveThrottle = AdaptiveThrottle::new(2.0, Duration::from_secs(120));`, or give one owned elsewhere, such as `throttle = self.throttle` or `throttle = &*self.shared_throttle` (an `Arc`); a type of your own that owns a throttle can implement `backoff_runtime::control::Throttle`; a breaker goes to `circuit = ..`, a budget to `budget = ..`"
)]
pub trait Throttle {
    /// The throttle every attempt through this value asks first.
    fn as_throttle(&self) -> &AdaptiveThrottle;
}

/// The impls: the control lends itself, and `&T`, `Box<T>`, `Arc<T>` and
/// `LazyLock<T, F>` lend what `T` lends.
macro_rules! handles {
    ($trait_:ident, $lend:ident, $control:ty) => {
        handles!(@ $trait_, $lend, $control, [] $control, |c| c);
        handles!(@ $trait_, $lend, $control, [T: $trait_ + ?Sized] &T, |c| (**c).$lend());
        handles!(@ $trait_, $lend, $control, [T: $trait_ + ?Sized] Box<T>, |c| (**c).$lend());
        handles!(@ $trait_, $lend, $control, [T: $trait_ + ?Sized] Arc<T>, |c| (**c).$lend());
        handles!(@ $trait_, $lend, $control, [T: $trait_, F: FnOnce() -> T] LazyLock<T, F>,
            |c| (**c).$lend());
    };
    (@ $trait_:ident, $lend:ident, $control:ty, [$($g:tt)*] $ty:ty, |$c:ident| $lent:expr) => {
        #[diagnostic::do_not_recommend]
        impl<$($g)*> $trait_ for $ty {
            #[inline]
            fn $lend(&self) -> &$control {
                let $c = self;
                $lent
            }
        }
    };
}

handles!(Circuit, as_circuit, CircuitBreaker);
handles!(Budget, as_budget, RetryBudget);
handles!(Throttle, as_throttle, AdaptiveThrottle);
