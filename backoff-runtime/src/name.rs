//! The name the metrics give a policy, a breaker or a budget.

/// An optional name for the metrics (feature `opentelemetry`); without the
/// feature it is zero-sized and every name is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Name {
    #[cfg(feature = "opentelemetry")]
    name: Option<&'static str>,
}

impl Name {
    /// No name.
    pub(crate) const NONE: Name = Name {
        #[cfg(feature = "opentelemetry")]
        name: None,
    };

    /// `name` (dropped without the feature).
    pub(crate) const fn of(name: &'static str) -> Name {
        #[cfg(not(feature = "opentelemetry"))]
        let _ = name;
        Name {
            #[cfg(feature = "opentelemetry")]
            name: Some(name),
        }
    }

    /// The name, if one was given.
    #[cfg(feature = "opentelemetry")]
    pub(crate) const fn get(self) -> Option<&'static str> {
        self.name
    }
}
