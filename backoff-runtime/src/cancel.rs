//! Cancellation: [`Cancel`], what `cancel = EXPR` (in the attribute),
//! [`Retrying::cancel`](crate::Retrying::cancel) and
//! [`Policy::retry_cancellable`](crate::Policy::retry_cancellable) accept;
//! [`CancelToken`], the ready one; [`Cancelled`], the error of a call
//! cancelled before its first attempt.
//!
//! A cancel ends the sleep between two attempts at once, in a plain fn (the
//! thread waits on the token rather than in `std::thread::sleep`) as in an
//! `async fn` (the sleep races the token's [`cancelled`](Cancel::cancelled)
//! future): no further attempt runs, and the call returns the last
//! attempt's outcome, giving up with
//! [`GiveUpReason::Cancelled`](crate::GiveUpReason::Cancelled) (`on_giveup`
//! and `fallback` see it). An attempt in flight is never interrupted: a
//! cancel during an attempt takes effect when the attempt ends, if the call
//! would otherwise retry. A token cancelled before the first attempt fails
//! the call with `E::from(Cancelled)` without running the body.
//!
//! While a token is given, a failed attempt's outcome is kept during the
//! sleep (it is the call's result if the sleep is cancelled), so an
//! `async fn`'s future holds it across the await: that future is `Send`
//! only if the error (and, with `when_ok`, the `Ok` value) is.

use core::future::{Future, poll_fn};
use core::pin::pin;
use core::task::{Poll, Waker};
use core::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// A cancellation signal a retry loop can wait on: `cancel = EXPR` in the
/// attribute, [`Retrying::cancel`](crate::Retrying::cancel) and
/// [`Policy::retry_cancellable`](crate::Policy::retry_cancellable) take a
/// value whose type implements it.
///
/// Implemented by [`CancelToken`], by `tokio_util::sync::CancellationToken`
/// (feature `tokio-util`), and by references and `Arc`s of any
/// implementor. A type of your own implements two methods: whether it is
/// cancelled, and a future that completes when it is (the async sleep
/// races it). The blocking wait of a plain fn,
/// [`wait_timeout`](Cancel::wait_timeout), has a default that parks the
/// thread on that future (it allocates the thread's waker on each wait);
/// override it with a wait of your own (a `Condvar`, as [`CancelToken`]
/// does) when you have one.
///
/// ```
/// use backoff_runtime::control::Cancel;
/// use backoff_runtime::{CancelToken, Policy};
/// use std::time::Duration;
///
/// /// A service's shutdown: cancelled when the token is, or when asked.
/// struct Shutdown {
///     token: CancelToken,
/// }
///
/// impl Cancel for Shutdown {
///     fn is_cancelled(&self) -> bool {
///         self.token.is_cancelled()
///     }
///     fn cancelled(&self) -> impl Future<Output = ()> + '_ {
///         self.token.cancelled()
///     }
/// }
///
/// let shutdown = Shutdown { token: CancelToken::new() };
/// shutdown.token.cancel();
/// // Cancelled before its first attempt: the operation never runs.
/// let result: std::io::Result<()> = Policy::constant(Duration::from_secs(60))
///     .retry_cancellable(&shutdown, || unreachable!());
/// assert_eq!(result.unwrap_err().kind(), std::io::ErrorKind::Interrupted);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a cancellation token",
    label = "not a token: `cancel` takes a `backoff_runtime::CancelToken`, a `tokio_util::sync::CancellationToken` (feature `tokio-util`), a reference to one, or a type of yours implementing `backoff_runtime::control::Cancel`",
    note = "a retry loop waits on the token between attempts, so that a cancel ends its sleep at once"
)]
pub trait Cancel {
    /// Whether the signal was given.
    fn is_cancelled(&self) -> bool;

    /// A future that completes once the signal is given (at once if it
    /// was).
    fn cancelled(&self) -> impl Future<Output = ()> + '_;

    /// Blocks the thread until the signal is given or `timeout` has
    /// passed, whichever is first; whether it was given. The default parks
    /// the thread on [`cancelled`](Cancel::cancelled), never in
    /// `std::thread::sleep`.
    fn wait_timeout(&self, timeout: Duration) -> bool {
        park_until(self, timeout)
    }
}

