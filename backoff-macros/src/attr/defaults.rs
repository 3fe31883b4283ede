//! The defaults, the schedule language's (`backoff-schedule`): the
//! growing strategies' base and max, `constant`'s delay, `sidekiq`'s unit,
//! the attempt limit. Messages that name a default print these values.

pub(crate) use backoff_schedule::DEFAULT_ATTEMPTS as ATTEMPTS;
pub(crate) use backoff_schedule::macro_support::{BASE, UNIT, base};
