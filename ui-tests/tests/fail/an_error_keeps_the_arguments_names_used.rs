// An attribute with an error gives the function back as written, and the
// names its arguments use stay used: no "unused import" for `Duration`,
// no "unused variable" for `host`, only the error.
use backoff_runtime::{retry, RetryBudget};
use std::collections::HashMap;
use std::time::Duration;

struct Client {
    budgets: HashMap<String, RetryBudget>,
}

impl Client {
    #[retry(budget = self.budgets.get(host).unwrap(), max_elapsed = Duration::from_secs(1), atempts = 3)]
    fn get(&self, host: &str) -> Result<u32, String> {
        Ok(1)
    }
}

fn main() {}
