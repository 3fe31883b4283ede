use backoff_runtime::retry;

#[retry(clone = request)]
fn a(request: String) -> Result<(), String> {
    Err(request)
}

#[retry(clone())]
fn b(request: String) -> Result<(), String> {
    Err(request)
}

#[retry(clone(request, request))]
fn c(request: String) -> Result<(), String> {
    Err(request)
}

#[retry(clone((a, b)))]
fn d((a, b): (String, String)) -> Result<(), String> {
    Err(a + &b)
}

#[retry(clone(a))]
fn e((a, b): (String, String)) -> Result<(), String> {
    Err(a + &b)
}

fn main() {}
