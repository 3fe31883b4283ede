//! The atomics of [`CircuitBreaker`](crate::CircuitBreaker),
//! [`RetryBudget`](crate::RetryBudget) and
//! [`AdaptiveThrottle`](crate::AdaptiveThrottle): `core`'s, or loom's
//! model-checked ones in the crate's own loom tests
//! (`RUSTFLAGS="--cfg loom" cargo test -p backoff-runtime --release --lib loom`),
//! as tokio does.
//!
//! Loom's atomics have no `const` constructor, so under `cfg(all(test,
//! loom))` [`AtomicU64`] keeps its initial value and creates the loom atomic
//! on first use: the constructors stay `const` (and the crate's other unit
//! tests, which put breakers in `static`s, still compile; only the loom
//! models run, each on breakers it creates inside the model).

pub(crate) use core::sync::atomic::Ordering;

#[cfg(not(all(test, loom)))]
pub(crate) use core::sync::atomic::AtomicU64;

#[cfg(all(test, loom))]
pub(crate) use self::model::AtomicU64;

#[cfg(all(test, loom))]
mod model {
    use super::Ordering;
    use std::sync::OnceLock;

    /// A loom `AtomicU64` with a `const` constructor (created on first use).
    #[derive(Debug)]
    pub(crate) struct AtomicU64 {
        init: u64,
        cell: OnceLock<loom::sync::atomic::AtomicU64>,
    }

    impl AtomicU64 {
        pub(crate) const fn new(init: u64) -> Self {
            AtomicU64 {
                init,
                cell: OnceLock::new(),
            }
        }

        fn get(&self) -> &loom::sync::atomic::AtomicU64 {
            self.cell
                .get_or_init(|| loom::sync::atomic::AtomicU64::new(self.init))
        }

        pub(crate) fn load(&self, order: Ordering) -> u64 {
            self.get().load(order)
        }

        pub(crate) fn compare_exchange(
            &self,
            current: u64,
            new: u64,
            success: Ordering,
            failure: Ordering,
        ) -> Result<u64, u64> {
            self.get().compare_exchange(current, new, success, failure)
        }

        pub(crate) fn store(&self, value: u64, order: Ordering) {
            self.get().store(value, order);
        }

        pub(crate) fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
            self.get().fetch_add(value, order)
        }

        pub(crate) fn fetch_or(&self, value: u64, order: Ordering) -> u64 {
            self.get().fetch_or(value, order)
        }

        pub(crate) fn fetch_and(&self, value: u64, order: Ordering) -> u64 {
            self.get().fetch_and(value, order)
        }

        pub(crate) fn fetch_update(
            &self,
            set: Ordering,
            fetch: Ordering,
            f: impl FnMut(u64) -> Option<u64>,
        ) -> Result<u64, u64> {
            self.get().fetch_update(set, fetch, f)
        }
    }
}
