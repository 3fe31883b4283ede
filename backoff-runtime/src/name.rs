//! The name a recorder is given for a policy, a breaker or a budget.

/// The `function` of a call whose policy has no name (`record::UNNAMED`).
pub(crate) const UNNAMED: &str = "unnamed";

/// An optional name for the recorder (see `crate::record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Name {
    name: Option<&'static str>,
}

impl Name {
    /// No name.
    pub(crate) const NONE: Name = Name { name: None };

    /// `name`.
    pub(crate) const fn of(name: &'static str) -> Name {
        Name { name: Some(name) }
    }

    /// The name, if one was given.
    pub(crate) const fn get(self) -> Option<&'static str> {
        self.name
    }
}
