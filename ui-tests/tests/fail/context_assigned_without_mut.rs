use backoff_runtime::retry;

// rustc's help (`mut ctx`, at the attribute's name) is a form the
// attribute accepts.
#[retry(immediate, context = ctx)]
fn f() -> Result<u32, u32> {
    ctx.attempt += 1;
    Err(ctx.attempt)
}

fn main() {}