/// [`Cancel::wait_timeout`]'s default: polls `cancelled` with a waker that
/// unparks this thread, parking it in between until `timeout` has passed.
fn park_until<C: Cancel + ?Sized>(cancel: &C, timeout: Duration) -> bool {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    if cancel.is_cancelled() {
        return true;
    }
    let deadline = std::time::Instant::now().checked_add(timeout);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = core::task::Context::from_waker(&waker);
    let mut cancelled = pin!(cancel.cancelled());
    loop {
        if cancelled.as_mut().poll(&mut cx).is_ready() {
            return true;
        }
        match deadline.map(|d| d.saturating_duration_since(std::time::Instant::now())) {
            None => std::thread::park(),
            Some(left) if left.is_zero() => return cancel.is_cancelled(),
            Some(left) => std::thread::park_timeout(left),
        }
    }
}

/// `Cancel` through a reference and through an `Arc`: the token's own.
macro_rules! through {
    ($($ty:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl<C: Cancel + ?Sized> Cancel for $ty {
            #[inline]
            fn is_cancelled(&self) -> bool {
                (**self).is_cancelled()
            }
            fn cancelled(&self) -> impl Future<Output = ()> + '_ {
                (**self).cancelled()
            }
            fn wait_timeout(&self, timeout: Duration) -> bool {
                (**self).wait_timeout(timeout)
            }
        }
    )*};
}

through!(&C, Arc<C>);

/// `tokio_util`'s token: [`Cancel::wait_timeout`] parks the thread on its
/// `cancelled()` future.
#[cfg(feature = "tokio-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio-util")))]
#[diagnostic::do_not_recommend]
impl Cancel for tokio_util::sync::CancellationToken {
    #[inline]
    fn is_cancelled(&self) -> bool {
        tokio_util::sync::CancellationToken::is_cancelled(self)
    }
    fn cancelled(&self) -> impl Future<Output = ()> + '_ {
        tokio_util::sync::CancellationToken::cancelled(self)
    }
}

/// A cancellation token: [`cancel`](CancelToken::cancel) it once, from any
/// thread or task, and every retry loop waiting on it (or on a clone of it:
/// clones share the signal) stops sleeping at once. Cancelling cannot be
/// undone.
///
/// A plain fn waits on it with a `Condvar`; an async loop registers its
/// task's waker in it (the token's list of wakers grows to the most tasks
/// that waited on it at once, and is reused after).
///
/// ```
/// use backoff_runtime::{CancelToken, Cancelled, retry};
///
/// #[derive(Debug, PartialEq)]
/// enum E { Busy, Cancelled }
/// impl From<Cancelled> for E {
///     fn from(_: Cancelled) -> Self { E::Cancelled }
/// }
///
/// #[retry(constant("1h"), attempts = 3, cancel = token)]
/// fn work(token: &CancelToken) -> Result<(), E> {
///     token.cancel(); // (from another thread, in a real service)
///     Err(E::Busy)
/// }
///
/// let token = CancelToken::new();
/// // The hour's sleep ends at once; the call returns its last outcome.
/// assert_eq!(work(&token), Err(E::Busy));
/// // Cancelled before its first attempt: `E::from(Cancelled)`.
/// assert_eq!(work(&token), Err(E::Cancelled));
/// assert!(token.clone().is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

/// What the clones of a [`CancelToken`] share.
#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    /// The wakers of the tasks waiting, by slot (`None`: a free slot).
    wakers: Mutex<Vec<Option<Waker>>>,
    /// The threads waiting.
    parked: Condvar,
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives the signal: every loop waiting on this token or a clone of it
    /// wakes at once. Calling it again does nothing.
    pub fn cancel(&self) {
        let inner = &*self.inner;
        if inner.cancelled.swap(true, Ordering::AcqRel) {
            return;
        }
        let wakers = core::mem::take(&mut *inner.lock());
        inner.parked.notify_all();
        wakers.into_iter().flatten().for_each(Waker::wake);
    }

    /// Whether [`cancel`](CancelToken::cancel) was called, on this token or
    /// a clone of it.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// A future that completes once the token is cancelled.
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + '_ {
        Waiting {
            inner: &self.inner,
            slot: None,
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<Waker>>> {
        self.wakers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl core::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[diagnostic::do_not_recommend]
impl Cancel for CancelToken {
    #[inline]
    fn is_cancelled(&self) -> bool {
        CancelToken::is_cancelled(self)
    }

    fn cancelled(&self) -> impl Future<Output = ()> + '_ {
        CancelToken::cancelled(self)
    }

    /// Waits on the token's `Condvar`.
    fn wait_timeout(&self, timeout: Duration) -> bool {
        let inner = &*self.inner;
        let guard = inner.lock();
        let waiting = |_: &mut Vec<Option<Waker>>| !inner.cancelled.load(Ordering::Acquire);
        drop(inner.parked.wait_timeout_while(guard, timeout, waiting));
        self.is_cancelled()
    }
}

/// [`CancelToken::cancelled`]: its task's waker in a slot of the token's
/// list while it waits.
struct Waiting<'a> {
    inner: &'a Inner,
    slot: Option<usize>,
}

