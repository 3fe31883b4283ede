// `on_hedge` hears of the attempts `hedge`'s delay starts: without `hedge`,
// one error on the argument's name, naming both fixes.
use backoff_runtime::retry;

#[retry(attempts = 3, on_hedge = |ev| { let _ = ev; })]
async fn fetch() -> Result<(), std::io::Error> {
    Ok(())
}

// Under `hedge`, a closure of the wrong arity is told what it takes.
#[retry(hedge = "20ms", attempts = 2, on_hedge = |ev, extra: u32| { let _ = (ev, extra); })]
async fn arity() -> Result<(), std::io::Error> {
    Ok(())
}

fn main() {}
