//! What the expansion runs a call through: the return type's dispatch to
//! the runtime's loops (`RetryResult`), the default sleep and timer of an
//! `async fn`.
//!
//! The traits are defined in [`crate::retry_args`], under the names a
//! message gives them (`ReturnsResult`, `DefaultAsyncSleep`,
//! `TimeoutTimer`, `TokioFeature`); here are what they do, their impls,
//! and the names the expansion gives them.

#[cfg(feature = "tokio")]
use core::{future::Future, time::Duration};

#[cfg(feature = "tokio")]
use super::steps::DefaultSleeping;
#[cfg(feature = "tracing")]
use super::trace::Traced;
use crate::decision::Decision;
use crate::driver::{Origin, Trace};
pub use crate::retry_args::{
    DefaultAsyncSleep as AsyncSleep, ReturnsResult as RetryResult, TimeoutTimer as AsyncTimeout,
    TokioFeature as DefaultSleep,
};
use crate::strategy::Strategy;
#[cfg(feature = "tokio")]
use crate::timeout::Elapsed;

#[diagnostic::do_not_recommend]
impl<T, E> RetryResult for Result<T, E> {
    type Ok = T;
    type Err = E;
    #[inline]
    fn into_result(self) -> Result<T, E> {
        self
    }
    #[inline]
    fn from_result(r: Result<T, E>) -> Self {
        r
    }
    #[inline(always)]
    fn retry_blocking<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<E>,
        op: impl FnMut() -> Self,
    ) -> Self {
        crate::loops::blocking(start, Some(function), trace, crate::hooks::RetryAll, op)
    }
    #[inline(always)]
    fn retry_blocking_when<S: Strategy>(
        start: &Origin<'_, S>,
        function: &'static str,
        trace: impl Trace<E>,
        when: impl FnMut(&E) -> Decision,
        op: impl FnMut() -> Self,
    ) -> Self {
        crate::loops::blocking(start, Some(function), trace, when, op)
    }
    #[cfg(feature = "tracing")]
    #[inline(always)]
    fn traced<A: FnMut() -> Self>(
        name: &'static str,
        attempts: &A,
        show: for<'a> fn(&'a E) -> &'a dyn core::fmt::Display,
    ) -> impl Trace<E> + use<T, E, A> {
        let _ = attempts;
        Traced { name, show }
    }
}

/// The error type of `R`.
pub type ErrorOf<R> = <R as RetryResult>::Err;

/// The success type of `R`.
pub type OkOf<R> = <R as RetryResult>::Ok;

#[cfg(feature = "tokio")]
impl AsyncSleep for DefaultSleep {
    #[inline]
    fn sleep(d: Duration) -> impl Future<Output = ()> + Send {
        DefaultSleeping {
            sleep: ::tokio::time::sleep(d),
        }
    }
}

#[cfg(feature = "tokio")]
impl AsyncTimeout for DefaultSleep {
    #[inline]
    fn timeout<F: Future>(d: Duration, f: F) -> impl Future<Output = Result<F::Output, Elapsed>> {
        // `Timeout` saturates an unrepresentable deadline to its far future.
        let timeout = ::tokio::time::timeout(d, f);
        async move { timeout.await.map_err(|_| Elapsed) }
    }
}
