use backoff_runtime::retry;

trait Service {
    #[retry]
    fn call(&self) -> Result<(), ()>;
}

fn main() {}
