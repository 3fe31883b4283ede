//! What `chaos = CHAOS` expands to: a draw through [`ChaosInjection`],
//! implemented only with the feature `chaos`, so that the argument without
//! it is one error that names the feature.

use core::future::Future;

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
    type Error;
    /// A blocking attempt's draw: sleeps the latency, returns the fault.
    fn blocking(chaos: &C) -> Option<Self::Error>;
    /// An async attempt's draw: sleeps the latency, returns the fault.
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
