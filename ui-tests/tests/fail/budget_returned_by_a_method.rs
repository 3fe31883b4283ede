use backoff_runtime::{retry, RetryBudget};
use std::sync::Arc;

struct Client {
    budget: RetryBudget,
    shared: Arc<RetryBudget>,
}

impl Client {
    // A new bucket for every call: it limits nothing.
    fn budget(&self) -> RetryBudget {
        RetryBudget::new(10, 0.1)
    }

    // These are handles to one kept elsewhere: fine.
    fn budget_ref(&self) -> &RetryBudget {
        &self.budget
    }
    fn shared(&self) -> Arc<RetryBudget> {
        self.shared.clone()
    }

    #[retry(attempts = 3, budget = self.budget())]
    fn new_each_call(&self) -> Result<(), std::io::Error> {
        Ok(())
    }

    #[retry(attempts = 3, budget = &self.budget())]
    fn borrowed_new_each_call(&self) -> Result<(), std::io::Error> {
        Ok(())
    }

    #[retry(attempts = 3, budget = self.budget_ref())]
    fn by_reference(&self) -> Result<(), std::io::Error> {
        Ok(())
    }

    #[retry(attempts = 3, budget = self.shared())]
    fn by_arc(&self) -> Result<(), std::io::Error> {
        Ok(())
    }

    #[retry(attempts = 3, budget = self.budget)]
    fn by_field(&self) -> Result<(), std::io::Error> {
        Ok(())
    }
}

fn main() {}
