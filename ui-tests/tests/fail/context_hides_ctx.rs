use backoff_runtime::retry;

#[retry(context = ctx)]
fn f(ctx: &str) -> Result<usize, String> {
    Ok(ctx.len())
}

fn main() {}