impl Future for Waiting<'_> {
    type Output = ();

    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> Poll<()> {
        if self.inner.cancelled.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let mut wakers = self.inner.lock();
        // (Checked again under the lock, which `cancel` takes after setting
        // the flag: a waker stored here is woken.)
        if self.inner.cancelled.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        // Its slot: the one it had, else the first free one, else a new one.
        let i = self
            .slot
            .or_else(|| wakers.iter().position(Option::is_none));
        let i = i.unwrap_or_else(|| {
            wakers.push(None);
            wakers.len() - 1
        });
        wakers[i] = Some(cx.waker().clone());
        drop(wakers);
        self.slot = Some(i);
        Poll::Pending
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(i) = self.slot
            && let Some(slot) = self.inner.lock().get_mut(i)
        {
            *slot = None;
        }
    }
}

/// The error of a call cancelled before its first attempt: the attribute's
/// `cancel`, [`Retrying::cancel`](crate::Retrying::cancel) and
/// [`Policy::retry_cancellable`](crate::Policy::retry_cancellable) return
/// `E::from(Cancelled)` without running the operation, as `circuit` returns
/// `E::from(CircuitOpen)`. (A call cancelled later returns its last
/// attempt's outcome.) [`Error<E>`](crate::Error) has the variant
/// [`Error::Cancelled`](crate::Error::Cancelled), and `std::io::Error` the
/// conversion (kind [`Interrupted`](std::io::ErrorKind::Interrupted)).
///
/// ```
/// use backoff_runtime::Cancelled;
///
/// let e = std::io::Error::from(Cancelled);
/// assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
/// assert_eq!(Cancelled.to_string(), "cancelled");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Cancelled;

crate::control_error! {
    Cancelled: "cancelled", Interrupted
}

/// Awaits `sleep` unless `cancelled` completes first (polled first, so a
/// token cancelled already wins at once); whether it did.
pub async fn race(cancelled: impl Future<Output = ()>, sleep: impl Future<Output = ()>) -> bool {
    let (mut sleep, mut cancelled) = (pin!(sleep), pin!(cancelled));
    poll_fn(|cx| {
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(true);
        }
        sleep.as_mut().poll(cx).map(|()| false)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrying::Token;

    #[test]
    fn a_waiting_thread_wakes_at_the_cancel() {
        let token = CancelToken::new();
        let other = token.clone();
        let waiter = std::thread::spawn(move || other.wait_timeout(Duration::MAX));
        token.cancel();
        assert!(waiter.join().unwrap());
        // (A loop's wait: a zero delay only asks.)
        let wait = Token::<(), Cancelled>::wait(&token, Duration::ZERO, Ok(()));
        assert_eq!(wait, Some(Ok(())));
    }

    #[test]
    fn the_default_wait_parks_until_the_cancel() {
        struct Mine(CancelToken);
        impl Cancel for Mine {
            fn is_cancelled(&self) -> bool {
                self.0.is_cancelled()
            }
            fn cancelled(&self) -> impl Future<Output = ()> + '_ {
                self.0.cancelled()
            }
        }
        let token = CancelToken::new();
        let mine = Arc::new(Mine(token.clone()));
        let other = Arc::clone(&mine);
        let waiter = std::thread::spawn(move || other.wait_timeout(Duration::from_secs(3600)));
        token.cancel();
        assert!(waiter.join().unwrap());
        assert!(!Mine(CancelToken::new()).wait_timeout(Duration::from_millis(1)));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn an_async_wait_ends_at_the_cancel() {
        let token = CancelToken::new();
        let other = token.clone();
        let start = tokio::time::Instant::now();
        let sleep = Token::<(), Cancelled>::sleep(&token, Duration::from_secs(60), Ok(()));
        let (cancelled, ()) = tokio::join!(sleep, async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            other.cancel();
        });
        assert_eq!(cancelled, Some(Ok(())));
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        let zero = Token::<(), Cancelled>::sleep(&token, Duration::ZERO, Err(Cancelled));
        assert_eq!(zero.await, Some(Err(Cancelled)));
        assert_eq!(format!("{token:?}"), "CancelToken { cancelled: true }");
    }
}
